/*
 * bench.c - mygpt-bench: how fast the GPT forward pass (or the matmul alone) runs,
 * and how it scales with threads. Measures only; nothing here is asserted. In a sweep
 * the thread counts take turns forward pass by forward pass (see time_forward).
 *
 *   mygpt-bench                                  every config, threads 1..nproc
 *   mygpt-bench --config gpt2 --threads 2        one config and thread count
 *   mygpt-bench --matmul 1024,768,3072           the matmul alone (M, K, N)
 *   mygpt-bench --matmul 512,768,50257 --backward  its backward's two products
 *   mygpt-bench --loss 256,50257                 the cross-entropy alone (N, V)
 *   mygpt-bench --attention 1,1024,768,12       the attention's forward alone (B, T, C, NH)
 *   mygpt-bench --attention-backward 2,256,768,12  the attention's backward alone
 *   mygpt-bench --peak                           the cores' FMA throughput, 1..nproc busy
 *   mygpt-bench --latency                        a cache line's trip between two cores
 *   mygpt-bench --quick                          a first look, under 20 s
 *   options: --reps R  --warmup W  --csv FILE  --svg FILE  --naive  --help
 *
 * FLOPs of a forward pass (multiply-adds counted as 2):
 *   2 * (12 N C^2 + V C) * B T   (the linear layers and the tied head)
 *   + 4 N B T^2 C                (q k^T and p v over the full T x T, as usually quoted)
 * The last line is machine-readable:
 *   config=NAME threads=K median_ms=X tokens_per_s=Y gflops=Z
 *   matmul=MxKxN threads=K median_ms=X gflops=Z cpu_ms=C pct_peak=P peak_gflops=G isa=S load=L
 *   matmul_backward=MxKxN threads=K dinp_ms=X dinp_gflops=Y dweight_ms=X dweight_gflops=Y
 *     dinp_cpu_ms=C dinp_pct_peak=P dweight_cpu_ms=C dweight_pct_peak=P peak_gflops=G isa=S load=L
 *   attention=B,T,C,NH threads=K kernel=S median_ms=X cpu_ms=C with_probs_ms=Y gflops=Z
 *     pct_peak=P peak_gflops=G isa=S load=L
 *   attention_backward=B,T,C,NH threads=K kernel=S median_ms=X cpu_ms=C load=L
 *   (cpu_ms: the CPU time a call, its threads' own clocks summed; pct_peak: the FLOP
 *   rate in it, as % of one thread's --peak G of the set S the products, or the
 *   attention, run; L the load average; no cpu_ms with --naive)
 */
#include <assert.h>
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "bench_learn.h"
#include "mygpt.h"
#include "kernels/matmul.h" /* mygpt_matmul_grad: the backward as the training step calls it */

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
        cli_error("mygpt-bench", "out of memory");
        exit(1);
    }
    for (int r = 0; r < warmup + reps; r++) {
        for (int th = t0; th <= t1; th++) {
            omp_set_num_threads(th);
            double a = now_ms();
            if (mygpt_gpt_forward(gpt, ids, c->B, c->T, &err) != MYGPT_OK) {
                cli_error("mygpt-bench", "%s", err.message);
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

/* forward configs, the training step and decoding */
#define MAX_SERIES (NCONFIGS + 2)

typedef struct result {
    const char *name;
    int threads;
    double ms, tokens_s, gflops;
} result;

/* The sweep's table: its first line. */
#define CSV_HEADER "config,threads,median_ms,tokens_per_s,gflops,speedup,efficiency\n"

/* An SVG plot of speedup against threads: one line per config through the measured
 * points only (thread counts on the x axis, integer ticks), and the ideal speedup
 * (y = threads) dashed. Speedups need a 1-thread time: configs without one are left
 * out, and with no 1-thread time at all there is nothing to plot (main refuses --svg
 * with --threads above 1). 0, or EXIT_RUNTIME after the line saying why. */
static int write_svg(const char *path, const result *rs, int n, int t0, int t1)
{
    mygpt_svg_series series[MAX_SERIES + 1];
    float xs[MAX_SERIES + 1][64], ys[MAX_SERIES + 1][64];
    int ns = 0;
    double ymax = t1;
    for (int k = 0; k < n && ns < MAX_SERIES; k++) {
        int seen = 0; /* one series per name, in the order measured */
        for (int i = 0; i < k; i++)
            seen |= strcmp(rs[i].name, rs[k].name) == 0;
        if (seen)
            continue;
        double base = 0;
        int cnt = 0;
        for (int i = 0; i < n; i++)
            if (strcmp(rs[i].name, rs[k].name) == 0 && rs[i].threads == 1)
                base = rs[i].ms;
        if (base <= 0)
            continue;
        for (int i = 0; i < n && cnt < 64; i++)
            if (strcmp(rs[i].name, rs[k].name) == 0) {
                xs[ns][cnt] = (float)rs[i].threads;
                ys[ns][cnt] = (float)(base / rs[i].ms);
                if (ys[ns][cnt] > ymax)
                    ymax = ys[ns][cnt];
                cnt++;
            }
        series[ns] = (mygpt_svg_series){.x = xs[ns], .y = ys[ns], .n = cnt, .label = rs[k].name,
                                        .markers = 1};
        ns++;
    }
    assert(ns > 0); // every config has its 1-thread time: main refuses --svg with --threads above 1
    xs[ns][0] = (float)t0; /* ideal: speedup = threads */
    ys[ns][0] = (float)t0;
    xs[ns][1] = (float)t1;
    ys[ns][1] = (float)t1;
    series[ns] = (mygpt_svg_series){.x = xs[ns], .y = ys[ns], .n = t1 > t0 ? 2 : 1,
                                    .label = "ideal", .dashed = 1};
    ns++;
    mygpt_svg fig;
    mygpt_svg_begin(&fig, 760, 480);
    const mygpt_svg_panel p = {80, 50, 520, 360, "mygpt: speedup over 1 thread",
                               "threads", "speedup", .legend_outside = 1};
    mygpt_svg_line_plot(&fig, &p, series, ns, 0.0, ymax);
    mygpt_error err = {0};
    if (mygpt_svg_save(&fig, path, &err) != MYGPT_OK) { // the path was checked: a write that failed
        cli_error("mygpt-bench", "--svg: %s", err.message);
        return EXIT_RUNTIME;
    }
    printf("speedup plot written to %s\n", path);
    return 0;
}

/* Ends a --matmul line: the peak its percentages are of (a thread's, at the instruction
 * set the products run; none with --naive) and the load average beside the times */
static void print_load(double peak, const char *isa)
{
    double load[1] = {-1};
    if (peak > 0)
        printf(" peak_gflops=%.1f isa=%s", peak, isa);
    printf(" load=%.2f\n", getloadavg(load, 1) == 1 ? load[0] : -1.0);
}

/* The backward of out (M, N) = a (M, K) w^T, each product timed alone as the training
 * step runs it (written over, not added: mygpt_linear_backward after zero_grad):
 * dinp (M, K) = dout w, and dweight (N, K) = dout^T a (dout read transposed). dout is
 * o, filled with uniforms. */
static int bench_matmul_backward(const float *a, const float *w, float *o, int M, int K, int N, int t0, int t1,
                                 int reps, int naive)
{
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 1);
    mygpt_uniform_(&rng, o, (size_t)M * N, -1, 1, NULL);
    float *dinp = calloc((size_t)M * K, sizeof(float)), *dw = calloc((size_t)N * K, sizeof(float));
    double *t = malloc((size_t)reps * sizeof *t), *c = malloc((size_t)reps * sizeof *c);
    if (!dinp || !dw || !t || !c) {
        cli_error("mygpt-bench", "out of memory");
        free(dinp), free(dw), free(t), free(c);
        return 1;
    }
    const char *isa = "";
    const double peak = naive ? 0 : peak_gflops(1, &isa); /* a thread's, for % of peak */
    for (int th = t0; th <= t1; th++) {
        omp_set_num_threads(th);
        double ms[2], cms[2];
        for (int which = 0; which < 2; which++) { // 0: dinp, 1: dweight
            float *di = which ? NULL : dinp, *dwt = which ? dw : NULL;
            for (int r = 0; r < reps + 2; r++) {
                double s = now_ms(), cs = cpu_ms();
                mygpt_error err;
                if (naive)
                    mygpt_matmul_backward_naive((mygpt_linear_grads){di, dwt, NULL}, o, a, w, (size_t)M, K, N);
                else if (mygpt_matmul_grad(&(mygpt_product_grad){.dinp = di, .dweight = dwt, .dout = o, .inp = a,
                                                                 .weight = w, .N = (size_t)M, .C = K, .OC = N,
                                                                 .set_dinp = 1, .set_dweight = 1},
                                           &err) != MYGPT_OK) {
                    cli_error("mygpt-bench", "%s", err.message);
                    free(dinp), free(dw), free(t), free(c);
                    return 1;
                }
                if (r >= 2)
                    t[r - 2] = now_ms() - s, c[r - 2] = cpu_ms() - cs;
            }
            qsort(t, (size_t)reps, sizeof *t, cmp_double);
            qsort(c, (size_t)reps, sizeof *c, cmp_double);
            ms[which] = t[reps / 2];
            cms[which] = c[reps / 2];
        }
        const double flop = 2.0 * M * K * (double)N;
        printf("matmul_backward=%dx%dx%d threads=%d dinp_ms=%.3f dinp_gflops=%.1f dweight_ms=%.3f "
               "dweight_gflops=%.1f", M, K, N, th, ms[0], flop / (ms[0] * 1e6), ms[1], flop / (ms[1] * 1e6));
        if (peak > 0)
            printf(" dinp_cpu_ms=%.3f dinp_pct_peak=%.1f dweight_cpu_ms=%.3f dweight_pct_peak=%.1f", cms[0],
                   100 * flop / (cms[0] * 1e6) / peak, cms[1], 100 * flop / (cms[1] * 1e6) / peak);
        print_load(peak, isa);
    }
    free(dinp), free(dw), free(t), free(c);
    return 0;
}

static void help(void)
{
    printf("usage: mygpt-bench [--config tiny|char|gpt2|gpt2-b8] [--threads K] [--reps R]\n"
           "                   [--warmup W] [--csv FILE] [--svg FILE] [--naive] [--quick] [--unpacked]\n"
           "       mygpt-bench --matmul M,K,N [--backward] [--threads K] [--reps R] [--naive]\n"
           "       mygpt-bench --loss N,V [--threads K] [--reps R]\n"
           "       mygpt-bench --attention|--attention-backward B,T,C,NH [--threads K] [--reps R]\n"
           "       mygpt-bench --train [--config tiny-train|verdict|gpt2-b4t64|book-ch5|book-instruct|llama15m]\n"
           "                   [--threads K] [--reps R]\n"
           "       mygpt-bench --classify [--config book] [--threads K] [--reps R]\n"
           "       mygpt-bench --generate [--config gpt2|gpt2-xl|stories260K|stories15M] [--weights fp32|bf16|int8]\n"
           "                   [--prompt 16] [--new 128] [--reps 5] [--no-kv-cache] [--threads K]\n"
           "                   [--checkpoint FILE] [--save-model FILE.bin]\n"
           "       mygpt-bench --bandwidth [--threads K]\n"
           "       mygpt-bench --peak [--threads K]\n"
           "       mygpt-bench --latency\n"
           "\n"
           "Times the GPT forward pass (median of R passes after W unmeasured ones) for each\n"
           "config at 1..nproc threads (or only K), with tokens/s, GFLOP/s and the speedup\n"
           "over 1 thread; or the matmul (with --backward: its backward's dinp and dweight, each\n"
           "alone; wall and CPU time, the latter as %% of the --peak of the set the products\n"
           "run) or the loss or the attention (its forward, or --attention-backward) alone.\n"
           "--quick: a first look in under 20 s (tiny, char and gpt2-b8, few passes). --csv and --svg write the sweep's table and plot.\n"
           "The weights are packed once per model (mygpt_gpt_pack), as `mygpt forward` does;\n"
           "--unpacked packs them at every call.\n"
           "--train times a training step (forward with loss, backward, AdamW; book-ch5: the book's\n"
           "chapter-5 step, batch 2 x 256; book-instruct: the book's chapter-7 step at GPT-2 small,\n"
           "every parameter training; llama15m: a Llama of llama2.c's stories15M shape, batch\n"
           "4 x 256), then its parts (the products, the attention forward and backward) each timed\n"
           "alone at its shapes, beside their shares of the step's FLOPs;\n"
           "--classify the\n"
           "book's chapter-6 fine-tuning step (the last block trains) beside full fine-tuning\n"
           "(--config book: alone), its evaluation batch and its FLOP limit;\n"
           "--generate\n"
           "decoding at B = 1 at GPT-2 small's or XL's shape, or a Llama's (stories260K: llama2.c's\n"
           "trained model, corpus/llama/stories260K.bin from the repository's root; stories15M: a\n"
           "random model of llama2.c's 15M shape, dim 288, 6 layers, 6 heads, V 32000, context 256),\n"
           "in each weight format (or one), beside the bandwidth limits (memory's, and the caches'\n"
           "over the bytes a token reads); --checkpoint FILE decodes that model (a llama2.c .bin or\n"
           "a mygpt checkpoint); --save-model FILE.bin writes the Llama decoded as llama2.c's file\n"
           "(bench/compare_llama2c.py times its run.c on it); --bandwidth the read bandwidth;\n"
           "--peak the fused multiply-add throughput with 1..nproc threads all busy;\n"
           "--latency a cache line's round trip between two threads.\n"
           "Measures only: nothing here is asserted.\n");
}

/* --NAME's integer value in [min, max] into *out (unchanged when the flag is absent). */
static int int_arg(const parsed_args *a, const char *name, int64_t min, int64_t max, int *out)
{
    int64_t v;
    if (!args_has(a, name))
        return 0;
    if (parse_i64("mygpt-bench", name, args_get(a, name), min, max, &v))
        return 1;
    *out = (int)v;
    return 0;
}

/* --generate with its options; the exit status */
static int generate_command(const parsed_args *pa, int threads, int nproc, int reps)
{
    int prompt = 16, new_tokens = 128;
    if (int_arg(pa, "prompt", 1, 1023, &prompt) || int_arg(pa, "new", 1, 1023, &new_tokens))
        return EXIT_USAGE;
    const generate_opts go = {args_get(pa, "config"), args_get(pa, "weights"), args_get(pa, "checkpoint"),
                              args_get(pa, "save-model"), threads, nproc, prompt, new_tokens,
                              args_has(pa, "no-kv-cache"), reps};
    return bench_generate(&go, NULL);
}

/* s as exactly n sizes "A,B,...", each from 1 to INT_MAX (args_size_list's digits), into
 * out: 1, or 0 for anything else (a size past int is refused, not wrapped) */
static int parse_sizes(const char *s, int n, int *out)
{
    int64_t v[4];
    if (n > 4 || args_size_list(s, v, 4) != n)
        return 0;
    for (int i = 0; i < n; i++) {
        if (v[i] < 1 || v[i] > INT_MAX)
            return 0;
        out[i] = (int)v[i];
    }
    return 1;
}

int main(int argc, char **argv)
{
    cli_cap_threads();
    if (cli_check_kernel_env("mygpt-bench"))
        return EXIT_USAGE;
    cli_ignore_file_size_signal();
    cli_check_output_at_exit("mygpt-bench");
    static const arg_spec SPECS[] = {{"config", 1, 0}, {"threads", 1, 0}, {"reps", 1, 0},
                                     {"warmup", 1, 0}, {"csv", ARG_PATH, 0}, {"svg", ARG_PATH, 0},
                                     {"matmul", 1, 0}, {"naive", 0, 0},   {"quick", 0, 0},
                                     {"train", 0, 0},  {"classify", 0, 0}, {"generate", 0, 0}, {"bandwidth", 0, 0}, {"peak", 0, 0}, {"latency", 0, 0},
                                     {"prompt", 1, 0}, {"new", 1, 0},     {"no-kv-cache", 0, 0},
                                     {"unpacked", 0, 0}, {"loss", 1, 0}, {"weights", 1, 0}, {"backward", 0, 0},
                                     {"attention", 1, 0}, {"attention-backward", 1, 0},
                                     {"checkpoint", ARG_PATH, 0}, {"save-model", ARG_PATH, 0},
                                     {NULL, 0, 0}};
    args_set_prefix("");
    parsed_args pa;
    const int prc = args_parse("mygpt-bench", argc - 1, argv + 1, SPECS, 0, &pa);
    if (prc < 0) {
        help();
        return 0;
    }
    if (prc)
        return EXIT_USAGE;
    const char *config = args_get(&pa, "config"), *csv = args_get(&pa, "csv");
    const char *svg = args_get(&pa, "svg"), *matmul = args_get(&pa, "matmul");
    const int naive = args_has(&pa, "naive"), quick = args_has(&pa, "quick");
    const int unpacked = args_has(&pa, "unpacked");
    int threads = 0, reps = 0, warmup = -1;
    if (int_arg(&pa, "threads", 1, 64, &threads) || int_arg(&pa, "reps", 1, 100000, &reps) ||
        int_arg(&pa, "warmup", 0, 1000, &warmup))
        return EXIT_USAGE;
    // the benchmarks and the flags each reads (mode NULL: the forward pass's sweep): a flag
    // another reads is refused, not ignored (--attention's --backward timed the forward
    // without a word)
    static const struct {
        const char *mode, *reads[10];
    } BENCHMARKS[] = {{NULL, {"config", "threads", "reps", "warmup", "csv", "svg", "naive", "quick", "unpacked"}},
                      {"train", {"config", "threads", "reps", "warmup"}},
                      {"classify", {"config", "threads", "reps", "warmup"}},
                      {"generate", {"config", "weights", "checkpoint", "save-model", "prompt", "new", "no-kv-cache",
                                    "threads", "reps"}},
                      {"bandwidth", {"threads"}},
                      {"peak", {"threads"}},
                      {"latency", {NULL}},
                      {"attention", {"threads", "reps"}},
                      {"attention-backward", {"threads", "reps"}},
                      {"loss", {"threads", "reps"}},
                      {"matmul", {"backward", "naive", "threads", "reps"}}};
    // one benchmark a run: of two, one would run and the other be dropped without a word
    size_t m = 0;
    for (size_t i = 1; i < sizeof BENCHMARKS / sizeof *BENCHMARKS; i++) {
        if (!args_has(&pa, BENCHMARKS[i].mode))
            continue;
        if (m) {
            cli_error("mygpt-bench", "--%s and --%s: one benchmark a run", BENCHMARKS[m].mode, BENCHMARKS[i].mode);
            return EXIT_USAGE;
        }
        m = i;
    }
    const char *mode = BENCHMARKS[m].mode;
    if (mode && (csv || svg)) {
        cli_error("mygpt-bench", "--%s: --csv and --svg write the forward pass's sweep (without --%s)", csv ? "csv" : "svg",
                  mode);
        return EXIT_USAGE;
    }
    for (const arg_spec *f = SPECS; f->name; f++) {
        int reads = mode && strcmp(f->name, mode) == 0;
        for (int k = 0; k < 10 && BENCHMARKS[m].reads[k]; k++)
            reads |= strcmp(f->name, BENCHMARKS[m].reads[k]) == 0;
        if (reads || !args_has(&pa, f->name))
            continue;
        char list[160] = "";
        for (int k = 0; k < 10 && BENCHMARKS[m].reads[k]; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s--%s", k ? ", " : "", BENCHMARKS[m].reads[k]);
        cli_error("mygpt-bench", "--%s does not go with %s%s (it reads %s)", f->name,
                  mode ? "--" : "the forward pass's sweep", mode ? mode : "", list[0] ? list : "no other flag");
        return EXIT_USAGE;
    }
    if (svg && threads > 1) { // known now, not after the sweep
        cli_error("mygpt-bench", "--svg: the speedup plot needs a 1-thread time (run the sweep without --threads, or "
                                 "with --threads 1)");
        return EXIT_USAGE;
    }
    long online0 = sysconf(_SC_NPROCESSORS_ONLN);
    const int nproc0 = online0 < 1 ? 1 : online0 > 64 ? 64 : (int)online0;
    if (args_has(&pa, "train"))
        return bench_train(config, threads, nproc0, reps, warmup, NULL);
    if (args_has(&pa, "classify")) {
        if (config && strcmp(config, "book") != 0) {
            cli_error("mygpt-bench", "--classify --config: unknown config '%s' (book: the book's freezing alone)",
                      config);
            return EXIT_USAGE;
        }
        return bench_classify(threads, nproc0, reps, warmup, config != NULL);
    }
    if (args_has(&pa, "generate"))
        return generate_command(&pa, threads, nproc0, reps);
    if (args_has(&pa, "bandwidth"))
        return bench_bandwidth(threads, nproc0);
    if (args_has(&pa, "peak"))
        return bench_peak(threads, nproc0);
    if (args_has(&pa, "latency"))
        return bench_latency(nproc0);
    if (args_has(&pa, "attention") || args_has(&pa, "attention-backward")) {
        const int backward = args_has(&pa, "attention-backward");
        const char *flag = backward ? "--attention-backward" : "--attention";
        const char *shape = args_get(&pa, flag + 2);
        int d[4];
        if (!parse_sizes(shape, 4, d) || d[2] < d[3] || d[2] % d[3] != 0 || d[1] > MYGPT_MAX_DIM) {
            cli_error("mygpt-bench", "%s: '%s' is not B,T,C,NH (each from 1 to %d, NH dividing C, T at most %d)",
                      flag, shape, INT_MAX, MYGPT_MAX_DIM);
            return EXIT_USAGE;
        }
        return bench_attention(d[0], d[1], d[2], d[3], threads, nproc0, reps ? reps : 10, backward);
    }
    if (args_has(&pa, "loss")) {
        int d[2];
        if (!parse_sizes(args_get(&pa, "loss"), 2, d)) {
            cli_error("mygpt-bench", "--loss: '%s' is not N,V, each from 1 to %d", args_get(&pa, "loss"), INT_MAX);
            return EXIT_USAGE;
        }
        return bench_loss(d[0], d[1], threads, nproc0, reps ? reps : 10);
    }
    if (config) {
        int known = 0;
        for (int k = 0; k < NCONFIGS; k++)
            known |= strcmp(config, CONFIGS[k].name) == 0;
        if (!known) {
            cli_error("mygpt-bench", "--config: unknown config '%s' (tiny, char, gpt2, gpt2-b8)", config);
            return EXIT_USAGE;
        }
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    const int nproc = online < 1 ? 1 : online > 64 ? 64 : (int)online; /* sweeps stop at 64 */

    if (matmul) {
        int d[3];
        if (!parse_sizes(matmul, 3, d)) {
            cli_error("mygpt-bench", "--matmul: '%s' is not M,K,N, each from 1 to %d", matmul, INT_MAX);
            return EXIT_USAGE;
        }
        const int M = d[0], K = d[1], N = d[2];
        const double MK = (double)M * K, NK = (double)N * K; // a and w (and dinp and dweight), then o
        const int rc_fit = bench_fits("--matmul", matmul, 4.0 * ((args_has(&pa, "backward") ? 2 : 1) * (MK + NK) + (double)M * N));
        if (rc_fit)
            return rc_fit;
        float *a = malloc(sizeof(float) * (size_t)M * K), *w = malloc(sizeof(float) * (size_t)N * K);
        float *o = malloc(sizeof(float) * (size_t)M * N);
        if (!a || !w || !o) {
            cli_error("mygpt-bench", "out of memory");
            return 1;
        }
        mygpt_rng rng = {0};
        mygpt_rng_seed(&rng, 0);
        mygpt_uniform_(&rng, a, (size_t)M * K, -1, 1, NULL);
        mygpt_uniform_(&rng, w, (size_t)N * K, -1, 1, NULL);
        const int t0 = threads ? threads : 1, t1 = threads ? threads : nproc;
        if (reps == 0)
            reps = 10;
        if (args_has(&pa, "backward")) {
            const int rc = bench_matmul_backward(a, w, o, M, K, N, t0, t1, reps, naive);
            free(a);
            free(w);
            free(o);
            return rc;
        }
        const char *isa = "";
        const double peak = naive ? 0 : peak_gflops(1, &isa); /* a thread's, for % of peak */
        for (int th = t0; th <= t1; th++) {
            omp_set_num_threads(th);
            double *t = malloc(2 * (size_t)reps * sizeof *t), *c = t + reps;
            for (int r = 0; r < reps + 2; r++) {
                double s = now_ms(), cs = cpu_ms();
                mygpt_error err;
                if (naive)
                    mygpt_matmul_naive(o, a, w, NULL, (size_t)M, K, N);
                else if (mygpt_matmul(o, a, w, NULL, (size_t)M, K, N, &err) != MYGPT_OK) {
                    cli_error("mygpt-bench", "%s", err.message);
                    return 1;
                }
                if (r >= 2)
                    t[r - 2] = now_ms() - s, c[r - 2] = cpu_ms() - cs;
            }
            qsort(t, (size_t)reps, sizeof *t, cmp_double);
            qsort(c, (size_t)reps, sizeof *c, cmp_double);
            const double ms = t[reps / 2], gf = 2.0 * M * K * (double)N / (ms * 1e6);
            printf("matmul=%dx%dx%d threads=%d median_ms=%.3f gflops=%.1f", M, K, N, th, ms, gf);
            if (peak > 0) // CPU time: the work's rate whatever else the machine runs
                printf(" cpu_ms=%.3f pct_peak=%.1f", c[reps / 2], 100 * 2.0 * M * K * (double)N / (c[reps / 2] * 1e6) / peak);
            print_load(peak, isa);
            free(t);
        }
        free(a);
        free(w);
        free(o);
        return 0;
    }

    result rs[MAX_SERIES * 64];
    int nr = 0;
    // the CSV is gathered in memory and written whole at the end (mygpt_write_file), its
    // path checked now: a failed write (a full disk, the file-size limit) keeps the old file
    char *csv_text = NULL;
    size_t csv_len = 0;
    mygpt_error werr = {0};
    const cli_file outputs[2] = {{"--csv", csv, 1, 0}, {"--svg", svg, 1, 0}};
    if (cli_distinct_files("mygpt-bench", outputs, 2))
        return EXIT_USAGE;
    for (int i = 0; i < 2; i++)
        if (outputs[i].path && mygpt_checkpoint_check_path(outputs[i].path, &werr) != MYGPT_OK) {
            cli_error("mygpt-bench", "%s: %s", outputs[i].flag, werr.message);
            return EXIT_USAGE;
        }
    // a file there is replaced only when it is what a sweep wrote (a user's file never is)
    const int csv_kept = csv && !cli_replaceable_text(csv, CSV_HEADER);
    if (csv_kept || (svg && !mygpt_svg_replaceable(svg))) {
        cli_error("mygpt-bench", "--%s: %s is there and is not a sweep's %s: not replaced (move it, or write elsewhere)",
                  csv_kept ? "csv" : "svg", csv_kept ? csv : svg, csv_kept ? "table" : "plot");
        return EXIT_USAGE;
    }
    FILE *csvf = csv ? open_memstream(&csv_text, &csv_len) : NULL;
    if (csv && !csvf) {
        cli_error("mygpt-bench", "out of memory for --csv");
        return EXIT_RUNTIME;
    }
    if (csvf)
        fprintf(csvf, "%s", CSV_HEADER);
    printf("FLOPs per forward: 2*(12*N*C^2 + V*C)*B*T + 4*N*B*T^2*C\n");
    printf("%-8s %7s %11s %12s %8s %8s %6s\n", "config", "threads", "median_ms", "tokens/s", "GFLOP/s",
           "speedup", "eff");
    for (int k = 0; k < NCONFIGS; k++) {
        const bench_config *c = &CONFIGS[k];
        if (config && strcmp(config, c->name) != 0)
            continue;
        if (!config && quick && strcmp(c->name, "gpt2") == 0)
            continue; /* --quick: gpt2-b8 stands for the GPT-2 shape (half the FLOPs) */
        mygpt_config cfg = {c->V, c->C, c->H, c->N, c->T};
        mygpt_gpt *gpt;
        mygpt_error err = {0};
        if (mygpt_gpt_create(&gpt, &cfg, 0, &err) != MYGPT_OK) {
            cli_error("mygpt-bench", "%s", err.message);
            return 1;
        }
        gpt->impl = naive ? MYGPT_IMPL_REFERENCE : MYGPT_IMPL_FAST;
        if (!naive && !unpacked) { /* what `mygpt forward` does: the weights packed once */
            const double a = now_ms();
            if (mygpt_gpt_pack(gpt, &err) != MYGPT_OK) {
                cli_error("mygpt-bench", "%s", err.message);
                return 1;
            }
            printf("  %s: weights packed once in %.1f ms (--unpacked: at every call)\n", c->name, now_ms() - a);
        }
        int64_t *ids = malloc(sizeof(int64_t) * (size_t)c->B * c->T);
        for (int i = 0; i < c->B * c->T; i++)
            ids[i] = (int64_t)((i * 7919) % c->V);
        const int big = c->V > 1000;
        const int r = reps ? reps : quick ? (big ? 1 : c->C > 100 ? 3 : 2000)
                                          : (big ? 5 : c->C > 100 ? 10 : 20000);
        const int w = warmup >= 0 ? warmup : quick ? 1 : (big ? 1 : 3);
        const int t0 = threads ? threads : 1, t1 = threads ? threads : nproc;
        double base_ms = 0, medians[64];
        time_forward(gpt, c, ids, w, r, t0, t1, medians);
        for (int th = t0; th <= t1; th++) {
            const double ms = medians[th - t0];
            if (th == 1)
                base_ms = ms; /* speedups are relative to one thread */
            const double tok = c->B * (double)c->T / (ms / 1e3), gf = forward_gflop(c) / (ms / 1e3);
            /* without a 1-thread time there is no speedup to show: "-", not 0.00 */
            char speed_s[16] = "-", eff_s[16] = "-", speed_csv[16] = "", eff_csv[16] = "";
            if (base_ms > 0) {
                snprintf(speed_s, sizeof speed_s, "%.2f", base_ms / ms);
                snprintf(eff_s, sizeof eff_s, "%.2f", base_ms / ms / th);
                snprintf(speed_csv, sizeof speed_csv, "%.3f", base_ms / ms);
                snprintf(eff_csv, sizeof eff_csv, "%.3f", base_ms / ms / th);
            }
            printf("%-8s %7d %11.4f %12.0f %8.1f %8s %6s\n", c->name, th, ms, tok, gf, speed_s, eff_s);
            if (csvf)
                fprintf(csvf, "%s,%d,%.4f,%.1f,%.2f,%s,%s\n", c->name, th, ms, tok, gf, speed_csv,
                        eff_csv);
            rs[nr++] = (result){c->name, th, ms, tok, gf};
        }
        printf("  peak RSS so far: %ld MiB (parameters: %.0f MiB)\n", peak_rss_mb(),
               gpt->num_parameters * 4.0 / (1 << 20));
        free(ids);
        mygpt_gpt_free(gpt);
    }
    const result last_forward = rs[nr - 1];
    if (!config) { /* the sweep: learning and speaking beside the forward passes */
        const int t0 = threads ? threads : 1, t1 = threads ? threads : nproc;
        const char *train = quick ? "verdict" : "gpt2-b4t64";
        static char train_name[32], gen_name[32];
        snprintf(train_name, sizeof train_name, "train %s", train);
        snprintf(gen_name, sizeof gen_name, "decode gpt2");
        double tr[64], ge[64];
        printf("\n");
        if (bench_train(train, threads, nproc, reps ? reps : quick ? 2 : 3, warmup, tr))
            return 1;
        printf("\n");
        const int new_tokens = quick ? 16 : 64;
        const generate_opts go = {"gpt2", "fp32", NULL, NULL, threads, nproc, 16, new_tokens, 0, 1};
        if (bench_generate(&go, ge))
            return 1;
        for (int th = t0; th <= t1; th++) {
            const double tb = quick ? 8 * 32 : 4 * 64; /* tokens per training step */
            rs[nr++] = (result){train_name, th, tr[th - t0], tb / (tr[th - t0] / 1e3), 0};
            rs[nr++] = (result){gen_name, th, ge[th - t0], 1e3 / ge[th - t0], 0};
            if (csvf) {
                fprintf(csvf, "%s,%d,%.4f,%.1f,,%.3f,%.3f\n", train_name, th, tr[th - t0],
                        tb / (tr[th - t0] / 1e3), tr[0] / tr[th - t0], tr[0] / tr[th - t0] / th);
                fprintf(csvf, "%s,%d,%.4f,%.1f,,%.3f,%.3f\n", gen_name, th, ge[th - t0], 1e3 / ge[th - t0],
                        ge[0] / ge[th - t0], ge[0] / ge[th - t0] / th);
            }
        }
    }
    if (csvf) {
        const int gathered = fclose(csvf) == 0;
        const mygpt_status st = gathered ? mygpt_write_file(csv, csv_text, csv_len, &werr) : MYGPT_ENOMEM;
        free(csv_text);
        if (st != MYGPT_OK) {
            cli_error("mygpt-bench", "%s", gathered ? werr.message : "out of memory for --csv");
            return EXIT_RUNTIME;
        }
    }
    if (svg) {
        const int t0 = threads ? threads : 1, t1 = threads ? threads : nproc;
        const int rc = write_svg(svg, rs, nr, t0, t1);
        if (rc)
            return rc;
    }
    const result *l = &last_forward;
    printf("config=%s threads=%d median_ms=%.4f tokens_per_s=%.0f gflops=%.1f\n", l->name, l->threads,
           l->ms, l->tokens_s, l->gflops);
    return 0;
}
