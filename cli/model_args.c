/*
 * model_args.c - what the model commands share (model_args.h): the model's flags read
 * and validated, ids parsed, a model built or loaded, the sampler's flags, the tokenizer
 * and the one sequence a command reads, every tensor printed by name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "model_args.h"
#include "mygpt/print.h"
#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "mygpt/generate.h"
#include "mygpt/gpt.h"
#include "mygpt/quantize.h"
#include "mygpt/tokenizer.h"
#include "output.h"

#define MAX_IDS (1 << 20)

/* llama's sizes: --kv-heads K, --ffn-hidden H or model.py's rule with --multiple-of M
 * (default 256), --untied-head (after --embed); 1 after saying what is wrong */
static int read_llama_flags(const char *cmd, const parsed_args *a, mygpt_config *cfg)
{
    int64_t kv = 0, hidden = 0, multiple = 0;
    if (args_i64_in(cmd, a, "kv-heads", 1, INT32_MAX, 0, &kv) ||
        args_i64_in(cmd, a, "ffn-hidden", 1, INT32_MAX, 0, &hidden) ||
        args_i64_in(cmd, a, "multiple-of", 1, INT32_MAX, 0, &multiple))
        return 1;
    if (kv && cfg->num_heads > 0 && cfg->num_heads % kv != 0) { // the flag's words, not the config's (0 is refused)
        cli_error(cmd, "--kv-heads %lld must divide --heads %d (each key and value head serves as many query heads)",
                  (long long)kv, cfg->num_heads);
        return 1;
    }
    if (hidden && multiple) {
        cli_error(cmd, "%s", "--ffn-hidden and --multiple-of both set the hidden size: give one");
        return 1;
    }
    if (multiple && !(hidden = mygpt_llama_hidden_dim(cfg->embed_dim, (int)multiple))) {
        cli_error(cmd, "--multiple-of %lld: no hidden size for --embed %d", (long long)multiple, cfg->embed_dim);
        return 1;
    }
    cfg->num_kv_heads = (int)kv;
    cfg->ffn_hidden = (int)hidden;
    cfg->untied_head = args_has(a, "untied-head");
    return 0;
}

/* mygpt_config_validate's reason (why) said after the flags given that set what it names
 * ("--embed, --heads: embed_dim=6 is not divisible by num_heads=4") */
static void say_config(const char *cmd, const parsed_args *a, const char *why)
{
    static const char *const field[] = {"vocab_size",   "embed_dim",  "num_heads",   "num_layers", "max_seq_len",
                                        "num_kv_heads", "ffn_hidden", "untied_head", "dropout"};
    static const char *const flag[] = {"vocab", "embed", "heads", "layers", "max-seq", "kv-heads", "ffn-hidden",
                                       "untied-head", "dropout"};
    char flags[128] = "";
    for (size_t i = 0; i < sizeof field / sizeof field[0]; i++)
        if (strstr(why, field[i]) && args_has(a, flag[i]))
            snprintf(flags + strlen(flags), sizeof flags - strlen(flags), "%s--%s", flags[0] ? ", " : "", flag[i]);
    if (flags[0])
        cli_error(cmd, "%s: %s", flags, why);
    else
        cli_error(cmd, "%s", why);
}

/* Reads --vocab --embed --heads --layers [--max-seq] (default 64), the architecture's flags
 * (--qkv-bias only where the architecture has the switch: never silently ignored). */
int read_config(const char *cmd, const parsed_args *a, mygpt_config *cfg)
{
    mygpt_error err = {0};
    memset(cfg, 0, sizeof *cfg);
    if (args_has(a, "arch") && mygpt_arch_parse(args_get(a, "arch"), &cfg->arch, &err) != MYGPT_OK) {
        cli_error(cmd, "--arch: %s", err.message);
        return EXIT_USAGE;
    }
    cfg->qkv_bias = args_has(a, "qkv-bias");
    if (cfg->qkv_bias && cfg->arch != MYGPT_ARCH_LLMS_FROM_SCRATCH && cfg->arch != MYGPT_ARCH_GPT2) {
        cli_error(cmd, "--qkv-bias: the %s model has no bias on its queries, keys and values (--arch "
                  "llms-from-scratch takes one; gpt2 always has it)", mygpt_arch_name(cfg->arch));
        return EXIT_USAGE;
    }
    if (args_has(a, "dropout") && parse_double(cmd, "dropout", args_get(a, "dropout"), &cfg->dropout))
        return EXIT_USAGE;
    const char *names[4] = {"vocab", "embed", "heads", "layers"};
    int *fields[4] = {&cfg->vocab_size, &cfg->embed_dim, &cfg->num_heads, &cfg->num_layers};
    for (int i = 0; i < 4; i++) {
        int64_t v;
        if (!args_has(a, names[i])) {
            cli_error(cmd, "--%s is required", names[i]);
            return EXIT_USAGE;
        }
        if (parse_i64(cmd, names[i], args_get(a, names[i]), 1, INT32_MAX, &v)) // (an int: the config's)
            return EXIT_USAGE;
        *fields[i] = (int)v;
    }
    if (read_llama_flags(cmd, a, cfg))
        return EXIT_USAGE;
    cfg->max_seq_len = 64;
    if (args_has(a, "max-seq")) {
        int64_t v;
        if (parse_i64(cmd, "max-seq", args_get(a, "max-seq"), 1, INT32_MAX, &v))
            return EXIT_USAGE;
        cfg->max_seq_len = (int)v;
    }
    if (mygpt_config_validate(cfg, &err) != MYGPT_OK) {
        say_config(cmd, a, err.message);
        return EXIT_USAGE;
    }
    return 0;
}

/* --seed (required) and the configuration. */
int read_seed_and_config(const char *cmd, const parsed_args *a, uint64_t *seed,
                                mygpt_config *cfg)
{
    if (!args_has(a, "seed")) {
        cli_error(cmd, "--seed is required");
        return EXIT_USAGE;
    }
    if (parse_seed(cmd, "seed", args_get(a, "seed"), seed) || read_config(cmd, a, cfg))
        return EXIT_USAGE;
    return 0;
}

/* "0,1,2;3,2,1" -> rows of equal length. Values are checked against V later by
 * the library; here only the syntax. */
int parse_ids(const char *cmd, const char *s, int64_t **out, int *B, int *T)
{
    int64_t *ids = malloc(MAX_IDS * sizeof *ids);
    if (!ids) {
        cli_error(cmd, "out of memory");
        return EXIT_RUNTIME;
    }
    int rows = 0, cols = 0, n = 0, row_len = 0;
    const char *p = s;
    if (*p == '\0')
        goto bad;
    for (;;) {
        char *end;
        if (!(*p == '-' || (*p >= '0' && *p <= '9')))
            goto bad;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno == ERANGE)
            goto bad;
        if (n == MAX_IDS) {
            cli_error(cmd, "--ids: more than %d ids", MAX_IDS);
            free(ids);
            return EXIT_USAGE;
        }
        ids[n++] = v;
        row_len++;
        p = end;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == ';' || *p == '\0') {
            if (rows == 0)
                cols = row_len;
            else if (row_len != cols) {
                cli_error(cmd, "--ids: row %d has %d ids but row 0 has %d (rows must have equal length)",
                          rows, row_len, cols);
                free(ids);
                return EXIT_USAGE;
            }
            rows++;
            row_len = 0;
            if (*p == '\0')
                break;
            p++;
            continue;
        }
        goto bad;
    }
    *out = ids;
    *B = rows;
    *T = cols;
    return 0;
bad:
    cli_error(cmd, "--ids: '%s' is not rows of integer ids like \"0,1,2;2,1,0\"", s);
    free(ids);
    return EXIT_USAGE;
}

int apply_weights(const char *cmd, const parsed_args *a, mygpt_gpt *g)
{
    mygpt_weights w;
    mygpt_error err = {0};
    if (!args_has(a, "weights"))
        return 0;
    if (mygpt_weights_parse(args_get(a, "weights"), &w, &err) != MYGPT_OK) {
        cli_error(cmd, "--weights: %s", err.message);
        return EXIT_USAGE;
    }
    const mygpt_status st = mygpt_gpt_quantize(g, w, &err);
    return st == MYGPT_OK ? 0 : cli_fail(cmd, st, &err);
}

int adapters_base_check(const char *cmd, const char *what, const char *path, const mygpt_gpt *g)
{
    if (g->weights == MYGPT_WEIGHTS_FP32)
        return 0;
    cli_error(cmd, "%s %s holds %s weights: LoRA adapters go on float32 ones ('mygpt quantize %s OUT --weights fp32' "
              "writes them)", what, path, mygpt_weights_name(g->weights), path);
    return EXIT_USAGE;
}

int load_checkpoint(const char *cmd, const parsed_args *a, mygpt_gpt **g)
{
    mygpt_error err = {0};
    const char *path = args_get(a, "checkpoint");
    mygpt_status st = mygpt_model_load(g, path, &err);
    if (st != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    int rc = args_has(a, "adapters") ? adapters_base_check(cmd, "--checkpoint", path, *g) : 0;
    if (!rc && args_has(a, "adapters") && (st = mygpt_checkpoint_load_adapters(*g, args_get(a, "adapters"), &err)))
        rc = cli_fail(cmd, st, &err);
    if (!rc)
        rc = apply_weights(cmd, a, *g);
    if (rc) {
        mygpt_gpt_free(*g);
        *g = NULL;
    }
    return rc;
}

int check_input_flags(const char *cmd, const parsed_args *a)
{
    if (args_has(a, "prompt") == args_has(a, "ids")) {
        cli_error(cmd, "give exactly one of --prompt TEXT and --ids \"1,2,3\"");
        return EXIT_USAGE;
    }
    if (args_has(a, "adapters") && !args_has(a, "checkpoint")) {
        cli_error(cmd, "--adapters FILE needs --checkpoint FILE: the model the adapters were trained on");
        return EXIT_USAGE;
    }
    return 0;
}

int checkpoint_flags_check(const char *cmd, const parsed_args *a, int seed_too)
{
    static const arg_spec flags[] = {MODEL_FLAGS};
    for (size_t i = 0; args_has(a, "checkpoint") && i < sizeof flags / sizeof flags[0]; i++)
        if ((seed_too || strcmp(flags[i].name, "seed") != 0) && args_has(a, flags[i].name)) {
            cli_error(cmd, "--%s cannot be used with --checkpoint (the checkpoint's model has its own)", flags[i].name);
            return EXIT_USAGE;
        }
    return 0;
}

int model_from_args(const char *cmd, const parsed_args *a, mygpt_gpt **g)
{
    int rc;
    *g = NULL;
    if (args_has(a, "checkpoint"))
        return checkpoint_flags_check(cmd, a, 1) ? EXIT_USAGE : load_checkpoint(cmd, a, g);
    mygpt_config cfg;
    uint64_t seed;
    if (read_seed_and_config(cmd, a, &seed, &cfg))
        return EXIT_USAGE;
    if ((rc = create_model(cmd, &cfg, seed, g)))
        return rc;
    if ((rc = apply_weights(cmd, a, *g))) {
        mygpt_gpt_free(*g);
        *g = NULL;
    }
    return rc;
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

int sampling_fail(const char *cmd, const mygpt_sampling *s, mygpt_status st, const mygpt_error *err)
{
    // mygpt_generate refuses logits that are not finite: softmax(logits / T) is then no
    // distribution only when the division overflows float32 (PyTorch's words, kept)
    if (s->temperature > 0 && strstr(err->message, "probability tensor contains") == err->message) {
        mygpt_strbuf t = {0}; // the value as it was typed (its shortest digits), not %g's
        mygpt_py_float_repr(&t, s->temperature);
        cli_error(cmd, "--temperature %s: the logits divided by it in float32 are not finite, so softmax gives no "
                  "distribution (%s)", mygpt_sb_str(&t), err->message);
        mygpt_sb_free(&t);
        return cli_exit_code(st);
    }
    return cli_fail(cmd, st, err);
}

void say_cropped(const char *cmd, const char *what, int n, int max_seq)
{
    fprintf(stderr, "mygpt %s: the %s has %d tokens, more than the model's context: it reads the last %d\n", cmd,
            what, n, max_seq);
}

/* set_seed(seed); GPT(...): 0, or the exit code after saying why it failed (out of
 * memory is a runtime failure, anything else the caller's sizes). */
int create_model(const char *cmd, const mygpt_config *cfg, uint64_t seed, mygpt_gpt **gpt)
{
    mygpt_error err = {0};
    const mygpt_status st = mygpt_gpt_create(gpt, cfg, seed, &err);
    if (st == MYGPT_OK)
        return 0;
    return cli_fail(cmd, st, &err);
}

/* Prints every tensor of w (parameters, or gradients in the same layout) in
 * named_parameters() order: its name, then the tensor (decorated by opts). */
int print_named_tensors(const char *cmd, const out_options *o, const mygpt_config *cfg,
                        const mygpt_params *w, const mygpt_torch_opts *opts)
{
    int rc = 0;
    for (int j = 0; j < mygpt_state_dict_len(cfg) && !rc; j++) {
        mygpt_state_entry e;
        mygpt_state_dict_entry(cfg, w, j, &e);
        mygpt_tview v;
        mygpt_tview_make(&v, MYGPT_F32, e.data, e.ndim, e.shape, NULL);
        if (o->format != OUT_EXACT)
            printf("%s\n", e.name);
        rc = out_print(cmd, o, &v, opts);
    }
    return rc;
}

int load_tokenizer(const char *cmd, mygpt_tokenizer **tok)
{
    char dir[4096];
    mygpt_error err = {0};
    mygpt_status st = mygpt_data_dir(dir, sizeof dir, &err);
    if (st == MYGPT_OK)
        st = mygpt_tokenizer_load_dir(tok, dir, &err);
    return st == MYGPT_OK ? 0 : cli_fail(cmd, st, &err);
}

void tokenizer_files(cli_file files[2], char paths[2][4200])
{
    static const char *const NAMES[2] = {"encoder.json", "vocab.bpe"}; // mygpt_tokenizer_load_dir's
    char dir[4096];
    const int found = mygpt_data_dir(dir, sizeof dir, NULL) == MYGPT_OK;
    for (int k = 0; k < 2; k++) {
        snprintf(paths[k], 4200, "%s/%s", found ? dir : "", NAMES[k]);
        files[k] = (cli_file){"the tokenizer", found ? paths[k] : NULL, 0, 0};
    }
}

/* The token ids of text (GPT-2's tokenizer from the data folder). */
int encode_text(const char *cmd, const mygpt_tokenizer *tok, const char *text, size_t len,
                       int64_t **ids, size_t *n)
{
    mygpt_error err = {0};
    const mygpt_status st = mygpt_encode(tok, text, len, ids, n, &err);
    return st == MYGPT_OK ? 0 : cli_fail(cmd, st, &err);
}

/* --prompt's GPT-2 tokens (into *ids, *n of them), each within the model's vocab; 0, or
 * the exit code after the error, which names --prompt */
static int encode_prompt(const char *cmd, const mygpt_tokenizer *tok, const char *p, int vocab, int64_t **ids,
                         int *n)
{
    mygpt_error err = {0};
    size_t len;
    const mygpt_status st = mygpt_encode(tok, p, strlen(p), ids, &len, &err);
    if (st != MYGPT_OK) {
        cli_error(cmd, "--prompt: %s", err.message);
        return cli_exit_code(st);
    }
    *n = (int)len;
    for (size_t i = 0; i < len; i++)
        if ((*ids)[i] >= vocab) { // a model of another tokenizer: GPT-2's ids are not its own
            cli_error(cmd, "--prompt: its GPT-2 token %lld is outside the model's vocabulary of %d (%s)",
                      (long long)(*ids)[i], vocab,
                      strcmp(cmd, "generate") == 0 ? "a model of characters: --chars TEXTFILE; llama2.c's: "
                                                     "--tokenizer FILE; or its own ids with --ids"
                                                   : "give its own ids with --ids");
            free(*ids);
            *ids = NULL;
            return EXIT_USAGE;
        }
    return 0;
}

int read_sequence(const char *cmd, const parsed_args *a, int vocab, mygpt_tokenizer **tok, int64_t **ids, int *n)
{
    int rc;
    if (args_has(a, "prompt"))
        return (rc = load_tokenizer(cmd, tok)) ? rc : encode_prompt(cmd, *tok, args_get(a, "prompt"), vocab, ids, n);
    int B;
    if ((rc = parse_ids(cmd, args_get(a, "ids"), ids, &B, n)))
        return rc;
    if (B != 1) {
        cli_error(cmd, "--ids: one row of ids, got %d", B);
        return EXIT_USAGE;
    }
    return 0;
}
