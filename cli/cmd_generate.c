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
#include "commands.h"
#include "model_args.h"
#include "mygpt/data.h"
#include "mygpt/generate.h"
#include "mygpt/tokenizer.h"
#include "output.h"

/* Streaming: each token's bytes as soon as it is chosen (a character split over two
 * tokens is completed by the terminal when its second half arrives). */
typedef struct stream_state {
    const mygpt_tokenizer *tok;
    int failed;
} stream_state;

static void show_tokens(stream_state *s, const int64_t *ids, int n)
{
    char *text = NULL;
    size_t len = 0;
    if (mygpt_decode(s->tok, ids, (size_t)n, &text, &len, NULL) == MYGPT_OK)
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

int read_sampling(const char *cmd, const parsed_args *a, mygpt_sampling *s)
{
    int64_t topk = 0;
    *s = (mygpt_sampling){0};
    if (args_i64_in(cmd, a, "top-k", 1, 1 << 24, 0, &topk) ||
        args_double_min(cmd, a, "temperature", 0, &s->temperature) || args_double_min(cmd, a, "top-p", 0, &s->top_p))
        return EXIT_USAGE;
    s->top_k = (int)topk;
    if (args_has(a, "top-p") && !(s->top_p > 0 && s->top_p <= 1)) {
        cli_error(cmd, "--top-p must be in (0, 1], got %s", args_get(a, "top-p"));
        return EXIT_USAGE;
    }
    return 0;
}

int cmd_generate(int argc, char **argv)
{
    const char *cmd = "generate";
    static const arg_spec ARGS[] = {MODEL_FLAGS,         CHECKPOINT_FLAGS,  {"prompt", 1, 0},
                                    {"ids", 1, 0},       {"max-new", 1, 0},     SAMPLING_FLAGS,
                                    {"sample-seed", 1, 0}, {"eos", 1, 0},       {"no-kv-cache", 0, 0},
                                    {"stream", 0, 0},    {"no-stream", 0, 0},   {"print-ids", 0, 0},
                                    WEIGHTS_FLAG,        {NULL, 0, 0}};
    parsed_args a;
    int rc = args_parse(cmd, argc, argv, ARGS, 0, &a);
    if (rc < 0) {
        printf("usage: mygpt generate (--seed S --vocab V --embed C --heads H --layers N [--max-seq M]\n"
               "                       | --checkpoint FILE [--adapters FILE] [--seed S])\n"
               "                      (--prompt TEXT | --ids \"1,2,3\")\n"
               "                      --max-new N [--temperature T] [--top-k K] [--top-p P]\n"
               "                      [--sample-seed S] [--eos ID] [--no-kv-cache]\n"
               "                      [--stream | --no-stream] [--print-ids] [--weights fp32|bf16|int8]\n"
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
               "state_dict or Hugging Face's GPT-2 model.safetensors (mygpt never downloads), or\n"
               "a quantized one (mygpt quantize). --adapters FILE adds the LoRA adapters that\n"
               "mygpt finetune --lora saved for that checkpoint. --weights bf16|int8 quantizes\n"
               "the model's weights first; --weights fp32 runs a quantized checkpoint's\n"
               "dequantized values in float32 (the same tokens).\n");
        return 0;
    }
    if (rc)
        return rc;
    int64_t max_new, eos = -2;
    uint64_t seed = 0, sample_seed = 0;
    mygpt_sampling s;
    if (args_i64_in(cmd, &a, "max-new", 0, 1 << 20, 1, &max_new) || read_sampling(cmd, &a, &s) ||
        args_i64_in(cmd, &a, "eos", -1, 1 << 24, 0, &eos))
        return EXIT_USAGE;
    if (args_has(&a, "sample-seed") && parse_seed(cmd, "sample-seed", args_get(&a, "sample-seed"), &sample_seed))
        return EXIT_USAGE;
    if (args_has(&a, "prompt") == args_has(&a, "ids")) {
        cli_error(cmd, "give exactly one of --prompt TEXT and --ids \"1,2,3\"");
        return EXIT_USAGE;
    }
    mygpt_gpt *g = NULL;
    mygpt_error err = {0};
    mygpt_rng rng = {0};
    mygpt_status st;
    if (args_has(&a, "adapters") && !args_has(&a, "checkpoint")) {
        cli_error(cmd, "--adapters FILE needs --checkpoint FILE: the model the adapters were trained on");
        return EXIT_USAGE;
    }
    if (args_has(&a, "checkpoint")) {
        if (args_has(&a, "seed") && parse_seed(cmd, "seed", args_get(&a, "seed"), &seed))
            return EXIT_USAGE;
        if ((rc = load_checkpoint(cmd, &a, &g)))
            return rc;
        // torch.manual_seed(S); model = GPT(...) draws its initial values, then loads: the
        // generator's place matters only to a sampler that is not seeded afresh
        mygpt_rng_seed(&rng, seed);
        const int draws = s.temperature > 0 && !args_has(&a, "sample-seed");
        if (draws && (st = mygpt_gpt_skip_init(&g->config, &rng, &err)) != MYGPT_OK) {
            mygpt_gpt_free(g);
            return cli_fail(cmd, st, &err);
        }
    } else {
        mygpt_config cfg;
        if (read_seed_and_config(cmd, &a, &seed, &cfg))
            return EXIT_USAGE;
        mygpt_rng_seed(&rng, seed);
        if ((st = mygpt_gpt_create_from(&g, &cfg, &rng, &err)) != MYGPT_OK)
            return cli_fail(cmd, st, &err);
        if ((rc = apply_weights(cmd, &a, g))) {
            mygpt_gpt_free(g);
            return rc;
        }
    }
    const int V = g->config.vocab_size;
    mygpt_tokenizer *tok = NULL;
    int64_t *prompt = NULL, *out = NULL;
    int np = 0, nout = 0;
    if ((rc = read_sequence(cmd, &a, &tok, &prompt, &np)))
        goto done;
    if (np == 0) {
        cli_error(cmd, "--prompt is empty: nothing to continue");
        rc = EXIT_USAGE;
        goto done;
    }
    if (np > g->config.max_seq_len) // the tutorial's idx[:, -block_size:], said, not silent
        say_cropped(cmd, "prompt", np, g->config.max_seq_len);
    if (eos == -2)
        eos = V > 50256 ? 50256 : -1;
    if (args_has(&a, "sample-seed"))
        mygpt_rng_seed(&rng, sample_seed);
    if (!(out = malloc((size_t)(np + max_new) * sizeof *out))) {
        cli_error(cmd, "out of memory");
        rc = EXIT_RUNTIME;
        goto done;
    }
    char dir[4096];
    if (V == 50257 && !tok && mygpt_data_dir(dir, sizeof dir, &err) == MYGPT_OK)
        mygpt_tokenizer_load_dir(&tok, dir, &err); // the text too, when the vocabulary is there
    if (args_has(&a, "stream") && args_has(&a, "no-stream")) {
        cli_error(cmd, "--stream and --no-stream contradict each other");
        rc = EXIT_USAGE;
        goto done;
    }
    // the text streams when it can be shown: asked for, or by default onto a terminal
    const int stream = V == 50257 && tok &&
                       (args_has(&a, "stream") || (!args_has(&a, "no-stream") && isatty(STDOUT_FILENO)));
    if (args_has(&a, "stream") && !stream) {
        cli_error(cmd, "--stream: no text to show (the vocabulary is not GPT-2's, or the data folder lacks it)");
        rc = EXIT_USAGE;
        goto done;
    }
    stream_state ss = {tok, 0};
    if (stream)
        show_tokens(&ss, prompt, np);
    const double t0 = cli_now_s();
    const mygpt_generation gen = {.max_new = (int)max_new, .sampling = s, .eos = eos,
                                  .use_cache = !args_has(&a, "no-kv-cache"), .on_token = stream ? on_token : NULL,
                                  .user = &ss};
    if ((st = mygpt_generate(g, &rng, prompt, np, &gen, out, &nout, &err)) != MYGPT_OK) {
        if (stream)
            printf("\n");
        rc = cli_fail(cmd, st, &err);
        goto done;
    }
    const double secs = cli_now_s() - t0;
    if (stream && (rc = out_flush(cmd)))
        goto done;
    if (stream) {
        printf("\n");
        if (ss.failed)
            fprintf(stderr, "mygpt generate: some tokens could not be decoded\n");
    }
    if (!stream || args_has(&a, "print-ids")) {
        for (int i = 0; i < nout; i++)
            printf(i ? " %lld" : "%lld", (long long)out[i]);
        printf("\n");
    }
    if (!stream && V == 50257 && tok) {
        char *textout;
        size_t len;
        if (mygpt_decode(tok, out, (size_t)nout, &textout, &len, &err) == MYGPT_OK) {
            fwrite(textout, 1, len, stdout);
            printf("\n");
            free(textout);
        }
    }
    fprintf(stderr, "mygpt generate: %d new tokens in %.3f s: %.1f tokens/s\n", nout - np, secs,
            (nout - np) / (secs > 0 ? secs : 1e-9));
done:
    mygpt_tokenizer_free(tok);
    mygpt_gpt_free(g);
    free(prompt);
    free(out);
    return rc;
}
