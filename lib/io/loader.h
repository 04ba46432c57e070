/*
 * loader.h - what torch's DataLoader(dataset, batch_size, shuffle, drop_last) decides
 * over n items, whatever the items are (windows of a text, spam texts, instruction
 * entries): how many batches there are, each epoch's order, and which item row r of
 * batch b is. The three loaders of mygpt/data.h read their items through it
 * (dataloader.c).
 */
#ifndef MYGPT_IO_LOADER_H
#define MYGPT_IO_LOADER_H
#include <stddef.h>
#include <stdint.h>

#include "mygpt/data.h"

/* len(loader): n / batch_size, rounded up unless drop_last (batch_size >= 1) */
size_t mygpt_loader_num_batches(size_t n, size_t batch_size, int drop_last);

/* The batch size a loader over n items is given, checked (MYGPT_EINVAL when it is 0, as
 * torch refuses it), and its len(loader) into *num_batches. */
mygpt_status mygpt_loader_batches(size_t n, size_t batch_size, int drop_last, size_t *num_batches,
                                  mygpt_error *err);

/* Starts an epoch (`for batch in loader:`): mygpt_loader_iter's draws from global, the
 * order of the n items into *order (allocated on the first shuffled epoch), or none
 * (*order freed and NULL) without shuffle. `items` names them in the out-of-memory
 * message. */
mygpt_status mygpt_loader_epoch(int64_t **order, size_t n, mygpt_rng *global, int shuffle, const char *items,
                                mygpt_error *err);

/* Appends item i's m ids to a dataset's ids, one item after another (*ids of *cap ids,
 * growing by doubling; start (i + 2 entries) marks where each begins): start[i + 1] =
 * start[i] + m. MYGPT_ENOMEM, with *ids as it was, when they cannot grow. */
mygpt_status mygpt_ids_append(int64_t **ids, size_t *cap, size_t *start, size_t i, const int64_t *add, size_t m,
                              mygpt_error *err);

/* Rows of batch b: batch_size, or fewer in a last short batch; 0 past num_batches. */
size_t mygpt_loader_batch_rows(size_t n, size_t batch_size, size_t num_batches, size_t b);

/* The item that row r of batch b reads: the epoch's order, or b * batch_size + r. */
static inline size_t mygpt_loader_item(const int64_t *order, size_t batch_size, size_t b, size_t r)
{
    const size_t w = b * batch_size + r;
    return order ? (size_t)order[w] : w;
}
#endif
