/*
 * sp_tokenizer.c - llama2.c's tokenizer (see mygpt/sp_tokenizer.h).
 *
 * run.c looks pieces up with bsearch in a copy of the vocabulary sorted by qsort on
 * strcmp; here the same order comes from a stable merge sort (equal pieces by id, as
 * glibc's qsort leaves them) and the same probes from bsearch's halving, so even a
 * vocabulary with a piece twice finds the id run.c finds. run.c's merge loop looks every
 * adjacent pair up again after each merge, quadratic in the text's length; here the
 * pairs wait in a heap ordered as run.c chooses (the highest score, then the leftmost)
 * and only the two pairs beside a merge are looked up again: the same merges, in
 * O(n log n).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/data.h"
#include "mygpt/sp_tokenizer.h"
#include "base/base.h"
#include "base/msort.h"
#include "io/whole.h"

/* The largest tokenizer.bin read: Llama 2's 32,000 pieces are 434 kB, tok512.bin 6 kB. */
#define SP_FILE_MAX ((size_t)64 << 20)

struct mygpt_sp_tokenizer {
    int vocab_size;
    int32_t max_token_length; /* the header's word */
    int32_t longest;          /* the longest piece's length, for the merge buffer */
    char **piece;             /* (vocab_size) NUL-terminated, into bytes */
    int32_t *len;             /* (vocab_size) the file's length of each piece */
    float *score;             /* (vocab_size) */
    char *bytes;              /* every piece, each followed by a NUL */
    int *sorted;              /* (vocab_size) ids in strcmp order, equal pieces by id */
    char byte_pieces[512];    /* byte b as the string at 2 * b */
};

/* ---- reading ------------------------------------------------------------------- */

static int32_t read_i32(const char *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* How many tokens data holds (stopping at max, 0 for no limit), each length checked;
 * the total of their lengths in *total. */
static mygpt_status count_tokens(const char *data, size_t size, int32_t max_len, int max, const char *path,
                                 int *count, size_t *total, mygpt_error *err)
{
    size_t at = 4;
    int n = 0;
    *total = 0;
    while (at < size && (max == 0 || n < max)) {
        if (n == INT32_MAX)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: more than %d tokens", path, INT32_MAX);
        if (size - at < 8)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: token %d at byte %zu: the file ends inside its score and length",
                              path, n, at);
        const int32_t len = read_i32(data + at + 4);
        if ((len < 0 || len > max_len) && n == 0) // (a text file, encoder.json say, ends here)
            return mygpt_fail(err, MYGPT_EFORMAT,
                              "%s is not a llama2.c tokenizer.bin: its first token's length %d is outside [0, %d] "
                              "(the header's max_token_length)",
                              path, (int)len, (int)max_len);
        if (len < 0 || len > max_len)
            return mygpt_fail(err, MYGPT_EFORMAT,
                              "%s: token %d at byte %zu: length %d is outside [0, %d] (the header's max_token_length)",
                              path, n, at, (int)len, (int)max_len);
        at += 8;
        if (size - at < (size_t)len)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: token %d at byte %zu: the file ends inside its %d bytes", path,
                              n, at - 8, (int)len);
        at += (size_t)len;
        *total += (size_t)len;
        n++;
    }
    if (max > 0 && n < max)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s holds %d tokens, fewer than the %d expected", path, n, max);
    if (at < size)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: %zu bytes after the last of its %d tokens%s", path, size - at, n,
                          max > 0 ? " (a vocabulary larger than the one expected?)" : "");
    *count = n;
    return MYGPT_OK;
}

static int by_piece(const void *a, const void *b, void *arg)
{
    char *const *piece = arg;
    return strcmp(piece[*(const int *)a], piece[*(const int *)b]);
}

/* The tokens of data (checked by count_tokens) into t's arrays, and the sorted index. */
static mygpt_status fill_tokens(mygpt_sp_tokenizer *t, const char *data, size_t total)
{
    const size_t n = (size_t)t->vocab_size;
    t->piece = malloc((n ? n : 1) * sizeof *t->piece);
    t->len = malloc((n ? n : 1) * sizeof *t->len);
    t->score = malloc((n ? n : 1) * sizeof *t->score);
    t->sorted = malloc((n ? n : 1) * sizeof *t->sorted);
    t->bytes = malloc(total + n + 1);
    int *scratch = malloc((n ? n : 1) * sizeof *scratch);
    if (!t->piece || !t->len || !t->score || !t->sorted || !t->bytes || !scratch) {
        free(scratch);
        return MYGPT_ENOMEM;
    }
    size_t at = 4, put = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(&t->score[i], data + at, 4);
        t->len[i] = read_i32(data + at + 4);
        if (t->len[i] > t->longest)
            t->longest = t->len[i];
        t->piece[i] = t->bytes + put;
        memcpy(t->bytes + put, data + at + 8, (size_t)t->len[i]);
        put += (size_t)t->len[i];
        t->bytes[put++] = '\0';
        at += 8 + (size_t)t->len[i];
        t->sorted[i] = (int)i;
    }
    mygpt_msort(t->sorted, n, sizeof *t->sorted, by_piece, t->piece, scratch);
    free(scratch);
    for (int b = 0; b < 256; b++) {
        t->byte_pieces[2 * b] = (char)b;
        t->byte_pieces[2 * b + 1] = '\0';
    }
    return MYGPT_OK;
}

mygpt_status mygpt_sp_load(mygpt_sp_tokenizer **out, const char *path, int vocab_size, mygpt_error *err)
{
    *out = NULL;
    if (vocab_size < 0)
        return mygpt_fail(err, MYGPT_EINVAL, "vocab_size %d is negative", vocab_size);
    char *data;
    size_t size;
    MYGPT_TRY(mygpt_read_file_max(path, SP_FILE_MAX, &data, &size, err));
    mygpt_status st = MYGPT_OK;
    mygpt_sp_tokenizer *t = NULL;
    if (size < 4)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s is %zu bytes, too short for its header", path, size));
    const int32_t max_len = read_i32(data);
    if (max_len < 0)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: max_token_length %d is negative", path, (int)max_len));
    int count = 0;
    size_t total;
    MYGPT_TRY_CLEANUP(st, count_tokens(data, size, max_len, vocab_size, path, &count, &total, err));
    if (count == 0) // no vocabulary: nothing could be encoded or decoded
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s holds no tokens, only its header", path));
    if (!(t = calloc(1, sizeof *t)))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "out of memory reading %s", path));
    t->vocab_size = count;
    t->max_token_length = max_len;
    if (fill_tokens(t, data, total) != MYGPT_OK)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "out of memory reading %s", path));
    *out = t;
    t = NULL;
cleanup:
    mygpt_sp_free(t);
    free(data);
    return st;
}

mygpt_status mygpt_sp_save(const mygpt_sp_tokenizer *tok, const char *path, mygpt_error *err)
{
    size_t size = 4;
    for (int i = 0; i < tok->vocab_size; i++)
        size += 8 + (size_t)tok->len[i];
    char *buf = malloc(size);
    if (!buf)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory writing %s (%zu bytes)", path, size);
    memcpy(buf, &tok->max_token_length, 4);
    size_t at = 4;
    for (int i = 0; i < tok->vocab_size; i++) {
        memcpy(buf + at, &tok->score[i], 4);
        memcpy(buf + at + 4, &tok->len[i], 4);
        memcpy(buf + at + 8, tok->piece[i], (size_t)tok->len[i]);
        at += 8 + (size_t)tok->len[i];
    }
    const mygpt_status st = mygpt_write_whole(path, buf, size, err);
    free(buf);
    return st;
}

int mygpt_sp_vocab_size(const mygpt_sp_tokenizer *tok)
{
    return tok->vocab_size;
}

const char *mygpt_sp_token(const mygpt_sp_tokenizer *tok, int id, float *score)
{
    if (id < 0 || id >= tok->vocab_size)
        return NULL;
    if (score)
        *score = tok->score[id];
    return tok->piece[id];
}

void mygpt_sp_free(mygpt_sp_tokenizer *tok)
{
    if (!tok)
        return;
    free(tok->piece);
    free(tok->len);
    free(tok->score);
    free(tok->bytes);
    free(tok->sorted);
    free(tok);
}

/* ---- encoding ------------------------------------------------------------------ */

/* The id of piece s, or -1: glibc's bsearch on the sorted index, probe for probe. */
static int lookup(const mygpt_sp_tokenizer *t, const char *s)
{
    size_t lo = 0, hi = (size_t)t->vocab_size;
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        const int c = strcmp(s, t->piece[t->sorted[mid]]);
        if (c < 0)
            hi = mid;
        else if (c > 0)
            lo = mid + 1;
        else
            return t->sorted[mid];
    }
    return -1;
}

/* The id of the piece a b (concatenated into buf), or -1. */
static int pair_id(const mygpt_sp_tokenizer *t, int a, int b, char *buf)
{
    const size_t la = strlen(t->piece[a]);
    memcpy(buf, t->piece[a], la);
    strcpy(buf + la, t->piece[b]);
    return lookup(t, buf);
}

/* Appends text's code points to ids (*n of them so far): each its piece, or its bytes
 * as ids 3 + byte. Code points are cut as run.c cuts them: a byte that is not a
 * continuation (10xxxxxx) starts one, continuations join it up to 4 bytes. */
static mygpt_status code_points(const mygpt_sp_tokenizer *t, const unsigned char *text, size_t len, int *ids,
                                size_t *n, mygpt_error *err)
{
    char cp[5];
    size_t cl = 0;
    for (size_t i = 0; i < len; i++) {
        if ((text[i] & 0xC0) != 0x80)
            cl = 0;
        cp[cl++] = (char)text[i];
        cp[cl] = '\0';
        const unsigned char next = i + 1 < len ? text[i + 1] : 0;
        if ((next & 0xC0) == 0x80 && cl < 4)
            continue;
        const int id = lookup(t, cp);
        if (id != -1) {
            ids[(*n)++] = id;
        } else {
            for (size_t k = 0; k < cl; k++) {
                const int b = 3 + (unsigned char)cp[k];
                if (b >= t->vocab_size)
                    return mygpt_fail(err, MYGPT_EFORMAT, "byte 0x%02X falls back to id %d, outside the vocabulary of %d",
                                      (unsigned char)cp[k], b, t->vocab_size);
                ids[(*n)++] = b;
            }
        }
        cl = 0;
    }
    return MYGPT_OK;
}

/* A pair that may merge: the slots of its two tokens, their ids then, and the merged
 * piece's id and score. */
typedef struct merge_cand {
    float score;
    int left, right;       /* slots */
    int left_id, right_id; /* the ids the slots held when it was found */
    int id;
} merge_cand;

/* The merge run.c makes first: the highest score, the leftmost on ties. */
static int goes_before(const merge_cand *a, const merge_cand *b)
{
    return a->score > b->score || (a->score == b->score && a->left < b->left);
}

/* The merges still to look at, a binary heap of candidates with the first at [0]. */
typedef struct merge_heap {
    merge_cand *c;
    size_t n;
} merge_heap;

static void heap_push(merge_heap *h, merge_cand x)
{
    size_t i = h->n++;
    for (; i > 0 && goes_before(&x, &h->c[(i - 1) / 2]); i = (i - 1) / 2)
        h->c[i] = h->c[(i - 1) / 2];
    h->c[i] = x;
}

static merge_cand heap_pop(merge_heap *h)
{
    const merge_cand top = h->c[0], last = h->c[--h->n];
    size_t i = 0;
    for (size_t k; (k = 2 * i + 1) < h->n; i = k) {
        if (k + 1 < h->n && goes_before(&h->c[k + 1], &h->c[k]))
            k++;
        if (!goes_before(&h->c[k], &last))
            break;
        h->c[i] = h->c[k];
    }
    h->c[i] = last;
    return top;
}

/* Pushes the pair of slots l and r when its concatenation is a piece run.c would merge
 * (a score above -1e10: its best_score starts there, and a NaN never passes its >). */
static void push_pair(const mygpt_sp_tokenizer *t, merge_heap *h, const int *ids, int l, int r, char *buf)
{
    const int id = pair_id(t, ids[l], ids[r], buf);
    if (id != -1 && t->score[id] > -1e10f)
        heap_push(h, (merge_cand){t->score[id], l, r, ids[l], ids[r], id});
}

/* Merges ids (*n) in place as run.c does: while some adjacent pair is a piece, the pair
 * whose piece has the highest score (the leftmost on ties) becomes that piece. Tokens
 * stay in their slots (next links the live ones; a merged-away slot holds -1), so a
 * slot's number orders pairs as their positions do. Scratch: next (*n + 1 ints), heap
 * (3 *n candidates: n - 1 pairs, then at most 2 a merge), buf the merge string. */
static void merge_pairs(const mygpt_sp_tokenizer *t, int *ids, size_t *n, int *next, merge_cand *heap, char *buf)
{
    const int m = (int)*n;
    int *prev = next + m + 1;
    merge_heap h = {heap, 0};
    for (int i = 0; i < m; i++) {
        next[i] = i + 1;
        prev[i] = i - 1;
    }
    for (int i = 0; i + 1 < m; i++)
        push_pair(t, &h, ids, i, i + 1, buf);
    while (h.n > 0) {
        const merge_cand c = heap_pop(&h);
        // a candidate whose tokens changed since it was found is stale
        if (ids[c.left] != c.left_id || ids[c.right] != c.right_id || next[c.left] != c.right)
            continue;
        ids[c.left] = c.id;
        ids[c.right] = -1;
        next[c.left] = next[c.right];
        if (next[c.left] < m)
            prev[next[c.left]] = c.left;
        if (prev[c.left] >= 0)
            push_pair(t, &h, ids, prev[c.left], c.left, buf);
        if (next[c.left] < m)
            push_pair(t, &h, ids, c.left, next[c.left], buf);
    }
    size_t k = 0;
    for (int i = 0; i < m; i = next[i])
        ids[k++] = ids[i];
    *n = k;
}

mygpt_status mygpt_sp_encode(const mygpt_sp_tokenizer *tok, const char *text, size_t len, int bos, int eos,
                             int **ids, size_t *n, mygpt_error *err)
{
    *ids = NULL;
    *n = 0;
    const char *nul = len > 0 ? memchr(text, '\0', len) : NULL;
    if (nul)
        return mygpt_fail(err, MYGPT_EINVAL, "the text holds a NUL byte at offset %zu", (size_t)(nul - text));
    if ((bos && tok->vocab_size <= MYGPT_SP_BOS) || (eos && tok->vocab_size <= MYGPT_SP_EOS))
        return mygpt_fail(err, MYGPT_EFORMAT, "a vocabulary of %d has no %s", tok->vocab_size,
                          eos && tok->vocab_size <= MYGPT_SP_EOS ? "EOS (2)" : "BOS (1)");
    // ids are ints, as run.c's are
    if (len > (size_t)INT32_MAX / 4)
        return mygpt_fail(err, MYGPT_EOVERFLOW, "a text of %zu bytes is too long (at most %d)", len, INT32_MAX / 4);
    int *out = malloc((len + 3) * sizeof *out);
    int *links = malloc(2 * (len + 4) * sizeof *links);
    merge_cand *heap = malloc(3 * (len + 3) * sizeof *heap);
    char *buf = malloc(2 * (size_t)tok->longest + 8);
    mygpt_status st = MYGPT_OK;
    if (!out || !links || !heap || !buf)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "out of memory encoding %zu bytes", len));
    size_t m = 0;
    if (bos)
        out[m++] = MYGPT_SP_BOS;
    if (len > 0) {
        const int prefix = lookup(tok, " ");
        if (prefix < 0)
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "the vocabulary has no piece \" \" (the dummy prefix)"));
        out[m++] = prefix;
    }
    MYGPT_TRY_CLEANUP(st, code_points(tok, (const unsigned char *)text, len, out, &m, err));
    merge_pairs(tok, out, &m, links, heap, buf);
    if (eos)
        out[m++] = MYGPT_SP_EOS;
    *ids = out;
    *n = m;
    out = NULL;
cleanup:
    free(out);
    free(links);
    free(heap);
    free(buf);
    return st;
}

/* ---- decoding ------------------------------------------------------------------ */

mygpt_status mygpt_sp_piece(const mygpt_sp_tokenizer *tok, int prev, int id, const char **piece,
                            mygpt_error *err)
{
    *piece = NULL;
    if (id < 0 || id >= tok->vocab_size)
        return mygpt_fail(err, MYGPT_ERANGE, "token id %d is outside [0, %d)", id, tok->vocab_size);
    const char *p = tok->piece[id];
    // sentencepiece drops the space the dummy prefix put before the first word
    if (prev == MYGPT_SP_BOS && p[0] == ' ')
        p++;
    // run.c's own test of a byte piece (it accepts what this sscanf accepts)
    unsigned char byte;
    if (sscanf(p, "<0x%02hhX>", &byte) == 1)
        p = tok->byte_pieces + 2 * byte;
    *piece = p;
    return MYGPT_OK;
}

int mygpt_sp_piece_printable(const char *piece)
{
    if (!piece || piece[0] == '\0')
        return 0;
    if (piece[1] != '\0')
        return 1;
    // the C locale's isprint or isspace, whatever locale the program set
    const unsigned char b = (unsigned char)piece[0];
    return (b >= 0x20 && b <= 0x7E) || (b >= '\t' && b <= '\r');
}

mygpt_status mygpt_sp_decode(const mygpt_sp_tokenizer *tok, const int *ids, size_t n, char **text,
                             size_t *len, mygpt_error *err)
{
    *text = NULL;
    *len = 0;
    size_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            const char *p;
            MYGPT_TRY(mygpt_sp_piece(tok, i ? ids[i - 1] : -1, ids[i], &p, err));
            if (ids[i] == MYGPT_SP_BOS || !mygpt_sp_piece_printable(p))
                continue;
            const size_t pl = strlen(p);
            if (pass == 1)
                memcpy(*text + at, p, pl);
            at += pl;
        }
        if (pass == 0 && !(*text = malloc((total = at) + 1)))
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory decoding %zu ids", n);
    }
    (*text)[total] = '\0';
    *len = total;
    return MYGPT_OK;
}
