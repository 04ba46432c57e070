/*
 * 56_apply_rotary - document 002 defines apply_rotary_emb(x, cos, sin) but never
 * runs it. This chapter does: it rotates one query vector and one key vector to
 * several pairs of positions (m, n) and shows that the attention score q_m . k_n
 * depends only on the offset m - n, the property the document states.
 */
#include <stdio.h>
#include <stdlib.h>

#include "doc002_session.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "56_apply_rotary",
                 "Document 002's apply_rotary_emb in action: torch.manual_seed(SEED); q, k =\n"
                 "torch.randn(64), torch.randn(64); the score of q rotated to position m against\n"
                 "k rotated to position n, for pairs with offsets 2 and 5.", 0, CH_SEED);
    enum { D = 64, HALF = D / 2, MAXSEQ = 512 };
    float inv_freq[HALF], q[D], k[D], qm[D], kn[D];
    float *cos_c, *sin_c;
    mygpt_error err = {0};
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    chapter_check(&ch, mygpt_normal_(&rng, q, D, 0.0, 1.0, &err), &err);
    chapter_check(&ch, mygpt_normal_(&rng, k, D, 0.0, 1.0, &err), &err);
    doc002_rope(&ch, D, MAXSEQ, inv_freq, &cos_c, &sin_c);

    printf("q_m . k_n after apply_rotary_emb (d_model = 64)\n");
    printf("%5s %5s %7s %12s\n", "m", "n", "m - n", "q_m . k_n");
    const int pairs[][2] = {{2, 0}, {7, 5}, {100, 98}, {5, 0}, {12, 7}, {300, 295}};
    for (int i = 0; i < 6; i++) {
        const int m = pairs[i][0], n = pairs[i][1];
        // position p uses row p of the caches: x is one row, T = 1, caches offset to p
        mygpt_rope_apply(qm, q, cos_c + (size_t)m * HALF, sin_c + (size_t)m * HALF, 1, 1, HALF);
        mygpt_rope_apply(kn, k, cos_c + (size_t)n * HALF, sin_c + (size_t)n * HALF, 1, 1, HALF);
        printf("%5d %5d %7d %12.4f\n", m, n, m - n, (double)mygpt_dot(qm, kn, D));
    }
    printf("\nWithout rotation q . k = %.4f at every pair of positions.\n",
           (double)mygpt_dot(q, k, D));
    free(cos_c);
    free(sin_c);
    return 0;
}
