/*
 * sample.c - the next token as PyTorch 1.13 picks it (see mygpt/sample.h): the softmax
 * with PyTorch's SLEEF exp in its lane order (sleef_rows.h, shared with the loss), then
 * top-k, top-p and multinomial.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/sample.h"
#include "base/base.h"
#include "kernels/cpu.h"
#include "kernels/sleef_rows.h"

#if defined(MYGPT_NEON_KERNELS)
#include <arm_neon.h>
#endif

/* ---- softmax, as torch.softmax computes a row -------------------------------------- */

/* mygpt_softmax_torch's row: the exps into probs, their sum in PyTorch's lane order, then
 * probs times 1 / sum */
static void softmax_row(float *probs, const float *x, size_t n)
{
    float maxv = x[0];
    for (size_t i = 1; i < n; i++)
        maxv = x[i] > maxv ? x[i] : maxv;
    // vec::map exp into the output, reduce_all the sum, then x * (1 / sum)
    const float sum = mygpt_exp_sum_row(probs, x, n, maxv);
    const float inv = 1.0f / sum;
    for (size_t i = 0; i < n; i++)
        probs[i] = probs[i] * inv;
}

#if defined(MYGPT_X86_KERNELS)
/* softmax_row in registers, the same bits (8 <= n <= INT_MAX; other rows go to it) */
MYGPT_AVX2 static void softmax_row_avx2(float *probs, const float *x, size_t len)
{
    if (len < 8 || len > INT_MAX) {
        softmax_row(probs, x, len);
        return;
    }
    const int n = (int)len;
    const float sum = mygpt_exp_sum_avx2(probs, x, n, _mm256_set1_ps(mygpt_row_max_avx2(x, n)));
    const __m256 inv = _mm256_set1_ps(1.0f / sum);
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(probs + i, _mm256_mul_ps(_mm256_loadu_ps(probs + i), inv));
    for (; i < n; i++)
        probs[i] = probs[i] * (1.0f / sum);
}
#endif

#if defined(MYGPT_NEON_KERNELS)
/* softmax_row in NEON registers with SLEEF's AdvSIMD expf, the same bits (8 <= n <=
 * INT_MAX; other rows go to it) */
static void softmax_row_neon(float *probs, const float *x, size_t len)
{
    if (len < 8 || len > INT_MAX) {
        softmax_row(probs, x, len);
        return;
    }
    const int n = (int)len;
    const float inv = 1.0f / mygpt_exp_sum_neon(probs, x, n, mygpt_row_max_neon(x, n));
    int i = 0;
    for (; i + 4 <= n; i += 4) // probs[i] * inv, 4 at a time
        vst1q_f32(probs + i, vmulq_n_f32(vld1q_f32(probs + i), inv));
    for (; i < n; i++)
        probs[i] = probs[i] * inv;
}
#endif

/* The rows per instruction set, indexed by cpu.h's choice for the loss family (the loss's
 * SLEEF functions) */
static void (*const SOFTMAX_ROW[MYGPT_ISA_COUNT])(float *probs, const float *x, size_t n) = {
    [MYGPT_ISA_GENERIC] = softmax_row,
#if defined(MYGPT_X86_KERNELS)
    [MYGPT_ISA_AVX2] = softmax_row_avx2,
    [MYGPT_ISA_AVX512] = softmax_row_avx2,
#endif
#if defined(MYGPT_NEON_KERNELS)
    [MYGPT_ISA_NEON] = softmax_row_neon,
#endif
};

void mygpt_softmax_torch(float *probs, const float *x, size_t n)
{
    if (n > 0)
        SOFTMAX_ROW[mygpt_cpu_isa(MYGPT_FAMILY_LOSS)](probs, x, n);
}

int64_t mygpt_argmax(const float *x, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (x[i] > x[best] || (isnan(x[i]) && !isnan(x[best]))) // torch.argmax: nan is largest
            best = i;
    return (int64_t)best;
}

static int cmp_desc(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

mygpt_status mygpt_top_k_mask(float *logits, size_t n, int k, mygpt_error *err)
{
    if (k < 1 || (size_t)k > n)
        return mygpt_fail(err, MYGPT_EINVAL, "top-k needs 1 <= k <= %zu, got %d", n, k);
    float *sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for top-k over %zu values", n);
    memcpy(sorted, logits, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_desc);
    const float kth = sorted[k - 1]; // topk(logits, k).values[-1]
    free(sorted);
    for (size_t i = 0; i < n; i++)
        if (logits[i] < kth)
            logits[i] = -INFINITY;
    return MYGPT_OK;
}

/* ---- torch.sort(descending=True) as PyTorch 1.13 runs it on CPU: std::sort (GCC's
 * libstdc++ introsort) over (value, index) pairs with "a > b, nan first". Its order of
 * equal values is not their index order, and top-p keeps or drops tied probabilities by
 * that order, so the same steps are taken here: introsort with median-of-three pivots
 * down to runs of 16, heapsort past 2 log2(n) levels, then an insertion sort. */

typedef struct ranked {
    float p;
    size_t i;
} ranked;

static int before(const ranked *a, const ranked *b) // KeyValueCompDesc
{
    return (isnan(a->p) && !isnan(b->p)) || a->p > b->p;
}

static void swap_ranked(ranked *a, ranked *b)
{
    const ranked t = *a;
    *a = *b;
    *b = t;
}

static void push_heap(ranked *first, size_t hole, size_t top, ranked value)
{
    size_t parent = (hole - 1) / 2;
    while (hole > top && before(&first[parent], &value)) {
        first[hole] = first[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    first[hole] = value;
}

static void adjust_heap(ranked *first, size_t hole, size_t len, ranked value)
{
    const size_t top = hole;
    size_t child = hole;
    while (len >= 2 && child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (before(&first[child], &first[child - 1]))
            child--;
        first[hole] = first[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        first[hole] = first[child - 1];
        hole = child - 1;
    }
    push_heap(first, hole, top, value);
}

static void heap_sort(ranked *first, size_t len) // make_heap, then sort_heap
{
    if (len < 2)
        return;
    for (size_t parent = (len - 2) / 2;; parent--) {
        adjust_heap(first, parent, len, first[parent]);
        if (parent == 0)
            break;
    }
    for (size_t last = len - 1; last > 0; last--) { // pop_heap(first, last, last)
        const ranked value = first[last];
        first[last] = first[0];
        adjust_heap(first, 0, last, value);
    }
}

static void introsort_loop(ranked *first, ranked *last, int depth)
{
    while (last - first > 16) {
        if (depth == 0) {
            heap_sort(first, (size_t)(last - first));
            return;
        }
        depth--;
        ranked *a = first + 1, *b = first + (last - first) / 2, *c = last - 1;
        if (before(a, b)) { // move the median of a, b, c to first
            if (before(b, c))
                swap_ranked(first, b);
            else if (before(a, c))
                swap_ranked(first, c);
            else
                swap_ranked(first, a);
        } else if (before(a, c)) {
            swap_ranked(first, a);
        } else if (before(b, c)) {
            swap_ranked(first, c);
        } else {
            swap_ranked(first, b);
        }
        ranked *lo = first + 1, *hi = last; // unguarded partition around *first
        for (;;) {
            while (before(lo, first))
                lo++;
            hi--;
            while (before(first, hi))
                hi--;
            if (!(lo < hi))
                break;
            swap_ranked(lo, hi);
            lo++;
        }
        introsort_loop(lo, last, depth);
        last = lo;
    }
}

static void linear_insert(ranked *last) // unguarded: something before it is not after it
{
    const ranked v = *last;
    ranked *next = last - 1;
    while (before(&v, next)) {
        *last = *next;
        last = next--;
    }
    *last = v;
}

static void insertion_sort(ranked *first, ranked *last)
{
    if (first == last)
        return;
    for (ranked *i = first + 1; i != last; i++) {
        if (before(i, first)) {
            const ranked v = *i;
            memmove(first + 1, first, (size_t)(i - first) * sizeof *first);
            *first = v;
        } else {
            linear_insert(i);
        }
    }
}

static void torch_sort_desc(ranked *a, size_t n)
{
    if (n < 2)
        return;
    int lg = 0;
    while (((size_t)2 << lg) <= n)
        lg++;
    introsort_loop(a, a + n, 2 * lg);
    if (n > 16) {
        insertion_sort(a, a + 16);
        for (ranked *i = a + 16; i != a + n; i++)
            linear_insert(i);
    } else {
        insertion_sort(a, a + n);
    }
}

mygpt_status mygpt_top_p_filter(float *probs, size_t n, double top_p, mygpt_error *err)
{
    if (!(top_p > 0.0 && top_p <= 1.0))
        return mygpt_fail(err, MYGPT_EINVAL, "top-p must be in (0, 1], got %g", top_p);
    ranked *r = malloc(n * sizeof *r);
    if (!r)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for top-p over %zu values", n);
    for (size_t i = 0; i < n; i++)
        r[i] = (ranked){probs[i], i};
    torch_sort_desc(r, n); // torch.sort(probs, descending=True)
    const float limit = (float)top_p; // the Python float meets a float32 tensor
    double cum = 0.0;                 // torch.cumsum accumulates float32 in double
    for (size_t j = 0; j < n; j++) {
        cum += r[j].p;
        const float c = (float)cum;
        if (c - r[j].p > limit) // the mass before this one already exceeds top_p
            probs[r[j].i] = 0.0f;
    }
    free(r);
    return MYGPT_OK;
}

static mygpt_status check_probs(const float *probs, size_t n, mygpt_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (!(probs[i] >= 0.0f) || isinf(probs[i]))
            return mygpt_fail(err, MYGPT_EINVAL, "%s",
                              "probability tensor contains either `inf`, `nan` or element < 0");
    return MYGPT_OK;
}

/* uniform_real_distribution<double>(0, 1): 53 bits of one 64-bit draw */
static double uniform53(mygpt_rng *rng)
{
    return (double)(mygpt_rng_random64(rng) & ((UINT64_C(1) << 53) - 1)) * 0x1p-53;
}

mygpt_status mygpt_multinomial(mygpt_rng *rng, const float *probs, size_t n, int replacement,
                               int64_t *out, mygpt_error *err)
{
    if (n == 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "multinomial needs at least one category");
    if (!rng)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "multinomial draws from a generator, and none was given");
    mygpt_status st = check_probs(probs, n, err);
    if (st != MYGPT_OK)
        return st;
    if (!replacement) {
        /* q = empty_like(probs).exponential_(1): per entry -log(1 - u) in double, then
         * float32; the sample is argmax(probs / q) */
        double sum = 0.0;
        size_t best = 0;
        float best_v = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            const float q = (float)(-1.0 * log(1.0 - uniform53(rng)));
            const float v = probs[i] / q;
            sum += probs[i];
            if (v > best_v || (isnan(v) && !isnan(best_v))) {
                best_v = v;
                best = i;
            }
        }
        if (!(sum > 0.0))
            return mygpt_fail(err, MYGPT_EINVAL, "%s", "invalid multinomial distribution (sum of probabilities <= 0)");
        *out = (int64_t)best;
        return MYGPT_OK;
    }
    /* with replacement: cumulative distribution in float32, normalised, last entry 1 */
    float *cum = malloc(n * sizeof *cum);
    if (!cum)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for multinomial over %zu values", n);
    float total = 0.0f;
    for (size_t i = 0; i < n; i++)
        cum[i] = total += probs[i];
    if (!(total > 0.0f)) {
        free(cum);
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "invalid multinomial distribution (sum of probabilities <= 0)");
    }
    for (size_t i = 0; i < n; i++)
        cum[i] /= total;
    cum[n - 1] = 1.0f;
    const double u = uniform53(rng);
    size_t left = 0, right = n; // the first slot whose cumulative value reaches u
    while (right > left) {
        const size_t mid = left + (right - left) / 2;
        if ((double)cum[mid] < u)
            left = mid + 1;
        else
            right = mid;
    }
    free(cum);
    *out = (int64_t)left;
    return MYGPT_OK;
}

mygpt_status mygpt_sample_next(mygpt_rng *rng, float *logits, size_t n, const mygpt_sampling *s,
                               float *scratch, int64_t *out, mygpt_error *err)
{
    mygpt_status st;
    if (!(s->temperature >= 0.0))
        return mygpt_fail(err, MYGPT_EINVAL, "temperature must be >= 0, got %g", s->temperature);
    if (s->top_k < 0)
        return mygpt_fail(err, MYGPT_EINVAL, "top-k must be >= 1 (or 0 for off), got %d", s->top_k);
    if (!(s->top_p >= 0.0 && s->top_p <= 1.0))
        return mygpt_fail(err, MYGPT_EINVAL, "top-p must be in (0, 1] (or 0 for off), got %g", s->top_p);
    // lesson: sample_next
    if (s->top_k > 0 && (st = mygpt_top_k_mask(logits, n, s->top_k < (int)n ? s->top_k : (int)n, err)) != MYGPT_OK)
        return st;
    if (s->temperature == 0.0) { // greedy
        *out = mygpt_argmax(logits, n);
        return MYGPT_OK;
    }
    const float t = (float)s->temperature; // logits / temperature: a float32 division
    for (size_t i = 0; i < n; i++)
        logits[i] = logits[i] / t;
    mygpt_softmax_torch(scratch, logits, n);
    if (s->top_p > 0.0 && (st = mygpt_top_p_filter(scratch, n, s->top_p, err)) != MYGPT_OK)
        return st;
    return mygpt_multinomial(rng, scratch, n, s->replacement, out, err);
    // end lesson: sample_next
}
