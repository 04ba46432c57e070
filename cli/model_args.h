/*
 * model_args.h - what the model commands (forward, init gpt, loss, grad, train, generate,
 * chat, attention, finetune, quantize) share, defined in model_args.c: reading the model's
 * flags and ids, building or loading the model, the sampler's flags, GPT-2's tokenizer and
 * the one sequence a command reads, printing every tensor by name.
 */
#ifndef MYGPT_CLI_MODEL_ARGS_H
#define MYGPT_CLI_MODEL_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "args.h"
#include "mygpt/gpt.h"
#include "output.h"

/* The model's flags, for an arg_spec table */
#define ARCH_FLAGS {"arch", 1, 0}, {"qkv-bias", 0, 0}, {"dropout", 1, 0}, {"kv-heads", 1, 0}, \
                   {"ffn-hidden", 1, 0}, {"multiple-of", 1, 0}, {"untied-head", 0, 0}
#define MODEL_FLAGS {"seed", 1, 0}, {"vocab", 1, 0}, {"embed", 1, 0}, {"heads", 1, 0}, \
                    {"layers", 1, 0}, {"max-seq", 1, 0}, ARCH_FLAGS

/* --vocab --embed --heads --layers [--max-seq] (default 64) [--arch NAME] [--qkv-bias]
 * [--dropout P], and llama's [--kv-heads K] [--ffn-hidden H | --multiple-of M]
 * [--untied-head], validated. */
int read_config(const char *cmd, const parsed_args *a, mygpt_config *cfg);

/* --seed (required) and the configuration. */
int read_seed_and_config(const char *cmd, const parsed_args *a, uint64_t *seed, mygpt_config *cfg);

/* "0,1,2;3,2,1" -> B rows of T ids (malloc'd). */
int parse_ids(const char *cmd, const char *s, int64_t **out, int *B, int *T);

/* --weights fp32|bf16|int8: stores g's weights so (mygpt_gpt_quantize) when the flag is
 * given; 0, or the exit code after saying why not. */
#define WEIGHTS_FLAG {"weights", 1, 0}
int apply_weights(const char *cmd, const parsed_args *a, mygpt_gpt *g);

/* --checkpoint FILE: the model of any layout mygpt_checkpoint_load reads (mygpt's, the
 * book's GPTModel, Hugging Face's GPT-2) or of a training state (mygpt_model_load), with --adapters FILE's LoRA adapters on it when
 * given (mygpt_checkpoint_load_adapters), its weights then stored as --weights says
 * (apply_weights). 0, or the exit code after saying why not (*g stays NULL). */
#define CHECKPOINT_FLAGS {"checkpoint", ARG_PATH, 0}, {"adapters", ARG_PATH, 0}
int load_checkpoint(const char *cmd, const parsed_args *a, mygpt_gpt **g);

/* Whether g, read from `path` (given as `what`: --checkpoint, BASE), can take LoRA adapters:
 * float32 weights. 0, or EXIT_USAGE after one line naming the file and how to get them. */
int adapters_base_check(const char *cmd, const char *what, const char *path, const mygpt_gpt *g);

/* What a command that reads one sequence from a model checks first: exactly one of
 * --prompt and --ids, and --adapters only with --checkpoint. 0, or EXIT_USAGE after the
 * error. */
int check_input_flags(const char *cmd, const parsed_args *a);

/* With --checkpoint, whose model has its own sizes: a model flag (MODEL_FLAGS; --seed
 * too when seed_too) beside it is refused. 0, or EXIT_USAGE after the error. */
int checkpoint_flags_check(const char *cmd, const parsed_args *a, int seed_too);

/* The model of --checkpoint (checkpoint_flags_check with --seed too, load_checkpoint),
 * or built from the model's flags (read_seed_and_config, create_model) with its weights
 * stored as --weights says (apply_weights). 0, or the exit code after saying why not (*g stays NULL). */
int model_from_args(const char *cmd, const parsed_args *a, mygpt_gpt **g);

/* The sampler's flags (generate, chat): --temperature T (0, the default: argmax),
 * --top-k K, --top-p P in (0, 1]. */
#define SAMPLING_FLAGS {"temperature", 1, 0}, {"top-k", 1, 0}, {"top-p", 1, 0}
struct mygpt_sampling;
/* SAMPLING_FLAGS into *s (all zero when none is given); 0, or EXIT_USAGE after the error. */
int read_sampling(const char *cmd, const parsed_args *a, struct mygpt_sampling *s);

/* A generation with sampler s that failed (st, err): said as cli_fail does, but a tiny
 * --temperature that leaves no distribution (the finite logits over it overflow) named
 * as the cause; the exit code. */
int sampling_fail(const char *cmd, const struct mygpt_sampling *s, mygpt_status st, const mygpt_error *err);

/* The one line on stderr when a sequence is longer than the model's context (max_seq
 * tokens) and only its last max_seq tokens are read, the tutorial's idx[:, -block_size:]:
 * "mygpt CMD: the WHAT has N tokens, more than the model's context: it reads the last M". */
void say_cropped(const char *cmd, const char *what, int n, int max_seq);

/* set_seed(seed); GPT(...), or the exit code after saying why not. */
int create_model(const char *cmd, const mygpt_config *cfg, uint64_t seed, mygpt_gpt **gpt);

/* Every tensor of w (parameters or gradients) in named_parameters() order. */
int print_named_tensors(const char *cmd, const out_options *o, const mygpt_config *cfg,
                        const mygpt_params *w, const mygpt_torch_opts *opts);

/* GPT-2's tokenizer from the data folder, or the exit code after saying why not. */
struct mygpt_tokenizer;
int load_tokenizer(const char *cmd, struct mygpt_tokenizer **tok);

/* The files load_tokenizer reads (the data folder's encoder.json and vocab.bpe) as files
 * read, for cli_distinct_files, their paths in paths; without a data folder their paths
 * are NULL (load_tokenizer says why later). */
void tokenizer_files(cli_file files[2], char paths[2][4200]);

/* The token ids of text (malloc'd), or the exit code after saying why not. */
int encode_text(const char *cmd, const struct mygpt_tokenizer *tok, const char *text, size_t len,
                int64_t **ids, size_t *n);

/* The one sequence a command reads for a model of `vocab` tokens: --prompt TEXT (GPT-2's
 * tokens, each one the model has; *tok is loaded) or --ids "1,2,3" (one row; *tok stays
 * as it is). *ids malloc'd, *n of them (0 for an empty prompt). 0, or the exit code after
 * saying why not (a --prompt that is not UTF-8, or that the model cannot read, named). */
int read_sequence(const char *cmd, const parsed_args *a, int vocab, struct mygpt_tokenizer **tok, int64_t **ids,
                  int *n);

#endif
