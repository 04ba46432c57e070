/*
 * save_tool.c - saves a model of 16 M parameters (64 MB) once an OpenMP team of THREADS
 * has run, after writing one byte to the file descriptor READY_FD: the signal test of
 * tests/test_checkpoint.c starts it and signals it during the save. A program of its own,
 * started by exec, because under qemu-user a child forked from a test process that has
 * threads cannot start threads of its own (qemu 7.2 fails an assertion).
 *
 *   save_tool THREADS PATH READY_FD
 *
 * Exits 0 when the save succeeded, 1 when it failed, 2 to 4 when it did not get that far.
 */
#include <omp.h>
#include <stdlib.h>
#include <unistd.h>

#include "mygpt/checkpoint.h"
#include "mygpt/gpt.h"

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    const int threads = atoi(argv[1]), ready = atoi(argv[3]);
    omp_set_num_threads(threads);
    int team = 0;
#pragma omp parallel // the workers exist, signals not blocked in them
#pragma omp atomic
    team++;
    const mygpt_config cfg = {50257, 256, 4, 4, 256};
    mygpt_gpt *g;
    if (team != threads || mygpt_gpt_create(&g, &cfg, 1, NULL) != MYGPT_OK)
        return 3;
    if (write(ready, "x", 1) != 1)
        return 4;
    const int saved = mygpt_checkpoint_save(g, argv[2], NULL) == MYGPT_OK;
    mygpt_gpt_free(g); // a leak checker (the sanitizer stage) sees a clean exit
    return saved ? 0 : 1;
}
