/*
 * data_parallel.c - the MPI side of data-parallel training (data_parallel.h). Compiled
 * with MYGPT_HAVE_MPI when meson finds MPI; otherwise every hook is the one-process
 * case and dp_start reports that MPI is not available.
 */
#include "data_parallel.h"

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MYGPT_HAVE_MPI
#include <mpi.h>
#endif

int dp_launch_rank(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        char *end;
        if (v && *v) {
            const long r = strtol(v, &end, 10);
            if (*end == '\0' && r >= 0 && r <= INT_MAX)
                return (int)r;
        }
    }
    return 0;
}

int dp_available(void)
{
#ifdef MYGPT_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

int dp_start(dp_team *t, int *argc, char ***argv)
{
    t->rank = 0, t->size = 1, t->active = 0;
#ifdef MYGPT_HAVE_MPI
    int started = 0;
    MPI_Initialized(&started);
    if (!started && MPI_Init(argc, argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t->size);
    t->active = !started;
    return 0;
#else
    (void)argc, (void)argv;
    return 1;
#endif
}

void dp_stop(dp_team *t)
{
#ifdef MYGPT_HAVE_MPI
    if (t->active)
        MPI_Finalize();
#endif
    t->active = 0;
}

void dp_share(const dp_team *t, int B, int *first, int *count)
{
    const long long r = t->rank, P = t->size;
    *first = (int)(r * B / P);
    *count = (int)((r + 1) * B / P) - *first;
}

int dp_average_gradients(const dp_team *t, float *grads, size_t n, int rows, int B)
{
    if (t->size == 1 && rows == B)
        return 0; // the whole batch here: its mean is the mean
    // lesson: average
    const float w = (float)rows / (float)B; // this rank's part of the global mean
    for (size_t i = 0; i < n; i++)
        grads[i] *= w;
#ifdef MYGPT_HAVE_MPI
    // in pieces: MPI counts are ints
    const size_t piece = (size_t)1 << 28;
    for (size_t at = 0; at < n; at += piece) {
        const int c = (int)(n - at < piece ? n - at : piece);
        void *send = t->rank == 0 ? MPI_IN_PLACE : grads + at;
        if (MPI_Reduce(send, grads + at, c, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
            MPI_Bcast(grads + at, c, MPI_FLOAT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            return 1;
    }
#endif
    // end lesson: average
    return 0;
}

double dp_sum(const dp_team *t, double v)
{
#ifdef MYGPT_HAVE_MPI
    if (t->size > 1) {
        // gathered on rank 0 and added in rank order, then broadcast: the same everywhere
        double *all = t->rank == 0 ? malloc((size_t)t->size * sizeof *all) : NULL;
        double s = 0;
        MPI_Gather(&v, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (t->rank == 0)
            for (int r = 0; r < t->size; r++)
                s += all[r];
        free(all);
        MPI_Bcast(&s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        return s;
    }
#endif
    (void)t;
    return v;
}

int dp_same_everywhere(const dp_team *t, const float *p, size_t n)
{
    uint64_t h = 1469598103934665603ull; // FNV-1a over the bits
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, p + i, sizeof b);
        h = (h ^ b) * 1099511628211ull;
    }
#ifdef MYGPT_HAVE_MPI
    if (t->size > 1) {
        unsigned long long lo = h, hi = h;
        MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        return lo == hi;
    }
#endif
    (void)t;
    return 1;
}

#ifdef MYGPT_HAVE_MPI
static void show(const dp_field *f, unsigned long long v, char *out, size_t n)
{
    double d;
    memcpy(&d, &v, sizeof d);
    if (f->kind == 'f')
        snprintf(out, n, "%.17g", d);
    else if (f->kind == 'h')
        snprintf(out, n, "checksum %016llx", v);
    else
        snprintf(out, n, "%lld", (long long)v);
}
#endif

void dp_agree(const dp_team *t, const char *program, const dp_field *fields, int n)
{
#ifdef MYGPT_HAVE_MPI
    if (t->size <= 1 || n <= 0)
        return;
    unsigned long long *first = malloc((size_t)n * sizeof *first);
    if (!first)
        dp_abort(t, program, 1, "out of memory comparing the ranks");
    for (int i = 0; i < n; i++)
        first[i] = fields[i].value;
    MPI_Bcast(first, n, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    struct {
        int field, rank;
    } mine = {n, t->rank}, worst;
    for (int i = 0; i < n && mine.field == n; i++)
        if (fields[i].value != first[i])
            mine.field = i;
    MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
    if (worst.field < n) {
        if (worst.rank == t->rank) { // one message, from the rank that differs; it ends the job
            char here[64], there[64], msg[400];
            show(&fields[worst.field], fields[worst.field].value, here, sizeof here);
            show(&fields[worst.field], first[worst.field], there, sizeof there);
            snprintf(msg, sizeof msg,
                     "%s is %s here, %s on rank 0: every rank must be given the same model, flags and data",
                     fields[worst.field].name, here, there);
            dp_abort(t, program, 2, msg);
        }
        MPI_Barrier(MPI_COMM_WORLD); // until that rank's MPI_Abort ends this one
        exit(2);
    }
    free(first);
#else
    (void)t, (void)program, (void)fields, (void)n;
#endif
}

/* dp_on_abort's undo, or NULL */
static void (*undo_on_abort)(void);

/* SIGTERM (mpirun ending this rank for another's MPI_Abort): the undo, then the end the
 * signal brings (SA_RESETHAND made it the default again; raised, it arrives on return) */
static void undo_then_end(int sig)
{
    if (undo_on_abort)
        undo_on_abort();
    raise(sig);
}

void dp_on_abort(void (*undo)(void))
{
    undo_on_abort = undo;
    struct sigaction sa = {0};
    sa.sa_handler = undo ? undo_then_end : SIG_DFL;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
}

void dp_abort(const dp_team *t, const char *program, int code, const char *message)
{
    fprintf(stderr, "%s: rank %d: %s\n", program, t->rank, message);
    fflush(stderr);
    if (undo_on_abort)
        undo_on_abort();
#ifdef MYGPT_HAVE_MPI
    if (t->size > 1 || t->active)
        MPI_Abort(MPI_COMM_WORLD, code);
#endif
    exit(code);
}
