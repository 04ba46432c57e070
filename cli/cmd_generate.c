/*
 * cmd_generate.c - `mygpt generate`: the tutorial's generation loop (what
 * tools/reference_train.py generate computes in PyTorch), from a seeded model or a
 * checkpoint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "char_vocab.h"
#include "commands.h"
#include "generate_llama2c.h"
#include "model_args.h"
#include "mygpt/data.h"
#include "mygpt/generate.h"
#include "mygpt/tokenizer.h"
#include "output.h"

static const char USAGE[] =
    "usage: mygpt generate (--seed S --vocab V --embed C --heads H --layers N [--max-seq M]\n"
    "                       | --checkpoint FILE [--adapters FILE] [--seed S])\n"
    "                      (--prompt TEXT | --ids \"1,2,3\")\n"
    "                      --max-new N [--temperature T] [--top-k K] [--top-p P]\n"
    "                      [--sample-seed S] [--eos ID] [--no-kv-cache]\n"
    "                      [--stream | --no-stream] [--print-ids] [--weights fp32|bf16|int8]\n"
    "                      [--chars TEXTFILE]\n"
    "       mygpt generate --checkpoint MODEL --tokenizer FILE [--sampler llama2c]\n"
    "                      [--prompt TEXT] [--temperature T] [--top-p P] [--sample-seed S]\n"
    "                      [--steps N]\n"
    "\n"
    "The tutorial's generation loop: up to N tokens, each from the last max_seq_len of\n"
    "the context (a longer prompt too, with a note on stderr, as attention does); top-k,\n"
    "then softmax(logits / T), top-p and torch.multinomial, or argmax when T is 0 (the\n"
    "default). Stops at the end token (50256 for GPT-2's vocabulary, none otherwise, or\n"
    "--eos). --sample-seed S is torch.manual_seed(S) just\n"
    "before sampling; without it the generator continues from building the model\n"
    "(torch.manual_seed(S), S = 0 with --checkpoint, then GPT(...)). Prints one line of\n"
    "every id, prompt included, then the text when the vocabulary is GPT-2's and in the\n"
    "data folder. --stream (the default on a terminal) shows the text instead, token by\n"
    "token as it is generated; the ids line then follows only with --print-ids.\n"
    "--no-stream: ids first, as into a pipe. --no-kv-cache recomputes the whole window\n"
    "every step (the same tokens, slower). A checkpoint may be mygpt's, the book's\n"
    "state_dict or Hugging Face's GPT-2 model.safetensors (mygpt download gpt2), or\n"
    "a quantized one (mygpt quantize). --adapters FILE adds the LoRA adapters that\n"
    "mygpt finetune --lora saved for that checkpoint. --weights bf16|int8 quantizes\n"
    "the model's weights first; --weights fp32 runs a quantized checkpoint's\n"
    "dequantized values in float32 (the same tokens). --chars TEXTFILE: the model's\n"
    "vocabulary is that text's characters, sorted (nanoGPT's character-level tokenizer, as\n"
    "mygpt train --arch nanogpt trains on): the prompt is encoded and the text written with\n"
    "it, the prompt included (nanoGPT's sample.py: --seed 1337 --prompt $'\\n' --max-new 500\n"
    "--temperature 0.8 --top-k 200).\n"
    "\n"
    "--sampler llama2c (implied by --tokenizer) is llama2.c's run.c:\n"
    "`run MODEL -z FILE -t T -p P -s S -n N -i TEXT` prints on stdout what this prints with\n"
    "--tokenizer FILE --temperature T --top-p P --sample-seed S --steps N --prompt TEXT.\n"
    "MODEL is a llama2.c .bin (corpus/llama/stories260K.bin) or any checkpoint whose\n"
    "vocabulary FILE (llama2.c's tokenizer.bin: corpus/llama/tok512.bin) spells; the prompt\n"
    "is encoded with BOS, run position by position, then each token drawn by run.c's\n"
    "sampler (its xorshift generator seeded with S: argmax at T = 0, else softmax(logits /\n"
    "T) and top-p P, all tokens when P is 0 or 1) until N positions (the prompt's included;\n"
    "0: the model's context) or BOS. Defaults as run.c's: T 1.0, P 0.9, N 256, S the\n"
    "clock's time (said on stderr; 0 too).\n";

/* Streaming: each token's bytes as soon as it is chosen (a character split over two
 * tokens is completed by the terminal when its second half arrives). */
typedef struct stream_state {
    const mygpt_tokenizer *tok;
    const char_vocab *chars; /* or the characters of --chars (then tok is NULL) */
    int failed;
} stream_state;

static void show_tokens(stream_state *s, const int64_t *ids, int n)
{
    char *text = NULL;
    size_t len = 0;
    const mygpt_status st = s->chars ? char_vocab_decode(s->chars, ids, (size_t)n, &text, &len, NULL)
                                     : mygpt_decode(s->tok, ids, (size_t)n, &text, &len, NULL);
    if (st == MYGPT_OK)
        fwrite(text, 1, len, stdout);
    else
        s->failed = 1;
    free(text);
    fflush(stdout);
}

static int on_token(int64_t id, void *user)
{
    show_tokens(user, &id, 1);
    return ferror(stdout) != 0; // a failed write: the generation stops there
}

/* The flags of one generation, read and checked. */
typedef struct gen_flags {
    int64_t max_new, eos; // eos -2: the vocabulary's own (GPT-2's 50256, else none)
    uint64_t seed, sample_seed;
    mygpt_sampling s;
} gen_flags;

/* One generation's model, generator, tokenizer (NULL: no text), prompt and output ids. */
typedef struct generation {
    mygpt_gpt *g;
    mygpt_rng rng;
    mygpt_tokenizer *tok;
    char_vocab chars; /* --chars' vocabulary (chars.n 0 without) */
    int64_t *prompt, *out;
    int np, nout, stream;
    mygpt_error err;
} generation;

/* --max-new, the sampler, --eos, --sample-seed and the choice of input; 0, or EXIT_USAGE
 * after the error. */
static int read_flags(const char *cmd, const parsed_args *a, gen_flags *f)
{
    *f = (gen_flags){.eos = -2};
    if (args_i64_in(cmd, a, "max-new", 0, 1 << 20, 1, &f->max_new) || read_sampling(cmd, a, &f->s) ||
        args_i64_in(cmd, a, "eos", -1, 1 << 24, 0, &f->eos))
        return EXIT_USAGE;
    if (args_has(a, "sample-seed") && parse_seed(cmd, "sample-seed", args_get(a, "sample-seed"), &f->sample_seed))
        return EXIT_USAGE;
    return check_input_flags(cmd, a);
}

/* The model, from --checkpoint or built from its flags, and the generator where building
 * it leaves it; 0, or the exit code after saying why not. */
static int build_model(const char *cmd, const parsed_args *a, gen_flags *f, generation *gen)
{
    mygpt_status st;
    int rc;
    if (args_has(a, "checkpoint")) {
        if (checkpoint_flags_check(cmd, a, 0) ||
            (args_has(a, "seed") && parse_seed(cmd, "seed", args_get(a, "seed"), &f->seed)))
            return EXIT_USAGE;
        if ((rc = load_checkpoint(cmd, a, &gen->g)))
            return rc;
        // torch.manual_seed(S); model = GPT(...) draws its initial values, then loads: the
        // generator's place matters only to a sampler that is not seeded afresh
        mygpt_rng_seed(&gen->rng, f->seed);
        const int draws = f->s.temperature > 0 && !args_has(a, "sample-seed");
        if (draws && (st = mygpt_gpt_skip_init(&gen->g->config, &gen->rng, &gen->err)) != MYGPT_OK)
            return cli_fail(cmd, st, &gen->err);
        return 0;
    }
    mygpt_config cfg;
    if (read_seed_and_config(cmd, a, &f->seed, &cfg))
        return EXIT_USAGE;
    mygpt_rng_seed(&gen->rng, f->seed);
    if ((st = mygpt_gpt_create_from(&gen->g, &cfg, &gen->rng, &gen->err)) != MYGPT_OK)
        return cli_fail(cmd, st, &gen->err);
    return apply_weights(cmd, a, gen->g);
}

/* --chars FILE: the vocabulary of its text, as many characters as the model's vocab_size;
 * 0, or the exit code after the error */
static int read_chars(const char *cmd, const parsed_args *a, generation *gen)
{
    const char *path = args_get(a, "chars");
    const mygpt_status st = char_vocab_from_file(&gen->chars, path, &gen->err);
    if (st != MYGPT_OK)
        return cli_fail(cmd, st, &gen->err);
    if (gen->chars.n != gen->g->config.vocab_size) {
        cli_error(cmd, "--chars %s: %d distinct characters, but the model's vocabulary has %d", path, gen->chars.n,
                  gen->g->config.vocab_size);
        return EXIT_USAGE;
    }
    return 0;
}

/* The prompt's ids (said when longer than the context) and room for the output; 0, or
 * the exit code after saying why not. */
static int read_prompt(const char *cmd, const parsed_args *a, const gen_flags *f, generation *gen)
{
    const int M = gen->g->config.max_seq_len;
    int rc;
    if (args_has(a, "chars") && (rc = read_chars(cmd, a, gen)))
        return rc;
    if (gen->chars.n == 0 || !args_has(a, "prompt")) {
        if ((rc = read_sequence(cmd, a, gen->g->config.vocab_size, &gen->tok, &gen->prompt, &gen->np)))
            return rc;
    } else {
        const char *p = args_get(a, "prompt");
        size_t n = 0;
        const mygpt_status st = char_vocab_encode(&gen->chars, p, strlen(p), &gen->prompt, &n, &gen->err);
        if (st != MYGPT_OK) {
            cli_error(cmd, "--prompt: %s (of --chars %s)", gen->err.message, args_get(a, "chars"));
            return EXIT_USAGE;
        }
        gen->np = (int)n;
    }
    if (gen->np == 0) {
        cli_error(cmd, "--prompt is empty: nothing to continue");
        return EXIT_USAGE;
    }
    if (gen->np > M) // the tutorial's idx[:, -block_size:], said, not silent
        say_cropped(cmd, "prompt", gen->np, M);
    if (!(gen->out = malloc((size_t)(gen->np + f->max_new) * sizeof *gen->out))) {
        cli_error(cmd, "out of memory");
        return EXIT_RUNTIME;
    }
    return 0;
}

/* Whether the text streams: asked for, or by default onto a terminal, when it can be
 * shown (GPT-2's vocabulary and its tokenizer); 0, or EXIT_USAGE after the error. */
static int choose_stream(const char *cmd, const parsed_args *a, generation *gen)
{
    const int V = gen->g->config.vocab_size;
    char dir[4096];
    if (V == 50257 && !gen->tok && mygpt_data_dir(dir, sizeof dir, &gen->err) == MYGPT_OK)
        mygpt_tokenizer_load_dir(&gen->tok, dir, &gen->err); // the text too, when the vocabulary is there
    if (args_has(a, "stream") && args_has(a, "no-stream")) {
        cli_error(cmd, "--stream and --no-stream contradict each other");
        return EXIT_USAGE;
    }
    gen->stream = ((V == 50257 && gen->tok) || gen->chars.n > 0) &&
                  (args_has(a, "stream") || (!args_has(a, "no-stream") && isatty(STDOUT_FILENO)));
    if (args_has(a, "stream") && !gen->stream) {
        cli_error(cmd, "--stream: no text to show (the vocabulary is not GPT-2's, or the data folder lacks it)");
        return EXIT_USAGE;
    }
    return 0;
}

/* After a run: the ids line (always without streaming, else with --print-ids), then the
 * text when it was not streamed and can be shown. */
static void print_output(const parsed_args *a, generation *gen)
{
    if ((!gen->stream && gen->chars.n == 0) || args_has(a, "print-ids")) {
        for (int i = 0; i < gen->nout; i++)
            printf(i ? " %lld" : "%lld", (long long)gen->out[i]);
        printf("\n");
    }
    const int chars = gen->chars.n > 0;
    if (!gen->stream && (chars || (gen->g->config.vocab_size == 50257 && gen->tok))) {
        char *textout;
        size_t len;
        const mygpt_status st = chars ? char_vocab_decode(&gen->chars, gen->out, (size_t)gen->nout, &textout, &len,
                                                          &gen->err)
                                      : mygpt_decode(gen->tok, gen->out, (size_t)gen->nout, &textout, &len, &gen->err);
        if (st == MYGPT_OK) {
            fwrite(textout, 1, len, stdout);
            printf("\n");
            free(textout);
        }
    }
}

/* The generation loop, its output and its speed on stderr; 0, or the exit code after
 * saying why it failed. */
static int run(const char *cmd, const parsed_args *a, const gen_flags *f, generation *gen)
{
    stream_state ss = {gen->tok, gen->chars.n > 0 ? &gen->chars : NULL, 0};
    if (gen->stream)
        show_tokens(&ss, gen->prompt, gen->np);
    const double t0 = cli_now_s();
    const mygpt_generation settings = {.max_new = (int)f->max_new, .sampling = f->s, .eos = f->eos,
                                       .use_cache = !args_has(a, "no-kv-cache"),
                                       .on_token = gen->stream ? on_token : NULL, .user = &ss};
    const mygpt_status st = mygpt_generate(gen->g, &gen->rng, gen->prompt, gen->np, &settings, gen->out, &gen->nout,
                                           &gen->err);
    if (st != MYGPT_OK) {
        if (gen->stream)
            printf("\n");
        return sampling_fail(cmd, &f->s, st, &gen->err);
    }
    const double secs = cli_now_s() - t0;
    int rc;
    if (gen->stream && (rc = out_flush(cmd)))
        return rc;
    if (gen->stream) {
        printf("\n");
        if (ss.failed)
            fprintf(stderr, "mygpt generate: some tokens could not be decoded\n");
    }
    print_output(a, gen);
    if ((rc = out_flush(cmd))) // (the output lost: one line, that one, not the rate too)
        return rc;
    const int n = gen->nout - gen->np;
    fprintf(stderr, "mygpt generate: %d new tokens in %.3f s: %.1f tokens/s\n", n, secs, n / (secs > 0 ? secs : 1e-9));
    return 0;
}

/* `mygpt generate`: the tutorial's generation loop from a prompt, its ids and text
 * printed or the text streamed; returns the exit status. */
int cmd_generate(int argc, char **argv)
{
    const char *cmd = "generate";
    static const arg_spec ARGS[] = {MODEL_FLAGS,         CHECKPOINT_FLAGS,  {"prompt", 1, 0},
                                    {"ids", 1, 0},       {"max-new", 1, 0},     SAMPLING_FLAGS,
                                    {"sample-seed", 1, 0}, {"eos", 1, 0},       {"no-kv-cache", 0, 0},
                                    {"stream", 0, 0},    {"no-stream", 0, 0},   {"print-ids", 0, 0},
                                    WEIGHTS_FLAG,        {"chars", ARG_PATH, 0}, {"sampler", 1, 0},
                                    {"tokenizer", ARG_PATH, 0}, {"steps", 1, 0},    {NULL, 0, 0}};
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, ARGS, 0, USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    const char *sampler = args_has(&a, "sampler") ? args_get(&a, "sampler") : NULL;
    if (sampler && strcmp(sampler, "llama2c") != 0 && strcmp(sampler, "torch") != 0) {
        cli_error(cmd, "--sampler: '%s' is not torch (the tutorial's, the default) or llama2c (run.c's)", sampler);
        return EXIT_USAGE;
    }
    if ((sampler && strcmp(sampler, "llama2c") == 0) || (!sampler && args_has(&a, "tokenizer")))
        return generate_llama2c(cmd, &a);
    if (args_has(&a, "tokenizer") || args_has(&a, "steps")) {
        cli_error(cmd, "--%s goes with --sampler llama2c", args_has(&a, "tokenizer") ? "tokenizer" : "steps");
        return EXIT_USAGE;
    }
    gen_flags f;
    generation gen = {0};
    if ((rc = read_flags(cmd, &a, &f)) || (rc = build_model(cmd, &a, &f, &gen)))
        goto done;
    if ((rc = read_prompt(cmd, &a, &f, &gen)))
        goto done;
    if (f.eos == -2)
        f.eos = gen.g->config.vocab_size > 50256 ? 50256 : -1;
    else if (f.eos >= gen.g->config.vocab_size) { // a token the model can never give
        cli_error(cmd, "--eos %lld: the model's tokens are 0 to %d", (long long)f.eos, gen.g->config.vocab_size - 1);
        rc = EXIT_USAGE;
        goto done;
    }
    if (args_has(&a, "sample-seed"))
        mygpt_rng_seed(&gen.rng, f.sample_seed);
    if (!(rc = choose_stream(cmd, &a, &gen)))
        rc = run(cmd, &a, &f, &gen);
done:
    mygpt_tokenizer_free(gen.tok);
    char_vocab_free(&gen.chars);
    mygpt_gpt_free(gen.g);
    free(gen.prompt);
    free(gen.out);
    return rc;
}
