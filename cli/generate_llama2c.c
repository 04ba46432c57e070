/*
 * generate_llama2c.c - `mygpt generate --sampler llama2c`: llama2.c's `run MODEL -z TOKENIZER
 * -t T -p P -s S -n N -i PROMPT`, printing on stdout what run.c prints (its tokenizer
 * (mygpt/sp_tokenizer.h), its sampler (mygpt/llama2c_sample.h), its loop
 * (mygpt_generate_llama2c)).
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "generate_llama2c.h"
#include "model_args.h"
#include "mygpt/generate.h"
#include "mygpt/sp_tokenizer.h"
#include "output.h"

/* run.c's flags as it reads them: -t and -p with atof, narrowed to float; -s and -n with
 * atoi (a seed of 0, or none, is the clock's time). */
typedef struct llama2c_flags {
    float temperature, topp;
    uint64_t seed;
    int steps, seed_from_clock;
} llama2c_flags;

/* An int flag, when given, as run.c's atoi reads a well-formed one into *out, refused
 * below min; 0, or EXIT_USAGE after the error. */
static int read_int(const char *cmd, const parsed_args *a, const char *name, int64_t min, int *out)
{
    int64_t v = 0;
    if (!args_has(a, name))
        return 0;
    if (parse_i64(cmd, name, args_get(a, name), min, INT_MAX, &v))
        return EXIT_USAGE;
    *out = (int)v;
    return 0;
}

/* The flags, run.c's defaults for those not given (temperature 1.0, top-p 0.9, 256 steps);
 * 0, or EXIT_USAGE after the error. */
static int read_llama2c_flags(const char *cmd, const parsed_args *a, llama2c_flags *f)
{
    static const char *const OTHERS[] = {"ids", "max-new", "top-k", "eos", "no-kv-cache", "stream", "print-ids",
                                         "chars", "weights", "adapters", "seed"};
    for (size_t i = 0; i < sizeof OTHERS / sizeof OTHERS[0]; i++)
        if (args_has(a, OTHERS[i])) {
            cli_error(cmd, "--%s cannot be used with --sampler llama2c (run.c's flags: --temperature, --top-p, "
                      "--sample-seed, --steps, --prompt)", OTHERS[i]);
            return EXIT_USAGE;
        }
    if (checkpoint_flags_check(cmd, a, 0)) // run.c's model has its own sizes
        return EXIT_USAGE;
    if (!args_has(a, "checkpoint") || !args_has(a, "tokenizer")) {
        cli_error(cmd, "--sampler llama2c needs --checkpoint MODEL and --tokenizer FILE (run.c's MODEL and -z)");
        return EXIT_USAGE;
    }
    double t = 1.0, p = 0.9;
    if (args_double_min(cmd, a, "temperature", 0.0, &t) || args_double_min(cmd, a, "top-p", 0.0, &p))
        return EXIT_USAGE;
    if (p > 1.0) {
        cli_error(cmd, "--top-p must be at most 1, got %s", args_get(a, "top-p"));
        return EXIT_USAGE;
    }
    if (isinf((float)t)) { // run.c's float
        cli_error(cmd, "--temperature %s is more than a float32 holds (at most %g)", args_get(a, "temperature"),
                  (double)FLT_MAX);
        return EXIT_USAGE;
    }
    int seed = 0;
    f->steps = 256;
    // --steps 0: the model's whole context
    if (read_int(cmd, a, "sample-seed", INT_MIN, &seed) || read_int(cmd, a, "steps", 0, &f->steps))
        return EXIT_USAGE;
    f->temperature = (float)t;
    f->topp = (float)p;
    f->seed_from_clock = seed == 0;
    f->seed = f->seed_from_clock ? (uint64_t)time(NULL) : (uint64_t)(long long)seed; // atoi's int, widened
    return 0;
}

/* What print_piece reads and notes: the tokenizer, and when the first position was done */
typedef struct printing {
    const mygpt_sp_tokenizer *tok;
    double first_done; // 0 until the first piece is printed
} printing;

/* Prints each piece as run.c's safe_printf does, flushed as it comes; notes the time of
 * the first, where run.c starts its clock. */
static int print_piece(int64_t prev, int64_t next, void *user)
{
    printing *pr = user;
    const char *piece = NULL;
    if (mygpt_sp_piece(pr->tok, (int)prev, (int)next, &piece, NULL) == MYGPT_OK && mygpt_sp_piece_printable(piece))
        fputs(piece, stdout);
    fflush(stdout);
    if (pr->first_done == 0)
        pr->first_done = cli_now_s();
    return ferror(stdout) != 0; // a failed write: stop there
}

int generate_llama2c(const char *cmd, const parsed_args *a)
{
    llama2c_flags f = {0};
    int rc = read_llama2c_flags(cmd, a, &f);
    if (rc)
        return rc;
    mygpt_gpt *g = NULL;
    mygpt_sp_tokenizer *tok = NULL;
    mygpt_llama2c_sampler sampler = {0};
    mygpt_error err = {0};
    int *ids = NULL;
    int64_t *prompt = NULL;
    size_t n = 0;
    const char *text = args_has(a, "prompt") ? args_get(a, "prompt") : "";
    if ((rc = load_checkpoint(cmd, a, &g)))
        goto done;
    mygpt_status st = mygpt_sp_load(&tok, args_get(a, "tokenizer"), g->config.vocab_size, &err);
    if (st == MYGPT_OK && (st = mygpt_sp_encode(tok, text, strlen(text), 1, 0, &ids, &n, &err)) != MYGPT_OK) {
        // what the vocabulary lacks (the piece " ", a byte's fallback, BOS), said of its file
        cli_error(cmd, "--tokenizer %s cannot encode the prompt: %s", args_get(a, "tokenizer"), err.message);
        rc = cli_exit_code(st);
        goto done;
    }
    if (st == MYGPT_OK)
        st = mygpt_llama2c_sampler_init(&sampler, g->config.vocab_size, f.temperature, f.topp, f.seed, &err);
    if (st != MYGPT_OK) {
        rc = cli_fail(cmd, st, &err);
        goto done;
    }
    if (!(prompt = malloc(n * sizeof *prompt))) {
        cli_error(cmd, "out of memory for the prompt");
        rc = EXIT_RUNTIME;
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        prompt[i] = ids[i];
    if (f.seed_from_clock && f.temperature > 0) // argmax draws nothing
        fprintf(stderr, "mygpt generate: --sample-seed %llu (the clock's, as run.c takes it)\n",
                (unsigned long long)f.seed);
    printing pr = {tok, 0};
    int positions = 0;
    st = mygpt_generate_llama2c(g, &sampler, prompt, (int)n, f.steps, print_piece, &pr, &positions, &err);
    if (st == MYGPT_OK || pr.first_done > 0) // a failure before any piece prints nothing
        printf("\n");
    if (st != MYGPT_OK) {
        rc = cli_fail(cmd, st, &err);
        goto done;
    }
    if ((rc = out_flush(cmd)))
        goto done;
    // run.c's measure: the positions after the first over the time since the first was
    // printed (the packing of the weights and the first forward not counted)
    if (positions > 1 && pr.first_done > 0) {
        const double secs = cli_now_s() - pr.first_done;
        fprintf(stderr, "mygpt generate: %d positions after the first in %.3f s: %.1f tokens/s\n", positions - 1,
                secs, (positions - 1) / (secs > 0 ? secs : 1e-9));
    }
done:
    mygpt_llama2c_sampler_free(&sampler);
    mygpt_sp_free(tok);
    mygpt_gpt_free(g);
    free(ids);
    free(prompt);
    return rc;
}
