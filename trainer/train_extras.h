/*
 * train_extras.h - what `mygpt train` gives a learner around the loop itself: presets
 * and defaults for every flag but the text, a progress line, the loss log (a CSV and
 * its SVG plot) and Ctrl-C caught so that the run's state is saved first.
 */
#ifndef MYGPT_CLI_TRAIN_EXTRAS_H
#define MYGPT_CLI_TRAIN_EXTRAS_H

#include <stdio.h>

#include "args.h"

/* ---- presets ------------------------------------------------------------------------- */

/* Fills in the flags the user did not give from --preset NAME (default: verdict, the
 * defaults), as if they had been typed: explicit flags win. Model flags are left to the
 * checkpoint with --init-from; a user's --epochs takes the book's loop (the preset's
 * --steps left out, and without --preset the verdict preset's --eval-every), a user's --steps the
 * course's; --max-seq
 * follows a larger --context when the model's sizes are all the preset's. 0, or
 * EXIT_USAGE after the error (an unknown preset). */
int train_apply_preset(const char *cmd, parsed_args *a, const arg_spec *specs);

/* Prints the presets and their flags on f, for --help */
void train_print_presets(FILE *f);

/* ---- progress ------------------------------------------------------------------------ */

/* A progress line on f (stderr): on a terminal one line redrawn after every step (a bar,
 * the step, the loss, the learning rate when a schedule changes it, ms/step, tokens/s,
 * the time left); in a pipe or a file one plain line after every evaluation and the
 * last step. */
typedef struct train_progress {
    FILE *f;
    int tty, shown;         /* a terminal; a line is on it now                  */
    int show_lr;            /* the line shows the step's learning rate          */
    long long first, total; /* steps taken when this run began; steps in all     */
    long long tokens_per_step;
    double t0;
} train_progress;

/* Starts the line's clock: steps first..total, tokens_per_step each, the learning rate
 * shown when show_lr */
void progress_start(train_progress *p, FILE *f, long long first, long long total, long long tokens_per_step,
                    int show_lr);

/* After a step: steps taken, its loss and learning rate; evaluated says it was an
 * interval's end */
void progress_step(train_progress *p, long long steps, double loss, double lr, int evaluated);

/* Clears the terminal's line before something else is printed (nothing in a pipe) */
void progress_clear(train_progress *p);

/* ---- the loss log --------------------------------------------------------------------- */

/* --log FILE.csv: a row per step (step,train_loss,val_loss,lr,ms; val_loss empty when
 * the step did not evaluate; lr the step's, as the shortest text of its double), and
 * FILE.svg beside it, the plot of both
 * losses and, with lr_curve (a schedule), the learning rate's curve below it. */
typedef struct train_log {
    char csv[4096], svg[4100];
    struct {
        char *data;
        size_t len, cap;
        int failed;              /* an allocation failed: the log is not written  */
    } rows;                      /* the CSV                                       */
    float *x, *train, *lr, *vx, *val; /* the curves: every step's loss and learning rate,
                                         every evaluation's loss */
    size_t n, nv, cap;
    int lr_curve;                /* the plot has the learning rate's panel         */
} train_log;

/* Checks both paths before the first step (as --save's: a regular file is replaced, a
 * link, folder or device refused; an SVG already there that is not such a plot is
 * refused, not replaced); on a resumed run (resume_step > 0) the rows of an earlier
 * log in csv before that step are kept. 0, or EXIT_USAGE after the error. */
int train_log_open(const char *cmd, train_log *l, const char *csv, long long resume_step);

/* The plot's path that goes with the log csv: FILE.csv's FILE.svg (cap bytes at most) */
void train_log_plot_path(char *svg, size_t cap, const char *csv);

/* Adds the row of step (from 0): its loss, the evaluation's validation loss (or NULL),
 * the step's learning rate and how long it took; a failed allocation is said when the
 * log is written. */
void train_log_row(train_log *l, long long step, double train_loss, const double *val_loss, double lr,
                   double ms);

/* Writes both files whole. 0, or the exit code after the error. */
int train_log_write(const char *cmd, train_log *l);

/* Frees what the log holds; l is then empty (a zeroed log may be freed too). */
void train_log_free(train_log *l);

/* A double as the shortest text that reads back as the same bits (Python's repr of it),
 * into out (n bytes) */
void train_shortest(char *out, size_t n, double v);

/* cli_fail for an error of a training loop: status 1 (a runtime failure) when the
 * training diverged (train_diverged: a loss, a weight or the optimizer's state not
 * finite, nothing saved), else cli_fail's status. */
int train_loop_fail(const char *cmd, mygpt_status st, const mygpt_error *err);

/* ---- Ctrl-C ---------------------------------------------------------------------------- */

/* The first SIGINT is noted (the loop finishes its step, saves and ends); a second one
 * ends the program at once. */
void train_catch_sigint(void);

/* Whether a Ctrl-C came since train_catch_sigint: 1, or 0 */
int train_interrupted(void);

/* Ends the program as Ctrl-C does (the default action of SIGINT): for the shell, the
 * run was interrupted. */
void train_end_by_sigint(void);

/* For the tests: MYGPT_TRAIN_SIGINT_AFTER=K sends the program SIGINT once K steps are
 * taken (K,K twice), as a Ctrl-C there would; unset, nothing. */
void train_test_sigint(long long steps);

/* Whether path may take a training state that the user did not name: absent, or a
 * training state already (never another file). 1, or 0 */
int train_state_path_is_free(const char *path);

/* Whether path may take a model (--save, and --keep-best's beside it): absent, or a
 * model mygpt saved already (its safetensors or llama2.c's file; never another file).
 * 1, or 0 */
int train_model_path_is_free(const char *path);

#endif
