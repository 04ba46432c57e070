/*
 * dataloader.c - LLMs-from-scratch's create_dataloader_v1 over a token stream, batch
 * for batch as torch's DataLoader orders it (the order any of the library's loaders
 * draws: mygpt_loader_iter), and the UTF-8 lengths that split a text
 * as Python's len() and slicing do.
 */
#include <stdlib.h>
#include <string.h>

#include "mygpt/data.h"
#include "base/base.h"
#include "io/loader.h"

mygpt_status mygpt_dataloader_init(mygpt_dataloader *dl, const int64_t *ids, size_t n,
                                   size_t batch_size, size_t max_length, size_t stride,
                                   mygpt_error *err)
{
    memset(dl, 0, sizeof *dl);
    if (batch_size == 0 || max_length == 0 || stride == 0)
        return mygpt_fail(err, MYGPT_EINVAL,
                          "batch_size, max_length and stride must be at least 1 (got %zu, %zu, %zu)",
                          batch_size, max_length, stride);
    dl->ids = ids;
    dl->n = n;
    dl->batch_size = batch_size;
    dl->max_length = max_length;
    dl->stride = stride;
    // lesson: num_windows
    /* for i in range(0, len(token_ids) - max_length, stride) */
    dl->num_windows = n > max_length ? (n - max_length + stride - 1) / stride : 0;
    mygpt_dataloader_set_drop_last(dl, 1);
    return MYGPT_OK;
    // end lesson: num_windows
}

void mygpt_dataloader_set_drop_last(mygpt_dataloader *dl, int drop_last)
{
    dl->drop_last = drop_last != 0;
    dl->num_batches = mygpt_loader_num_batches(dl->num_windows, dl->batch_size, drop_last);
}

size_t mygpt_loader_num_batches(size_t n, size_t batch_size, int drop_last)
{
    return drop_last ? n / batch_size : (n + batch_size - 1) / batch_size;
}

mygpt_status mygpt_loader_batches(size_t n, size_t batch_size, int drop_last, size_t *num_batches,
                                  mygpt_error *err)
{
    if (batch_size == 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "batch_size must be at least 1 (got 0)");
    *num_batches = mygpt_loader_num_batches(n, batch_size, drop_last);
    return MYGPT_OK;
}

mygpt_status mygpt_ids_append(int64_t **ids, size_t *cap, size_t *start, size_t i, const int64_t *add, size_t m,
                              mygpt_error *err)
{
    const size_t at = start[i];
    if (at + m > *cap) {
        size_t ncap = *cap ? *cap : 4096;
        while (ncap < at + m)
            ncap *= 2;
        int64_t *more = realloc(*ids, ncap * sizeof *more);
        if (!more)
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %zu token ids", ncap);
        *ids = more;
        *cap = ncap;
    }
    memcpy(*ids + at, add, m * sizeof *add);
    start[i + 1] = at + m;
    return MYGPT_OK;
}

mygpt_status mygpt_loader_epoch(int64_t **order, size_t n, mygpt_rng *global, int shuffle, const char *items,
                                mygpt_error *err)
{
    if (!shuffle) {
        free(*order);
        *order = NULL;
    } else if (!*order && !(*order = malloc((n ? n : 1) * sizeof **order))) {
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the order of %zu %s", n, items);
    }
    mygpt_loader_iter(global, *order, n);
    return MYGPT_OK;
}

size_t mygpt_loader_batch_rows(size_t n, size_t batch_size, size_t num_batches, size_t b)
{
    if (b >= num_batches)
        return 0;
    const size_t left = n - b * batch_size;
    return left < batch_size ? left : batch_size;
}

void mygpt_loader_iter(mygpt_rng *global, int64_t *order, size_t n)
{
    /* _BaseDataLoaderIter.__init__: torch.empty((), dtype=torch.int64).random_() */
    (void)mygpt_rng_random64(global);
    if (!order)
        return;
    /* RandomSampler.__iter__: seed = int(torch.empty((), dtype=torch.int64).random_()),
     * an int64 random_() being random64() mod 2^63; generator.manual_seed(seed) */
    const uint64_t seed = mygpt_rng_random64(global) % (UINT64_C(1) << 63);
    mygpt_rng local = {0};
    mygpt_rng_seed(&local, seed);
    mygpt_randperm(&local, order, n);
}

mygpt_status mygpt_dataloader_epoch(mygpt_dataloader *dl, mygpt_rng *global, int shuffle,
                                    mygpt_error *err)
{
    return mygpt_loader_epoch(&dl->order, dl->num_windows, global, shuffle, "windows", err);
}

size_t mygpt_dataloader_batch_rows(const mygpt_dataloader *dl, size_t b)
{
    return mygpt_loader_batch_rows(dl->num_windows, dl->batch_size, dl->num_batches, b);
}

mygpt_status mygpt_dataloader_batch(const mygpt_dataloader *dl, size_t b, int64_t *inputs,
                                    int64_t *targets, mygpt_error *err)
{
    if (b >= dl->num_batches)
        return mygpt_fail(err, MYGPT_ERANGE, "batch %zu is outside [0, %zu)", b, dl->num_batches);
    const size_t rows = mygpt_dataloader_batch_rows(dl, b);
    for (size_t r = 0; r < rows; r++) {
        // lesson: windows
        const size_t start = mygpt_loader_item(dl->order, dl->batch_size, b, r) * dl->stride;
        for (size_t j = 0; j < dl->max_length; j++) {
            inputs[r * dl->max_length + j] = dl->ids[start + j];
            targets[r * dl->max_length + j] = dl->ids[start + j + 1];
        // end lesson: windows
        }
    }
    return MYGPT_OK;
}

void mygpt_dataloader_free(mygpt_dataloader *dl)
{
    if (!dl)
        return;
    free(dl->order);
    dl->order = NULL;
}

size_t mygpt_utf8_length(const char *text, size_t len)
{
    // lesson: utf8_length
    size_t chars = 0;
    for (size_t i = 0; i < len; i++)
        chars += ((unsigned char)text[i] & 0xc0) != 0x80; /* every byte but continuations */
    return chars;
    // end lesson: utf8_length
}

size_t mygpt_utf8_offset(const char *text, size_t len, size_t chars)
{
    size_t seen = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)text[i] & 0xc0) != 0x80 && seen++ == chars)
            return i;
    return len;
}
