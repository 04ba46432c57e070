/*
 * 48_relative_position_task - document 001, "Your task" (solution): the dot
 * product PE(p) . PE(p + 5) is the same at every base position p for the
 * sinusoidal table, and arbitrary for a freshly initialised learned table.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "chapter.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "48_relative_position_task",
                 "Document 001, task solution: torch.manual_seed(0); dot products PE(p).PE(p+5)\n"
                 "of the sinusoidal table and of nn.Embedding(256, 384).weight, side by side, and\n"
                 "std/mean of the sinusoidal ones over all base positions.", 0, CH_SEED);
    enum { BLOCK = 256, EMBD = 384, K = 5 };
    mygpt_error err = {0};
    mygpt_rng rng = {0};
    float *pe = chapter_alloc(&ch, (size_t)BLOCK * EMBD, sizeof(float));
    float *learned = chapter_alloc(&ch, (size_t)BLOCK * EMBD, sizeof(float));
    mygpt_rng_seed(&rng, ch.seed);
    chapter_check(&ch, mygpt_sinusoidal_encoding(pe, BLOCK, EMBD, &err), &err);
    chapter_check(&ch, mygpt_init_embedding(&rng, learned, BLOCK, EMBD, &err), &err);

    // f"{...:>25}" pads by characters; "·" is one character but two bytes in UTF-8,
    // so printf's byte widths are one larger
    char sin_head[64], lrn_head[64];
    snprintf(sin_head, sizeof sin_head, "sinusoidal PE(p)\xc2\xb7PE(p+%d)", K);
    snprintf(lrn_head, sizeof lrn_head, "learned PE(p)\xc2\xb7PE(p+%d)", K);
    printf("%7s | %26s | %23s\n", "base p", sin_head, lrn_head);
    printf("%.62s\n", "--------------------------------------------------------------");
    const int bases[] = {0, 10, 50, 100, 200};
    for (int i = 0; i < 5; i++) {
        const int p = bases[i];
        float d_sin = mygpt_dot(pe + (size_t)p * EMBD, pe + (size_t)(p + K) * EMBD, EMBD);
        float d_lrn = mygpt_dot(learned + (size_t)p * EMBD, learned + (size_t)(p + K) * EMBD, EMBD);
        printf("%7d | %25.4f | %22.4f\n", p, (double)d_sin, (double)d_lrn);
    }
    float sims[BLOCK - K];
    // lesson: relative
    for (int p = 0; p < BLOCK - K; p++)
        sims[p] = mygpt_dot(pe + (size_t)p * EMBD, pe + (size_t)(p + K) * EMBD, EMBD);
    // end lesson: relative
    const double mean = mygpt_mean(sims, BLOCK - K), std = mygpt_std(sims, BLOCK - K);
    if (!(std < 1e-4 * fabs(mean))) {
        fprintf(stderr, "%s: relative-position property violated!\n", ch.name);
        return 1;
    }
    printf("\nsinusoidal: std/mean over ALL base positions = %.2e\n", (double)(float)(std / mean));
    free(pe);
    free(learned);
    return 0;
}
