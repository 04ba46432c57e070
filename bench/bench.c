/*
 * bench.c - mygpt-bench: how fast the GPT forward pass (or the matmul alone) runs,
 * and how it scales with threads. Measures only; nothing here is asserted. In a sweep
 * the thread counts take turns forward pass by forward pass (see time_forward).
 *
 *   mygpt-bench                                  every config, threads 1..nproc
 *   mygpt-bench --config gpt2 --threads 2        one config and thread count
 *   mygpt-bench --matmul 1024,768,3072           the matmul alone (M, K, N)
 *   options: --reps R  --warmup W  --csv FILE  --svg FILE  --naive
 *
 * FLOPs of a forward pass (multiply-adds counted as 2):
 *   2 * (12 N C^2 + V C) * B T   (the linear layers and the tied head)
 *   + 4 N B T^2 C                (q k^T and p v over the full T x T, as usually quoted)
 * The last line is machine-readable:
 *   config=NAME threads=K median_ms=X tokens_per_s=Y gflops=Z
 *   matmul=MxKxN threads=K median_ms=X gflops=Z
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "mygpt.h"

typedef struct bench_config {
    const char *name;
    int V, C, H, N, T, B;
} bench_config;

static const bench_config CONFIGS[] = {
    {"tiny", 4, 4, 2, 2, 4, 1},        /* the chapter's GPT on "I love AI !" */
    {"char", 65, 384, 6, 6, 256, 4},   /* document 001's tiny-GPT, char-level */
    {"gpt2", 50257, 768, 12, 12, 1024, 1},
    {"gpt2-b8", 50257, 768, 12, 12, 64, 8},
};
#define NCONFIGS (int)(sizeof CONFIGS / sizeof CONFIGS[0])

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double forward_gflop(const bench_config *c)
{
    const double BT = (double)c->B * c->T;
    return (2.0 * (12.0 * c->N * (double)c->C * c->C + (double)c->V * c->C) * BT +
            4.0 * c->N * (double)c->B * c->T * c->T * c->C) / 1e9;
}

/* Times `reps` forward passes at each thread count t0..t1 after `warmup` unmeasured
 * ones, and stores the medians in ms[th - t0]. The thread counts take turns pass by
 * pass, so a slow spell of the (shared, virtual) machine hits all of them alike and
 * the speedups compare like with like. */
static void time_forward(mygpt_gpt *gpt, const bench_config *c, const int64_t *ids, int warmup,
                         int reps, int t0, int t1, double *ms)
{
    const int nt = t1 - t0 + 1;
    double *t = malloc((size_t)reps * nt * sizeof *t);
    mygpt_error err = {0};
    if (!t) {
        fprintf(stderr, "mygpt-bench: out of memory\n");
        exit(1);
    }
    for (int r = 0; r < warmup + reps; r++) {
        for (int th = t0; th <= t1; th++) {
            omp_set_num_threads(th);
            double a = now_ms();
            if (mygpt_gpt_forward(gpt, ids, c->B, c->T, &err) != MYGPT_OK) {
                fprintf(stderr, "mygpt-bench: %s\n", err.message);
                exit(1);
            }
            if (r >= warmup)
                t[(size_t)(th - t0) * reps + (r - warmup)] = now_ms() - a;
        }
    }
    for (int i = 0; i < nt; i++) {
        qsort(t + (size_t)i * reps, (size_t)reps, sizeof *t, cmp_double);
        ms[i] = t[(size_t)i * reps + reps / 2];
    }
    free(t);
}

static long peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

typedef struct result {
    const char *name;
    int threads;
    double ms, tokens_s, gflops;
} result;

/* An SVG line plot of speedup against threads, one line per config. */
static void write_svg(const char *path, const result *rs, int n, int max_threads)
{
    mygpt_svg fig;
    mygpt_svg_begin(&fig, 700, 480);
    mygpt_svg_series series[NCONFIGS];
    float ys[NCONFIGS][64];
    int ns = 0;
    for (int k = 0; k < NCONFIGS; k++) {
        int cnt = 0;
        double base = 0;
        for (int i = 0; i < n; i++)
            if (strcmp(rs[i].name, CONFIGS[k].name) == 0) {
                if (rs[i].threads == 1)
                    base = rs[i].ms;
                if (cnt < 63)
                    ys[ns][cnt++] = base > 0 ? (float)(base / rs[i].ms) : 1.0f;
            }
        if (cnt == 0)
            continue;
        /* the plot's x is 0..n-1; we plot speedup at threads 1..n by prepending 0 */
        memmove(ys[ns] + 1, ys[ns], (size_t)cnt * sizeof(float));
        ys[ns][0] = 0.0f;
        series[ns].y = ys[ns];
        series[ns].n = cnt + 1;
        series[ns].stride = 1;
        series[ns].label = CONFIGS[k].name;
        ns++;
    }
    const mygpt_svg_panel p = {80, 50, 560, 360, "mygpt forward: speedup over 1 thread",
                               "threads", "speedup"};
    mygpt_svg_line_plot(&fig, &p, series, ns, 0.0, (double)max_threads);
    mygpt_error err = {0};
    if (mygpt_svg_save(&fig, path, &err) != MYGPT_OK)
        fprintf(stderr, "mygpt-bench: %s\n", err.message);
}

static int usage(void)
{
    fprintf(stderr, "usage: mygpt-bench [--config tiny|char|gpt2|gpt2-b8] [--threads K] [--reps R]\n"
                    "                   [--warmup W] [--csv FILE] [--svg FILE] [--naive]\n"
                    "       mygpt-bench --matmul M,K,N [--threads K] [--reps R]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *config = NULL, *csv = NULL, *svg = NULL, *matmul = NULL;
    int threads = 0, reps = 0, warmup = -1, naive = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--naive") == 0) {
            naive = 1;
            continue;
        }
        if (!v)
            return usage();
        if (strcmp(a, "--config") == 0)
            config = v;
        else if (strcmp(a, "--threads") == 0)
            threads = atoi(v);
        else if (strcmp(a, "--reps") == 0)
            reps = atoi(v);
        else if (strcmp(a, "--warmup") == 0)
            warmup = atoi(v);
        else if (strcmp(a, "--csv") == 0)
            csv = v;
        else if (strcmp(a, "--svg") == 0)
            svg = v;
        else if (strcmp(a, "--matmul") == 0)
            matmul = v;
        else
            return usage();
        i++;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    const int nproc = online < 1 ? 1 : online > 64 ? 64 : (int)online; /* sweeps stop at 64 */
    if (threads < 0 || threads > 64 || reps < 0 || reps > 100000)
        return usage();

    if (matmul) {
        int M, K, N;
        if (sscanf(matmul, "%d,%d,%d", &M, &K, &N) != 3 || M < 1 || K < 1 || N < 1)
            return usage();
        float *a = malloc(sizeof(float) * (size_t)M * K), *w = malloc(sizeof(float) * (size_t)N * K);
        float *o = malloc(sizeof(float) * (size_t)M * N);
        if (!a || !w || !o) {
            fprintf(stderr, "mygpt-bench: out of memory\n");
            return 1;
        }
        mygpt_rng rng = {0};
        mygpt_rng_seed(&rng, 0);
        mygpt_uniform_(&rng, a, (size_t)M * K, -1, 1, NULL);
        mygpt_uniform_(&rng, w, (size_t)N * K, -1, 1, NULL);
        const int t0 = threads ? threads : 1, t1 = threads ? threads : nproc;
        if (reps == 0)
            reps = 10;
        for (int th = t0; th <= t1; th++) {
            omp_set_num_threads(th);
            double *t = malloc((size_t)reps * sizeof *t);
            for (int r = 0; r < reps + 2; r++) {
                double s = now_ms();
                mygpt_error err;
                if (naive)
                    mygpt_matmul_naive(o, a, w, NULL, (size_t)M, K, N);
                else if (mygpt_matmul(o, a, w, NULL, (size_t)M, K, N, &err) != MYGPT_OK) {
                    fprintf(stderr, "mygpt-bench: %s\n", err.message);
                    return 1;
                }
                if (r >= 2)
                    t[r - 2] = now_ms() - s;
            }
            qsort(t, (size_t)reps, sizeof *t, cmp_double);
            const double ms = t[reps / 2], gf = 2.0 * M * K * (double)N / (ms * 1e6);
            printf("matmul=%dx%dx%d threads=%d median_ms=%.3f gflops=%.1f\n", M, K, N, th, ms, gf);
            free(t);
        }
        free(a);
        free(w);
        free(o);
        return 0;
    }

    result rs[NCONFIGS * 64];
    int nr = 0;
    FILE *csvf = csv ? fopen(csv, "w") : NULL;
    if (csv && !csvf) {
        fprintf(stderr, "mygpt-bench: cannot write %s\n", csv);
        return 1;
    }
    if (csvf)
        fprintf(csvf, "config,threads,median_ms,tokens_per_s,gflops,speedup,efficiency\n");
    printf("FLOPs per forward: 2*(12*N*C^2 + V*C)*B*T + 4*N*B*T^2*C\n");
    printf("%-8s %7s %11s %12s %8s %8s %6s\n", "config", "threads", "median_ms", "tokens/s", "GFLOP/s",
           "speedup", "eff");
    const char *last = NULL;
    for (int k = 0; k < NCONFIGS; k++) {
        const bench_config *c = &CONFIGS[k];
        if (config && strcmp(config, c->name) != 0)
            continue;
        mygpt_config cfg = {c->V, c->C, c->H, c->N, c->T};
        mygpt_gpt *gpt;
        mygpt_error err = {0};
        if (mygpt_gpt_create(&gpt, &cfg, 0, &err) != MYGPT_OK) {
            fprintf(stderr, "mygpt-bench: %s\n", err.message);
            return 1;
        }
        gpt->use_naive_kernels = naive;
        int64_t *ids = malloc(sizeof(int64_t) * (size_t)c->B * c->T);
        for (int i = 0; i < c->B * c->T; i++)
            ids[i] = (int64_t)((i * 7919) % c->V);
        const int big = c->V > 1000;
        const int r = reps ? reps : (big ? 5 : c->C > 100 ? 10 : 20000);
        const int w = warmup >= 0 ? warmup : (big ? 1 : 3);
        const int t0 = threads ? threads : 1, t1 = threads ? threads : nproc;
        double base_ms = 0, medians[64];
        time_forward(gpt, c, ids, w, r, t0, t1, medians);
        for (int th = t0; th <= t1; th++) {
            const double ms = medians[th - t0];
            if (th == 1)
                base_ms = ms; /* speedups are relative to one thread */
            const double tok = c->B * (double)c->T / (ms / 1e3), gf = forward_gflop(c) / (ms / 1e3);
            const double speed = base_ms > 0 ? base_ms / ms : 0;
            printf("%-8s %7d %11.4f %12.0f %8.1f %8.2f %6.2f\n", c->name, th, ms, tok, gf, speed,
                   speed / th);
            if (csvf)
                fprintf(csvf, "%s,%d,%.4f,%.1f,%.2f,%.3f,%.3f\n", c->name, th, ms, tok, gf, speed,
                        speed / th);
            rs[nr++] = (result){c->name, th, ms, tok, gf};
        }
        last = c->name;
        printf("  peak RSS so far: %ld MiB (parameters: %.0f MiB)\n", peak_rss_mb(),
               gpt->num_parameters * 4.0 / (1 << 20));
        free(ids);
        mygpt_gpt_free(gpt);
    }
    if (!last) {
        fprintf(stderr, "mygpt-bench: unknown config '%s' (tiny, char, gpt2, gpt2-b8)\n", config);
        return 2;
    }
    if (csvf)
        fclose(csvf);
    if (svg)
        write_svg(svg, rs, nr, threads ? threads : nproc);
    const result *l = &rs[nr - 1];
    printf("config=%s threads=%d median_ms=%.4f tokens_per_s=%.0f gflops=%.1f\n", l->name, l->threads,
           l->ms, l->tokens_s, l->gflops);
    return 0;
}
