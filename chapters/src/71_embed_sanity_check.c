/*
 * 71_embed_sanity_check - document 004, "Sanity check": Embed(4096, 128, 64) with
 * std-0.02 initialisation on random ids; output statistics and position / token
 * dependence. The document's stats line is not what its code prints under
 * PyTorch (see chapters/ERRATA.md); this prints what the code computes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "doc004_embed.h"

static int differ(const float *a, const float *b, int n)
{
    return !mygpt_allclose(a, b, (size_t)n, 1e-5, 1e-8); // not torch.allclose(a, b)
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "71_embed_sanity_check",
                 "Document 004: torch.manual_seed(0); embed = Embed(4096, 128, 64); parameters,\n"
                 "output shape and stats for random ids, and position / token dependence.",
                 0, CH_SEED);
    enum { V = 4096, D = 128, MAXSEQ = 64, B = 2, T = 12 };
    mygpt_rng rng = {0};
    mygpt_error err = {0};
    embed e;
    mygpt_rng_seed(&rng, ch.seed);
    embed_create(&ch, &e, &rng, V, D, MAXSEQ);
    printf("params: ");
    ch_commas((long long)V * D + (long long)MAXSEQ * D);

    int64_t ids[B * T];
    float out[B * T * D];
    chapter_check(&ch, mygpt_randint(&rng, ids, B * T, 0, V, &err), &err);
    embed_forward(&ch, &e, out, ids, B, T);
    const int64_t in_shape[2] = {B, T}, out_shape[3] = {B, T, D};
    printf("\n\ninput shape:  ");
    ch_tuple(2, in_shape);
    printf("\noutput shape: ");
    ch_tuple(3, out_shape);
    printf("\noutput dtype: torch.float32\n");
    // f"{out.mean():.4f}" formats the float32 result of the reduction
    const float mean = (float)mygpt_mean(out, B * T * D), std = (float)mygpt_std(out, B * T * D);
    printf("output stats: mean=%.4f, std=%.4f\n", (double)mean, (double)std);

    const int64_t same_id[4] = {42, 42, 42, 42};
    float same_out[4 * D];
    embed_forward(&ch, &e, same_out, same_id, 1, 4);
    printf("\nsame token (id=42) at positions 0..3:\n");
    printf("  position 0 vs 1 differ: %s\n", ch_bool(differ(same_out, same_out + D, D)));
    printf("  position 0 vs 2 differ: %s\n", ch_bool(differ(same_out, same_out + 2 * D, D)));

    const int64_t diff_id[2] = {10, 20};
    float diff_out[2 * D];
    embed_forward(&ch, &e, diff_out, diff_id, 1, 2);
    printf("\ndifferent tokens at position 0 (id=10) and 1 (id=20):\n");
    printf("  vectors differ: %s\n", ch_bool(differ(diff_out, diff_out + D, D)));
    embed_free(&e);
    return 0;
}
