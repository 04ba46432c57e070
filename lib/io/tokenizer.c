/*
 * tokenizer.c - GPT-2 byte-level BPE (see mygpt/tokenizer.h).
 *
 * Vocabulary. encoder.json maps tokens, written in GPT-2's "byte-to-unicode"
 * alphabet (every byte shown as a printable character: space is "Ġ"), to ids. We
 * translate each token back to its raw bytes and keep a hash map bytes -> id and
 * an array id -> bytes. vocab.bpe lists the merges in rank order; for GPT-2 the
 * token made by merge k has id 256 + k, which is checked on loading (a corrupt
 * or mismatched pair of files is refused).
 *
 * Encoding, piece by piece (as tiktoken does): a piece that is itself a token is
 * that token; otherwise its bytes start as single-byte tokens and the adjacent
 * pair whose concatenation has the lowest id (= merge rank) is merged, leftmost
 * first, until no pair is a token. A heap of candidate pairs makes this
 * O(n log n) in the piece length n, so a long run without spaces is no problem.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "mygpt/tokenizer.h"
#include "mygpt/data.h"
#include "mygpt/print.h" /* mygpt_utf8_decode */
#include "base/base.h"
#include "io/json.h"
#include "io/tokenizer_unicode.h"

#include <errno.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GPT-2's pre-tokenisation pattern (tiktoken's "gpt2" pat_str):
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * with tiktoken's Unicode, not PCRE2's. Its \s is Unicode's White_Space, spelled out
 * here: PCRE2's \s also takes U+180E (white space before Unicode 6.3). Its letters and
 * numbers are a newer Unicode's than PCRE2 10.42's 14.0: the ones added since are spelled
 * out (tokenizer_unicode.h). Each run is one character class repeated, which PCRE2
 * matches at any length (a repeated group of alternatives takes stack for every
 * character, and long runs of punctuation overflowed it). */
#define WHITE_SPACE                                                                                                  \
    "\\x{09}-\\x{0D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
#define LETTER "[\\p{L}" TIKTOKEN_ADDED_LETTERS "]"
#define NUMBER "[\\p{N}" TIKTOKEN_ADDED_NUMBERS "]"
#define OTHER "[^" WHITE_SPACE "\\p{L}\\p{N}" TIKTOKEN_ADDED_LETTERS TIKTOKEN_ADDED_NUMBERS "]"
static const char GPT2_PATTERN[] = "'(?:[sdmt]|ll|ve|re)| ?" LETTER "+| ?" NUMBER "+| ?" OTHER "+"
                                   "|[" WHITE_SPACE "]+(?![^" WHITE_SPACE "])|[" WHITE_SPACE "]+";
#undef WHITE_SPACE
#undef LETTER
#undef NUMBER
#undef OTHER

/* ---- byte strings -> id ------------------------------------------------------ */

typedef struct token_map {
    uint32_t *slots;      /* id + 1, or 0 when empty; open addressing */
    size_t mask;
    const unsigned char *arena; /* token bytes, owned by the tokenizer */
    const size_t *off, *len;    /* per id */
} token_map;

static uint64_t hash_bytes(const unsigned char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* id of the byte string s[0..n), or -1 */
static int64_t map_find(const token_map *m, const unsigned char *s, size_t n)
{
    for (size_t i = hash_bytes(s, n) & m->mask;; i = (i + 1) & m->mask) {
        uint32_t v = m->slots[i];
        if (v == 0)
            return -1;
        uint32_t id = v - 1;
        if (m->len[id] == n && memcmp(m->arena + m->off[id], s, n) == 0)
            return id;
    }
}

/* ---- the tokenizer ------------------------------------------------------------------ */

struct mygpt_tokenizer {
    size_t vocab_size;
    unsigned char *arena;   /* all token bytes */
    size_t *off, *len;      /* id -> bytes */
    token_map map;
    int32_t byte_id[256];   /* id of each single byte */
    pcre2_code *pattern;
};

/* GPT-2's bytes_to_unicode(): printable Latin-1 bytes map to themselves, the other
 * 68 bytes to U+0100.. in order. Fills cp_to_byte (codepoint -> byte, or -1). */
static void byte_unicode_inverse(int cp_to_byte[324])
{
    for (int i = 0; i < 324; i++)
        cp_to_byte[i] = -1;
    int n = 0;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        if (printable)
            cp_to_byte[b] = b;
        else
            cp_to_byte[256 + n++] = b;
    }
}

#define VOCAB_FILE_MAX ((size_t)64 << 20)

/* A vocabulary file, with the hint that says how to get one. */
static char *read_vocab_file(const char *path, size_t *len, mygpt_error *err, mygpt_status *st)
{
    char *data;
    *st = mygpt_read_file_max(path, VOCAB_FILE_MAX, &data, len, err); // GPT-2's are 1 MB and 456 kB
    if (*st == MYGPT_EIO && err) { // the reason as read_file gives it (a directory, a FIFO, ENOENT), and the hint
        const mygpt_error inner = *err;
        mygpt_fail(err, MYGPT_EIO, "%s (run 'bash scripts/fetch-data.sh' to fetch the GPT-2 vocabulary)", inner.message);
    }
    return *st == MYGPT_OK ? data : NULL;
}

/* One UTF-8 character at s (< end): mygpt_utf8_decode (strbuf.c) over bytes */
static int utf8_decode(const unsigned char *s, const unsigned char *end, uint32_t *cp)
{
    return mygpt_utf8_decode((const char *)s, (size_t)(end - s), cp);
}

/* Appends the raw byte of byte-level character cp; 0 if cp is not in the alphabet. */
static int put_level_char(const int cp_to_byte[324], uint32_t cp, unsigned char *out, size_t *n)
{
    if (cp >= 324 || cp_to_byte[cp] < 0)
        return 0;
    out[(*n)++] = (unsigned char)cp_to_byte[cp];
    return 1;
}

/* Parses encoder.json: a flat JSON object {"token": id, ...}, read with the library's
 * JSON reader (io/json.h). */
static mygpt_status parse_encoder(mygpt_tokenizer *t, const char *path, const char *js, size_t jn,
                                  mygpt_error *err)
{
    int cp_to_byte[324];
    byte_unicode_inverse(cp_to_byte);
    mygpt_json j;
    mygpt_status st = mygpt_json_parse(&j, js, jn, 4, (size_t)1 << 24, path, err);
    if (st != MYGPT_OK)
        return st;
    size_t arena_n = 0, count = 0;
    int64_t *ids = NULL;
    size_t *offs = NULL, *lens = NULL;
    unsigned char *key = NULL;
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        st = mygpt_fail(err, MYGPT_EFORMAT, __VA_ARGS__);                                          \
        goto done;                                                                                 \
    } while (0)
    if (j.v[0].type != MYGPT_JSON_OBJECT)
        FAIL("%s: not a JSON object ({\"token\": id, ...})", path);
    count = j.v[0].count;
    ids = malloc((count + 1) * sizeof *ids);
    offs = malloc((count + 1) * sizeof *offs);
    lens = malloc((count + 1) * sizeof *lens);
    key = malloc(jn + 1); // a decoded key is never longer than its text
    t->arena = malloc(jn + 16);
    if (!ids || !offs || !lens || !key || !t->arena) {
        st = mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory loading the vocabulary");
        goto done;
    }
    for (size_t k = 1, m = 0; m < count; m++, k = j.v[k + 1].next) {
        const size_t kl = mygpt_json_string(&j, k, (char *)key, jn + 1), start = arena_n;
        for (size_t i = 0; i < kl;) {
            uint32_t cp;
            const int l = utf8_decode(key + i, key + kl, &cp);
            if (!l) // the reader checked the UTF-8: not reached
                FAIL("%s: invalid UTF-8 in the key at byte %u", path, (unsigned)j.v[k].start);
            if (!put_level_char(cp_to_byte, cp, t->arena, &arena_n))
                FAIL("%s: character U+%04X is not in GPT-2's byte alphabet", path, (unsigned)cp);
            i += (size_t)l;
        }
        long long id;
        if (!mygpt_json_integer(&j, k + 1, 0, 10000000, &id))
            FAIL("%s: expected a token id (a whole number in [0, 10^7]) at byte %u", path, (unsigned)j.v[k + 1].start);
        ids[m] = id;
        offs[m] = start;
        lens[m] = arena_n - start;
    }
    if (count == 0)
        FAIL("%s: the vocabulary is empty", path);
    /* ids must be exactly 0 .. count-1 */
    t->vocab_size = count;
    t->off = malloc(count * sizeof *t->off);
    t->len = malloc(count * sizeof *t->len);
    if (!t->off || !t->len) {
        st = mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory loading the vocabulary");
        goto done;
    }
    for (size_t i = 0; i < count; i++)
        t->len[i] = SIZE_MAX;
    for (size_t i = 0; i < count; i++) {
        if ((size_t)ids[i] >= count)
            FAIL("%s: id %lld is outside [0, %zu): ids must be 0 .. n-1", path, (long long)ids[i], count);
        if (t->len[ids[i]] != SIZE_MAX)
            FAIL("%s: id %lld appears twice", path, (long long)ids[i]);
        t->off[ids[i]] = offs[i];
        t->len[ids[i]] = lens[i];
    }
done:
#undef FAIL
    mygpt_json_free(&j);
    free(key);
    free(ids);
    free(offs);
    free(lens);
    return st;
}

static mygpt_status build_map(mygpt_tokenizer *t, const char *path, mygpt_error *err)
{
    size_t cap = 1;
    while (cap < 2 * t->vocab_size)
        cap <<= 1;
    t->map.slots = calloc(cap, sizeof *t->map.slots);
    if (!t->map.slots)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory loading the vocabulary");
    t->map.mask = cap - 1;
    t->map.arena = t->arena;
    t->map.off = t->off;
    t->map.len = t->len;
    for (size_t id = 0; id < t->vocab_size; id++) {
        const unsigned char *s = t->arena + t->off[id];
        if (map_find(&t->map, s, t->len[id]) >= 0)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: token id %zu duplicates another token", path, id);
        size_t i = hash_bytes(s, t->len[id]) & t->map.mask;
        while (t->map.slots[i])
            i = (i + 1) & t->map.mask;
        t->map.slots[i] = (uint32_t)id + 1;
    }
    for (int b = 0; b < 256; b++) {
        unsigned char c = (unsigned char)b;
        int64_t id = map_find(&t->map, &c, 1);
        if (id < 0)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: no token for byte 0x%02x", path, b);
        t->byte_id[b] = (int32_t)id;
    }
    return MYGPT_OK;
}

/* Checks vocab.bpe against the encoder: merge k (a b) must make the token a+b with
 * id 256 + k, the relation tiktoken relies on to rank pairs by id. */
static mygpt_status check_merges(mygpt_tokenizer *t, const char *path, char *txt, size_t n,
                                 mygpt_error *err)
{
    int cp_to_byte[324];
    byte_unicode_inverse(cp_to_byte);
    unsigned char buf[1024];
    size_t lineno = 0, rank = 0;
    char *line = txt, *end = txt + n;
    while (line < end) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        char *le = nl ? nl : end;
        lineno++;
        if (le > line && le[-1] == '\r')
            le[-1] = '\0', le--;
        if (lineno == 1 && strncmp(line, "#version", 8) == 0) {
            line = le + 1;
            continue;
        }
        if (le == line) { /* blank line: only allowed at the end */
            line = le + 1;
            continue;
        }
        char *sp = memchr(line, ' ', (size_t)(le - line));
        if (!sp || sp == line || sp + 1 == le || memchr(sp + 1, ' ', (size_t)(le - sp - 1)))
            return mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: a merge must be two tokens separated by one space",
                              path, lineno);
        size_t bn = 0, split = 0;
        for (const unsigned char *p = (const unsigned char *)line; p < (const unsigned char *)le;) {
            uint32_t cp;
            if (p == (const unsigned char *)sp) {
                split = bn;
                p++;
                continue;
            }
            int l = utf8_decode(p, (const unsigned char *)le, &cp);
            if (!l || bn >= sizeof buf || !put_level_char(cp_to_byte, cp, buf, &bn))
                return mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: not a GPT-2 byte-level token pair",
                                  path, lineno);
            p += l;
        }
        int64_t a = map_find(&t->map, buf, split), b = map_find(&t->map, buf + split, bn - split);
        int64_t ab = map_find(&t->map, buf, bn);
        if (a < 0 || b < 0 || ab < 0)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: a token of this merge is not in encoder.json",
                              path, lineno);
        if ((size_t)ab != 256 + rank)
            return mygpt_fail(err, MYGPT_EFORMAT,
                              "%s line %zu: merge %zu makes token id %lld, expected %zu (files do not match)",
                              path, lineno, rank, (long long)ab, 256 + rank);
        rank++;
        line = le + 1;
    }
    if (rank == 0)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: no merges", path);
    if (256 + rank + 1 != t->vocab_size)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: %zu merges for %zu tokens (expected %zu merges)",
                          path, rank, t->vocab_size, t->vocab_size - 257);
    return MYGPT_OK;
}

mygpt_status mygpt_tokenizer_load(mygpt_tokenizer **out, const char *encoder_json,
                                  const char *vocab_bpe, mygpt_error *err)
{
    *out = NULL;
    mygpt_tokenizer *t = calloc(1, sizeof *t);
    if (!t)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory loading the vocabulary");
    mygpt_status st;
    size_t jn, bn;
    char *js = read_vocab_file(encoder_json, &jn, err, &st);
    if (!js) {
        free(t);
        return st;
    }
    st = parse_encoder(t, encoder_json, js, jn, err);
    free(js);
    if (st == MYGPT_OK)
        st = build_map(t, encoder_json, err);
    if (st == MYGPT_OK) {
        char *bpe = read_vocab_file(vocab_bpe, &bn, err, &st);
        if (bpe) {
            st = check_merges(t, vocab_bpe, bpe, bn, err);
            free(bpe);
        }
    }
    if (st == MYGPT_OK) {
        if (t->vocab_size <= MYGPT_ENDOFTEXT_ID ||
            t->len[MYGPT_ENDOFTEXT_ID] != strlen(MYGPT_ENDOFTEXT) ||
            memcmp(t->arena + t->off[MYGPT_ENDOFTEXT_ID], MYGPT_ENDOFTEXT, strlen(MYGPT_ENDOFTEXT)) != 0)
            st = mygpt_fail(err, MYGPT_EFORMAT, "%s: id %d is not %s", encoder_json,
                            MYGPT_ENDOFTEXT_ID, MYGPT_ENDOFTEXT);
    }
    if (st == MYGPT_OK) {
        int errcode;
        PCRE2_SIZE erroff;
        t->pattern = pcre2_compile((PCRE2_SPTR)GPT2_PATTERN, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP, &errcode, &erroff, NULL);
        if (!t->pattern)
            st = mygpt_fail(err, MYGPT_ENOMEM, "%s", "cannot compile the GPT-2 pattern");
        else
            pcre2_jit_compile(t->pattern, PCRE2_JIT_COMPLETE); /* optional speed-up */
    }
    if (st != MYGPT_OK) {
        mygpt_tokenizer_free(t);
        return st;
    }
    *out = t;
    return MYGPT_OK;
}

mygpt_status mygpt_tokenizer_load_dir(mygpt_tokenizer **out, const char *dir, mygpt_error *err)
{
    char a[4096], b[4096];
    *out = NULL;
    if (!dir[0]) // "" + "/encoder.json" would be the root folder's
        return mygpt_fail(err, MYGPT_EINVAL, "the vocabulary folder's path is empty");
    // a cut path would open another file (".../encoder.j"): a path that does not fit is refused
    if ((size_t)snprintf(a, sizeof a, "%s/encoder.json", dir) >= sizeof a ||
        (size_t)snprintf(b, sizeof b, "%s/vocab.bpe", dir) >= sizeof b)
        return mygpt_fail(err, MYGPT_EINVAL,
                          "the vocabulary folder's path is too long (%zu bytes; with /encoder.json at most %zu): "
                          "%.60s...",
                          strlen(dir), sizeof a - 1, dir);
    return mygpt_tokenizer_load(out, a, b, err);
}

size_t mygpt_tokenizer_vocab_size(const mygpt_tokenizer *tok)
{
    return tok->vocab_size;
}

void mygpt_tokenizer_free(mygpt_tokenizer *t)
{
    if (!t)
        return;
    free(t->arena);
    free(t->off);
    free(t->len);
    free(t->map.slots);
    if (t->pattern)
        pcre2_code_free(t->pattern);
    free(t);
}

/* ---- encoding ---------------------------------------------------------------------- */

typedef struct id_vec {
    int64_t *v;
    size_t n, cap;
} id_vec;

static int push_id(id_vec *o, int64_t id)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 256;
        int64_t *v = realloc(o->v, cap * sizeof *v);
        if (!v)
            return 0;
        o->v = v;
        o->cap = cap;
    }
    o->v[o->n++] = id;
    return 1;
}

typedef struct cand {
    int64_t rank; /* id of the merged token */
    size_t pos;   /* start of the left part */
} cand;

static int cand_less(cand a, cand b)
{
    return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos);
}

static void heap_push(cand *h, size_t *n, cand c)
{
    size_t i = (*n)++;
    h[i] = c;
    while (i > 0 && cand_less(h[i], h[(i - 1) / 2])) {
        cand t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static cand heap_pop(cand *h, size_t *n)
{
    cand top = h[0];
    h[0] = h[--(*n)];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && cand_less(h[l], h[m]))
            m = l;
        if (r < *n && cand_less(h[r], h[m]))
            m = r;
        if (m == i)
            break;
        cand t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
    return top;
}

/* rank of merging the parts starting at a (ending at b_end): the merged token's id,
 * or -1 when the bytes are not a (mergeable) token */
static int64_t pair_rank(const mygpt_tokenizer *t, const unsigned char *s, size_t a, size_t b_end)
{
    int64_t id = map_find(&t->map, s + a, b_end - a);
    return id == MYGPT_ENDOFTEXT_ID ? -1 : id;
}

/* BPE of one piece; appends its ids. */
static mygpt_status bpe_piece(const mygpt_tokenizer *t, const unsigned char *s, size_t n, id_vec *out,
                              mygpt_error *err)
{
    int64_t whole = map_find(&t->map, s, n);
    if (whole >= 0 && whole != MYGPT_ENDOFTEXT_ID)
        return push_id(out, whole) ? MYGPT_OK : mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory");
    /* parts: part i covers [i, next[i]); prev/next link the live parts */
    size_t *next = malloc((n + 1) * sizeof *next), *prev = malloc((n + 1) * sizeof *prev);
    cand *heap = malloc(2 * (n + 1) * sizeof *heap);
    if (!next || !prev || !heap) {
        free(next), free(prev), free(heap);
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory");
    }
    size_t hn = 0;
    for (size_t i = 0; i < n; i++) {
        next[i] = i + 1;
        prev[i] = i == 0 ? SIZE_MAX : i - 1;
    }
    for (size_t i = 0; i + 1 < n; i++) {
        int64_t r = pair_rank(t, s, i, i + 2);
        if (r >= 0)
            heap_push(heap, &hn, (cand){r, i});
    }
    // lesson: bpe_merge
    while (hn > 0) {
        cand c = heap_pop(heap, &hn);
        /* stale? the left part must still start at c.pos and have a right neighbour
         * whose concatenation is still exactly this token */
        if (next[c.pos] == SIZE_MAX || next[c.pos] >= n)
            continue;
        size_t right = next[c.pos];
        if (pair_rank(t, s, c.pos, next[right]) != c.rank)
            continue;
        next[c.pos] = next[right]; /* merge right into left */
        if (next[right] < n)
            prev[next[right]] = c.pos;
        next[right] = SIZE_MAX;    /* right is dead */
        if (prev[c.pos] != SIZE_MAX) {
            int64_t r = pair_rank(t, s, prev[c.pos], next[c.pos]);
            if (r >= 0)
                heap_push(heap, &hn, (cand){r, prev[c.pos]});
        }
        if (next[c.pos] < n) {
            int64_t r = pair_rank(t, s, c.pos, next[next[c.pos]]);
            if (r >= 0)
                heap_push(heap, &hn, (cand){r, c.pos});
        }
    }
    // end lesson: bpe_merge
    mygpt_status st = MYGPT_OK;
    for (size_t i = 0; i < n; i = next[i]) {
        int64_t id = map_find(&t->map, s + i, next[i] - i);
        if (id < 0 || !push_id(out, id)) {
            st = mygpt_fail(err, id < 0 ? MYGPT_EFORMAT : MYGPT_ENOMEM, "%s",
                            id < 0 ? "BPE produced a part that is not a token" : "out of memory");
            break;
        }
    }
    free(next);
    free(prev);
    free(heap);
    return st;
}

/* Cuts a segment (no special tokens in it) into pieces and BPE-encodes them. */
static mygpt_status encode_segment(const mygpt_tokenizer *t, const unsigned char *s, size_t n,
                                   id_vec *out, mygpt_error *err)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(t->pattern, NULL);
    if (!md)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory");
    mygpt_status st = MYGPT_OK;
    size_t at = 0;
    while (at < n && st == MYGPT_OK) {
        int rc = pcre2_match(t->pattern, s, n, at, PCRE2_NO_UTF_CHECK, md, NULL);
        if (rc < 0) {
            st = mygpt_fail(err, MYGPT_EFORMAT, "the GPT-2 pattern failed at byte %zu (code %d)", at, rc);
            break;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[0] != at || ov[1] <= ov[0]) { /* the pattern covers every character */
            st = mygpt_fail(err, MYGPT_EFORMAT, "the GPT-2 pattern skipped text at byte %zu", at);
            break;
        }
        st = bpe_piece(t, s + ov[0], ov[1] - ov[0], out, err);
        at = ov[1];
    }
    pcre2_match_data_free(md);
    return st;
}

mygpt_status mygpt_encode(const mygpt_tokenizer *tok, const char *text, size_t len, int64_t **ids,
                          size_t *n, mygpt_error *err)
{
    *ids = NULL;
    *n = 0;
    const unsigned char *s = (const unsigned char *)text, *end = s + len;
    for (const unsigned char *p = s; p < end;) { /* the text must be valid UTF-8 */
        uint32_t cp;
        int l = utf8_decode(p, end, &cp);
        if (!l)
            return mygpt_fail(err, MYGPT_EFORMAT, "the text is not valid UTF-8 (byte offset %zu)",
                              (size_t)(p - s));
        p += l;
    }
    id_vec out = {0};
    mygpt_status st = MYGPT_OK;
    const size_t sl = strlen(MYGPT_ENDOFTEXT);
    const unsigned char *seg = s;
    while (st == MYGPT_OK) {
        const unsigned char *sp = NULL;
        for (const unsigned char *q = seg; q + sl <= end; q++)
            if (*q == '<' && memcmp(q, MYGPT_ENDOFTEXT, sl) == 0) {
                sp = q;
                break;
            }
        st = encode_segment(tok, seg, (size_t)((sp ? sp : end) - seg), &out, err);
        if (!sp || st != MYGPT_OK)
            break;
        if (!push_id(&out, MYGPT_ENDOFTEXT_ID))
            st = mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory");
        seg = sp + sl;
    }
    if (st != MYGPT_OK) {
        free(out.v);
        return st;
    }
    if (!out.v) /* empty text: a valid, empty allocation */
        out.v = malloc(sizeof *out.v);
    *ids = out.v;
    *n = out.n;
    return MYGPT_OK;
}

mygpt_status mygpt_decode(const mygpt_tokenizer *tok, const int64_t *ids, size_t n, char **text,
                          size_t *len, mygpt_error *err)
{
    *text = NULL;
    *len = 0;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || (uint64_t)ids[i] >= tok->vocab_size)
            return mygpt_fail(err, MYGPT_ERANGE, "token id %lld is outside [0, %zu)",
                              (long long)ids[i], tok->vocab_size);
        total += tok->len[ids[i]];
    }
    char *out = malloc(total + 1);
    if (!out)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(out + k, tok->arena + tok->off[ids[i]], tok->len[ids[i]]);
        k += tok->len[ids[i]];
    }
    out[k] = '\0';
    *text = out;
    *len = k;
    return MYGPT_OK;
}
