/*
 * test_learn.c - the training loop's bells of the book's appendix D against PyTorch 1.13
 * (goldens from tools/gen_learn_goldens.py): train_model's learning rate of every step,
 * torch.norm's float32 sum and clip_grad_norm_ bit for bit, on any thread count; and the
 * errors for a schedule or a max_norm a caller got wrong.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "mygpt/rng.h"
#include "mygpt/train.h"


/* torch.manual_seed(seed); [torch.randn(n) * scale for n in sizes], into one block */
static float *draw(uint64_t seed, const size_t *sizes, int count, double scale, float **tensors)
{
    size_t total = 0;
    for (int i = 0; i < count; i++)
        total += sizes[i];
    float *block = malloc((total ? total : 1) * sizeof *block);
    cr_assert(block);
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, seed);
    mygpt_error err = {0};
    size_t at = 0;
    for (int i = 0; i < count; i++) {
        tensors[i] = block + at;
        cr_assert_eq(mygpt_normal_(&rng, tensors[i], sizes[i], 0.0, 1.0, &err), MYGPT_OK, "%s", err.message);
        for (size_t j = 0; j < sizes[i]; j++)
            tensors[i][j] = tensors[i][j] * (float)scale; // a float32 tensor times a Python float
        at += sizes[i];
    }
    return block;
}

Test(learn_norm, torch_norm_is_pytorchs_float32_sum)
{
    golden_reader g = golden_reader_must_open("learn.txt");
    char *line;
    int cases = 0;
    while ((line = golden_read(&g))) {
        if (strncmp(line, "norm ", 5) != 0)
            continue;
        unsigned long long seed;
        size_t n;
        double scale;
        char hex[16];
        cr_assert_eq(sscanf(line, "norm %llu %zu %lf : %15s", &seed, &n, &scale, hex), 4, "line %ld", g.lineno);
        float *x;
        float *block = draw(seed, &n, 1, scale, &x);
        const float got = mygpt_norm2(x, n), want = golden_unhex32(hex);
        cr_expect(golden_same_bits(got, want), "line %ld: norm of %zu values (seed %llu, scale %g): %a, PyTorch %a",
                  g.lineno, n, seed, scale, (double)got, (double)want);
        free(block);
        cases++;
    }
    cr_assert_geq(cases, 60);
    golden_reader_close(&g);
}

/* sum over i of (i + 1) * bits(v[i]) mod 2^64 */
static unsigned long long checksum(const float *v, size_t n)
{
    return (unsigned long long)golden_checksum(v, n);
}

/* A NaN made of numbers (inf * 0) is the CPU's default NaN (golden_same_bits_as_x86,
 * golden.h). After an inf poison every NaN is one of those, so elsewhere than x86-64 they
 * are given x86's bits before the checksums (on x86-64 this changes nothing). */
static void x86_default_nans(float *const *grads, const size_t *sizes, int count)
{
    const uint32_t x86 = GOLDEN_X86_DEFAULT_NAN;
    for (int i = 0; i < count; i++)
        for (size_t j = 0; j < sizes[i]; j++)
            if (isnan(grads[i][j]))
                memcpy(&grads[i][j], &x86, sizeof x86);
}

static void clip_cases(int threads)
{
    golden_reader g = golden_reader_must_open("learn.txt");
    char *line;
    int cases = 0;
    omp_set_num_threads(threads);
    while ((line = golden_read(&g))) {
        if (strncmp(line, "clip ", 5) != 0)
            continue;
        unsigned long long seed;
        double max_norm, scale;
        int used;
        cr_assert_eq(sscanf(line, "clip %llu %lf %lf %n", &seed, &max_norm, &scale, &used), 3, "line %ld",
                     g.lineno);
        size_t sizes[64];
        int count = 0;
        const char *p = line + used;
        while (*p && *p != ' ') { // N1,N2,...
            char *end;
            sizes[count++] = strtoul(p, &end, 10);
            p = *end == ',' ? end + 1 : end;
            cr_assert(count < 64);
        }
        char poison[32], hex[16];
        cr_assert_eq(sscanf(p, " %31s : %15s %n", poison, hex, &used), 2, "line %ld", g.lineno);
        p += used;
        float *grads[64];
        float *block = draw(seed, sizes, count, scale, grads);
        if (strcmp(poison, "-") != 0) { // inf:T:I or nan:T:I
            int t, i;
            cr_assert_eq(sscanf(poison + 4, "%d:%d", &t, &i), 2);
            grads[t][i] = poison[0] == 'i' ? INFINITY : NAN;
        }
        float total = -1.0f;
        mygpt_error err = {0};
        cr_assert_eq(mygpt_clip_grad_norm(grads, sizes, count, max_norm, &total, &err), MYGPT_OK, "%s",
                     err.message);
        cr_expect(golden_same_bits(total, golden_unhex32(hex)) || (isnan(total) && isnan(golden_unhex32(hex))),
                  "line %ld (%d threads): total norm %a, PyTorch %a", g.lineno, threads, (double)total,
                  (double)golden_unhex32(hex));
        if (poison[0] == 'i')
            x86_default_nans(grads, sizes, count);
        for (int i = 0; i < count; i++) {
            char *end;
            const unsigned long long want = strtoull(p, &end, 10);
            cr_assert(end != p, "line %ld: %d checksums expected", g.lineno, count);
            p = end;
            cr_expect_eq(checksum(grads[i], sizes[i]), want,
                         "line %ld (%d threads): tensor %d of %zu clipped otherwise", g.lineno, threads, i, sizes[i]);
        }
        free(block);
        cases++;
    }
    cr_assert_geq(cases, 12);
    golden_reader_close(&g);
}

Test(learn_clip, clip_grad_norm_is_pytorchs_bits, .timeout = 120)
{
    clip_cases(2);
}

Test(learn_clip, the_same_bits_on_1_and_3_threads, .timeout = 120)
{
    clip_cases(1);
    clip_cases(3);
}

Test(learn_clip, bad_max_norms_are_refused)
{
    float g[3] = {3.0f, 4.0f, 0.0f};
    float *grads[1] = {g};
    const size_t sizes[1] = {3};
    mygpt_error err = {0};
    float total;
    const double bad[] = {0.0, -1.0, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(mygpt_clip_grad_norm(grads, sizes, 1, bad[i], &total, &err), MYGPT_EINVAL, "%g", bad[i]);
    cr_expect_eq(mygpt_clip_grad_norm(grads, sizes, -1, 1.0, &total, &err), MYGPT_EINVAL);
    cr_expect(g[0] == 3.0f && g[1] == 4.0f, "a refused call changes nothing");
    cr_expect_eq(mygpt_clip_grad_norm(grads, sizes, 0, 1.0, &total, &err), MYGPT_OK);
    cr_expect_eq(total, 0.0f, "no gradients: torch.tensor(0.)");
    // the book's example: G = [[1, 2], [2, 4]] has norm 5, max_norm 1 scales it by 1/5
    float G[4] = {1, 2, 2, 4};
    float *gs[1] = {G};
    const size_t n4[1] = {4};
    cr_assert_eq(mygpt_clip_grad_norm(gs, n4, 1, 1.0, &total, &err), MYGPT_OK);
    cr_expect_eq(total, 5.0f);
    cr_expect(fabsf(G[0] - 0.2f) < 1e-6f && fabsf(G[3] - 0.8f) < 1e-6f, "%g %g", (double)G[0], (double)G[3]);
}

Test(learn_schedule, every_steps_learning_rate_is_train_models_double)
{
    golden_reader g = golden_reader_must_open("learn.txt");
    char *line;
    int cases = 0;
    while ((line = golden_read(&g))) {
        if (strncmp(line, "lr ", 3) != 0)
            continue;
        mygpt_lr_schedule s = {0};
        int used;
        cr_assert_eq(sscanf(line, "lr %lf %lf %lf %ld %ld %d : %n", &s.peak, &s.initial, &s.min, &s.warmup_steps,
                            &s.total_steps, &s.cosine, &used), 6, "line %ld", g.lineno);
        mygpt_error err = {0};
        cr_assert_eq(mygpt_lr_schedule_check(&s, &err), MYGPT_OK, "line %ld: %s", g.lineno, err.message);
        const char *p = line + used;
        for (long step = 0; step < s.total_steps; step++) {
            char *end;
            const double want = strtod(p, &end); // repr(float): the double exactly
            cr_assert(end != p, "line %ld: %ld rates expected", g.lineno, s.total_steps);
            p = end;
            const double got = mygpt_lr_at(&s, step);
            cr_expect(memcmp(&got, &want, sizeof got) == 0, "line %ld step %ld: %.17g, Python %.17g", g.lineno, step,
                      got, want);
        }
        cases++;
    }
    cr_assert_geq(cases, 8);
    golden_reader_close(&g);
}

Test(learn_schedule, bad_schedules_are_refused)
{
    mygpt_error err = {0};
    const mygpt_lr_schedule ok = {.peak = 1e-3, .initial = 1e-5, .min = 1e-5, .warmup_steps = 27,
                                  .total_steps = 135, .cosine = 1};
    cr_expect_eq(mygpt_lr_schedule_check(&ok, &err), MYGPT_OK);
    mygpt_lr_schedule s = ok;
    s.peak = -1e-3;
    cr_expect_eq(mygpt_lr_schedule_check(&s, &err), MYGPT_EINVAL);
    s = ok;
    s.peak = NAN;
    cr_expect_eq(mygpt_lr_schedule_check(&s, &err), MYGPT_EINVAL);
    s = ok;
    s.initial = INFINITY;
    cr_expect_eq(mygpt_lr_schedule_check(&s, &err), MYGPT_EINVAL);
    s = ok;
    s.min = -0.5;
    cr_expect_eq(mygpt_lr_schedule_check(&s, &err), MYGPT_EINVAL);
    s = ok;
    s.warmup_steps = -1;
    cr_expect_eq(mygpt_lr_schedule_check(&s, &err), MYGPT_EINVAL);
    s = ok;
    s.total_steps = 27;
    cr_expect_eq(mygpt_lr_schedule_check(&s, &err), MYGPT_EINVAL, "no step left for the cosine");
    cr_expect(strstr(err.message, "27") != NULL, "%s", err.message);
    s.cosine = 0; // D.1: warmup, then the peak
    cr_expect_eq(mygpt_lr_schedule_check(&s, &err), MYGPT_OK);
    cr_expect_eq(mygpt_lr_at(&s, 1000), 1e-3);
    s = ok;
    s.warmup_steps = 0; // no warmup: the cosine from step 0
    cr_expect_eq(mygpt_lr_schedule_check(&s, &err), MYGPT_OK);
    cr_expect_eq(mygpt_lr_at(&s, 0), 1e-3);
    cr_expect(fabs(mygpt_lr_at(&s, 135) - 1e-5) < 1e-18, "the cosine ends at min_lr");
}
