/*
 * bench_learn.c - mygpt-bench's measurements of learning and speaking: a training step
 * (--train), KV-cache decoding (--generate) and the machine's read bandwidth
 * (--bandwidth), each at one thread count or 1..nproc taking turns. Measures only.
 */
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "bench_learn.h"
#include "mygpt.h"
#include "base/base.h" /* mygpt_aligned_block: the bandwidth's block in huge pages */
#include "kernels/attention.h" /* mygpt_attention_kernel_name: which backward ran */
#include "kernels/matmul.h" /* mygpt_matmul_kernel_name: the peak of the set the products run */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define BENCH_X86 1
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

typedef struct train_config {
    const char *name;
    int V, C, H, N, T, B;
    float emb_std;   /* the embeddings' std: the course's 1, or GPT-2's initializer_range */
    int maxT;        /* rows of the position embedding (0: T) */
    mygpt_arch arch; /* whose GPT (the book's: an untied head) */
    int qkv_bias;    /* the book's GPTModel: chapter 7's qkv_bias=True, chapter 5's False */
    double lr, weight_decay; /* AdamW's (weight_decay < 0: mygpt_adamw_init's default) */
    int kv_heads, multiple_of; /* llama: heads of keys and values, model.py's multiple_of */
} train_config;

/* gpt2-b4t64 starts as GPT-2 does, its embeddings N(0, 0.02^2) (the course's N(0, 1)
 * scaled by 0.02; its Linear weights' U(+-1/sqrt(768)) are std 0.021 already). With the
 * course's N(0, 1) the tied head's logits have std sqrt(768) ~ 28: the softmax saturates,
 * the loss starts near 470, and after two steps millions of gradients are subnormal,
 * which Intel cores handle by microcode assists (the step went from 1.3 s to 2.6..6 s on
 * the Intel Xeon VM, family 6): the time of the assists, not of the step. */
static const train_config TRAIN_CONFIGS[] = {
    {"tiny-train", 4, 4, 2, 2, 3, 1, 1.0f, 0, MYGPT_ARCH_COURSE, 0, 1e-4, -1}, /* the chapter-12 GPT on "I love AI" */
    {"verdict", 50257, 64, 4, 2, 32, 8, 1.0f, 0, MYGPT_ARCH_COURSE, 0, 1e-4, -1}, /* chapter 33's model and batch */
    /* GPT-2 small's shape, llm.c's CPU reference batch */
    {"gpt2-b4t64", 50257, 768, 12, 12, 64, 4, 0.02f, 0, MYGPT_ARCH_COURSE, 0, 1e-4, -1},
    /* the book's chapter 5 (GPT_CONFIG_124M at context 256, qkv_bias False, the untied
     * out_head), batch 2 x 256, AdamW lr 4e-4 weight_decay 0.1; no dropout here (the same
     * products) */
    {"book-ch5", 50257, 768, 12, 12, 256, 2, 1.0f, 0, MYGPT_ARCH_LLMS_FROM_SCRATCH, 0, 4e-4, 0.1},
    /* the book's chapter 7 at GPT-2 small (its GPTModel, qkv_bias, the untied out_head, context
     * 1024), every parameter training, AdamW lr 5e-5 weight_decay 0.1, batch 8 padded to 70
     * tokens: the mean of the 116 training batches' padded lengths (57 to 91) that chapter 85
     * prints */
    {"book-instruct", 50257, 768, 12, 12, 70, 8, 1.0f, 1024, MYGPT_ARCH_LLMS_FROM_SCRATCH, 1, 5e-5, 0.1},
    /* llama2.c's stories15M shape (dim 288, 6 layers, 6 heads and kv heads, V 32000, hidden
     * 768 from multiple_of 32), drawn as model.py's _init_weights draws it, over its whole
     * context of 256 tokens, batch 4; AdamW at train.py's lr 5e-4 and weight_decay 0.1 */
    {"llama15m", 32000, 288, 6, 6, 256, 4, 1.0f, 0, MYGPT_ARCH_LLAMA, 0, 5e-4, 0.1, 6, 32},
};
#define NTRAIN (int)(sizeof TRAIN_CONFIGS / sizeof TRAIN_CONFIGS[0])

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The CPU time of the OpenMP team the next region gets (omp_get_max_threads() threads),
 * each thread's own clock read by itself, summed. Not the process's clock: Linux reads
 * another thread's time as of its last scheduler tick, so over one call of a few
 * milliseconds at 2 threads it came out 15 % over or under the sum of the threads' own
 * clocks (bench/results/avx2_kernels.txt, section 22). libgomp keeps the same threads for
 * the same team size, so two readings around a call see the threads the call ran on. */
double cpu_ms(void)
{
    double sum = 0;
#pragma omp parallel reduction(+ : sum)
    {
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        sum += ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
    }
    return sum;
}

int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

long peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

int bench_fits(const char *flag, const char *sizes, double bytes)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const double memory = (double)pages * (double)page;
    if (pages <= 0 || page <= 0 || bytes <= memory)
        return 0;
    cli_error("mygpt-bench", "%s %s: its buffers need %.1f GB, more than this machine's %.1f GB of memory", flag, sizes,
              bytes / 1e9, memory / 1e9);
    return EXIT_USAGE;
}

/* c's model configuration */
static mygpt_config train_model_config(const train_config *c)
{
    mygpt_config cfg = {.vocab_size = c->V, .embed_dim = c->C, .num_heads = c->H, .num_layers = c->N,
                        .max_seq_len = c->maxT ? c->maxT : c->T, .arch = c->arch,
                        .qkv_bias = c->qkv_bias, .num_kv_heads = c->kv_heads};
    if (c->multiple_of)
        cfg.ffn_hidden = mygpt_llama_hidden_dim(c->C, c->multiple_of);
    return cfg;
}

/* Multiply-adds of a layer's products per token: 12 C^2 for a GPT (q, k, v, o and the two
 * of the 4C MLP); a llama's q and o C^2 each, k and v C KV each (KV = C / heads * kv heads),
 * and SwiGLU's three C H */
static double layer_macs(const train_config *c)
{
    const mygpt_config cfg = train_model_config(c);
    const double C = c->C, KV = C / c->H * mygpt_kv_heads(&cfg), H = mygpt_ffn_hidden(&cfg);
    return 2.0 * C * C + 2.0 * C * KV + (mygpt_arch_get(&cfg).swiglu ? 3.0 : 2.0) * C * H;
}

/* The forward's FLOPs of one training step, by part: the layers' products (lin), the head
 * (head) and the attention's two T x T x C products a layer (att) */
typedef struct step_flops {
    double lin, head, att;
} step_flops;
static step_flops forward_flops(const train_config *c)
{
    const double BT = (double)c->B * c->T;
    return (step_flops){2.0 * c->N * layer_macs(c) * BT, 2.0 * (double)c->V * c->C * BT,
                        4.0 * c->N * (double)c->B * c->T * c->T * c->C};
}

/* FLOPs of one training step: the forward's, and the backward counted as twice the
 * forward's matrix products (their two gradients), as the issue asks. */
static double train_gflop(const train_config *c)
{
    const step_flops f = forward_flops(c);
    const double mm = f.lin + f.head;
    return (mm + f.att + 2.0 * mm) / 1e9;
}

static double fma_peak(int threads, const char **isa);
static double read_bandwidth(void);
static double read_bandwidth_of(double bytes);

/* Bytes AdamW moves per parameter: parameter, gradient and both moments read, the
 * parameter and moments written, float32 each */
#define ADAMW_BYTES_PER_PARAM 28.0

static void die(const mygpt_error *err)
{
    cli_error("mygpt-bench", "%s", err->message);
    exit(1);
}

/* Median CPU ms of 3 calls of one part of a step (after one unmeasured call) */
typedef struct step_part {
    const train_config *c;
    float *a, *w, *o, *d1, *d2, *d3, *d4, *att; /* every part's operands */
    float *scratch;
    size_t scratch_len;
} step_part;

static double part_ms(const step_part *p, int which, int M, int K, int N)
{
    const train_config *c = p->c;
    const mygpt_qkv in = {p->a, p->w, p->d3};
    const mygpt_attention_shape shape = {c->B, c->T, c->C, c->H};
    double ms[3];
    for (int r = 0; r < 4; r++) {
        const double s = cpu_ms();
        mygpt_error err = {0};
        mygpt_status st = MYGPT_OK;
        if (which == 0)
            st = mygpt_matmul(p->o, p->a, p->w, NULL, (size_t)M, K, N, &err);
        else if (which == 1)
            st = mygpt_matmul_grad(&(mygpt_product_grad){.dinp = p->d1, .dweight = p->d2, .dout = p->o, .inp = p->a,
                                                         .weight = p->w, .N = (size_t)M, .C = K, .OC = N,
                                                         .set_dinp = 1, .set_dweight = 1},
                                   &err);
        else if (which == 2)
            st = mygpt_attention_forward(p->d1, p->att, in, p->scratch, p->scratch_len, shape, MYGPT_IMPL_FAST, &err);
        else
            mygpt_attention_backward(p->d1, p->d2, p->d4, p->o, p->att, in, shape);
        if (st != MYGPT_OK)
            die(&err);
        if (r > 0)
            ms[r - 1] = cpu_ms() - s;
    }
    qsort(ms, 3, sizeof *ms, cmp_double);
    return ms[1];
}

/* A layer's products as (K, N, how many): a GPT's qkv, proj, fc and fc2; a llama's q and o,
 * k and v, w1 and w3, w2 */
static void layer_shapes(const train_config *c, int shapes[4][3])
{
    const mygpt_config cfg = train_model_config(c);
    const int C = c->C, KV = C / c->H * mygpt_kv_heads(&cfg), H = mygpt_ffn_hidden(&cfg);
    if (!mygpt_arch_get(&cfg).swiglu) {
        const int gpt[4][3] = {{C, 3 * C, 1}, {C, C, 1}, {C, 4 * C, 1}, {4 * C, C, 1}};
        memcpy(shapes, gpt, sizeof gpt);
        return;
    }
    const int llama[4][3] = {{C, C, 2}, {C, KV, 2}, {C, H, 2}, {H, C, 1}};
    memcpy(shapes, llama, sizeof llama);
}

/* The step's parts, each kind of work timed alone (CPU time) at the step's shapes on
 * random operands: the linear layers' products and the tied head forward and backward,
 * the attention forward and backward; the rest of the step (LayerNorm, GELU, the loss,
 * AdamW, ...) is what the step's own CPU time leaves. Layers x each layer's parts. */
static void print_parts(const train_config *c, double step_cpu_ms)
{
    const int n = c->B * c->T, C = c->C, V = c->V;
    const mygpt_config cfg = train_model_config(c);
    const int H = mygpt_ffn_hidden(&cfg), most = V > 4 * C ? V : 4 * C;
    const size_t wide = (size_t)(most > H ? most : H), nc = (size_t)n * C, act = n * wide;
    const size_t big = wide * C > nc ? wide * C : nc, na = (size_t)c->B * c->H * c->T * c->T;
    step_part p = {c,
                   malloc(act * sizeof(float)),
                   malloc(big * sizeof(float)),
                   malloc(act * sizeof(float)),
                   malloc(act * sizeof(float)),
                   malloc(big * sizeof(float)),
                   malloc(nc * sizeof(float)),
                   malloc(nc * sizeof(float)),
                   malloc(na * sizeof(float)),
                   NULL,
                   0};
    p.scratch_len = mygpt_attention_scratch_size(c->T, C / c->H, omp_get_max_threads());
    p.scratch = malloc(p.scratch_len * sizeof(float));
    if (!p.a || !p.w || !p.o || !p.d1 || !p.d2 || !p.d3 || !p.d4 || !p.att || !p.scratch) {
        printf("  (no memory to time the step's parts)\n");
    } else {
        mygpt_rng rng = {0};
        mygpt_rng_seed(&rng, 3);
        mygpt_uniform_(&rng, p.a, act, -1, 1, NULL);
        mygpt_uniform_(&rng, p.w, big, -0.05f, 0.05f, NULL);
        mygpt_uniform_(&rng, p.o, act, -1, 1, NULL);
        mygpt_uniform_(&rng, p.d3, nc, -1, 1, NULL);
        int shapes[4][3]; /* K, N and how many a layer */
        layer_shapes(c, shapes);
        double fwd = 0, bwd = 0;
        for (int i = 0; i < 4; i++) {
            fwd += c->N * shapes[i][2] * part_ms(&p, 0, n, shapes[i][0], shapes[i][1]);
            bwd += c->N * shapes[i][2] * part_ms(&p, 1, n, shapes[i][0], shapes[i][1]);
        }
        const double head_f = part_ms(&p, 0, n, C, V), head_b = part_ms(&p, 1, n, C, V);
        const double att_f = c->N * part_ms(&p, 2, 0, 0, 0), att_b = c->N * part_ms(&p, 3, 0, 0, 0);
        const double rest = step_cpu_ms - fwd - bwd - head_f - head_b - att_f - att_b;
        // each part's FLOPs (the backward's two products twice the forward's one; the
        // attention's backward four products of T x T x C where its forward has two)
        const step_flops f = forward_flops(c);
        const double lin = f.lin, head = f.head, att = f.att, all = 3 * lin + 3 * head + 3 * att;
        printf("  the step's parts, each timed alone at its shapes (CPU ms, %% of the step's %.4g ms |\n"
               "  %% of its %.4g GFLOP, the attention's backward counted here, not in the limit):\n"
               "    linear forward %.4g (%.0f %% | %.0f %%), backward %.4g (%.0f %% | %.0f %%)\n"
               "    head forward %.4g (%.0f %% | %.0f %%), backward %.4g (%.0f %% | %.0f %%)\n"
               "    attention forward %.4g (%.0f %% | %.0f %%), backward %.4g (%.0f %% | %.0f %%)\n"
               "    the rest %.4g (%.0f %% | 0 %%)\n",
               step_cpu_ms, all / 1e9, fwd, 100 * fwd / step_cpu_ms, 100 * lin / all, bwd, 100 * bwd / step_cpu_ms,
               200 * lin / all, head_f, 100 * head_f / step_cpu_ms, 100 * head / all, head_b,
               100 * head_b / step_cpu_ms, 200 * head / all, att_f, 100 * att_f / step_cpu_ms, 100 * att / all, att_b,
               100 * att_b / step_cpu_ms, 200 * att / all, rest, 100 * rest / step_cpu_ms);
    }
    free(p.a), free(p.w), free(p.o), free(p.d1), free(p.d2), free(p.d3), free(p.d4), free(p.att), free(p.scratch);
}

/* The larger steps beside the best this machine could do at t1 threads: the FLOPs at the FMA
 * peak plus AdamW's bytes at the read bandwidth, against the step's ms; and in CPU time, which
 * other jobs on the machine do not stretch as they stretch the wall clock, the step's cpu_ms
 * against one thread's FMA peak per CPU second */
static void print_limit(const train_config *c, size_t params, int t1, double ms, double cpu_ms_step)
{
    omp_set_num_threads(t1);
    const char *isa;
    const double peak = fma_peak(t1, &isa), gbs = read_bandwidth();
    const double adamw_gb = params * ADAMW_BYTES_PER_PARAM / 1e9;
    const double limit = train_gflop(c) / peak * 1e3 + (gbs > 0 ? adamw_gb / gbs * 1e3 : 0);
    printf("  limit at %d threads: %.1f GFLOP at the %s FMA peak (%.1f GFLOP/s, --peak) + AdamW's %.2f GB\n"
           "  at the read bandwidth (%.1f GB/s, --bandwidth) = %.0f ms; this step: %.2fx the limit%s\n",
           t1, train_gflop(c), isa, peak, adamw_gb, gbs, limit, ms / limit,
           strcmp(c->name, "gpt2-b4t64") == 0 ? "\n  (target, issue 26: within 1.25x)" : "");
    const double cpu_peak = peak_gflops(1, &isa), per_cpu_s = train_gflop(c) / (cpu_ms_step / 1e3);
    printf("  in CPU time: the step's %.0f CPU ms run %.1f GFLOP per CPU second, %.0f %% of one thread's %s\n"
           "  FMA peak per CPU second (%.1f)\n", cpu_ms_step, per_cpu_s, 100 * per_cpu_s / cpu_peak, isa, cpu_peak);
}

int bench_train(const char *config, int threads, int nproc, int reps, int warmup, double *medians)
{
    int known = !config;
    char names[256] = "";
    for (int k = 0; k < NTRAIN; k++) { // said before the table: a refusal prints nothing on stdout
        known |= config && strcmp(config, TRAIN_CONFIGS[k].name) == 0;
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "", TRAIN_CONFIGS[k].name);
    }
    if (!known) {
        cli_error("mygpt-bench", "--train --config: unknown config '%s' (%s)", config, names);
        return EXIT_USAGE;
    }
    printf("training step = forward with loss + zero_grad + backward + AdamW update\n"
           "FLOPs per step: forward 2*(12*N*C^2 + V*C)*B*T + 4*N*B*T^2*C, plus the backward counted\n"
           "as 2 x the forward's matmul FLOPs, 2 * 2*(12*N*C^2 + V*C)*B*T; a llama's layer has\n"
           "2*C^2 + 2*C*KV + 3*C*H multiply-adds a token where a GPT's has 12*C^2 (KV: the keys' width,\n"
           "H: SwiGLU's hidden size)\n");
    printf("%-11s %7s %11s %10s %8s %8s\n", "config", "threads", "median_ms", "tokens/s", "GFLOP/s", "speedup");
    const char *last = NULL;
    double last_ms = 0, last_tok = 0, last_gf = 0;
    int last_th = 0;
    for (int k = 0; k < NTRAIN; k++) {
        const train_config *c = &TRAIN_CONFIGS[k];
        if (config && strcmp(config, c->name) != 0)
            continue;
        const mygpt_config cfg = train_model_config(c);
        mygpt_gpt *g;
        mygpt_error err = {0};
        mygpt_trainer *tr;
        if (mygpt_gpt_create(&g, &cfg, 0, &err) != MYGPT_OK || mygpt_trainer_create(&tr, g, &err) != MYGPT_OK)
            die(&err);
        for (size_t i = 0; c->emb_std != 1.0f && i < (size_t)c->V * c->C; i++)
            g->params.wte[i] *= c->emb_std;
        for (size_t i = 0; c->emb_std != 1.0f && i < (size_t)cfg.max_seq_len * c->C; i++)
            g->params.wpe[i] *= c->emb_std;
        const size_t n = (size_t)c->B * c->T;
        int64_t *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
        for (size_t i = 0; i < n; i++) {
            x[i] = (int64_t)((i * 7919) % (size_t)c->V);
            y[i] = (int64_t)((i * 104729 + 1) % (size_t)c->V);
        }
        mygpt_optimizer opt;
        mygpt_adamw_init(&opt, c->lr);
        if (c->weight_decay >= 0)
            opt.weight_decay = c->weight_decay;
        const int r = reps ? reps : (c->V > 1000 ? (c->C > 100 ? 3 : 10) : 2000);
        const int w = warmup >= 0 ? warmup : 1;
        const int t0 = threads ? threads : 1, t1 = threads ? threads : nproc, nt = t1 - t0 + 1;
        double *t = malloc((size_t)r * nt * sizeof *t), base = 0;
        double *phase = malloc((size_t)3 * r * nt * sizeof *phase); // forward, backward, update
        double *cpu = malloc((size_t)r * nt * sizeof *cpu), step_cpu = 0; // CPU ms a step
        for (int rep = 0; rep < w + r; rep++) // thread counts take turns, step by step
            for (int th = t0; th <= t1; th++) {
                omp_set_num_threads(th);
                float loss;
                const double a = now_ms(), ca = cpu_ms();
                if (mygpt_trainer_forward(tr, x, y, c->B, c->T, &loss, &err) != MYGPT_OK)
                    die(&err);
                const double b = now_ms();
                if (mygpt_trainer_zero_grad(tr, &err) != MYGPT_OK || mygpt_trainer_backward(tr, &err) != MYGPT_OK)
                    die(&err);
                const double u = now_ms();
                if (mygpt_optimizer_step(&opt, g->params_memory, tr->grads_memory, g->num_parameters, &err) !=
                    MYGPT_OK)
                    die(&err);
                const double e = now_ms();
                if (rep >= w) {
                    const size_t at = (size_t)(th - t0) * r + (rep - w);
                    t[at] = e - a;
                    phase[3 * at] = b - a, phase[3 * at + 1] = u - b, phase[3 * at + 2] = e - u;
                    cpu[at] = cpu_ms() - ca;
                }
            }
        for (int th = t0; th <= t1; th++) {
            double *ts = t + (size_t)(th - t0) * r;
            double parts[3][r]; // each phase's own median
            for (int q = 0; q < 3; q++) {
                for (int i = 0; i < r; i++)
                    parts[q][i] = phase[3 * ((size_t)(th - t0) * r + i) + q];
                qsort(parts[q], (size_t)r, sizeof(double), cmp_double);
            }
            printf("  %d thread%s: forward+loss %.1f ms, zero_grad+backward %.1f ms, AdamW %.1f ms (medians)\n", th,
                   th == 1 ? "" : "s", parts[0][r / 2], parts[1][r / 2], parts[2][r / 2]);
            qsort(ts, (size_t)r, sizeof *ts, cmp_double);
            qsort(cpu + (size_t)(th - t0) * r, (size_t)r, sizeof *cpu, cmp_double);
            step_cpu = cpu[(size_t)(th - t0) * r + r / 2];
            const double ms = ts[r / 2], tok = n / (ms / 1e3), gf = train_gflop(c) / (ms / 1e3);
            if (th == 1)
                base = ms;
            char sp[16] = "-";
            if (base > 0)
                snprintf(sp, sizeof sp, "%.2f", base / ms);
            printf("%-11s %7d %11.3f %10.0f %8.1f %8s\n", c->name, th, ms, tok, gf, sp);
            if (medians)
                medians[th - t0] = ms;
            last = c->name, last_ms = ms, last_tok = tok, last_gf = gf, last_th = th;
        }
        const double acts = tr->acts.memory_len * 4.0 / (1 << 20), state = g->num_parameters * 16.0 / (1 << 20);
        printf("  peak RSS so far: %ld MiB (parameters %.0f MiB; parameters, gradients and AdamW's two moments %.0f MiB;\n"
               "  activations kept for the backward, with its gradient scratch, %.0f MiB; (state + activations) x 1.1 = %.0f MiB)\n",
               peak_rss_mb(), g->num_parameters * 4.0 / (1 << 20), state, acts, (state + acts) * 1.1);
        if (c->C >= 768 || c->arch == MYGPT_ARCH_LLAMA) // (after the RSS line: the bandwidth's 512 MB would count in it)
            print_limit(c, g->num_parameters, t1, last_ms, step_cpu);
        free(t);
        free(phase);
        free(cpu);
        free(x);
        free(y);
        mygpt_optimizer_free(&opt);
        mygpt_trainer_free(tr);
        mygpt_gpt_free(g);
        omp_set_num_threads(t1); // (the model freed: the parts' operands take its memory)
        print_parts(c, step_cpu);
    }
    printf("train=%s threads=%d median_ms=%.3f tokens_per_s=%.0f gflops=%.1f\n", last, last_th, last_ms, last_tok,
           last_gf);
    return 0;
}

/* The shapes --generate decodes: GPT-2's (the architecture of Hugging Face's checkpoints),
 * llama2.c's stories260K read from its file, and a random Llama of stories15M's shape
 * (llama2.c's 15M tinyllama: dim 288, 6 layers, 6 heads and as many kv heads, vocabulary
 * 32000, context 256, the hidden size by model.py's rule with multiple_of 32: 768). */
typedef struct generate_config {
    const char *name;
    mygpt_config cfg;
    int multiple_of;  /* llama: the hidden size from model.py's rule (0: cfg's) */
    const char *file; /* a llama2.c .bin read instead of drawing random weights */
} generate_config;
static const generate_config GENERATE_CONFIGS[] = {
    {"gpt2", {50257, 768, 12, 12, 1024, MYGPT_ARCH_GPT2}, 0, NULL},
    {"gpt2-xl", {50257, 1600, 25, 48, 1024, MYGPT_ARCH_GPT2}, 0, NULL},
    {"stories260K", {0}, 0, "corpus/llama/stories260K.bin"},
    {"stories15M", {.vocab_size = 32000, .embed_dim = 288, .num_heads = 6, .num_layers = 6, .max_seq_len = 256,
                    .arch = MYGPT_ARCH_LLAMA, .num_kv_heads = 6}, 32, NULL},
};
#define GENERATE_NAMES "gpt2, gpt2-xl, stories260K, stories15M"

/* Median ms per new token over reps runs of `new_tokens` greedy tokens after a prompt
 * (a fresh KV cache each run), or of the tutorial's loop without one. */
static double decode_ms(mygpt_gpt *g, const int64_t *ids, int prompt, int new_tokens, int no_cache, int reps,
                        double *prompt_ms)
{
    const int V = g->config.vocab_size;
    double *per = malloc((size_t)reps * sizeof *per), *pms = malloc((size_t)reps * sizeof *pms);
    mygpt_error err = {0};
    for (int r = 0; r < reps; r++) {
        pms[r] = 0;
        if (!no_cache) { // what mygpt_generate does: the prompt, then one step per token
            mygpt_kv_cache cache;
            if (mygpt_kv_cache_init(&cache, g, &err) != MYGPT_OK)
                die(&err);
            double a = now_ms();
            if (mygpt_gpt_forward_cached(g, &cache, ids, prompt, &err) != MYGPT_OK)
                die(&err);
            pms[r] = now_ms() - a;
            a = now_ms();
            for (int i = 0; i < new_tokens; i++) { // greedy
                const int64_t next = mygpt_argmax(cache.logits, (size_t)V);
                if (i + 1 < new_tokens && mygpt_gpt_forward_cached(g, &cache, &next, 1, &err) != MYGPT_OK)
                    die(&err);
            }
            per[r] = (now_ms() - a) / (new_tokens > 1 ? new_tokens - 1 : 1);
            // as mygpt_generate refuses them (untimed): a model whose logits are not numbers is not timed
            const size_t bad = mygpt_first_nonfinite(cache.logits, (size_t)V);
            if (bad < (size_t)V) {
                cli_error("mygpt-bench", "--generate: the model's logit %zu is %g: its weights compute no "
                                         "distribution, nothing to time", bad, (double)cache.logits[bad]);
                exit(EXIT_USAGE);
            }
            mygpt_kv_cache_free(&cache);
        } else { // the tutorial's loop: the whole window every step
            const mygpt_generation greedy = {.max_new = new_tokens, .sampling = {.temperature = 0}, .eos = -1,
                                             .use_cache = 0};
            mygpt_rng rng = {0};
            int64_t *out = malloc((size_t)(prompt + new_tokens) * sizeof *out);
            int nout;
            const double a = now_ms();
            const mygpt_status st = mygpt_generate(g, &rng, ids, prompt, &greedy, out, &nout, &err);
            if (st != MYGPT_OK) { // logits that are not numbers are the model's: bad input, as above
                cli_error("mygpt-bench", "--generate: %s", err.message);
                exit(cli_exit_code(st));
            }
            per[r] = (now_ms() - a) / (nout - prompt);
            free(out);
        }
    }
    qsort(per, (size_t)reps, sizeof *per, cmp_double);
    qsort(pms, (size_t)reps, sizeof *pms, cmp_double);
    const double med = per[reps / 2];
    *prompt_ms = pms[reps / 2];
    free(per);
    free(pms);
    return med;
}

/* The model --generate decodes: o's --checkpoint (any model file), gc's llama2.c file, or
 * gc's shape drawn from seed 0 (a llama as model.py's _init_weights draws it) */
static mygpt_status generate_model(mygpt_gpt **g, const generate_config *gc, const generate_opts *o,
                                   mygpt_error *err)
{
    if (o->checkpoint || gc->file)
        return mygpt_model_load(g, o->checkpoint ? o->checkpoint : gc->file, err);
    mygpt_config cfg = gc->cfg;
    if (gc->multiple_of)
        cfg.ffn_hidden = mygpt_llama_hidden_dim(cfg.embed_dim, gc->multiple_of);
    return mygpt_gpt_create(g, &cfg, 0, err);
}

/* The config of o->config, or NULL after saying why there is none */
static const generate_config *generate_config_of(const generate_opts *o)
{
    for (size_t k = 0; k < sizeof GENERATE_CONFIGS / sizeof GENERATE_CONFIGS[0]; k++)
        if (strcmp(o->config ? o->config : "gpt2", GENERATE_CONFIGS[k].name) == 0)
            return &GENERATE_CONFIGS[k];
    cli_error("mygpt-bench", "--generate: unknown --config '%s' (" GENERATE_NAMES ")", o->config);
    return NULL;
}

/* The model's shape in a line: a Llama's kv heads and hidden size too */
static void print_shape(const char *name, const mygpt_config *cfg, int from_file)
{
    printf("%s (V %d, C %d, %d heads, %d layers", name, cfg->vocab_size, cfg->embed_dim, cfg->num_heads,
           cfg->num_layers);
    if (cfg->arch == MYGPT_ARCH_LLAMA)
        printf(", %d kv heads, hidden %d, context %d; Llama", mygpt_kv_heads(cfg), mygpt_ffn_hidden(cfg),
               cfg->max_seq_len);
    printf("; %s)", from_file ? "its trained weights" : "random weights");
}

int bench_generate(const generate_opts *o, double *medians)
{
    const generate_config *gc = generate_config_of(o);
    mygpt_weights only = MYGPT_WEIGHTS_FP32;
    mygpt_error err = {0};
    if (!gc)
        return 2;
    if (o->weights && mygpt_weights_parse(o->weights, &only, &err) != MYGPT_OK) {
        cli_error("mygpt-bench", "--weights: %s", err.message);
        return 2;
    }
    // the model saved never replaces the one read (the tool's rule, args.h)
    const cli_file files[] = {{o->checkpoint ? "--checkpoint" : "--config", o->checkpoint ? o->checkpoint : gc->file, 0, 0},
                              {"--save-model", o->save, 1, 0}};
    if (cli_distinct_files("mygpt-bench", files, 2) != 0)
        return 2;
    mygpt_gpt *g;
    const mygpt_status loaded = generate_model(&g, gc, o, &err);
    if (loaded != MYGPT_OK) { // a file that cannot be read is bad input (2), no memory a failure (1)
        if (o->checkpoint) // (the message names the file)
            cli_error("mygpt-bench", "--generate --checkpoint: %s", err.message);
        else
            cli_error("mygpt-bench", "--generate --config %s: %s", gc->name, err.message);
        return cli_exit_code(loaded);
    }
    const mygpt_config cfg = g->config;
    const int prompt = o->prompt, new_tokens = o->new_tokens;
    int rc = 0;
    if (prompt < 1 || new_tokens < 1 || prompt + new_tokens > cfg.max_seq_len) {
        cli_error("mygpt-bench", "--prompt and --new must be >= 1 with prompt + new <= %d (the context)",
                cfg.max_seq_len);
        rc = 2;
    } else if (o->save && mygpt_checkpoint_check_path(o->save, &err) != MYGPT_OK) {
        cli_error("mygpt-bench", "--save-model: %s", err.message); // (a folder, a link, no such folder)
        rc = 2;
    } else if (o->save && access(o->save, F_OK) == 0 && !mygpt_llama2c_model_file(o->save)) {
        cli_error("mygpt-bench", "--save-model: %s is there and is not llama2.c's model file: not replaced (move it, "
                  "or save elsewhere)", o->save);
        rc = 2;
    } else if (o->save) { // a path refused is bad input (2), a write that fails a failure (1)
        const mygpt_status saved = mygpt_llama2c_save(g, o->save, &err);
        if (saved != MYGPT_OK) {
            cli_error("mygpt-bench", "--save-model: %s", err.message);
            rc = saved == MYGPT_EIO ? EXIT_RUNTIME : cli_exit_code(saved);
        }
    }
    mygpt_gpt_free(g);
    if (rc)
        return rc;
    const int reps = o->reps ? o->reps : 5;
    int64_t *ids = malloc((size_t)(prompt + new_tokens) * sizeof *ids);
    for (int i = 0; i < prompt; i++)
        ids[i] = (i * 7919) % cfg.vocab_size;
    const int t0 = o->threads ? o->threads : 1, t1 = o->threads ? o->threads : o->nproc;
    omp_set_num_threads(t1);
    const double gbs = o->no_cache ? 0 : read_bandwidth();
    print_shape(o->checkpoint ? o->checkpoint : gc->name, &cfg, o->checkpoint || gc->file);
    printf(", B = 1: a prompt of %d tokens, then %d greedy tokens%s; median of %d runs\n", prompt, new_tokens,
           o->no_cache ? ", the whole window recomputed every step (no KV cache)"
                       : " (KV cache: the weights packed once, the prompt, then one step per token)",
           reps);
    if (gbs > 0)
        printf("read bandwidth at %d threads: %.1f GB/s over 512 MB (mygpt-bench --bandwidth's loop, best of 5); a "
               "token's limit is that over the bytes of weights it reads. cache_GB/s: the same loop over those bytes "
               "alone, which a large last-level cache may hold (its limit: cache_lim)\n", t1, gbs);
    printf("%7s %7s %10s %10s %12s %14s %12s %12s %9s %10s %10s %7s %9s\n", "weights", "threads", "MB/token", "pack_ms",
           "prompt_ms", "per_token_ms", "tokens/s", "limit_tok/s", "of_limit", "cache_GB/s", "cache_lim", "of_it",
           "vs_fp32");
    double fp32_tok[64] = {0}, last_tok = 0;
    int last_th = t1;
    char lines[3][200];
    int nlines = 0;
    for (int w = MYGPT_WEIGHTS_FP32; w <= MYGPT_WEIGHTS_INT8; w++) {
        if (o->weights && w != (int)only)
            continue;
        if (generate_model(&g, gc, o, &err) != MYGPT_OK)
            die(&err);
        double a = now_ms();
        if (mygpt_gpt_quantize(g, (mygpt_weights)w, &err) != MYGPT_OK || mygpt_gpt_pack(g, &err) != MYGPT_OK)
            die(&err);
        const double pack_ms = now_ms() - a, mb = mygpt_weights_bytes_per_token(&cfg, (mygpt_weights)w) / 1e6;
        omp_set_num_threads(t1);
        const double cache_gbs = o->no_cache ? 0 : read_bandwidth_of(mb * 1e6);
        for (int th = t0; th <= t1; th++) {
            omp_set_num_threads(th);
            double prompt_ms;
            const double per = decode_ms(g, ids, prompt, new_tokens, o->no_cache, reps, &prompt_ms);
            last_tok = 1e3 / per;
            last_th = th;
            if (w == MYGPT_WEIGHTS_FP32)
                fp32_tok[th - t0] = last_tok;
            if (medians && w == MYGPT_WEIGHTS_FP32)
                medians[th - t0] = per;
            const double limit = gbs > 0 && th == t1 ? gbs * 1e3 / mb : 0;
            const double cache_limit = cache_gbs > 0 && th == t1 ? cache_gbs * 1e3 / mb : 0;
            printf("%7s %7d %10.2f %10.1f %12.2f %14.3f %12.1f", mygpt_weights_name((mygpt_weights)w), th, mb, pack_ms,
                   prompt_ms, per, last_tok);
            if (limit > 0)
                printf(" %12.1f %8.0f%% %10.1f %10.1f %6.0f%%", limit, 100 * last_tok / limit, cache_gbs, cache_limit,
                       100 * last_tok / cache_limit);
            else
                printf(" %12s %9s %10s %10s %7s", "-", "-", "-", "-", "-");
            if (fp32_tok[th - t0] > 0)
                printf(" %8.2fx", last_tok / fp32_tok[th - t0]);
            printf("\n");
        }
        snprintf(lines[nlines++], sizeof lines[0], "generate=%s weights=%s threads=%d kv_cache=%d tokens_per_s=%.2f",
                 o->checkpoint ? "checkpoint" : gc->name, mygpt_weights_name((mygpt_weights)w), last_th, !o->no_cache, last_tok);
        mygpt_gpt_free(g);
    }
    if (!o->weights && !o->no_cache)
        printf("targets: fp32 >= 85%% of its limit (issue 26: GPT-2; issue 49: stories15M); bf16 >= 1.8x fp32; int8 "
               ">= 3x fp32 (issue 26)\n");
    if (o->save)
        printf("the fp32 model decoded above written as llama2.c's file %s\n", o->save);
    for (int k = 0; k < nlines; k++)
        printf("%s\n", lines[k]);
    free(ids);
    return 0;
}

/* --attention and --attention-backward: the attention alone, at every thread count up to
 * nproc (or at `threads`). The forward (backward 0) is the fast kernel MYGPT_ATTENTION_KERNEL
 * picks, as inference runs it (no probabilities kept) and as training does (keeping them);
 * its FLOPs are the causal products' (the scores and the values, keys s <= t: 2 B T (T + 1) C),
 * also as % of a thread's FMA peak in CPU time. The backward is mygpt_attention_backward as
 * the training step calls it, after the reference forward made the probabilities. */
int bench_attention(int B, int T, int C, int NH, int threads, int nproc, int reps, int backward)
{
    const size_t n = (size_t)B * T * C, na = (size_t)B * NH * T * T;
    const size_t slen = mygpt_attention_scratch_size(T, C / NH, threads ? threads : nproc);
    char sizes[64];
    snprintf(sizes, sizeof sizes, "%d,%d,%d,%d", B, T, C, NH);
    const int rc_fit = bench_fits(backward ? "--attention-backward" : "--attention", sizes,
                                  4.0 * (8.0 * (double)n + (double)na + (double)slen));
    if (rc_fit)
        return rc_fit;
    float *q = malloc(n * sizeof *q), *k = malloc(n * sizeof *k), *v = malloc(n * sizeof *v);
    float *dout = malloc(n * sizeof *dout), *out = malloc(n * sizeof *out), *att = malloc(na * sizeof *att);
    float *dq = calloc(n, sizeof *dq), *dk = calloc(n, sizeof *dk), *dv = calloc(n, sizeof *dv);
    float *scratch = malloc(slen * sizeof *scratch);
    double *t = malloc(3 * (size_t)reps * sizeof *t), *c = t ? t + reps : NULL, *tp = t ? t + 2 * reps : NULL;
    mygpt_error err = {0};
    const mygpt_qkv in = {q, k, v};
    const mygpt_attention_shape shape = {B, T, C, NH};
    int rc = 1;
    if (!q || !k || !v || !dout || !out || !att || !dq || !dk || !dv || !scratch || !t) {
        cli_error("mygpt-bench", "out of memory for the attention (B=%d T=%d C=%d)", B, T, C);
        goto done;
    }
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 5);
    float *inputs[4] = {q, k, v, dout};
    for (int i = 0; i < 4; i++)
        mygpt_normal_(&rng, inputs[i], n, 0, 1, NULL);
    if (mygpt_attention_forward(out, att, in, NULL, 0, shape, MYGPT_IMPL_REFERENCE, &err) != MYGPT_OK) {
        cli_error("mygpt-bench", "%s", err.message);
        goto done;
    }
    const char *isa = "";
    const double peak = backward ? 0 : peak_gflops_of(mygpt_attention_kernel_name(), 1, &isa);
    const double flop = 2.0 * B * T * (T + 1.0) * C;
    double load[1] = {-1};
    for (int th = threads ? threads : 1; th <= (threads ? threads : nproc); th++) {
        omp_set_num_threads(th);
        for (int r = 0; r < reps + 2; r++) {
            const double s = now_ms(), cs = cpu_ms();
            if (backward)
                mygpt_attention_backward(dq, dk, dv, dout, att, in, shape);
            else if (mygpt_attention_forward(out, NULL, in, scratch, slen, shape, MYGPT_IMPL_FAST, &err) != MYGPT_OK)
                goto failed;
            const double e = now_ms(), ce = cpu_ms();
            if (!backward &&
                mygpt_attention_forward(out, att, in, scratch, slen, shape, MYGPT_IMPL_FAST, &err) != MYGPT_OK)
                goto failed;
            if (r >= 2)
                t[r - 2] = e - s, c[r - 2] = ce - cs, tp[r - 2] = now_ms() - e;
        }
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        qsort(c, (size_t)reps, sizeof *c, cmp_double);
        qsort(tp, (size_t)reps, sizeof *tp, cmp_double);
        printf("attention%s=%d,%d,%d,%d threads=%d kernel=%s median_ms=%.3f cpu_ms=%.3f", backward ? "_backward" : "",
               B, T, C, NH, th, mygpt_attention_kernel_name(), t[reps / 2], c[reps / 2]);
        if (!backward)
            printf(" with_probs_ms=%.3f gflops=%.1f pct_peak=%.1f peak_gflops=%.1f isa=%s", tp[reps / 2],
                   flop / (t[reps / 2] * 1e6), 100 * flop / (c[reps / 2] * 1e6) / peak, peak, isa);
        printf(" load=%.2f\n", getloadavg(load, 1) == 1 ? load[0] : -1.0);
    }
    rc = 0;
    goto done;
failed:
    cli_error("mygpt-bench", "%s", err.message);
done:
    free(q), free(k), free(v), free(dout), free(out), free(att), free(dq), free(dk), free(dv), free(scratch), free(t);
    return rc;
}

/* The read bandwidth at omp_get_max_threads() threads over `bytes` (rounded up to 512),
 * GB/s: a dot product of the block with itself, repeated until 512 MB were read, best of
 * 5. In huge pages where the kernel allows, as weights packed once are: the bandwidth a
 * stream can reach, not what 4 KiB pages' TLB misses leave of it. 0 when the block cannot be had. A block that a cache
 * holds (a small model's weights in a large L3) reads at that cache's rate. */
static double read_bandwidth_of(double bytes)
{
    const size_t n = ((size_t)bytes + 511) / 512 * 128; // floats, a multiple of 128
    const int passes = n * sizeof(float) >= ((size_t)512 << 20) ? 1 : (int)(((size_t)512 << 20) / (n * sizeof(float)));
    float *a = mygpt_aligned_block(n * sizeof(float), 0, 0);
    if (!a)
        return 0;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) // first touch by the threads that will read
        a[i] = (float)(i & 1023) * 1e-3f;
    double best = 1e30;
    volatile float sink = 0;
    for (int rep = 0; rep < 5; rep++) {
        const double s = now_ms();
        float acc = 0;
        // 128 running sums per thread (8 vector registers): many loads in flight, so
        // memory, not the adds' latency, bounds the loop
#pragma omp parallel reduction(+ : acc)
        {
            float part[128] = {0};
            for (int pass = 0; pass < passes; pass++) {
#pragma omp for schedule(static)
                for (size_t i0 = 0; i0 < n; i0 += 128)
#pragma omp simd
                    for (int j = 0; j < 128; j++)
                        part[j] += a[i0 + j] * a[i0 + j];
            }
            for (int j = 0; j < 128; j++)
                acc += part[j];
        }
        const double ms = now_ms() - s;
        sink += acc;
        best = ms < best ? ms : best;
    }
    (void)sink; /* read once: clang warns on a volatile that is only written */
    free(a);
    return (double)passes * n * sizeof *a / (best / 1e3) / 1e9;
}

/* read_bandwidth_of 512 MB: what memory, past every cache, gives */
static double read_bandwidth(void)
{
    return read_bandwidth_of((double)((size_t)512 << 20));
}

int bench_bandwidth(int threads, int nproc)
{
    printf("read bandwidth: a dot product of 512 MB (huge pages if allowed) with itself, best of 5\n%7s %10s\n", "threads", "GB/s");
    const int t0 = threads ? threads : 1, t1 = threads ? threads : nproc;
    double last = 0;
    for (int th = t0; th <= t1; th++) {
        omp_set_num_threads(th);
        if ((last = read_bandwidth()) == 0) {
            cli_error("mygpt-bench", "out of memory for 512 MB");
            return 1;
        }
        printf("%7d %10.1f\n", th, last);
    }
    printf("bandwidth threads=%d gb_per_s=%.1f\n", t1, last);
    return 0;
}

int bench_loss(int N, int V, int threads, int nproc, int reps)
{
    const size_t n = (size_t)N * V;
    char sizes[32];
    snprintf(sizes, sizeof sizes, "%d,%d", N, V);
    const int rc_fit = bench_fits("--loss", sizes, 12.0 * (double)n + 8.0 * N);
    if (rc_fit)
        return rc_fit;
    float *logits = malloc(n * sizeof *logits), *logp = malloc(n * sizeof *logp);
    float *dlogits = malloc(n * sizeof *dlogits);
    int64_t *targets = malloc((size_t)N * sizeof *targets);
    double *t = malloc((size_t)3 * reps * sizeof *t);
    if (!logits || !logp || !dlogits || !targets || !t) {
        cli_error("mygpt-bench", "out of memory for the loss (%zu floats)", 3 * n);
        return 1;
    }
    double *tf = t, *tb = t + reps, *ts = t + 2 * reps;
    mygpt_rng rng = {0};
    mygpt_error err = {0};
    mygpt_rng_seed(&rng, 0);
    if (mygpt_normal_(&rng, logits, n, 0.0, 1.0, &err) != MYGPT_OK ||
        mygpt_randint(&rng, targets, (size_t)N, 0, V, &err) != MYGPT_OK)
        die(&err);
    printf("cross-entropy over (N=%d, V=%d) logits: forward (log_softmax + nll_loss) and backward;\n"
           "softmax: sampling's, row after row on one thread (as for each generated token); medians of %d\n"
           "%7s %12s %12s %12s\n", N, V, reps, "threads", "forward_ms", "backward_ms", "softmax_ms");
    const int t0 = threads ? threads : 1, t1 = threads ? threads : nproc;
    for (int th = t0; th <= t1; th++) {
        omp_set_num_threads(th);
        for (int r = 0; r < reps + 1; r++) { /* one unmeasured pass first */
            float loss;
            const double s = now_ms();
            if (mygpt_cross_entropy_forward(&loss, logp, logits, targets, (size_t)N, V, &err) != MYGPT_OK)
                die(&err);
            const double m = now_ms();
            mygpt_cross_entropy_backward(dlogits, logp, targets, (size_t)N, V);
            const double b = now_ms();
            for (int row = 0; row < N; row++)
                mygpt_softmax_torch(dlogits + (size_t)row * V, logits + (size_t)row * V, (size_t)V);
            if (r > 0) {
                tf[r - 1] = m - s;
                tb[r - 1] = b - m;
                ts[r - 1] = now_ms() - b;
            }
        }
        qsort(tf, (size_t)reps, sizeof *tf, cmp_double);
        qsort(tb, (size_t)reps, sizeof *tb, cmp_double);
        qsort(ts, (size_t)reps, sizeof *ts, cmp_double);
        printf("%7d %12.3f %12.3f %12.3f\n", th, tf[reps / 2], tb[reps / 2], ts[reps / 2]);
    }
    printf("loss=%dx%d threads=%d forward_ms=%.3f backward_ms=%.3f softmax_ms=%.3f\n", N, V, t1, tf[reps / 2],
           tb[reps / 2], ts[reps / 2]);
    free(logits), free(logp), free(dlogits), free(targets), free(t);
    return 0;
}

/* ---- --peak: what the cores can do when they all work ---------------------------- */

/* n steps of 24 independent fused multiply-add chains, each as wide as the registers
 * (24 accumulators: enough to cover the FMA latency on every current x86 core). Returns
 * FLOPs done; *sink keeps the compiler from dropping the work. */
#ifdef BENCH_X86
__attribute__((target("avx512f"))) static double fma_avx512(long n, float *sink)
{
    __m512 acc[24];
    const __m512 b = _mm512_set1_ps(0.99999f), c = _mm512_set1_ps(1e-6f);
    for (int i = 0; i < 24; i++)
        acc[i] = _mm512_set1_ps((float)i);
    for (long k = 0; k < n; k++)
#pragma GCC unroll 24
        for (int i = 0; i < 24; i++)
            acc[i] = _mm512_fmadd_ps(acc[i], b, c);
    for (int i = 1; i < 24; i++)
        acc[0] = _mm512_add_ps(acc[0], acc[i]);
    *sink += _mm512_reduce_add_ps(acc[0]);
    return 2.0 * 16 * 24 * (double)n;
}
__attribute__((target("avx2,fma"))) static double fma_avx2(long n, float *sink)
{
    __m256 acc[12];
    const __m256 b = _mm256_set1_ps(0.99999f), c = _mm256_set1_ps(1e-6f);
    for (int i = 0; i < 12; i++)
        acc[i] = _mm256_set1_ps((float)i);
    for (long k = 0; k < 2 * n; k++)
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++)
            acc[i] = _mm256_fmadd_ps(acc[i], b, c);
    float out[8];
    for (int i = 1; i < 12; i++)
        acc[0] = _mm256_add_ps(acc[0], acc[i]);
    _mm256_storeu_ps(out, acc[0]);
    *sink += out[0];
    return 2.0 * 8 * 24 * (double)n;
}
#elif defined(__aarch64__)
/* NEON is aarch64's baseline: 24 chains of 4-lane fused multiply-adds (fmla), 24 of the 32
 * vector registers plus b and c; a core with two FMA pipes of latency 4 needs 8 chains */
static double fma_neon(long n, float *sink)
{
    float32x4_t acc[24];
    const float32x4_t b = vdupq_n_f32(0.99999f), c = vdupq_n_f32(1e-6f);
    for (int i = 0; i < 24; i++)
        acc[i] = vdupq_n_f32((float)i);
    for (long k = 0; k < 4 * n; k++)
#pragma GCC unroll 24
        for (int i = 0; i < 24; i++)
            acc[i] = vfmaq_f32(c, acc[i], b);
    for (int i = 1; i < 24; i++)
        acc[0] = vaddq_f32(acc[0], acc[i]);
    *sink += vgetq_lane_f32(acc[0], 0);
    return 2.0 * 4 * 24 * 4 * (double)n;
}
#endif
static double fma_plain(long n, float *sink)
{
    float acc[24];
    for (int i = 0; i < 24; i++)
        acc[i] = (float)i;
    for (long k = 0; k < n / 16; k++)
#pragma GCC unroll 24
        for (int i = 0; i < 24; i++)
            acc[i] = fmaf(acc[i], 0.99999f, 1e-6f);
    *sink += acc[0];
    return 2.0 * 24 * (double)(n / 16);
}

typedef double (*fma_fn)(long n, float *sink);

/* The fused multiply-add loop of the instruction set `kernel` names (a kernel family's
 * set: the widest this CPU has, or the one MYGPT_MATMUL_KERNEL or MYGPT_ATTENTION_KERNEL
 * narrows it to: the peak it is judged against), its name in *isa */
static fma_fn fma_of(const char *kernel, const char **isa)
{
#ifdef BENCH_X86
    if (strcmp(kernel, "avx512") == 0)
        return *isa = "AVX-512", fma_avx512;
    if (strcmp(kernel, "avx2") == 0)
        return *isa = "AVX2", fma_avx2;
#elif defined(__aarch64__)
    if (strcmp(kernel, "neon") == 0)
        return *isa = "NEON", fma_neon;
#endif
    return *isa = "scalar fmaf", fma_plain;
}

/* The matrix products' set's loop */
static fma_fn widest_fma(const char **isa)
{
    return fma_of(mygpt_matmul_kernel_name(), isa);
}

double peak_gflops(int threads, const char **isa)
{
    return peak_gflops_of(mygpt_matmul_kernel_name(), threads, isa);
}

double peak_gflops_of(const char *kernel, int threads, const char **isa)
{
    const fma_fn fn = fma_of(kernel, isa);
    double best = 0;
    volatile float keep = 0;
    for (int rep = 0; rep < 5; rep++) {
        double rate = 0; /* GFLOP per CPU second, summed over the threads */
        float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : rate, sink)
        {
            struct timespec a, b;
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
            const double flops = fn(20000000, &sink);
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
            rate += flops / ((double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9) / 1e9;
        }
        best = rate > best ? rate : best;
        keep += sink;
    }
    (void)keep;
    return best;
}

/* GFLOP/s of widest_fma (its name in *isa) on `threads` threads at once, best of 5 */
static double fma_peak(int threads, const char **isa)
{
    const fma_fn fn = widest_fma(isa);
    const long n = 20000000; /* about 0.2 s a thread at 200 GFLOP/s */
    double best = 0;
    volatile float keep = 0;
    for (int rep = 0; rep < 5; rep++) {
        double flops = 0;
        float sink = 0;
        const double s = now_ms();
#pragma omp parallel num_threads(threads) reduction(+ : flops, sink)
        flops += fn(n, &sink);
        const double gf = flops / ((now_ms() - s) / 1e3) / 1e9;
        best = gf > best ? gf : best;
        keep += sink;
    }
    (void)keep; /* read once: clang warns on a volatile that is only written */
    return best;
}

int bench_peak(int threads, int nproc)
{
    const char *isa;
    widest_fma(&isa);
    printf("compute peak: 24 chains of %s fused multiply-adds on every thread at once, best of 5\n"
           "(the ceiling of thread scaling for compute-bound code, as --bandwidth is for streaming)\n"
           "%7s %10s %12s %8s\n", isa, "threads", "GFLOP/s", "per thread", "speedup");
    const int t0 = threads ? threads : 1, t1 = threads ? threads : nproc;
    double one = 0, last = 0;
    for (int th = t0; th <= t1; th++) {
        const double best = fma_peak(th, &isa);
        if (th == 1)
            one = best;
        last = best;
        printf("%7d %10.1f %12.1f ", th, best, best / th);
        if (one > 0)
            printf("%8.2f\n", best / one);
        else
            printf("%8s\n", "-");
    }
    printf("peak threads=%d gflops=%.1f\n", t1, last);
    return 0;
}

/* ---- --latency: how far apart the cores are ---------------------------------------- */

/* One cache line bounced between threads 0 and 1 (each waits for the other's number,
 * then writes its own), median of 5 runs of 100000 round trips. On one chip's shared L3
 * a one-way hand-over is some tens of ns; when the two cores share no cache it is a few
 * hundred, and every float one thread writes and the other reads pays it per line. */
int bench_latency(int nproc)
{
    static _Alignas(64) atomic_int flag;
    if (nproc < 2) { /* two spinning threads on one CPU would take turns by the scheduler's clock */
        cli_error("mygpt-bench", "--latency needs 2 online CPUs (this machine has %d)", nproc);
        return 1;
    }
    const int trips = 100000;
    double ns[5];
    printf("core-to-core latency: one cache line bounced between 2 threads, %d round trips, median of 5\n", trips);
    for (int rep = 0; rep < 5; rep++) {
        double t0 = 0, t1 = 0;
        atomic_store(&flag, 0);
        int team = 0;
#pragma omp parallel num_threads(2)
        {
            const int id = omp_get_thread_num();
#pragma omp single
            team = omp_get_num_threads();
            if (team == 2) {
#pragma omp barrier
                if (id == 0)
                    t0 = now_ms();
                for (int i = 0; i < trips; i++) {
                    const int want = 2 * i + id; /* thread 0 answers even, thread 1 odd */
                    while (atomic_load_explicit(&flag, memory_order_acquire) != want)
                        ;
                    atomic_store_explicit(&flag, want + 1, memory_order_release);
                }
#pragma omp barrier
                if (id == 0)
                    t1 = now_ms();
            }
        }
        if (team != 2) {
            cli_error("mygpt-bench", "--latency needs 2 threads (got %d)", team);
            return 1;
        }
        ns[rep] = (t1 - t0) * 1e6 / trips;
    }
    qsort(ns, 5, sizeof *ns, cmp_double);
    printf("round trip %.1f ns, one way %.1f ns\nlatency one_way_ns=%.1f\n", ns[2], ns[2] / 2, ns[2] / 2);
    return 0;
}

/* --classify: the book's chapter-6 step at GPT-2 small's shape (V 50257, C 768, 12 heads,
 * 12 layers, the book's batch 8 x 120, a 2-class head; random weights in GPT-2's shape),
 * with the book's freezing (the last block, final_norm and the head train) and, unless
 * book_only, with every parameter training (full fine-tuning), taking turns, at one thread
 * count. Then the book's evaluation forward (calc_loss_batch / calc_accuracy_loader under
 * torch.no_grad(): one batch, the whole model) and the step beside its FLOP limit at the
 * FMA peak measured in the same run. */
int bench_classify(int threads, int nproc, int reps, int warmup, int book_only)
{
    const mygpt_config cfg = {.vocab_size = 50257, .embed_dim = 768, .num_heads = 12, .num_layers = 12,
                              .max_seq_len = 1024, .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH, .qkv_bias = 1,
                              .num_classes = 2};
    enum { B = 8, T = 120 };
    const int th = threads ? threads : nproc, r = reps ? reps : 3, w = warmup >= 0 ? warmup : 1;
    const int modes = book_only ? 1 : 2;
    omp_set_num_threads(th);
    mygpt_error err = {0};
    mygpt_gpt *g;
    mygpt_trainer *tr[2];
    if (mygpt_gpt_create(&g, &cfg, 123, &err) != MYGPT_OK || mygpt_trainer_create(&tr[0], g, &err) != MYGPT_OK ||
        (modes == 2 && mygpt_trainer_create(&tr[1], g, &err) != MYGPT_OK) ||
        mygpt_trainer_freeze_for_classification(tr[0], &err) != MYGPT_OK)
        die(&err);
    int64_t x[B * T], y[B];
    for (int i = 0; i < B * T; i++)
        x[i] = (int64_t)((i * 7919) % cfg.vocab_size);
    for (int b = 0; b < B; b++)
        y[b] = b % 2;
    mygpt_optimizer opt[2];
    for (int m = 0; m < modes; m++) {
        mygpt_adamw_init(&opt[m], 5e-5);
        opt[m].weight_decay = 0.1;
    }
    static const char *names[2] = {"the book's (last block, final_norm, head)", "full fine-tuning"};
    double *t = malloc((size_t)2 * 3 * r * sizeof *t), *ev = malloc((size_t)r * sizeof *ev); // [mode][phase][rep]
    if (!t || !ev)
        return 1;
    for (int rep = 0; rep < w + r; rep++)
        for (int m = 0; m < modes; m++) { // the two take turns, step by step
            float loss;
            const double a = now_ms();
            if (mygpt_trainer_zero_grad(tr[m], &err) != MYGPT_OK ||
                mygpt_trainer_forward_last(tr[m], x, y, B, T, &loss, &err) != MYGPT_OK)
                die(&err);
            const double b = now_ms();
            if (mygpt_trainer_backward(tr[m], &err) != MYGPT_OK)
                die(&err);
            const double u = now_ms();
            if (mygpt_trainer_step(tr[m], &opt[m], &err) != MYGPT_OK)
                die(&err);
            const double e = now_ms();
            if (rep >= w) {
                double *p = t + (size_t)m * 3 * r;
                p[rep - w] = b - a, p[r + rep - w] = u - b, p[2 * r + rep - w] = e - u;
            }
        }
    for (int rep = 0; rep < w + r; rep++) { // the evaluation's batch: loss and correct rows, no gradients
        float loss;
        int correct;
        const double a = now_ms();
        if (mygpt_classifier_batch(g, x, y, B, T, &loss, &correct, &err) != MYGPT_OK)
            die(&err);
        if (rep >= w)
            ev[rep - w] = now_ms() - a;
    }
    qsort(ev, (size_t)r, sizeof *ev, cmp_double);
    const double BT = (double)B * T, C = cfg.embed_dim, L = cfg.num_layers;
    const double block = 2.0 * 12.0 * C * C * BT + 4.0 * B * (double)T * T * C; // one block's forward FLOPs
    const double head = 2.0 * C * cfg.num_classes * BT;                          // the head on every position
    printf("classification fine-tuning step at GPT-2 small's shape, batch %d x %d, %d thread%s (medians of %d):\n", B,
           T, th, th == 1 ? "" : "s", r);
    printf("forward = the whole model; the backward counted as twice the forward of the blocks (and head) it goes "
           "through\n");
    double total[2], flops[2];
    for (int m = 0; m < modes; m++) {
        double med[3];
        for (int q = 0; q < 3; q++) {
            double *p = t + (size_t)m * 3 * r + (size_t)q * r;
            qsort(p, (size_t)r, sizeof *p, cmp_double);
            med[q] = p[r / 2];
        }
        total[m] = med[0] + med[1] + med[2];
        flops[m] = L * block + head + 2.0 * ((m == 0 ? 1.0 : L) * block + head);
        printf("  %-42s forward %.0f ms, backward %.0f ms, AdamW %.0f ms: %.0f ms a step, %.1f GFLOP/s; "
               "%zu parameters train\n",
               names[m], med[0], med[1], med[2], total[m], flops[m] / (total[m] / 1e3) / 1e9,
               mygpt_trainer_trainable_count(tr[m]));
    }
    if (modes == 2)
        printf("  the book's step takes %.2f x full fine-tuning's time (the FLOP count: %.2f x)\n",
               total[0] / total[1], flops[0] / flops[1]);
    printf("  the evaluation's batch (the whole forward, no gradients): %.0f ms\n", ev[r / 2]);
    printf("  peak RSS: %ld MiB\n", peak_rss_mb());
    const char *isa;
    const double peak = fma_peak(th, &isa), limit = flops[0] / (peak * 1e9) * 1e3;
    printf("  limit of the book's step at %d thread%s: %.1f GFLOP at the %s FMA peak (%.1f GFLOP/s, --peak) = %.0f ms;"
           " this step: %.2fx the limit\n",
           th, th == 1 ? "" : "s", flops[0] / 1e9, isa, peak, limit, total[0] / limit);
    printf("classify=book threads=%d step_ms=%.1f eval_ms=%.1f step_gflop=%.2f eval_gflop=%.2f peak_gflops=%.1f\n", th,
           total[0], ev[r / 2], flops[0] / 1e9, (L * block + head) / 1e9, peak);
    for (int m = 0; m < modes; m++) {
        mygpt_optimizer_free(&opt[m]);
        mygpt_trainer_free(tr[m]);
    }
    mygpt_gpt_free(g);
    free(t);
    free(ev);
    return 0;
}
