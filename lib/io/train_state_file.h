/*
 * io/train_state_file.h - private to the library: what the writer (train_state.c) and
 * the reader (train_state_read.c) of a training state share: its format's name and its
 * tensors.
 */
#ifndef MYGPT_IO_TRAIN_STATE_FILE_H
#define MYGPT_IO_TRAIN_STATE_FILE_H

#include <stddef.h>

#include "mygpt/gpt.h"
#include "mygpt/train.h"
#include "mygpt/data.h"

#define TRAIN_STATE_FORMAT "mygpt-train-state" /* "__metadata__"'s "format" */

/* The tensors of a state, in the file's order */
typedef struct state_tensor {
    const char *name, *dtype;
    const void *data; /* what is saved */
    size_t numel, es;
} state_tensor;

/* The optimizer's buffers: their names and how many (0 before its first step) */
int mygpt_state_buffers(const mygpt_optimizer *opt, const char *names[2]);

/* The tensors of the state, for g, opt and train at batch: their count */
int mygpt_state_tensors(const mygpt_gpt *g, const mygpt_optimizer *opt, const mygpt_dataloader *train, long long batch,
                        state_tensor out[4]);
#endif
