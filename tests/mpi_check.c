/*
 * mpi_check.c - the data-parallel hooks (trainer/data_parallel.h) under mpirun -np P: each
 * check prints "ok NAME" or "FAIL NAME ..." from every rank; tests/test_mpi.sh counts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_parallel.h"

static int failures;

static void check(const dp_team *t, int ok, const char *name)
{
    printf("%s %s (rank %d of %d)\n", ok ? "ok" : "FAIL", name, t->rank, t->size);
    failures += !ok;
}

int main(int argc, char **argv)
{
    dp_team t;
    if (dp_start(&t, &argc, &argv)) {
        fprintf(stderr, "mpi_check: MPI is not available\n");
        return 1;
    }
    // shares: contiguous, covering every row once, for batches smaller and larger than P
    for (int B = t.size; B <= 3 * t.size + 2; B++) {
        int first, count, prev_end = 0, ok = 1;
        for (int r = 0; r < t.size; r++) {
            const dp_team other = {r, t.size, 0};
            dp_share(&other, B, &first, &count);
            ok &= first == prev_end && count >= 1;
            prev_end = first + count;
        }
        check(&t, ok && prev_end == B, "shares tile the batch");
    }
    // the average: rank r holds gradients (r + 1) * (i + 1) over rows_r of B rows
    enum { N = 1000 };
    const int B = 2 * t.size + 1;
    int first, rows;
    dp_share(&t, B, &first, &rows);
    float *g = malloc(N * sizeof *g);
    for (int i = 0; i < N; i++)
        g[i] = (float)((t.rank + 1) * (i + 1));
    check(&t, dp_average_gradients(&t, g, N, rows, B) == 0, "average_gradients returns 0");
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double want = 0;
        for (int r = 0; r < t.size; r++) {
            const dp_team other = {r, t.size, 0};
            int f, c;
            dp_share(&other, B, &f, &c);
            want += (double)c / B * (r + 1) * (i + 1);
        }
        worst = fmax(worst, fabs(g[i] - want) / want);
    }
    check(&t, worst < 1e-6, "the average weights each rank by its rows");
    check(&t, dp_same_everywhere(&t, g, N), "the average has the same bits on every rank");
    // same_everywhere notices one differing float on one rank
    float *h = calloc(N, sizeof *h);
    if (t.rank == t.size - 1)
        h[N / 2] = 1e-30f;
    check(&t, dp_same_everywhere(&t, h, N) == (t.size == 1), "a difference on one rank is seen");
    check(&t, dp_sum(&t, t.rank + 0.5) == t.size * (t.size - 1) / 2.0 + 0.5 * t.size, "sum over ranks");
    free(g);
    free(h);
    dp_stop(&t);
    return failures ? 1 : 0;
}
