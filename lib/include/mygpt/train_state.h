/*
 * mygpt/train_state.h - a training run's whole state in one safetensors file, so that a
 * run stopped at any step (Ctrl-C, a periodic save) continues bit for bit: the weights
 * and the optimizer's buffers (AdamW's exp_avg and exp_avg_sq, SGD's momentum buffer) as
 * float32 tensors, the training loader's order of the current epoch as an int64 tensor,
 * and in "__metadata__" the rest: the model's configuration, the optimizer's kind and
 * step, the run's step, epoch and batch, every generator's state (its Mersenne Twister
 * words in hex, the cached normal's bits) and the settings of the run that saved it.
 *
 *   tensors   "model.params" F32 [n] (the model's flat block, the library's order),
 *             "optimizer.exp_avg", "optimizer.exp_avg_sq" (AdamW) or
 *             "optimizer.momentum_buffer" (SGD) F32 [n], once the optimizer has them,
 *             "loader.order" I64 [windows], when the epoch's order is drawn
 *   metadata  "format": "mygpt-train-state", "version": "1", the configuration as a
 *             checkpoint's (arch, vocab_size, ...), "qkv_bias", "num_parameters",
 *             "optimizer", "optimizer.step", "step", "epoch", "batch",
 *             "loader.windows", "generators", "generator.0", ..., "run:KEY" per setting
 *
 * It is not a model checkpoint (mygpt_checkpoint_load refuses it, saying it is a training
 * state), but it holds one: mygpt_train_state_model builds the model of its weights, and
 * mygpt_model_load (mygpt/checkpoint.h) reads either file.
 */
#ifndef MYGPT_TRAIN_STATE_H
#define MYGPT_TRAIN_STATE_H

#include "mygpt/data.h"
#include "mygpt/error.h"
#include "mygpt/gpt.h"
#include "mygpt/rng.h"
#include "mygpt/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* The last step a state may be at: 2^53, where AdamW's step count, a double in its bias
 * correction, stops being exact (and far from a long's end, which a step would pass) */
#define MYGPT_TRAIN_MAX_STEP (1LL << 53)

/* One setting of the run that saves a state (a flag and its value, as the program
 * writes them): kept in the file, and compared when a run resumes from it. */
typedef struct mygpt_train_setting {
    const char *key, *value;
} mygpt_train_setting;

/* Where a run is: the next step continues from here. A run steps its optimizer once a
 * step, through every batch of every epoch: step = epoch * batches + batch, and the
 * optimizer's step is the run's (both checked when a state is saved and loaded). */
typedef struct mygpt_train_position {
    long long step;  /* optimizer steps taken                                      */
    long long epoch; /* the epoch the next batch belongs to (0 the first)          */
    long long batch; /* the next batch of that epoch; 0: its order is not drawn yet */
} mygpt_train_position;

/* A run besides its model, as a state keeps it: its optimizer, the generators it draws
 * from, its training loader, where it is and the settings it was started with. Saving
 * reads them all; loading writes all but the settings, which it compares. */
typedef struct mygpt_train_run {
    mygpt_optimizer *opt;
    mygpt_rng *const *rngs; /* (n_rng)                              */
    int n_rng;
    mygpt_dataloader *train;
    mygpt_train_position *pos;
    const mygpt_train_setting *settings; /* (n_settings)            */
    int n_settings;
} mygpt_train_run;

/* Writes the state of a run to path, whole or not at all, as mygpt_checkpoint_save writes
 * (a temporary renamed over path, the interrupting signals held meanwhile): g's weights
 * (float32), run's optimizer's buffers, its generators, its loader's order (when
 * pos->batch > 0), its position and its settings; nothing of run is changed.
 * MYGPT_EINVAL (a quantized model, a path refused, an optimizer step that is not
 * pos->step, or a run a state of which could not be read back: no optimizer, position or
 * loader, n_rng or n_settings below 0 or over 64 together, a NULL generator, key or value,
 * a key empty or over 155 bytes, a value over 8191, a key or value not UTF-8), MYGPT_EIO (a failed write, with the reason), MYGPT_ENOMEM; MYGPT_ERANGE,
 * nothing written, for a weight or an optimizer's value that is a NaN or an infinity. */
mygpt_status mygpt_train_state_save(const char *path, const mygpt_gpt *g, const mygpt_train_run *run,
                                    mygpt_error *err);

/* Continues a run from the state in path: g (built with the same configuration), run's
 * optimizer (initialised with the same kind and hyper-parameters), its generators and
 * its loader (set up over the same tokens) take the file's weights, buffers, generators
 * and order; *run->pos the position. Before anything is changed, the file must be a
 * training state of g's configuration, the optimizer's kind, n_rng generators and the
 * loader's window count, saved with run's settings (the same keys and values): anything
 * else is refused with a message naming the first difference (MYGPT_EINVAL, as is a run
 * mygpt_train_state_save would refuse;
 * MYGPT_EFORMAT for a file that is not a training state or is damaged, MYGPT_EIO,
 * MYGPT_ENOMEM). Damaged includes a generator that mygpt_rng_check refuses and a
 * position no run reaches (see mygpt_train_position, MYGPT_TRAIN_MAX_STEP). */
mygpt_status mygpt_train_state_load(const char *path, mygpt_gpt *g, const mygpt_train_run *run, mygpt_error *err);

/* The model a training state holds, for inference: built (*out, new) from the state's
 * configuration (its arch and sizes; dropout 0) with the weights of "model.params"; the
 * optimizer's buffers, the generators and the settings are not read. MYGPT_EFORMAT for a
 * file that is not a training state or is damaged (a configuration mygpt does not build,
 * weights missing, of another size or not finite), MYGPT_EIO, MYGPT_ENOMEM; *out stays
 * NULL on failure. */
mygpt_status mygpt_train_state_model(mygpt_gpt **out, const char *path, mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
