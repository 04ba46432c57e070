/*
 * io/safetensors.h - private to the library: the safetensors container as the checkpoint
 * readers need it (safetensors.c). A file is 8 bytes of header length (little-endian),
 * a JSON header mapping each tensor's name to its dtype, shape and byte range, an
 * optional "__metadata__" of strings, then the data. The header is read whole, parsed
 * with the library's JSON reader (io/json.h) and checked before any data is touched; the
 * data are read with pread (never mapped).
 */
#ifndef MYGPT_IO_SAFETENSORS_H
#define MYGPT_IO_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "mygpt/checkpoint.h"
#include "mygpt/error.h"
#include "mygpt/gpt.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian: this reader and writer assume a little-endian host"
#endif

/* One tensor of the header: its name (without Hugging Face's "transformer." prefix), its
 * dtype, shape (ndim values) and data offsets (noff values, [begin, end) in the data) */
typedef struct st_entry {
    char name[128];
    char dtype[16];
    unsigned long long shape[4], offsets[2];
    int ndim, noff;
} st_entry;

/* Which of the configuration's five sizes "__metadata__" gives */
typedef struct st_sizes_found {
    bool vocab_size, embed_dim, num_heads, num_layers, max_seq_len;
} st_sizes_found;

/* What __metadata__ says of a file beyond its model: a training state's format, the
 * checksums that tie adapters to their base (0: not recorded) */
typedef struct st_marks {
    bool train_state;     /* "format": "mygpt-train-state" (mygpt/train_state.h), not a model */
    uint64_t lora_base;   /* adapters: "lora_base", the base checksum of their model        */
    uint64_t lora_merged; /* a model: "lora_merged", the FNV-1a 64 of the adapters in it   */
} st_marks;

/* A file's header as both readers need it: the file open, its JSON parsed into the
 * entries (sorted by name, none twice), the __metadata__'s configuration (found: which
 * sizes it gives) and weight format, and where the data is. */
typedef struct st_header {
    int fd;
    struct stat sbuf;
    char *header;
    st_entry *entries;
    size_t n;
    mygpt_config cfg;
    st_sizes_found found;
    mygpt_weights wf;
    st_marks marks;
    size_t data_at, data_len;
} st_header;

/* Opens path and reads its header into *h (freed by mygpt_st_header_free; on failure
 * nothing is left to free): MYGPT_EIO, MYGPT_EFORMAT (a PyTorch checkpoint named as
 * one, a header that is not safetensors'), MYGPT_ENOMEM. */
mygpt_status mygpt_st_read_header(const char *path, st_header *h, mygpt_error *err);
void mygpt_st_header_free(st_header *h);

/* Whether __metadata__ gave all five sizes of the configuration */
bool mygpt_st_all_sizes(const st_sizes_found *found);

/* A file replaced or rewritten while it was read may hold parts of two files: MYGPT_EIO
 * when it is not as mygpt_st_read_header found it. */
mygpt_status mygpt_st_unchanged(const st_header *h, const char *path, mygpt_error *err);

/* The entry named name, or NULL (the entries sorted by name: a binary search) */
const st_entry *mygpt_st_find(const st_entry *entries, size_t n, const char *name);

/* As the safetensors format requires: the tensors' byte ranges tile the data exactly,
 * from 0 to its end, without holes or overlaps. 1; 0 with *why saying what is wrong (a
 * file cut short, bytes after the data, a hole or an overlap, offsets that are no range);
 * -1 out of memory. */
int mygpt_st_offsets_tile(const st_entry *entries, size_t n, size_t data_len, const char **why);

/* Layers of a file: 1 + the largest N in names "<prefix>.N...." */
int mygpt_st_count_layers(const st_entry *entries, size_t n, const char *prefix);

/* n bytes at offset off of fd into buf: 0, or -1 with errno (0 when the file ended first) */
int mygpt_st_read_at(int fd, void *buf, size_t n, size_t off);

/* The error of a mygpt_st_read_at that failed: a file that ended early was cut while
 * being read */
mygpt_status mygpt_st_read_failed(const char *path, mygpt_error *err);

/* 1 if the n bytes at offsets a and b of fd are the same, 0 if not, -1 (errno) if they
 * cannot be read */
int mygpt_st_same_bytes(int fd, size_t a, size_t b, size_t n);
#endif
