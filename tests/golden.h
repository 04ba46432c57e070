/*
 * golden.h - reading the committed golden files in tests/golden/ (made from real PyTorch,
 * tiktoken or llama2.c by the tools/ scripts tests/golden/README.md names). GOLDEN_DIR is set by meson.
 */
#ifndef MYGPT_TEST_GOLDEN_H
#define MYGPT_TEST_GOLDEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* 1 in a build with -fsanitize=address (the test script's stage 2), where the longest tests
 * run the same code on fewer or smaller cases; the plain build runs them all. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_SANITIZED 1
#else
#define TEST_SANITIZED 0
#endif

/* The folder of the golden files: tests/golden in the source tree, or the environment's
 * MYGPT_GOLDEN_DIR when set (a cross-check's freshly made goldens, never the test suite's). */
const char *golden_dir(void);

/* 1 when the goldens are the committed ones (MYGPT_GOLDEN_DIR unset): a test may then hold a
 * golden to its number of cases; a cross-check's own files hold as many as it wrote. */
int golden_is_committed(void);

/* Opens golden_dir()/name for reading; NULL if missing. */
FILE *golden_open(const char *name);

/* Reads the next non-comment line (without its newline) into *line (malloc'd,
 * reused across calls). Returns its length, or -1 at end of file. */
long golden_next_line(FILE *f, char **line, size_t *cap, long *lineno);

/* A golden file read a line at a time: golden_reader_must_open (or golden_reader_open),
 * golden_read until it gives NULL (the line's number in lineno), golden_reader_close. */
typedef struct golden_reader {
    FILE *f;
    char *line;
    size_t cap;
    long lineno;
} golden_reader;

/* Opens golden_dir()/name; 0, or -1 when it is missing. */
int golden_reader_open(golden_reader *r, const char *name);

/* golden_dir()/name opened as a golden_reader; the test fails, naming the file, when it is
 * missing (tests/golden/README.md says which tools/ script makes each). */
golden_reader golden_reader_must_open(const char *name);

/* The next non-comment line (without its newline; reused by the next call), NULL at the
 * end. */
char *golden_read(golden_reader *r);

/* Closes the file and frees the line. */
void golden_reader_close(golden_reader *r);

/* Splits s in place at `sep`; returns the number of fields (at most max). */
int golden_split(char *s, char sep, char **fields, int max);

/* Undoes the generator's escaping (\\n, \\t, \\\\) in place. */
void golden_unescape(char *s);

/* The bytes of a hex string ("-" is none) into out (cap bytes), then a NUL; their count.
 * The test fails on a character that is not hex, or bytes that do not fit. */
size_t golden_unhex_bytes(const char *h, char *out, size_t cap);

/* Parses whitespace-separated tokens: hex float32 bits, or decimal int64.
 * Returns the count (at most max); "-" gives 0. */
size_t golden_parse_f32(const char *s, float *out, size_t max);
size_t golden_parse_i64(const char *s, int64_t *out, size_t max);

/* The float32 of one hex word of bits ("3f800000" is 1.0f); the test fails on anything
 * else */
float golden_unhex32(const char *h);

/* 1 when a and b are the same float32, bit for bit (-0 is not 0, a NaN is itself) */
static inline int golden_same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* golden_same_bits(got, want), where want is a golden made on x86-64: there a NaN made of
 * numbers (0 / 0, inf * 0) is the CPU's default NaN, 0xffc00000; on ARM it is 0x7fc00000.
 * Elsewhere than x86-64 the one stands for the other (docs/building.md, aarch64). */
#define GOLDEN_X86_DEFAULT_NAN 0xffc00000u
static inline int golden_same_bits_as_x86(float got, float want)
{
#if !defined(__x86_64__)
    const uint32_t arm_nan = 0x7fc00000u;
    uint32_t g, w;
    memcpy(&g, &got, sizeof g);
    memcpy(&w, &want, sizeof w);
    if (w == GOLDEN_X86_DEFAULT_NAN && g == arm_nan)
        return 1;
#endif
    return golden_same_bits(got, want);
}

/* sum over i of (i + 1) * bits(v[i]) mod 2^64, as tools/reference_gpt.checksum: any
 * changed element changes it. */
uint64_t golden_checksum(const float *v, size_t n);


/* The goldens name a parameter tensor by its field in the parameter table ("wte" ..
 * "fc2b"), and ln_f's gamma and beta together as "lnf" (2C floats): where that tensor
 * lies in a block of the table's layout. Returns 0 for a name the table does not have. */
struct mygpt_config;
int golden_param_span(const struct mygpt_config *cfg, const char *name, size_t *offset, size_t *numel);

/* A sampled gradient of the training goldens, "NAME NUMEL MAXABS INDEX:BITS..." with NAME a
 * tensor of the parameter table (golden_param_span), against grads (laid out as cfg's
 * parameters): the worst |difference| / max(1, |MAXABS|) over the listed entries. The tensor's
 * name goes to name and its size to *numel; the test fails on a line that does not parse,
 * names no tensor of that size, or lists no entry. */
double golden_span_worst(const struct mygpt_config *cfg, const float *grads, const char *line, char name[16],
                         size_t *numel);

/* Writes the start of a safetensors file the test builds itself: the header's length (8
 * bytes, little-endian), then its len bytes; the test fails if the writes do. */
void golden_write_safetensors_header(FILE *f, const char *header, size_t len);

/* The state_dict entry of g named name ("trf_blocks.0.att.W_query.weight"), or -1. */
struct mygpt_gpt;
int golden_entry_named(const struct mygpt_gpt *g, const char *name);

/* A sampled tensor of the fine-tuning goldens, "NAME NUMEL MAXABS INDEX:BITS...", against
 * block (g's parameters or gradients, laid out alike): the worst |difference| /
 * max(1, |MAXABS|) over the listed entries. -1, with why, for a line that does not parse,
 * names no tensor of g or another size, or lists no entry. */
double golden_sampled_worst(const struct mygpt_gpt *g, const float *block, const char *line, char *why,
                            size_t why_len);
#endif
