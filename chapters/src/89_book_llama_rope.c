/*
 * 89_book_llama_rope - Raschka's LLMs-from-scratch, ch05/07_gpt_to_llama,
 * converting-gpt-to-llama2.ipynb, section 1.4: rotary position embeddings replace GPT's
 * learned position embeddings. The notebook's example (batch 2, 4 heads, 5 positions, head
 * size 16; queries and keys from torch.randn after torch.manual_seed(123)) turned by
 * precompute_rope_params and compute_rope, which pair channel i with channel i + 8 (Hugging
 * Face's halves, not llama2.c's neighbours); then the point of it: one query and one key put
 * at positions m and n meet in a dot product that depends on m - n only. The notebook runs
 * these cells and prints nothing; what this prints is what tools/reference_book_llama.py
 * --rope prints from the notebook's cells.
 */
#include <stdio.h>
#include <string.h>

#include "chapter.h"

enum { B = 2, NH = 4, T = 5, HS = 16 };

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "89_book_llama_rope",
                 "GPT to Llama 2, section 1.4: RoPE on the notebook's queries and keys (2, 4, 5, 16)\n"
                 "after torch.manual_seed(123), and a dot product that depends on m - n only.",
                 123, CH_SEED);
    mygpt_error err = {0};
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    enum { N = B * NH * T * HS };
    float queries[N], keys[N], q0[HS], k0[HS];
    chapter_check(&ch, mygpt_normal_(&rng, queries, N, 0.0, 1.0, &err), &err);
    chapter_check(&ch, mygpt_normal_(&rng, keys, N, 0.0, 1.0, &err), &err);
    memcpy(q0, queries, sizeof q0); // queries[0, 0, 0] and keys[0, 0, 0], before they turn
    memcpy(k0, keys, sizeof k0);

    // lesson: rope
    // (B, NH, T, HS): each head's row at position t is one row of its own (one head of HS),
    // channel i paired with channel i + HS / 2 and turned by the angle t * 10000^(-2i / HS);
    // the notebook's cos and sin tables have T rows (context_length=T)
    mygpt_rope_heads(queries, B * NH * T, T, 0, 1, HS, MYGPT_ROPE_HALVES, T);
    mygpt_rope_heads(keys, B * NH * T, T, 0, 1, HS, MYGPT_ROPE_HALVES, T);
    const int64_t shape[4] = {B, NH, T, HS}, head[2] = {T, HS};
    // end lesson: rope
    printf("queries_rot.shape: ");
    ch_size(4, shape);
    printf("\nqueries_rot[0, 0]:\n ");
    ch_torch(queries, 2, head, NULL); // head 0 of batch row 0
    printf("\nkeys_rot[1, 3]:\n ");
    ch_torch(keys + (size_t)(1 * NH + 3) * T * HS, 2, head, NULL);
    printf("\n");

    // lesson: relative
    // the same query at every position, the same key at every position, each turned there
    float q[T * HS], k[T * HS];
    for (int t = 0; t < T; t++) {
        memcpy(q + t * HS, q0, sizeof q0);
        memcpy(k + t * HS, k0, sizeof k0);
    }
    mygpt_rope_heads(q, T, T, 0, 1, HS, MYGPT_ROPE_HALVES, T); // (T, HS)
    mygpt_rope_heads(k, T, T, 0, 1, HS, MYGPT_ROPE_HALVES, T); // (T, HS)
    const int pairs[3][2] = {{1, 0}, {3, 2}, {4, 3}}; // m - n = 1 each time
    for (int p = 0; p < 3; p++) {
        const int m = pairs[p][0], n = pairs[p][1];
        printf("q at %d . k at %d: %.4f\n", m, n, (double)mygpt_dot(q + m * HS, k + n * HS, HS));
    }
    // end lesson: relative
    return 0;
}
