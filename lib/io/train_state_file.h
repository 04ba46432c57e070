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

/* What the reader takes: metadata entries, a key's and a value's bytes (their NUL
 * included: "run:" and a setting's key; a generator's state is 624 words in hex) */
#define STATE_META_MAX 128
#define STATE_KEY_MAX 160
#define STATE_VALUE_MAX 8192
/* What a run may hold, within those: generators and settings together (the other half of
 * the entries are the state's own), a setting's key and value in bytes without the NUL
 * ("run:" goes before the key). Literal, so that messages can say them (STATE_WORDS). */
#define STATE_RUN_ENTRIES_MAX 64
#define STATE_SETTING_KEY_MAX 155
#define STATE_SETTING_VALUE_MAX 8191
_Static_assert(STATE_RUN_ENTRIES_MAX == STATE_META_MAX / 2 && STATE_SETTING_KEY_MAX == STATE_KEY_MAX - 5 &&
                   STATE_SETTING_VALUE_MAX == STATE_VALUE_MAX - 1,
               "a run's sizes follow the reader's");
#define STATE_WORDS_(x) #x
#define STATE_WORDS(x) STATE_WORDS_(x)

/* Whether a state of run can be written and read back (its optimizer, position, loader,
 * generators and settings there, each setting's key and value UTF-8 and within the
 * reader's sizes): NULL, or why not. The writer and the reader both ask. */
const char *mygpt_state_run_invalid(const mygpt_train_run *run);

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
