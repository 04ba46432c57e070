/*
 * safetensors.c - the safetensors container (see io/safetensors.h): the header read
 * whole and parsed with the library's JSON reader, the entries and mygpt's __metadata__
 * checked before any data is touched, the data read with pread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mygpt/lora.h"
#include "mygpt/quantize.h"
#include "base/base.h"
#include "io/json.h"
#include "io/llama2c.h"
#include "io/safetensors.h"

#define MAX_HEADER (100u << 20) /* safetensors' own limit on the JSON header: 100 MB */

/* Values a header may hold: an entry takes about 13, so 300 k tensors; a model has a
 * few thousand at most */
#define MAX_HEADER_VALUES ((size_t)1 << 22)

/* [int, int, ...] (value a) into v (at most max); *n the count. NULL, or what is wrong */
static const char *json_ints(const mygpt_json *j, size_t a, unsigned long long *v, int max, int *n)
{
    *n = 0;
    if (j->v[a].type != MYGPT_JSON_ARRAY)
        return "a shape or data_offsets in the header is not an array";
    if (j->v[a].count > (uint32_t)max)
        return "too many dimensions or offsets in the header";
    for (size_t k = a + 1; *n < (int)j->v[a].count; k = j->v[k].next) {
        long long x;
        if (!mygpt_json_integer(j, k, 0, (long long)1 << 62, &x))
            return "a shape or data_offsets in the header holds something else than an integer in [0, 2^62]";
        v[(*n)++] = (unsigned long long)x;
    }
    return NULL;
}

/* {"dtype": "...", "shape": [...], "data_offsets": [b, e]} (value v). NULL, or what is wrong */
static const char *json_entry(const mygpt_json *j, size_t v, st_entry *e)
{
    e->dtype[0] = '\0';
    e->ndim = -1;
    e->noff = 0;
    if (j->v[v].type != MYGPT_JSON_OBJECT)
        return "a tensor entry of the header is not an object";
    for (size_t k = v + 1, m = 0; m < j->v[v].count; m++, k = j->v[k + 1].next) {
        const char *why = NULL;
        if (mygpt_json_equals(j, k, "dtype")) {
            const size_t l = mygpt_json_string(j, k + 1, e->dtype, sizeof e->dtype);
            if (l == (size_t)-1 || l != strlen(e->dtype))
                why = "a dtype in the header is not a short string";
        } else if (mygpt_json_equals(j, k, "shape")) {
            why = json_ints(j, k + 1, e->shape, 4, &e->ndim);
        } else if (mygpt_json_equals(j, k, "data_offsets")) {
            why = json_ints(j, k + 1, e->offsets, 2, &e->noff);
        } else {
            why = "unknown field in a tensor entry of the header (dtype, shape, data_offsets)";
        }
        if (why)
            return why;
    }
    return NULL;
}

/* The keys of __metadata__ mygpt reads (the five sizes first, in the configuration's
 * order); any other is another program's, any string */
typedef enum meta_key {
    KEY_VOCAB_SIZE,
    KEY_EMBED_DIM,
    KEY_NUM_HEADS,
    KEY_NUM_LAYERS,
    KEY_MAX_SEQ_LEN,
    KEY_ARCH,
    KEY_WEIGHTS,
    KEY_GROUP_SIZE,
    KEY_LORA_RANK,
    KEY_LORA_ALPHA,
    KEY_FORMAT,
    KEY_LORA_BASE,
    KEY_LORA_MERGED,
    KEY_NUM_KV_HEADS, /* llama's (mygpt_config) */
    KEY_FFN_HIDDEN,
    KEY_UNTIED_HEAD,
    KEY_ROPE,
    KEY_COUNT
} meta_key;

static const char *const meta_keys[KEY_COUNT] = {
    "vocab_size", "embed_dim", "num_heads",  "num_layers", "max_seq_len", "arch",       "weights",
    "group_size", "lora_rank", "lora_alpha", "format",     "lora_base",   "lora_merged", "num_kv_heads",
    "ffn_hidden", "untied_head", "rope"};

/* "lora_base" or "lora_merged": 16 hex digits, as save writes them. NULL, or what is wrong */
static const char *meta_checksum(const char *val, meta_key key, uint64_t *out)
{
    char *endp;
    errno = 0;
    const unsigned long long v = strtoull(val, &endp, 16);
    if (strlen(val) != 16 || strspn(val, "0123456789abcdef") != 16 || *endp != '\0' || errno || v == 0)
        return key == KEY_LORA_BASE
                   ? "__metadata__'s lora_base is not a checksum (16 lowercase hex digits, not all 0)"
                   : "__metadata__'s lora_merged is not a checksum (16 lowercase hex digits, not all 0)";
    *out = (uint64_t)v;
    return NULL;
}

/* the largest rank as the message prints it (the limit itself, not the name of its macro) */
#define LORA_TEXT_(x) #x
#define LORA_TEXT(x) LORA_TEXT_(x)
#define LORA_MAX_RANK_TEXT LORA_TEXT(MYGPT_LORA_MAX_RANK)

/* "lora_rank" or "lora_alpha" of a file of LoRA adapters (mygpt_checkpoint_save_adapters)
 * into cfg. NULL, or what is wrong */
static const char *meta_lora(const char *val, meta_key key, mygpt_config *cfg)
{
    char *endp;
    errno = 0;
    const double v = strtod(val, &endp);
    const int rank = key == KEY_LORA_RANK;
    // a decimal number as save writes it: no space, hexadecimal, inf or nan
    if (!(*val >= '0' && *val <= '9') || *endp != '\0' || errno || strspn(val, "0123456789.eE+-") != strlen(val) ||
        (rank ? !(v >= 1 && v <= MYGPT_LORA_MAX_RANK && v == (int)v)
              : !(v >= MYGPT_LORA_ALPHA_MIN && v <= MYGPT_LORA_ALPHA_MAX)))
        return rank ? "__metadata__'s lora_rank is not a whole number from 1 to " LORA_MAX_RANK_TEXT
                    : "__metadata__'s lora_alpha is not a number from 1e-30 to 1e+30";
    if (rank)
        cfg->lora_rank = (int)v;
    else
        cfg->lora_alpha = v;
    return NULL;
}

/* One of the five sizes into h's configuration, marked found. NULL, or what is wrong */
static const char *meta_size(const char *val, meta_key key, st_header *h)
{
    int *fields[5] = {&h->cfg.vocab_size, &h->cfg.embed_dim, &h->cfg.num_heads, &h->cfg.num_layers,
                      &h->cfg.max_seq_len};
    bool *found[5] = {&h->found.vocab_size, &h->found.embed_dim, &h->found.num_heads, &h->found.num_layers,
                      &h->found.max_seq_len};
    char *endp;
    errno = 0;
    const long v = strtol(val, &endp, 10);
    static const char *const why[5] = {
        "__metadata__'s vocab_size is not a whole number from 1 to 16777216",
        "__metadata__'s embed_dim is not a whole number from 1 to 16777216",
        "__metadata__'s num_heads is not a whole number from 1 to 16777216",
        "__metadata__'s num_layers is not a whole number from 1 to 16777216",
        "__metadata__'s max_seq_len is not a whole number from 1 to 16777216"};
    if (*val == '\0' || *endp != '\0' || errno || v < 1 || v > (1 << 24) || !(*val >= '0' && *val <= '9'))
        return why[key];
    *fields[key] = (int)v;
    *found[key] = true;
    return NULL;
}

/* llama's fields into cfg: num_kv_heads and ffn_hidden sizes, untied_head and rope 0 or 1
 * (mygpt_config validates them against the rest). NULL, or what is wrong */
static const char *meta_llama(const char *val, meta_key key, mygpt_config *cfg)
{
    char *endp;
    errno = 0;
    const long v = strtol(val, &endp, 10);
    const long most = key == KEY_UNTIED_HEAD || key == KEY_ROPE ? 1 : 1 << 24;
    if (*val == '\0' || *endp != '\0' || errno || v < 0 || v > most || !(*val >= '0' && *val <= '9'))
        return key == KEY_NUM_KV_HEADS ? "__metadata__'s num_kv_heads is not a whole number from 0 to 16777216"
               : key == KEY_FFN_HIDDEN ? "__metadata__'s ffn_hidden is not a whole number from 0 to 16777216"
               : key == KEY_UNTIED_HEAD ? "__metadata__'s untied_head is not 0 or 1"
                                        : "__metadata__'s rope is not 0 or 1";
    int *field = key == KEY_NUM_KV_HEADS ? &cfg->num_kv_heads
                 : key == KEY_FFN_HIDDEN ? &cfg->ffn_hidden
                 : key == KEY_UNTIED_HEAD ? &cfg->untied_head
                                          : &cfg->rope;
    *field = (int)v;
    return NULL;
}

/* The value val of key into h. NULL, or what is wrong */
static const char *meta_value(st_header *h, meta_key key, const char *val)
{
    switch (key) {
    case KEY_FORMAT: // "pt" (safetensors' own), or another program's
        h->marks.train_state = strcmp(val, "mygpt-train-state") == 0; // mygpt/train_state.h
        return NULL;
    case KEY_LORA_BASE:
        return meta_checksum(val, key, &h->marks.lora_base);
    case KEY_LORA_MERGED:
        return meta_checksum(val, key, &h->marks.lora_merged);
    case KEY_ARCH:
        return mygpt_arch_parse(val, &h->cfg.arch, NULL) != MYGPT_OK ? "__metadata__ names an unknown architecture"
                                                                     : NULL;
    case KEY_WEIGHTS:
        return mygpt_weights_parse(val, &h->wf, NULL) != MYGPT_OK
                   ? "__metadata__ names an unknown weight format (fp32, bf16, int8)"
                   : NULL;
    case KEY_GROUP_SIZE:
        return strcmp(val, "64") != 0 ? "__metadata__'s int8 group_size is not 64, the only one mygpt reads" : NULL;
    case KEY_LORA_RANK:
    case KEY_LORA_ALPHA:
        return meta_lora(val, key, &h->cfg);
    case KEY_NUM_KV_HEADS:
    case KEY_FFN_HIDDEN:
    case KEY_UNTIED_HEAD:
    case KEY_ROPE:
        return meta_llama(val, key, &h->cfg);
    default:
        return meta_size(val, key, h);
    }
}

/* "__metadata__" (value m): strings to strings, any of them; mygpt reads the five sizes
 * of the configuration, the architecture and how the weights are stored ("weights":
 * "bf16" or "int8" with "group_size": "64"), the marks, into h, and ignores the other
 * keys. NULL, or what is wrong */
static const char *json_metadata(const mygpt_json *j, size_t m, st_header *h)
{
    if (j->v[m].type != MYGPT_JSON_OBJECT)
        return "__metadata__ is not a JSON object";
    char seen[KEY_COUNT][64] = {{0}}; // a key of mygpt's given twice, two values: which would count?
    bool given[KEY_COUNT] = {false};
    for (size_t k = m + 1, c = 0; c < j->v[m].count; c++, k = j->v[k + 1].next) {
        if (j->v[k + 1].type != MYGPT_JSON_STRING)
            return "a value in __metadata__ is not a string (safetensors' metadata maps strings to strings)";
        int key = 0;
        while (key < KEY_COUNT && !mygpt_json_equals(j, k, meta_keys[key]))
            key++;
        if (key == KEY_COUNT)
            continue; // another program's: any string
        char val[64];
        const size_t l = mygpt_json_string(j, k + 1, val, sizeof val);
        if (l == (size_t)-1 || l != strlen(val))
            val[0] = '\0'; // too long, or a NUL inside: no valid value
        if (given[key] && strcmp(seen[key], val) != 0)
            return "__metadata__ gives one of mygpt's keys two values";
        given[key] = true;
        memcpy(seen[key], val, sizeof val);
        const char *why = meta_value(h, (meta_key)key, val);
        if (why)
            return why;
    }
    return NULL;
}

bool mygpt_st_all_sizes(const st_sizes_found *found)
{
    return found->vocab_size && found->embed_dim && found->num_heads && found->num_layers && found->max_seq_len;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const st_entry *)a)->name, ((const st_entry *)b)->name);
}

static int by_offset(const void *a, const void *b)
{
    const st_entry *x = *(const st_entry *const *)a, *y = *(const st_entry *const *)b;
    if (x->offsets[0] != y->offsets[0])
        return (x->offsets[0] > y->offsets[0]) - (x->offsets[0] < y->offsets[0]);
    return (x->offsets[1] > y->offsets[1]) - (x->offsets[1] < y->offsets[1]); // an empty tensor before one it starts
}

/* As the safetensors format requires: the tensors' byte ranges tile the data exactly,
 * from 0 to its end, without holes or overlaps. 1; 0 with *why saying what is wrong (a
 * file cut short, bytes after the data, a hole or an overlap, offsets that are no range);
 * -1 out of memory. */
int mygpt_st_offsets_tile(const st_entry *entries, size_t n, size_t data_len, const char **why)
{
    const st_entry **at = malloc((n ? n : 1) * sizeof *at);
    if (!at)
        return -1;
    for (size_t k = 0; k < n; k++)
        at[k] = &entries[k];
    qsort(at, n, sizeof *at, by_offset);
    unsigned long long end = 0;
    const char *bad = NULL;
    for (size_t k = 0; k < n && !bad; k++) {
        if (at[k]->noff != 2)
            bad = "a tensor's data_offsets are not two numbers [begin, end]";
        else if (at[k]->offsets[1] < at[k]->offsets[0])
            bad = "a tensor's data_offsets end before they begin";
        else if (at[k]->offsets[0] != end)
            bad = "the tensors' data offsets do not tile the data (a hole or an overlap between them)";
        end = at[k]->offsets[1];
    }
    free(at);
    if (!bad && end > data_len)
        bad = "the file is cut short: its tensors' data run past its end";
    else if (!bad && end < data_len)
        bad = "bytes follow the tensors' data (something appended to the file?)";
    *why = bad;
    return bad == NULL;
}

/* The entry named name (after any "transformer." prefix), or NULL: entries are sorted by name */
const st_entry *mygpt_st_find(const st_entry *entries, size_t n, const char *name)
{
    st_entry key;
    if (strlen(name) >= sizeof key.name)
        return NULL;
    strcpy(key.name, name);
    return bsearch(&key, entries, n, sizeof *entries, by_name);
}

/* Layers of a file: 1 + the largest N in names "<prefix>.N...." */
int mygpt_st_count_layers(const st_entry *entries, size_t n, const char *prefix)
{
    int L = 0;
    const size_t pl = strlen(prefix);
    for (size_t k = 0; k < n; k++)
        if (strncmp(entries[k].name, prefix, pl) == 0 && entries[k].name[pl] == '.') {
            const long l = strtol(entries[k].name + pl + 1, NULL, 10);
            if (l >= 0 && l < (1 << 20) && l + 1 > L)
                L = (int)l + 1;
        }
    return L;
}

/* n bytes at offset off of fd into buf: 0, or -1 with errno (0 when the file ended first) */
int mygpt_st_read_at(int fd, void *buf, size_t n, size_t off)
{
    char *p = buf;
    while (n) {
        const ssize_t r = pread(fd, p, n < ((size_t)1 << 30) ? n : ((size_t)1 << 30), (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = 0;
            return -1;
        }
        p += r, n -= (size_t)r, off += (size_t)r;
    }
    return 0;
}

/* The error of a read_at that failed: a file that ended early was cut while being read */
mygpt_status mygpt_st_read_failed(const char *path, mygpt_error *err)
{
    if (errno)
        return mygpt_fail(err, MYGPT_EIO, "cannot read %s: %s", path, strerror(errno));
    return mygpt_fail(err, MYGPT_EIO, "%s changed while being read (it ended before its header's size)", path);
}

/* 1 if the n bytes at offsets a and b of fd are the same, 0 if not, -1 (errno) if they cannot be read */
int mygpt_st_same_bytes(int fd, size_t a, size_t b, size_t n)
{
    char x[1 << 14], y[1 << 14];
    for (size_t k = 0; k < n; k += sizeof x) {
        const size_t m = n - k < sizeof x ? n - k : sizeof x;
        if (mygpt_st_read_at(fd, x, m, a + k) != 0 || mygpt_st_read_at(fd, y, m, b + k) != 0)
            return -1;
        if (memcmp(x, y, m) != 0)
            return 0;
    }
    return 1;
}

/* What a file's first n bytes (8 or 9) say it is when it is not safetensors, whose header
 * starts with '{' at byte 8: torch.save's zip archive ("PK\3\4", PyTorch 1.6 and later:
 * nanoGPT's ckpt.pt) or its older raw pickle (0x80, then the protocol, 2 to 5); NULL otherwise. */
static const char *pytorch_kind(const unsigned char *head, size_t n)
{
    if (n > 8 && head[8] == '{')
        return NULL;
    if (memcmp(head, "PK\3\4", 4) == 0)
        return "a zip archive as torch.save writes";
    if (head[0] == 0x80 && head[1] >= 2 && head[1] <= 5)
        return "a pickle as torch.save wrote before PyTorch 1.6";
    return NULL;
}

/* A file replaced or rewritten while it was read may hold parts of two files: MYGPT_EIO
 * when it is not as mygpt_st_read_header found it. */
mygpt_status mygpt_st_unchanged(const st_header *h, const char *path, mygpt_error *err)
{
    struct stat now;
    if (fstat(h->fd, &now) != 0 || now.st_size != h->sbuf.st_size || now.st_mtim.tv_sec != h->sbuf.st_mtim.tv_sec ||
        now.st_mtim.tv_nsec != h->sbuf.st_mtim.tv_nsec)
        return mygpt_fail(err, MYGPT_EIO, "%s changed while being read (written to by another program): not loaded",
                          path);
    return MYGPT_OK;
}

void mygpt_st_header_free(st_header *h)
{
    free(h->entries);
    free(h->header);
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
    h->entries = NULL;
    h->header = NULL;
}

/* Whether a file's first 8 bytes read as text (printable ASCII, tabs, line ends, UTF-8's
 * bytes), as no safetensors header length does: its little-endian high bytes are 0 */
static int looks_like_text(const unsigned char b[8])
{
    for (int i = 0; i < 8; i++)
        if (!((b[i] >= 0x20 && b[i] < 0x7f) || b[i] == '\t' || b[i] == '\n' || b[i] == '\r' ||
              (b[i] >= 0x80 && b[i] <= 0xf4)))
            return 0;
    return 1;
}

/* Opens path and reads its header's bytes into h (the data's place and length with them):
 * what is not a safetensors file is said so, a PyTorch checkpoint by name */
static mygpt_status read_prefix(const char *path, st_header *h, mygpt_error *err)
{
    // read, not mapped: a mapped file cut by another process (cp over it) would kill this
    // one with SIGBUS; read, a file that changes is an error naming it
    const int fd = h->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); // a FIFO: refused below, not waited on
    if (fd < 0)
        return mygpt_fail_open(err, path, errno);
    struct stat *sb = &h->sbuf;
    if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode))
        return mygpt_fail(err, MYGPT_EIO, "cannot read %s: not a regular file (a directory, device, FIFO or socket)",
                          path);
    const size_t len = (size_t)sb->st_size;
    if (len < 8)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: too short for a safetensors file (%zu bytes)", path, len);
    unsigned char len8[9]; // the header's length, and its first byte when there is one
    if (mygpt_st_read_at(fd, len8, len > 8 ? 9 : 8, 0) != 0)
        return mygpt_st_read_failed(path, err);
    const char *kind = pytorch_kind(len8, len > 8 ? 9 : 8);
    if (kind)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: not a safetensors file (it looks like a PyTorch checkpoint, %s: "
                          "convert it to safetensors with safetensors.torch.save_file, see cli/README.md)", path, kind);
    uint64_t hlen = 0;
    for (int b = 0; b < 8; b++)
        hlen |= (uint64_t)len8[b] << (8 * b);
    if ((hlen > MAX_HEADER || hlen > len - 8) && mygpt_llama2c_whole_model(fd, len))
        return mygpt_fail(err, MYGPT_EFORMAT, "%s is a llama2.c model (run.c's format), not a safetensors file", path);
    if ((hlen > MAX_HEADER || hlen > len - 8) && looks_like_text(len8))
        return mygpt_fail(err, MYGPT_EFORMAT, "%s is not a model file (a text file?)", path);
    if (hlen > MAX_HEADER || hlen > len - 8)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s is not a model file: its safetensors header would be larger than "
                          "the file (a file cut short?)", path);
    // the header is a JSON object: '{' after any white space ('[', JSON but no object, is the
    // JSON reader's to say); any other first byte is another format's
    if (hlen && (len8[8] == 0 || !strchr("{[ \t\r\n", len8[8])))
        return mygpt_fail(err, MYGPT_EFORMAT, "%s is not a model file: no safetensors header (JSON) after its first 8 "
                          "bytes", path);
    if (!(h->header = malloc(hlen ? (size_t)hlen : 1)))
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint header");
    if (mygpt_st_read_at(fd, h->header, (size_t)hlen, 8) != 0)
        return mygpt_st_read_failed(path, err);
    h->data_at = 8 + (size_t)hlen; // the data's offset in the file
    h->data_len = len - 8 - (size_t)hlen;
    return MYGPT_OK;
}

/* The entries and the __metadata__ of the header's JSON doc into h. NULL, or what is wrong */
static const char *header_entries(const mygpt_json *doc, st_header *h)
{
    size_t seen_metadata = 0;
    const char *why = NULL;
    for (size_t k = 1, m = 0; !why && m < doc->v[0].count; m++, k = doc->v[k + 1].next) {
        if (mygpt_json_equals(doc, k, "__metadata__")) {
            why = seen_metadata++ ? "__metadata__ appears twice in the header" : json_metadata(doc, k + 1, h);
            continue;
        }
        char name[sizeof h->entries->name + 12];
        const size_t l = mygpt_json_string(doc, k, name, sizeof name);
        // files saved from GPT2LMHeadModel put "transformer." before every name
        const char *bare = l != (size_t)-1 && strncmp(name, "transformer.", 12) == 0 ? name + 12 : name;
        if (l == (size_t)-1 || strlen(bare) >= sizeof h->entries->name)
            why = "a tensor name in the header is longer than 127 bytes";
        else if (l != strlen(name))
            why = "a NUL (\\u0000) inside a tensor name of the header";
        else if (!(why = json_entry(doc, k + 1, &h->entries[h->n])))
            strcpy(h->entries[h->n++].name, bare);
    }
    return why;
}

/* The header's JSON (one pass, bounded), then the configuration and the entries, sorted
 * by name (duplicates side by side, refused; mygpt_st_find a binary search) */
static mygpt_status parse_header(const char *path, st_header *h, mygpt_error *err)
{
    mygpt_json doc = {0};
    char what[320];
    snprintf(what, sizeof what, "%s (its header)", path); // only a message: may be cut
    MYGPT_TRY(mygpt_json_parse(&doc, h->header, h->data_at - 8, 8, MAX_HEADER_VALUES, what, err));
    const char *why = NULL;
    if (doc.v[0].type != MYGPT_JSON_OBJECT)
        why = "the JSON header is not an object";
    else if (!(h->entries = malloc(((size_t)doc.v[0].count + 1) * sizeof *h->entries))) {
        mygpt_json_free(&doc);
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint header");
    } else
        why = header_entries(&doc, h);
    mygpt_json_free(&doc);
    if (why)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: %s", path, why);
    qsort(h->entries, h->n, sizeof *h->entries, by_name);
    for (size_t k = 1; k < h->n; k++)
        if (strcmp(h->entries[k - 1].name, h->entries[k].name) == 0)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: tensor %s is named twice in the header", path,
                              h->entries[k].name);
    return MYGPT_OK;
}

mygpt_status mygpt_st_read_header(const char *path, st_header *h, mygpt_error *err)
{
    memset(h, 0, sizeof *h);
    h->wf = MYGPT_WEIGHTS_FP32;
    mygpt_status st = read_prefix(path, h, err);
    if (st == MYGPT_OK)
        st = parse_header(path, h, err);
    if (st != MYGPT_OK)
        mygpt_st_header_free(h);
    return st;
}
