/*
 * 94_book_llama3_rope - Raschka's LLMs-from-scratch, ch05/07_gpt_to_llama,
 * converting-llama2-to-llama3.ipynb, section 1.2 "Modified RoPE" and the configurations of its
 * sections 6 and 7: the 64 rotation frequencies of a head of 128 channels under Llama 2's base
 * (10,000), Llama 3's (500,000), and Llama 3.1's and 3.2's rescaling for long contexts (factor
 * 8 and 32, low and high frequency factors 1 and 4, original context 8192), every eighth and the
 * eight around the rescaling's smooth band. The notebook draws the first two as a figure and
 * prints none of them; what this prints is what tools/reference_book_llama.py --llama3-rope
 * reads from the notebook's precompute_rope_params in PyTorch 1.13.
 */
#include <stdio.h>
#include <string.h>

#include "chapter.h"

enum { HALF = 64 }; /* head size 128 */

/* Prints inv_freq[::8] and inv_freq[28:36] as the notebook's tensors print. */
static void print_freqs(const char *name, const float *inv_freq)
{
    float every8[HALF / 8];
    for (int i = 0; i < HALF / 8; i++)
        every8[i] = inv_freq[8 * i];
    const int64_t n = HALF / 8;
    printf("%s\ninv_freq[::8]: ", name);
    ch_torch(every8, 1, &n, NULL);
    printf("\ninv_freq[28:36]: ");
    ch_torch(inv_freq + 28, 1, &n, NULL);
    printf("\n");
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "94_book_llama3_rope",
                 "Llama 2 to Llama 3: RoPE's frequencies for head size 128 with base 10,000 and 500,000,\n"
                 "and Llama 3.1's and 3.2's rescaling for long contexts.",
                 0, 0);
    mygpt_error err = {0};
    float base2[HALF], base3[HALF], scaled[HALF];
    chapter_check(&ch, mygpt_rope_inv_freq(base2, 2 * HALF, 10000.0, &err), &err);
    chapter_check(&ch, mygpt_rope_inv_freq(base3, 2 * HALF, 500000.0, &err), &err);
    print_freqs("Llama 2 (base 10,000)", base2);
    print_freqs("Llama 3 (base 500,000)", base3);
    // lesson: scaling
    const mygpt_rope_scaling llama31 = {.factor = 8, .low_freq_factor = 1, .high_freq_factor = 4,
                                        .original_context = 8192};
    memcpy(scaled, base3, sizeof scaled);
    chapter_check(&ch, mygpt_rope_scale_llama3(scaled, HALF, &llama31, &err), &err);
    // end lesson: scaling
    print_freqs("Llama 3.1 (base 500,000, factor 8)", scaled);
    const mygpt_rope_scaling llama32 = {.factor = 32, .low_freq_factor = 1, .high_freq_factor = 4,
                                        .original_context = 8192};
    memcpy(scaled, base3, sizeof scaled);
    chapter_check(&ch, mygpt_rope_scale_llama3(scaled, HALF, &llama32, &err), &err);
    print_freqs("Llama 3.2 (base 500,000, factor 32)", scaled);
    return 0;
}
