/*
 * run_folder.h - where a run of `mygpt train` keeps what it makes (nanoGPT's out_dir):
 * runs/NAME/ by default, or --out DIR, holding the model (model.safetensors), the
 * training state (state.safetensors), the loss log (log.csv) and its plot (log.svg), and
 * with --keep-best the model of the lowest validation loss (best.safetensors). A folder
 * is never reused unless the run continues the state it holds; a name taken picks the
 * next free one.
 */
#ifndef MYGPT_RUN_FOLDER_H
#define MYGPT_RUN_FOLDER_H

#include <stddef.h>

/* The folder of a run, once chosen */
typedef struct run_folder {
    char dir[4096];  /* the folder, or "" when the run has none (--save without --out) */
    int made;        /* this run made it: removed at the end when left empty            */
    int made_parent; /* and runs/ too                                                  */
    int locked;      /* lock_fd holds the folder for this run (flock), until the end    */
    int lock_fd;
} run_folder;

/* The folder's file name: "DIR/name" into path (cap bytes) */
void run_folder_path(const run_folder *rf, const char *name, char *path, size_t cap);

/* Chooses and makes the run's folder: out (--out DIR: made when absent; one that is there
 * must be empty, or be the folder of the state.safetensors that resume continues), else
 * the folder of resume when it is a run folder's state.safetensors, else
 * runs/PRESET-YYYYMMDD-HHMMSS in the current folder (-2, -3, ... when taken; preset NULL:
 * "verdict"). The folder is held for the run (a lock on it, which the system drops when
 * the process ends): another run that would write there is refused. 0, or EXIT_USAGE
 * after one line naming --out (the folder cannot be made, holds other files, or another
 * run holds it). */
int run_folder_open(const char *cmd, run_folder *rf, const char *out, const char *resume, const char *preset);

/* Whether path (NULL: no) names a file inside the folder dir, as the run's own files are
 * named (dir/NAME) */
int run_folder_holds(const char *dir, const char *path);

/* The run's first line on stderr, "mygpt CMD: the run goes to DIR/ (its model, training
 * state, log and plot)": those of the files (NULL: none) that are inside dir; nothing when
 * none is (--save and --log elsewhere) */
void run_folder_announce(const char *cmd, const char *dir, const char *save, const char *state, const char *log);

/* The run's last line on stderr, "mygpt CMD: the run is in DIR/: a, b (and outside it:
 * c)": the n files (NULL ones skipped), those inside dir by name, then the others (--save,
 * --log elsewhere) by path, control bytes escaped (cli_say) */
void run_folder_say(const char *cmd, const char *dir, const char *const *files, int n);

/* At the run's end, whatever it was: the folder (and runs/) removed when this run made
 * it and nothing was written in it (a run refused before its first step, another rank of
 * --data-parallel), and let go */
void run_folder_close(run_folder *rf);

/* Under --data-parallel another rank may end the job (dp_abort) before run_folder_close
 * runs here: from now until then, the folder this run made (and runs/) is removed on
 * that end too, when nothing was written in it (dp_on_abort). */
void run_folder_close_on_abort(const run_folder *rf);

#endif
