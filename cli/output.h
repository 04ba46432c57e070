/*
 * output.h - what the mygpt tool puts out: a tensor printed (--format torch|numpy|exact),
 * a command's usage, and the files of a model a command reads or writes (cli_file, args.h), for
 * cli_distinct_files.
 */
#ifndef MYGPT_CLI_OUTPUT_H
#define MYGPT_CLI_OUTPUT_H

#include "args.h"
#include "mygpt/print.h"

typedef enum out_format { OUT_TORCH, OUT_NUMPY, OUT_EXACT } out_format;

typedef struct out_options {
    out_format format;
    int round;            /* --round K with --format numpy; -1 when not given */
} out_options;

/* Reads --format and --round from their strings (either may be NULL).
 * Returns 0 or prints an error and returns EXIT_USAGE. */
int out_options_parse(const char *cmd, const char *format, const char *round, out_options *o);

/* Prints t to stdout in the chosen format, followed by a newline:
 *   torch: print(t)           (opts adds grad_fn / Parameter decorations)
 *   numpy: print(t.numpy())   or print(t.numpy().round(K))
 *   exact: one element per line, float32 as 8 hex digits of its bits, ints in decimal
 * Returns 0, or EXIT_RUNTIME after printing an error (out of memory). */
int out_print(const char *cmd, const out_options *o, const mygpt_tview *t,
              const mygpt_torch_opts *opts);

/* Standard output flushed and checked, for a command that streams (chat, generate) and
 * at every command's end: 0 while it takes what is written; once a write has failed (a
 * full disk, a pipe closed with SIGPIPE ignored), one line on stderr the first time ("mygpt
 * CMD: error writing output") and EXIT_RUNTIME, so the command
 * stops there rather than compute what nobody will read. */
int out_flush(const char *cmd);
/* args_parse(cmd, argc, argv, spec, positional, a) for a command with its usage text:
 * --help prints usage on stdout and gives -1 (the command then returns 0); else
 * args_parse's 0 or exit code. */
int cli_parse_or_help(const char *cmd, int argc, char **argv, const arg_spec *spec, int positional,
                      const char *usage, parsed_args *a);

/* The files a checkpoint named by flag is read from, as files read: path (a folder: its
 * model.safetensors, as Hugging Face's) and the config.json beside it when there is one
 * (a GPT-2's heads come from it), into f[0..2), their paths in paths. */
void cli_checkpoint_files(const char *flag, const char *path, cli_file f[2], char paths[2][4200]);

/* A file a command will write, named by label (a flag, OUT): a path that can take it
 * (mygpt_checkpoint_check_path), and not a file there already unless force. 0, or
 * EXIT_USAGE after one line naming label and path. */
int cli_check_output(const char *cmd, const char *label, const char *path, int force);

/* The config.json a GPT-2's save writes beside it when none is there (mygpt_checkpoint_save;
 * one there is kept or refused, never written), as a file written, its path in conf; no
 * path when save is NULL, the model is no GPT-2 (gpt2 0: it is known not to be) or one is
 * there. */
cli_file cli_save_config_file(const char *save, int gpt2, char conf[4200]);

#endif
