/* bench_learn.h - mygpt-bench's training, generation and bandwidth measurements. */
#ifndef MYGPT_BENCH_LEARN_H
#define MYGPT_BENCH_LEARN_H

/* What both benchmark files use: a monotonic clock in ms, qsort's order for doubles,
 * the process's peak resident set in MiB. */
double now_ms(void);
/* CPU time the OpenMP team's threads have run, in ms: on a machine other jobs share, the
 * time a product ran, without the time it waited for a core */
double cpu_ms(void);
int cmp_double(const void *a, const void *b);
long peak_rss_mb(void);
/* 0 when `bytes` of buffers fit in this machine's memory; else EXIT_USAGE after one line
 * naming the flag and its sizes (a system that overcommits would hand the buffers out and
 * end the process when they are touched) */
int bench_fits(const char *flag, const char *sizes, double bytes);

/* threads 0: every count 1..nproc, taking turns; reps 0 / warmup < 0: defaults.
 * medians, when not NULL, receives the median ms (per step; per new token) for each
 * thread count measured, the first at medians[0]. */
int bench_train(const char *config, int threads, int nproc, int reps, int warmup, double *medians);
/* What --generate decodes, and how. */
typedef struct generate_opts {
    const char *config;     /* gpt2, gpt2-xl, stories260K, stories15M (NULL: gpt2) */
    const char *weights;    /* "fp32", "bf16", "int8"; NULL: all three in turn */
    const char *checkpoint; /* stories260K's llama2.c file (NULL: corpus/llama/stories260K.bin) */
    const char *save;       /* write the fp32 model decoded as llama2.c's .bin there (llama only) */
    int threads, nproc;     /* threads 0: every count 1..nproc, taking turns */
    int prompt, new_tokens; /* a prompt of random ids, then greedy tokens */
    int no_cache, reps;     /* the tutorial's loop without a KV cache; runs each (0: 5) */
} generate_opts;

/* --generate: decoding at B = 1 at a GPT-2 shape or a Llama's (llama2.c's stories260K, or a
 * random model of stories15M's shape) in each weight format or one, each beside its
 * bandwidth limits; medians reported, and, when medians is not NULL, fp32's ms per new
 * token stored there for each thread count. */
int bench_generate(const generate_opts *o, double *medians);
int bench_bandwidth(int threads, int nproc);
/* fused multiply-add throughput with every thread busy: scaling's compute ceiling */
int bench_peak(int threads, int nproc);
/* --peak's loop on `threads` threads at once for the instruction set the matrix products
 * run (its name in *isa): GFLOP per second of CPU time each thread ran, summed, best of
 * 5 (on a shared machine, the rate while running, as cpu_ms measures the products) */
double peak_gflops(int threads, const char **isa);
/* the same for the set a kernel family runs (mygpt_attention_kernel_name(), ...) */
double peak_gflops_of(const char *kernel, int threads, const char **isa);
/* one cache line bounced between two threads: the cost of sharing data across cores */
int bench_latency(int nproc);
/* --classify: the book's chapter-6 step (the last block trains) beside full fine-tuning
 * (book_only: alone) at GPT-2 small's shape, then the evaluation's batch and the step's FLOP
 * limit, at one thread count (0: nproc); reps 0 / warmup < 0: 3 and 1 */
int bench_classify(int threads, int nproc, int reps, int warmup, int book_only);
/* the cross-entropy's forward and backward over (N, V) random logits, median of reps */
int bench_loss(int N, int V, int threads, int nproc, int reps);
/* the attention of B x T x C, NH heads, on random q, k, v (and dout): its forward
 * (backward 0: without and with the probabilities kept, and as % of the FMA peak) or its
 * backward (dq, dk, dv), median wall and CPU time of reps, at one thread count or 1..nproc */
int bench_attention(int B, int T, int C, int NH, int threads, int nproc, int reps, int backward);

#endif
