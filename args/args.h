/*
 * args.h - the small, strict argument parser shared by the mygpt tool's subcommands,
 * the chapter programs and the benchmarks, so all of them behave alike.
 *
 * Every flag is `--name VALUE` (or `--name=VALUE`) or a bare switch; a value cannot
 * start with "--" (then the flag "needs a value"). Numbers must be complete and in
 * range; anything else is a usage error: the parser prints one line naming the
 * program and the flag ("mygpt randn: ...", "61_verdict_dataloader: ...") on stderr
 * and the program exits with status 2; an unknown flag a typo away from a known one
 * says which ("did you mean '--temperature'?"). --help (or -h) prints help and exits 0.
 */
#ifndef MYGPT_CLI_ARGS_H
#define MYGPT_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mygpt/error.h"

/* OpenMP's team capped at 4 threads per online CPU (OMP_NUM_THREADS=100000 would
 * overflow libgomp's stack creating them); without OMP_NUM_THREADS or OMP_WAIT_POLICY,
 * the team is the cores no other process keeps busy (Linux: readings of /proc/loadavg,
 * about 2 ms of them on a quiet system, 35 ms where others run: cli_others_of; elsewhere
 * the full team). Every program calls it first. Returns the cap when it lowered the
 * team, else 0. */
int cli_cap_threads(void);

/* The kernel sets a user asked for (MYGPT_MATMUL_KERNEL, MYGPT_ATTENTION_KERNEL; see
 * mygpt/kernels.h) checked: a name that is none prints one line, "NAME: MYGPT_MATMUL_KERNEL=
 * avx3 is not a kernel set (...)", and returns EXIT_USAGE; else returns 0. Every program
 * calls it first, beside cli_cap_threads. */
int cli_check_kernel_env(const char *name);

/* The threads other processes keep running, from n (1 to CLI_READINGS) readings of the
 * system's running count (this process not counted) half a millisecond apart: the count
 * that three quarters of the readings reach (-1 for n out of range or a negative count;
 * at most INT_MAX). A process passing by (a shell, a terminal, a harness starting the
 * next program: 10 ms and then 8 ms seen) is in about half of CLI_READINGS readings at
 * most; one that keeps a core busy is in nearly every one. */
#define CLI_READINGS 64
int cli_others_of(const long *readings, int n);

/* SIGXFSZ ignored: a write past the file-size limit (ulimit -f) then fails with EFBIG,
 * which a save reports as it reports a full disk (one line naming the file, its
 * temporary removed, status 1) instead of the signal ending the program without a word.
 * Every program that writes files calls it first. */
void cli_ignore_file_size_signal(void);

/* Standard output checked when the program ends (atexit): what it printed but could not
 * write (a full disk, a closed stdout, /dev/full) ends it with one line, "NAME: error
 * writing output", and status 1 instead of 0. For the programs whose printing has no
 * check of its own (the chapters, the benchmarks); the tool checks its output itself. */
void cli_check_output_at_exit(const char *name);

/* Whether everything printed on standard output so far was written (flushed now) */
int cli_output_written(void);

/* Every program's one exit-code rule: 0 success, 1 a runtime failure (out of memory),
 * 2 bad usage or bad input (flags, ids, files that cannot be read or parsed). */
#define EXIT_USAGE 2
#define EXIT_RUNTIME 1
#define MAX_SHAPES 16

/* What a flag takes: nothing (a switch), a value, or a path: a value that names a file or
 * folder to read or make, refused when empty with the flag's name (rather than as "cannot
 * open '': ..." later, or not at all) */
enum { ARG_SWITCH = 0, ARG_VALUE = 1, ARG_PATH = 2 };

typedef struct arg_spec {
    const char *name;   /* without the leading "--" */
    int takes_value;    /* ARG_SWITCH (0), ARG_VALUE (1) or ARG_PATH */
    int repeatable;
} arg_spec;

typedef struct arg_hit {
    const arg_spec *spec;
    const char *value;  /* NULL for switches */
} arg_hit;

typedef struct parsed_args {
    arg_hit hits[64];
    int nhits;
    char **positional;  /* the words that are not flags, in order (argv, reordered) */
    int npositional;
} parsed_args;

/* What error lines start with before CMD: "mygpt " for the tool (the default), ""
 * for programs whose CMD is their own name. */
void args_set_prefix(const char *prefix);

/* Parses argv[0..argc-1] (the words after the subcommand) against specs (ended
 * by a {NULL} entry). Positional words (any number, when allowed) are moved to the
 * front of argv, which out->positional then points to. Returns 0, or prints the error and returns EXIT_USAGE.
 * A lone "--help" or "-h" makes it return -1 so the caller prints its help. A lone "--"
 * ends the options: every word after it is positional, one starting with '-' too. */
int args_parse(const char *cmd, int argc, char **argv, const arg_spec *specs,
               int allow_positional, parsed_args *out);

/* Edits (insert, delete, replace one character) from a[0..la) to the string b, counted up
 * to 3: the "did you mean" of an unknown flag (args_parse) and of an unknown command
 * (mygpt) is the name at most two edits away. */
int args_distance(const char *a, size_t la, const char *b);

/* The last value given for `name`, or NULL. */
const char *args_get(const parsed_args *a, const char *name);
int args_has(const parsed_args *a, const char *name);

/* Strict conversions; each prints "mygpt CMD: --NAME: ..." and returns EXIT_USAGE on error. */
int parse_i64(const char *cmd, const char *name, const char *s, int64_t min, int64_t max,
              int64_t *out);
int parse_seed(const char *cmd, const char *name, const char *s, uint64_t *out);
int parse_double(const char *cmd, const char *name, const char *s, double *out);
/* "D0,D1,..." with each Di >= 0 (1..8 dims), numel <= max_numel. */
int parse_shape(const char *cmd, const char *s, int *ndim, int64_t *shape, int64_t max_numel);

/* s as sizes "D0,D1,...", each digits only (no sign, no space, below 2^63), the first
 * `most` of them into out: how many there are (more than most: the rest not stored), or
 * -1 when s is no such list. Prints nothing: the caller names its flag. */
int args_size_list(const char *s, int64_t *out, int most);

/* Prints "mygpt CMD: message" on stderr. */
/* The exit code of a library status, for every program (the tool, the chapters, the
 * benchmarks): 0 for MYGPT_OK, EXIT_RUNTIME for MYGPT_ENOMEM, EXIT_USAGE for every other
 * failure (what the caller gave: flags, ids, files). */
int cli_exit_code(mygpt_status st);

/* Prints err's message (or st's name) as cli_error does and returns cli_exit_code(st). */
int cli_fail(const char *cmd, mygpt_status st, const mygpt_error *err);

/* The same for a file being written once its path was accepted (a save, a figure): a
 * failed write (MYGPT_EIO: a full disk, a size limit, permissions) is a runtime failure,
 * EXIT_RUNTIME; a path refused (a link, a directory) stays EXIT_USAGE. */
int cli_write_fail(const char *cmd, mygpt_status st, const mygpt_error *err);

/* cli_write_fail's status, without the line (for a caller that says it otherwise) */
int cli_write_exit_code(mygpt_status st);

/* A double flag (>= min) into *out when given; 0, or EXIT_USAGE after the error. */
int args_double_min(const char *cmd, const parsed_args *a, const char *name, double min, double *out);

/* An integer flag in [min, max] into *out when given; required says whether it must
 * be. 0, or EXIT_USAGE after the error. */
int args_i64_in(const char *cmd, const parsed_args *a, const char *name, int64_t min, int64_t max, int required,
                int64_t *out);

/* Seconds on the monotonic clock (for tokens/s). */
double cli_now_s(void);

void cli_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints fmt's text on f as one line, then a newline: a control byte in it (a path's
 * newline, a terminal escape) shown escaped as cli_error shows it. For the lines that
 * say where a program wrote or read a file the user named. */
void cli_say(FILE *f, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- files a program reads and writes -------------------------------------------- */

/* One file a command reads or writes: the flag (or word) that names it, for messages;
 * its path (NULL: not given, skipped); whether the command writes it. Files of one
 * nonzero `shared` group may be one file (a training state resumed, then saved again). */
typedef struct cli_file {
    const char *flag;
    const char *path;
    int written;
    int shared;
} cli_file;

/* Whether paths a and b name one file: the same device and inode when both exist, else
 * the same final name in the same folder (device and inode of the folder as the system
 * resolves it, a dangling symbolic link followed to where it points), so "m", "./m",
 * "d/../m" and a link to m all match, whether or not m exists yet. */
int cli_same_file(const char *a, const char *b);

/* Refuses files[0..n) when a written one is another written one or one read (by
 * cli_same_file): one line naming both flags and the file, before any work. 0, or
 * EXIT_USAGE. */
int cli_distinct_files(const char *cmd, const cli_file *files, int n);

/* 1 when nothing is at path, or a file whose first bytes are head (a table or a log the
 * tool wrote, which a run again replaces; head is its header line, under 256 bytes);
 * else 0 (a user's file, a link, a FIFO, a folder: never replaced) */
int cli_replaceable_text(const char *path, const char *head);

#endif
