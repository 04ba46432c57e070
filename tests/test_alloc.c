/*
 * test_alloc.c - what the library does when an allocation fails. This suite is linked
 * with -Wl,--wrap=malloc,--wrap=posix_memalign: every such call inside the test and the
 * static libmygpt goes to the wrappers below, which fail the next call once a test arms
 * them (calloc and realloc are not wrapped).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "mygpt/data.h"
#include "mygpt/gpt.h"
#include "mygpt/layers.h"
#include "mygpt/rng.h"

void *__real_malloc(size_t size);
int __real_posix_memalign(void **out, size_t alignment, size_t size);
static int fail_next; /* allocations to let through before one fails; -1 = never fail */
static int fail_more; /* further calls to fail after that one */

/* Whether this allocation is to fail (and counts it) */
static int arm_says_fail(void)
{
    if (fail_next == 0) {
        if (fail_more > 0)
            fail_more--;
        else
            fail_next = -1;
        return 1;
    }
    if (fail_next > 0)
        fail_next--;
    return 0;
}

void *__wrap_malloc(size_t size)
{
    return arm_says_fail() ? NULL : __real_malloc(size);
}

int __wrap_posix_memalign(void **out, size_t alignment, size_t size)
{
    return arm_says_fail() ? ENOMEM : __real_posix_memalign(out, alignment, size);
}

static void never_fail(void)
{
    fail_next = -1;
    fail_more = 0;
}

TestSuite(alloc, .init = never_fail);

/* A block starts on a cache line, and on a 2 MB boundary from its huge_from on, whether or
 * not its pages are faulted in at once; no bytes, too many, or no memory is NULL. */
Test(alloc, an_aligned_block_starts_where_it_says)
{
    const size_t huge = (size_t)2 << 20;
    const struct {
        size_t bytes, huge_from, align;
        int fault_in;
    } cases[] = {{100, huge, 64, 0},         {100, huge, 64, 1},         {huge - 4, huge, 64, 1},
                 {huge, huge, huge, 0},      {3 * huge + 4, huge, huge, 1}, {3 * huge + 4, 32 * huge, 64, 1},
                 {32 * huge, 32 * huge, huge, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *p = mygpt_aligned_block(cases[i].bytes, cases[i].huge_from, cases[i].fault_in);
        cr_assert_not_null(p, "case %zu", i);
        cr_expect_eq((uintptr_t)p % cases[i].align, 0, "case %zu: %p is not on a %zu-byte boundary", i, (void *)p,
                     cases[i].align);
        p[0] = 1, p[cases[i].bytes - 1] = 2; // all of it is ours
        free(p);
    }
    float *f = mygpt_float_block(16);
    cr_assert_not_null(f);
    cr_expect_eq((uintptr_t)f % 64, 0);
    free(f);
    cr_expect_null(mygpt_aligned_block(0, huge, 1));
    cr_expect_null(mygpt_float_block(0));
    cr_expect_null(mygpt_float_block(SIZE_MAX / 2));
    fail_next = 0;
    cr_expect_null(mygpt_aligned_block(4096, huge, 1));
}

/* The fast matmul whose panel buffer cannot be allocated says so, instead of falling back
 * to the naive kernel (other bits). */
Test(alloc, fast_matmul_reports_out_of_memory_instead_of_changing_path)
{
    const int M = 64, K = 96, N = 80; /* M K N > 65536: the heap path */
    float *a = calloc((size_t)M * K, sizeof *a), *w = calloc((size_t)N * K, sizeof *w);
    float *o = calloc((size_t)M * N, sizeof *o);
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < N * K; i++)
        w[i] = (float)(i % 5) * 0.25f;
    memset(o, 0x7f, (size_t)M * N * sizeof *o);
    mygpt_error err = {0};
    fail_next = 0;
    cr_assert_eq(mygpt_matmul(o, a, w, NULL, (size_t)M, K, N, &err), MYGPT_ENOMEM);
    cr_expect(strstr(err.message, "out of memory") != NULL, "message: %s", err.message);
    for (int i = 0; i < M * N; i++) /* out untouched */
        cr_assert_eq(((unsigned char *)o)[4 * i], 0x7f);
    cr_assert_eq(mygpt_matmul(o, a, w, NULL, (size_t)M, K, N, &err), MYGPT_OK);
    free(a); free(w); free(o);
}

/* Every malloc a forward pass makes, failed in turn: each failure is MYGPT_ENOMEM with
 * a message, never a crash, and the model works again afterwards. */
Test(alloc, every_failed_allocation_of_a_forward_pass_is_an_error)
{
    mygpt_config cfg = {.vocab_size = 50, .embed_dim = 64, .num_heads = 4, .num_layers = 2,
                        .max_seq_len = 32};
    int64_t ids[2 * 32];
    for (int i = 0; i < 64; i++)
        ids[i] = i % 50;
    int failures = 0;
    for (int nth = 0; nth < 64; nth++) {
        mygpt_gpt *g = NULL;
        mygpt_error err = {0};
        cr_assert_eq(mygpt_gpt_create(&g, &cfg, 0, &err), MYGPT_OK, "%s", err.message);
        fail_next = nth; /* let nth calls through, fail the next */
        const mygpt_status st = mygpt_gpt_forward(g, ids, 2, 32, &err);
        const int injected = fail_next == -1;
        fail_next = -1;
        if (!injected) { /* the pass made at most nth allocations: every one was failed once */
            cr_assert_eq(st, MYGPT_OK, "%s", err.message);
            mygpt_gpt_free(g);
            break;
        }
        cr_assert_eq(st, MYGPT_ENOMEM, "allocation %d: status %d (%s)", nth, st, err.message);
        cr_assert(err.message[0] != '\0');
        cr_assert_eq(mygpt_gpt_forward(g, ids, 2, 32, &err), MYGPT_OK, "%s", err.message);
        failures++;
        mygpt_gpt_free(g);
    }
    cr_expect_geq(failures, 3, "only %d allocations were failed", failures);
}

/* The attention backward's scratch (V transposed, blocks of rows of dS) only lets the
 * sums run side by side and in register tiles: without it the plain loops run, and
 * every gradient has the same bits, with and without dropout, for head sizes that are
 * and are not whole tiles of 16. */
Test(alloc, attention_backward_without_scratch_gives_the_same_bits)
{
    const int B = 2, T = 70; /* T past two blocks of 32 queries */
    const int shapes[2][2] = {{48, 3}, {60, 3}}; /* C, NH: head sizes 16 and 20 */
    for (int shape = 0; shape < 2; shape++)
        for (int dropout = 0; dropout < 2; dropout++) {
            const int C = shapes[shape][0], NH = shapes[shape][1];
            const size_t n = (size_t)B * T * C, na = (size_t)B * NH * T * T;
            float *q = malloc(n * sizeof *q), *k = malloc(n * sizeof *k), *v = malloc(n * sizeof *v);
            float *dout = malloc(n * sizeof *dout), *out = malloc(n * sizeof *out), *att = malloc(na * sizeof *att);
            uint8_t *keep = malloc(na);
            float *g[2][3];
            mygpt_rng r = {0};
            mygpt_rng_seed(&r, 5);
            mygpt_normal_(&r, q, n, 0, 1, NULL);
            mygpt_normal_(&r, k, n, 0, 1, NULL);
            mygpt_normal_(&r, v, n, 0, 1, NULL);
            mygpt_normal_(&r, dout, n, 0, 1, NULL);
            cr_assert_eq(mygpt_dropout_mask(&r, keep, na, 0.25, NULL), MYGPT_OK);
            const mygpt_qkv in = {q, k, v};
            const mygpt_attention_shape dims = {B, T, C, NH};
            cr_assert_eq(mygpt_attention_forward(out, att, in, NULL, 0, dims, MYGPT_IMPL_REFERENCE, NULL), MYGPT_OK);
            for (int mode = 0; mode < 2; mode++) { /* scratch; no scratch */
                for (int j = 0; j < 3; j++)
                    g[mode][j] = calloc(n, sizeof(float));
                fail_next = mode ? 0 : -1;
                if (dropout)
                    mygpt_attention_backward_dropout(g[mode][0], g[mode][1], g[mode][2], dout, att, in,
                                                     (mygpt_attention_dropout){keep, 0.25}, dims);
                else
                    mygpt_attention_backward(g[mode][0], g[mode][1], g[mode][2], dout, att, in, dims);
                never_fail();
            }
            for (int j = 0; j < 3; j++) {
                cr_expect(memcmp(g[0][j], g[1][j], n * sizeof(float)) == 0, "C=%d dropout=%d: gradient %d differs",
                          C, dropout, j);
                int nonzero = 0;
                for (size_t i = 0; i < n; i++)
                    nonzero += g[0][j][i] != 0.0f;
                cr_expect_gt(nonzero, (int)(n / 2), "C=%d dropout=%d: gradient %d is mostly zeros", C, dropout, j);
            }
            for (int mode = 0; mode < 2; mode++)
                for (int j = 0; j < 3; j++)
                    free(g[mode][j]);
            free(q); free(k); free(v); free(dout); free(out); free(att); free(keep);
        }
}

/* A batch of two rows collated from the instruction data in src (x, y: 6 ids each) */
typedef mygpt_status (*collate_fn)(const void *src, int64_t *x, int64_t *y, size_t *T, mygpt_error *err);

static mygpt_status collate_rows(const void *ds, int64_t *x, int64_t *y, size_t *T, mygpt_error *err)
{
    const int64_t rows[2] = {0, 1};
    return mygpt_instruct_batch(ds, rows, 2, &(mygpt_instruct_collation){0, 1}, x, y, T, err);
}

static mygpt_status collate_first_batch(const void *dl, int64_t *x, int64_t *y, size_t *T, mygpt_error *err)
{
    return mygpt_instruct_loader_batch(dl, 0, x, y, T, err);
}

/* Fails the 0th, 1st, ... malloc of collate(src) in turn until a call goes through: every
 * failed call is MYGPT_ENOMEM, the one that goes through pads to T = 3. Returns how many
 * allocations were failed. */
static int collate_failures(collate_fn collate, const void *src)
{
    int64_t x[6], y[6];
    int failures = 0;
    for (int nth = 0; nth < 16; nth++) {
        mygpt_error err = {0};
        size_t T = 0;
        fail_next = nth;
        const mygpt_status st = collate(src, x, y, &T, &err);
        const int injected = fail_next == -1;
        fail_next = -1;
        if (!injected) {
            cr_assert_eq(st, MYGPT_OK, "%s", err.message);
            cr_expect_eq(T, 3);
            break;
        }
        cr_assert_eq(st, MYGPT_ENOMEM, "allocation %d: status %d (%s)", nth, st, err.message);
        failures++;
    }
    return failures;
}

/* Every malloc of reading instruction data and of collating a batch of it (alone and
 * through the DataLoader), failed in turn: each is MYGPT_ENOMEM with a message, nothing half-made is left (the sanitizer
 * build checks for leaks), and the call works again afterwards. */
Test(alloc, every_failed_allocation_of_the_instruction_data_is_an_error)
{
    const char *json = "[{\"instruction\": \"a\", \"input\": \"b\", \"output\": \"c\"}, "
                       "{\"instruction\": \"d\", \"input\": \"\", \"output\": \"e\"}]";
    int failures = 0;
    for (int nth = 0; nth < 64; nth++) {
        mygpt_instruct_data d;
        mygpt_error err = {0};
        fail_next = nth;
        const mygpt_status st = mygpt_instruct_data_parse(&d, "x.json", json, strlen(json), &err);
        const int injected = fail_next == -1;
        fail_next = -1;
        if (!injected) {
            cr_assert_eq(st, MYGPT_OK, "%s", err.message);
            cr_expect_eq(d.n, 2);
            mygpt_instruct_data_free(&d);
            break;
        }
        cr_assert_eq(st, MYGPT_ENOMEM, "allocation %d: status %d (%s)", nth, st, err.message);
        cr_assert(err.message[0] != '\0');
        cr_expect(d.n == 0 && d.entry == NULL);
        failures++;
    }
    cr_expect_geq(failures, 3, "only %d allocations were failed", failures);

    // a dataset of two entries made by hand (no tokenizer here): 3 and 1 tokens
    size_t start[3] = {0, 3, 4}, prompt_len[2] = {2, 1};
    int64_t ids[4] = {10, 11, 12, 13};
    const mygpt_instruct_dataset ds = {.n = 2, .start = start, .prompt_len = prompt_len, .ids = ids};
    cr_expect_geq(collate_failures(collate_rows, &ds), 1);
    // the DataLoader's batch over the same dataset
    mygpt_instruct_loader dl;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_instruct_loader_init(&dl, &ds, 2, 0, 0, 1, &err), MYGPT_OK, "%s", err.message);
    cr_expect_geq(collate_failures(collate_first_batch, &dl), 2);
    mygpt_instruct_loader_free(&dl);
}
