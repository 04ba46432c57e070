/*
 * data_parallel.h - data-parallel training over MPI, as llm.c takes it past one machine:
 * every process (rank) holds the whole model, takes its share of each global batch,
 * and the gradients are averaged before the optimizer step, so every rank takes the
 * same step and the model stays one model.
 *
 * The library knows nothing of MPI: the training loop (the mygpt tool's train command,
 * chapter 35) calls these hooks between backward and the optimizer step. Built only
 * with MPI (meson option mpi, Debian's Open MPI); without it, dp_available() is 0 and
 * the programs say so.
 *
 * Shares are contiguous: of a global batch of B rows, rank r of P takes rows
 * [r * B / P, (r + 1) * B / P) (integer division), so every row is someone's and the
 * global batch, the data order and the losses do not depend on P (up to the grouping
 * of the sums).
 */
#ifndef MYGPT_DATA_PARALLEL_H
#define MYGPT_DATA_PARALLEL_H

#include <stddef.h>

typedef struct dp_team {
    int rank, size; /* this process, and how many; 0 and 1 without MPI */
    int active;     /* MPI was started here (dp_start) */
} dp_team;

/* 1 when this build has MPI. */
int dp_available(void);

/* The rank the launcher gave this process, read from its environment before MPI starts
 * (Open MPI's OMPI_COMM_WORLD_RANK, else PMIx's PMIX_RANK, else MPICH's PMI_RANK); 0
 * outside mpirun. What only rank 0 may do before then (make the run's folder) asks this. */
int dp_launch_rank(void);

/* Starts MPI (MPI_Init) and fills team. Without MPI: returns 1 (not available). */
int dp_start(dp_team *team, int *argc, char ***argv);

/* Ends MPI (MPI_Finalize) if dp_start started it. */
void dp_stop(dp_team *team);

/* This rank's rows of a global batch of B rows: [*first, *first + *count). */
void dp_share(const dp_team *team, int B, int *first, int *count);

/* The global batch's mean gradient from every rank's: grads (n floats, this rank's
 * mean over its `rows` rows of `B`) becomes sum over ranks of (rows_r / B) * grads_r,
 * the same bits on every rank (reduced on rank 0, then broadcast: an all-reduce may
 * group the sum differently on different ranks). Returns 0, or 1 on an MPI error. */
int dp_average_gradients(const dp_team *team, float *grads, size_t n, int rows, int B);

/* The sum of v over the ranks (rank order), the same on every rank. */
double dp_sum(const dp_team *team, double v);

/* 1 when the n floats at p have the same bits on every rank (a checksum of their bits,
 * compared through MPI). */
int dp_same_everywhere(const dp_team *team, const float *p, size_t n);

/* A value every rank must have the same: an integer, a double (its bits), or a checksum */
typedef struct dp_field {
    const char *name;          /* as the user knows it: "--steps", "the initial weights" */
    unsigned long long value;
    char kind;                 /* 'i' integer, 'f' double bits, 'h' checksum */
} dp_field;

/* Before the first collective: every rank's n fields are rank 0's, or the job ends
 * (MPI_Abort) with one message from the first rank that differs, naming the first field
 * ("PROGRAM: rank R: FIELD is X here, Y on rank 0: ..."). Collective: every rank calls it
 * with the same n. Without MPI, or with one process, nothing to compare. */
void dp_agree(const dp_team *team, const char *program, const dp_field *fields, int n);

/* Prints "PROGRAM: rank R: MESSAGE" on stderr and ends every rank of the job
 * (MPI_Abort): one rank's failure must not leave the others waiting in a collective.
 * The job's status is `code`, the programs' one rule: 2 bad input (a rank's file, ranks
 * that disagree), 1 a failure of the run (no memory, MPI, a write). */
void dp_abort(const dp_team *team, const char *program, int code, const char *message);

/* What this rank undoes when the job ends early (rank 0's run folder, still empty):
 * undo runs from dp_abort on this rank, or on the SIGTERM with which mpirun ends the
 * other ranks when one of them aborts (that process never returns to its own clean-up).
 * undo must be safe in a signal handler (rmdir, no stdio, no malloc); NULL: nothing,
 * and SIGTERM as before. */
void dp_on_abort(void (*undo)(void));

#endif
