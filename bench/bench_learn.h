/* bench_learn.h - mygpt-bench's training, generation and bandwidth measurements. */
#ifndef MYGPT_BENCH_LEARN_H
#define MYGPT_BENCH_LEARN_H

/* What both benchmark files use: a monotonic clock in ms, qsort's order for doubles,
 * the process's peak resident set in MiB. */
double now_ms(void);
/* CPU time the process's threads have run, in ms: on a machine other jobs share, the
 * time a product ran, without the time it waited for a core */
double cpu_ms(void);
int cmp_double(const void *a, const void *b);
long peak_rss_mb(void);

/* threads 0: every count 1..nproc, taking turns; reps 0 / warmup < 0: defaults.
 * medians, when not NULL, receives the median ms (per step; per new token) for each
 * thread count measured, the first at medians[0]. */
int bench_train(const char *config, int threads, int nproc, int reps, int warmup, double *medians);
/* --generate: decoding at a GPT-2 shape (config "gpt2" or "gpt2-xl", NULL: gpt2) in one
 * weight format (weights "fp32", "bf16", "int8") or, weights NULL, all three in turn, each
 * beside its bandwidth limit; reps runs each (0: 5), medians reported. */
int bench_generate(const char *config, const char *weights, int threads, int nproc, int prompt, int new_tokens,
                   int no_cache, int reps, double *medians);
int bench_bandwidth(int threads, int nproc);
/* fused multiply-add throughput with every thread busy: scaling's compute ceiling */
int bench_peak(int threads, int nproc);
/* --peak's loop on `threads` threads at once for the instruction set the matrix products
 * run (its name in *isa): GFLOP per second of CPU time each thread ran, summed, best of
 * 5 (on a shared machine, the rate while running, as cpu_ms measures the products) */
double peak_gflops(int threads, const char **isa);
/* one cache line bounced between two threads: the cost of sharing data across cores */
int bench_latency(int nproc);
/* --classify: the book's chapter-6 step (the last block trains) beside full fine-tuning
 * (book_only: alone) at GPT-2 small's shape, then the evaluation's batch and the step's FLOP
 * limit, at one thread count (0: nproc); reps 0 / warmup < 0: 3 and 1 */
int bench_classify(int threads, int nproc, int reps, int warmup, int book_only);
/* the cross-entropy's forward and backward over (N, V) random logits, median of reps */
int bench_loss(int N, int V, int threads, int nproc, int reps);
/* the attention's backward (dq, dk, dv of B x T x C, NH heads) on random q, k, v and dout,
 * median wall and CPU time of reps, at one thread count or 1..nproc */
int bench_attention_backward(int B, int T, int C, int NH, int threads, int nproc, int reps);

#endif
