/*
 * 54_rope - document 002, "Approach 3: RoPE": the cos/sin caches of
 * RotaryPositionalEmbedding(d_model=64, max_seq_len=512) and its first inverse
 * frequencies.
 */
#include <stdio.h>
#include <stdlib.h>

#include "doc002_session.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "54_rope",
                 "Document 002: rope = RotaryPositionalEmbedding(64, 512); cos, sin = rope(10);\n"
                 "prints the cache shapes and inv_freq[:4].", 0, 0);
    enum { D = 64, MAXSEQ = 512, SEQ = 10, HALF = D / 2 };
    float inv_freq[HALF];
    float *cos_c, *sin_c;
    doc002_rope(&ch, D, MAXSEQ, inv_freq, &cos_c, &sin_c);
    const int64_t shape[2] = {SEQ, HALF}, four[1] = {4}; // rope(seq_len=10) slices the caches
    printf("Cos cache shape: ");
    ch_size(2, shape);
    printf("\nSin cache shape: ");
    ch_size(2, shape);
    printf("\n\nFrequencies (inverse) for first 4 dimension pairs:\n  ");
    ch_numpy(inv_freq, 1, four, 4);
    printf("\n\nNotice: lower dimensions have higher frequencies (rotate faster).\n");
    printf("This lets the model capture both local (fast) and global (slow) patterns.\n");
    free(cos_c);
    free(sin_c);
    return 0;
}
