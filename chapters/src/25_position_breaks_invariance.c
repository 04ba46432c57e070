/*
 * 25_position_breaks_invariance - document 000, section 12.3, experiment 25.
 *
 * Without position embeddings token 3 has the same vector wherever it sits; add
 * a learned position embedding and the same token at positions 3 and 0 differs.
 * PyTorch: set_seed(0); te = TokenEmbedding(4, 4); pe = nn.Embedding(8, 4).
 */
#include <stdio.h>

#include "chapter.h"

/* Token 3's row of x1 (ids1, where it sits at position 3) and of x2 (ids2, position 0),
 * each (T, C), and whether they are the same. */
static void print_token3(const float *x1, const float *x2, int C, const char *note3, const char *note0)
{
    const int64_t row[1] = {C};
    printf("  ids1 position 3%s: ", note3);
    ch_torch(x1 + 3 * C, 1, row, "SelectBackward0");
    printf("\n  ids2 position 0%s: ", note0);
    ch_torch(x2 + 0 * C, 1, row, "SelectBackward0");
    printf("\n  identical: %s\n", ch_bool(mygpt_equal(x1 + 3 * C, x2, C)));
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "25_position_breaks_invariance",
                 "Document 000, 12.3: position embeddings break self-attention's permutation\n"
                 "invariance. Prints the token-3 rows with and without a position embedding.",
                 0, CH_SEED);
    enum { V = 4, C = 4, MAX_SEQ = 8, T = 4 };
    mygpt_rng rng = {0};
    mygpt_error err = {0};
    float te[V * C], pe[MAX_SEQ * C];
    mygpt_rng_seed(&rng, ch.seed);
    chapter_check(&ch, mygpt_init_embedding(&rng, te, V, C, &err), &err);      // TokenEmbedding(4, 4)
    chapter_check(&ch, mygpt_init_embedding(&rng, pe, MAX_SEQ, C, &err), &err); // nn.Embedding(8, 4)

    const int64_t ids1[T] = {0, 1, 2, 3}, ids2[T] = {3, 2, 1, 0};
    float tok1[T * C], tok2[T * C], v1[T * C], v2[T * C];
    const mygpt_embedding_tables tokens = {te, V, NULL, 0}, with_positions = {te, V, pe, MAX_SEQ};
    chapter_check(&ch, mygpt_embedding_forward(tok1, ids1, tokens, 1, T, C, &err), &err);
    chapter_check(&ch, mygpt_embedding_forward(tok2, ids2, tokens, 1, T, C, &err), &err);
    // te(ids) + pe(arange(T))                                               (T, C)
    chapter_check(&ch, mygpt_embedding_forward(v1, ids1, with_positions, 1, T, C, &err), &err);
    chapter_check(&ch, mygpt_embedding_forward(v2, ids2, with_positions, 1, T, C, &err), &err);

    printf("Without position embedding (token 3 row):\n");
    print_token3(tok1, tok2, C, "", "");
    printf("\n");
    printf("With position embedding (token 3 at different positions):\n");
    print_token3(v1, v2, C, " (token 3 at pos 3)", " (token 3 at pos 0)");
    return 0;
}
