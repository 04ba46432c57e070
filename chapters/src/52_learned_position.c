/*
 * 52_learned_position - document 002, "Approach 1: Learned Positional Embeddings":
 * LearnedPositionalEmbedding(256, 512) added to a random (2, 10, 256) input.
 * Unseeded in the document; torch.manual_seed(SEED) at the top of the notebook
 * stands in (default 0).
 */
#include <stdio.h>
#include <stdlib.h>

#include "doc002_session.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "52_learned_position",
                 "Document 002: pos_embed = LearnedPositionalEmbedding(256, 512); x_with_pos =\n"
                 "pos_embed(torch.randn(2, 10, 256)); prints shapes, rows 0 and 1, parameters.",
                 0, CH_SEED);
    doc002 s = {0};
    doc002_run(&ch, &s, 2);
    // x_with_pos = x + pos_embedding(arange(seq_len)), broadcast over the batch
    ch_tensor with_pos = ch_add_positions(&ch, &s.x_t, &s.pos_w);
    const int64_t eight[1] = {8};
    printf("Input shape: ");
    ch_print_size(&s.x_t);
    printf("\nOutput shape: ");
    ch_print_size(&with_pos);
    for (int p = 0; p < 2; p++) {
        printf("\n\nPosition embedding for position %d (first 8 dims):\n  ", p);
        ch_numpy(s.pos + (size_t)p * D2_MODEL, 1, eight, 4);
    }
    const long long n_params = (long long)ch_numel(&s.pos_w); // the module's one parameter
    printf("\n\nPosition embedding parameters: ");
    ch_commas(n_params);
    printf(" (%.2fM)\n", n_params / 1e6);
    ch_tensor_free(&with_pos);
    doc002_free(&s);
    return 0;
}
