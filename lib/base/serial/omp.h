/*
 * omp.h - the OpenMP calls mygpt makes, for a build without OpenMP (-Dopenmp=disabled):
 * one thread. The parallel pragmas are then ignored and each parallel region runs once,
 * as thread 0 of 1; `omp simd` still holds (-fopenmp-simd), so every loop is compiled as
 * in the OpenMP build at one thread, and gives its bits.
 */
#ifndef MYGPT_SERIAL_OMP_H
#define MYGPT_SERIAL_OMP_H

/* The number of threads a parallel region would use: always 1. */
static inline int omp_get_max_threads(void)
{
    return 1;
}

/* The number of threads of the running region: always 1. */
static inline int omp_get_num_threads(void)
{
    return 1;
}

/* This thread's number in its region: always 0. */
static inline int omp_get_thread_num(void)
{
    return 0;
}

/* The processors the program may use: one, the only one it runs on. */
static inline int omp_get_num_procs(void)
{
    return 1;
}

/* Asks for n threads: without OpenMP there is one, whatever n. */
static inline void omp_set_num_threads(int n)
{
    (void)n;
}

#endif
