/*
 * torch_sum.c - a row's sum as PyTorch 1.13's CPU kernel adds it, bit for bit (see
 * mygpt/tensor.h): the reductions the book's steps, LayerNorm's mean and RMSNorm's mean
 * square are made of.
 */
#include "mygpt/tensor.h"

#include <stdint.h>
#include <string.h>

/* PyTorch's sum of a row, as its CPU kernel (SumKernel.cpp's cascade_sum) adds it. The row
 * is read 4 at a time (ILP: 4 values, or 4 vectors of 8 lanes); multi_row_sum adds those
 * groups per column in levels, so that no running sum grows long: a level-0 sum takes
 * STEP groups (16, more for very long rows), is carried into level 1, level 1 into 2
 * every STEP carries, and so on, and the levels are added at the end. */
#define SUM_LANES 8  /* floats in PyTorch's AVX2 vector */
#define SUM_ILP 4    /* running sums side by side */
#define SUM_LEVELS 4

/* x[i], or x[i]^2 rounded to float (x.pow(2)), for mygpt_mean_sq_torch */
static inline float sum_load(const float *x, int64_t i, int square)
{
    return square ? x[i] * x[i] : x[i];
}

/* The columns of `rows` groups of w values (group i at x + i * stride) summed each in
 * levels, into ret (w floats) */
static void multi_row_sum(float *ret, const float *x, int64_t rows, int64_t stride, int w, int square)
{
    int log2 = 1; // ceil(log2(rows)), at least 1
    while (((int64_t)1 << log2) < rows)
        log2++;
    const int power = log2 / SUM_LEVELS > 4 ? log2 / SUM_LEVELS : 4;
    const int64_t step = (int64_t)1 << power, mask = step - 1;
    float acc[SUM_LEVELS][SUM_ILP * SUM_LANES] = {{0}};
    int64_t i = 0;
    while (i + step <= rows) {
        for (int64_t j = 0; j < step; j++, i++)
            for (int k = 0; k < w; k++)
                acc[0][k] += sum_load(x, i * stride + k, square);
        for (int l = 1; l < SUM_LEVELS; l++) { // carried up while the count is a multiple of the level's
            for (int k = 0; k < w; k++) {
                acc[l][k] += acc[l - 1][k];
                acc[l - 1][k] = 0.0f;
            }
            if ((i & (mask << (l * power))) != 0)
                break;
        }
    }
    for (; i < rows; i++)
        for (int k = 0; k < w; k++)
            acc[0][k] += sum_load(x, i * stride + k, square);
    for (int l = 1; l < SUM_LEVELS; l++)
        for (int k = 0; k < w; k++)
            acc[0][k] += acc[l][k];
    memcpy(ret, acc[0], (size_t)w * sizeof *ret);
}

static float torch_sum(const float *x, int64_t n, int square)
{
    float p[SUM_ILP * SUM_LANES];
    if (n < SUM_LANES) { // scalar_inner_sum: the row as (n / 4, 4), the rest into the first
        multi_row_sum(p, x, n / SUM_ILP, SUM_ILP, SUM_ILP, square);
        for (int64_t i = n / SUM_ILP * SUM_ILP; i < n; i++)
            p[0] += sum_load(x, i, square);
        return ((p[0] + p[1]) + p[2]) + p[3];
    }
    // vectorized_inner_sum: the whole vectors as (nv / 4, 4 vectors), the vectors left over
    // into the first, the 4 vectors added lane by lane; then the values past the last whole
    // vector, then the 8 lanes in order
    const int64_t nv = n / SUM_LANES;
    multi_row_sum(p, x, nv / SUM_ILP, SUM_ILP * SUM_LANES, SUM_ILP * SUM_LANES, square);
    for (int64_t v = nv / SUM_ILP * SUM_ILP; v < nv; v++)
        for (int l = 0; l < SUM_LANES; l++)
            p[l] += sum_load(x, v * SUM_LANES + l, square);
    for (int k = 1; k < SUM_ILP; k++)
        for (int l = 0; l < SUM_LANES; l++)
            p[l] += p[k * SUM_LANES + l];
    float sum = 0.0f;
    for (int64_t i = nv * SUM_LANES; i < n; i++)
        sum += sum_load(x, i, square);
    for (int l = 0; l < SUM_LANES; l++)
        sum += p[l];
    return sum;
}

float mygpt_sum_torch(const float *x, size_t n)
{
    return torch_sum(x, (int64_t)n, 0);
}

float mygpt_mean_sq_torch(const float *x, size_t n)
{
    return torch_sum(x, (int64_t)n, 1) / (float)n; // x.pow(2).mean(-1): at::sum(...).div_(n)
}
