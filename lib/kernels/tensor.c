/* tensor.c - comparisons, reductions and toy attention (see mygpt/tensor.h). */
#include "mygpt/tensor.h"

#include <float.h>
#include <math.h>

#include "mygpt/layers.h"

int mygpt_equal(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(a[i] == b[i]))
            return 0;
    return 1;
}

int mygpt_allclose(const float *a, const float *b, size_t n, double rtol, double atol)
{
    for (size_t i = 0; i < n; i++) {
        double x = a[i], y = b[i];
        if (x == y)
            continue; // covers equal infinities
        if (!(fabs(x - y) <= atol + rtol * fabs(y)))
            return 0;
    }
    return 1;
}

size_t mygpt_first_nonfinite(const float *x, size_t n)
{
    // one thread, no OpenMP team: a load or a save must not start one (a process that forks
    // after it has a team hangs in its child's first parallel region). Blocks without an
    // early exit, which the compiler vectorizes; the index is looked for in a bad block only
    enum { BLOCK = 4096 };
    for (size_t b = 0; b < n; b += BLOCK) {
        const size_t e = n - b < BLOCK ? n : b + BLOCK;
        int bad = 0;
        for (size_t i = b; i < e; i++)
            bad |= !(fabsf(x[i]) <= FLT_MAX); // NaN and the infinities
        for (size_t i = b; bad && i < e; i++)
            if (!isfinite(x[i]))
                return i;
    }
    return n;
}

float mygpt_dot(const float *a, const float *b, size_t n)
{
    // OpenBLAS's sdot: its kernel takes whole blocks of 32 in four vectors of 8 running sums
    const size_t blocks = n - n % 32;
    float kernel = 0.0f;
    if (blocks) {
        float acc[4][8] = {{0}};
        for (size_t i = 0; i < blocks; i += 32)
            for (int v = 0; v < 4; v++)
                for (int l = 0; l < 8; l++)
                    acc[v][l] = fmaf(a[i + 8 * v + l], b[i + 8 * v + l], acc[v][l]);
        float c[4]; // each vector's halves added, then the vectors pairwise, then the 4 lanes
        for (int l = 0; l < 4; l++)
            c[l] = ((acc[0][l] + acc[0][l + 4]) + (acc[1][l] + acc[1][l + 4])) +
                   ((acc[2][l] + acc[2][l + 4]) + (acc[3][l] + acc[3][l + 4]));
        kernel = (c[0] + c[1]) + (c[2] + c[3]);
    }
    double s = 0.0; // the last n % 32 products, rounded to float, added in double
    for (size_t i = blocks; i < n; i++)
        s += (double)(a[i] * b[i]);
    return (float)(s + (double)kernel);
}

double mygpt_mean(const float *x, size_t n)
{
    return n ? (double)mygpt_mean_torch(x, n) : NAN;
}

double mygpt_std(const float *x, size_t n)
{
    if (n < 2)
        return NAN;
    const double m = mygpt_mean(x, n); // self.mean().item(): the float mean, widened
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = (double)x[i] - m;
        s += d * d;
    }
    return (double)(float)sqrt(s / (double)(n - 1));
}

void mygpt_toy_attention(float *out, const float *x, float *scratch, int B, int T, int C)
{
    const float scale = (float)sqrt((double)C); // x.shape[-1] ** 0.5
    for (int b = 0; b < B; b++) {
        const float *xb = x + (size_t)b * T * C; // (T, C)
        float *ob = out + (size_t)b * T * C;     // (T, C)
        for (int t = 0; t < T; t++) {
            // lesson: toy_attention
            for (int s = 0; s < T; s++) {
                float dot = 0.0f;
                for (int i = 0; i < C; i++)
                    dot += xb[(size_t)t * C + i] * xb[(size_t)s * C + i];
                scratch[s] = dot / scale;
            }
            mygpt_softmax_rows(scratch, 1, T);
            for (int i = 0; i < C; i++) {
                float acc = 0.0f;
                for (int s = 0; s < T; s++)
                    acc += scratch[s] * xb[(size_t)s * C + i];
                ob[(size_t)t * C + i] = acc;
            }
            // end lesson: toy_attention
        }
    }
}
