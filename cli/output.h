/*
 * output.h - how the mygpt tool prints a tensor: --format torch|numpy|exact.
 */
#ifndef MYGPT_CLI_OUTPUT_H
#define MYGPT_CLI_OUTPUT_H

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

#endif
