/*
 * chapter.h - what every chapter program shares: its command line (--seed N,
 * --figures DIR, --text PATH, --weights W, --book, --gpt2 DIR, --help), turning a library error into one line on
 * stderr and exit status 2 (1 out of memory or when a write fails), and shortcuts for printing tensors as Python does.
 */
#ifndef MYGPT_CHAPTER_H
#define MYGPT_CHAPTER_H

#include <stdint.h>

#include "mygpt.h"

enum {
    CH_SEED = 1,    /* accepts --seed N (uses randomness) */
    CH_FIGURES = 2, /* writes figures into --figures DIR (default: the current directory) */
    CH_TEXT = 4,    /* reads --text PATH */
    CH_SMOKE = 8,   /* accepts --smoke: a few steps only (the checks' small run) */
    CH_WEIGHTS = 16, /* accepts --weights fp32|bf16|int8 (chapter_apply_weights) */
    CH_SEED_UNSEEN = 32, /* with CH_SEED: nothing printed depends on the values drawn (shapes,
                            counts, checks that hold for any values); --help says so */
    CH_BOOK = 64,   /* accepts --book: the printed book's variant of the code (chapter 40) */
    CH_GPT2 = 128,  /* accepts --gpt2 DIR: a Hugging Face GPT-2 folder, the book's own run (81, 86) */
    CH_SEED_RUNC = 256 /* with CH_SEED: the seed is llama2.c's run.c -s, its sampler's (91) */
};

struct chapter;
typedef struct chapter {
    const char *name;
    uint64_t seed;
    const char *seed_text; /* --seed as given, or NULL */
    const char *figures;
    const char *figures_from; /* how figures was named: "--figures ", "MYGPT_FIGURES=" or "" (the default) */
    const char *text;
    int smoke;      /* --smoke given */
    int book;       /* --book given */
    const char *gpt2; /* --gpt2 DIR, or NULL */
    mygpt_weights weights; /* --weights (default fp32) */
    /* NULL, or called with the message instead of exiting 1 (a data-parallel rank ends
     * the whole MPI job: chapter 35) */
    void (*fail)(const struct chapter *ch, const char *message);
} chapter;

/* Parses the command line; prints help and exits 0 for --help, prints one line
 * and exits 2 on a bad argument. `about` is the one-paragraph help text. */
void chapter_init(chapter *ch, int argc, char **argv, const char *name, const char *about,
                  uint64_t default_seed, unsigned flags);

/* If st is not MYGPT_OK: prints "NAME: message" on stderr and exits (cli_exit_code: 2, or 1
 * out of memory). */
void chapter_check(const chapter *ch, mygpt_status st, const mygpt_error *err);

/* chapter_check of what the flag named ("--gpt2"): "NAME: FLAG: message" */
void chapter_check_flag(const chapter *ch, const char *flag, mygpt_status st, const mygpt_error *err);

/* Refuses what the chapter was given: "NAME: message" on stderr and exit 2 (bad input). */
void chapter_refuse(const chapter *ch, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* The same for a file written once its path was accepted (mygpt_checkpoint_check_path,
 * through chapter_check: a folder not there exits 2): a failed write (MYGPT_EIO: a full
 * disk, the file-size limit) exits 1, as the tool's cli_write_fail does. */
void chapter_check_write(const chapter *ch, mygpt_status st, const mygpt_error *err);

/* Checks that DIR/file (DIR = --figures, $MYGPT_FIGURES or .) can take a figure: a name
 * the chapter makes up, so a file there that is not one of the library's figures
 * (mygpt_svg_replaceable) is refused, one line and exit 2, never replaced. A chapter
 * that runs long asks before it starts; chapter_save_figure asks again. */
void chapter_check_figure(const chapter *ch, const char *file);

/* Writes fig to DIR/file (chapter_check_figure first; a --smoke run's to FILE_smoke.svg,
 * so the full run's figure stays) and says where on stderr (stdout is the document's
 * text); a write error is one line and exit 1. */
void chapter_save_figure(const chapter *ch, mygpt_svg *fig, const char *file);

/* The data folder (mygpt_data_dir) into dir, once each of files[0..n) is found in it.
 * The folder or a file absent: one line on stderr saying how to fetch it, and the program
 * exits 77 (skipped), or 1 under CI=true, where absent data is a failure. */
void chapter_data_dir(const chapter *ch, char *dir, size_t len, const char *const *files, int n);

/* calloc that exits with a clear message on failure. */
void *chapter_alloc(const chapter *ch, size_t count, size_t size);

/* Stores g's weights as --weights asked (mygpt/quantize.h); nothing for fp32. The text
 * then shows the quantized model, no longer the one the expected output was made from. */
void chapter_apply_weights(const chapter *ch, mygpt_gpt *g);

/* A monotonic clock in seconds, for the timings chapters print on stderr. */
double chapter_now_s(void);

/* Printing: each appends to stdout exactly what Python prints, with no newline. */
void ch_torch(const float *data, int ndim, const int64_t *shape, const char *grad_fn);
void ch_torch_i64(const int64_t *data, int ndim, const int64_t *shape);
void ch_torch_bool(const unsigned char *data, int ndim, const int64_t *shape);
void ch_numpy(const float *data, int ndim, const int64_t *shape, int round_decimals);
void ch_size(int ndim, const int64_t *shape);   /* torch.Size([...]) */
void ch_tuple(int ndim, const int64_t *shape);  /* (2, 12) */
void ch_commas(long long n);                    /* 123,264 */
void ch_pyfloat(double x);                      /* repr(float) */
const char *ch_bool(int b);                     /* True / False */

#endif
