/*
 * test_print.c - the printers against PyTorch's and numpy's own strings: the
 * examples of pytorch-parity.md sections 7-8, then every case of
 * tests/golden/print_torch.txt, print_numpy.txt and numfmt.txt.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h" /* mygpt_sb_append */
#include "golden.h"
#include "mygpt/print.h"
#include "mygpt/rng.h"

/* print(t) of a 1-D float32 tensor */
static char *torch1d(const float *v, int64_t n, const char *grad_fn)
{
    mygpt_tview t;
    mygpt_tview_make(&t, MYGPT_F32, v, 1, &n, NULL);
    mygpt_torch_opts o = {0};
    o.grad_fn = grad_fn;
    mygpt_strbuf sb = {0};
    cr_assert_eq(mygpt_torch_repr(&sb, &t, &o), MYGPT_OK);
    return sb.data;
}

#define EXPECT_STR(got, want)                                                                      \
    do {                                                                                           \
        char *g_ = (got);                                                                          \
        cr_expect_str_eq(g_, (want));                                                              \
        free(g_);                                                                                  \
    } while (0)

Test(print_spec, torch_examples_of_section_7)
{
    EXPECT_STR(torch1d((float[]){-0.0f, 1.0f}, 2, NULL), "tensor([-0., 1.])");
    EXPECT_STR(torch1d((float[]){-0.0f, 0.5f}, 2, NULL), "tensor([-0.0000, 0.5000])");
    EXPECT_STR(torch1d((float[]){0.0f, 0.0f}, 2, NULL), "tensor([0., 0.])");
    EXPECT_STR(torch1d((float[]){1e-5f, 1.0f}, 2, NULL), "tensor([1.0000e-05, 1.0000e+00])");
    EXPECT_STR(torch1d((float[]){1.0f, 2.0f, -INFINITY}, 3, NULL), "tensor([1., 2., -inf])");

    int64_t shape[2] = {2, 2};
    int64_t iv[4] = {1, -20, 300, 4};
    mygpt_tview t;
    mygpt_tview_make(&t, MYGPT_I64, iv, 2, shape, NULL);
    mygpt_strbuf sb = {0};
    mygpt_torch_repr(&sb, &t, NULL);
    cr_expect_str_eq(mygpt_sb_str(&sb), "tensor([[  1, -20],\n        [300,   4]])");
    mygpt_sb_free(&sb);

    float s = 8.1701f;
    mygpt_tview_make(&t, MYGPT_F32, &s, 0, NULL, NULL);
    mygpt_torch_opts o = {0};
    o.grad_fn = "SumBackward0";
    mygpt_torch_repr(&sb, &t, &o);
    cr_expect_str_eq(mygpt_sb_str(&sb), "tensor(8.1701, grad_fn=<SumBackward0>)");
    mygpt_sb_free(&sb);

    int64_t n = 2000;
    int64_t *ar = malloc(2000 * sizeof *ar);
    for (int i = 0; i < 2000; i++)
        ar[i] = i;
    mygpt_tview_make(&t, MYGPT_I64, ar, 1, &n, NULL);
    mygpt_torch_repr(&sb, &t, NULL);
    cr_expect_str_eq(mygpt_sb_str(&sb), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
    mygpt_sb_free(&sb);
    free(ar);
}

Test(print_spec, numpy_round_example_of_section_8)
{
    mygpt_rng r = {0};
    mygpt_rng_seed(&r, 0);
    float v[12];
    mygpt_normal_(&r, v, 12, 0, 1, NULL);
    for (int i = 0; i < 12; i++)
        v[i] = mygpt_numpy_round_f32(v[i], 4);
    int64_t n = 12;
    mygpt_tview t;
    mygpt_tview_make(&t, MYGPT_F32, v, 1, &n, NULL);
    mygpt_strbuf sb = {0};
    mygpt_numpy_str(&sb, &t);
    cr_expect_str_eq(mygpt_sb_str(&sb),
                     "[ 1.541  -0.2934 -2.1788  0.5684 -1.0845 -1.3986  0.4033  0.838  -0.7193\n"
                     " -0.4033 -0.5966  0.182 ]");
    mygpt_sb_free(&sb);
}

Test(print_spec, sizes_tuples_and_number_formats)
{
    mygpt_strbuf sb = {0};
    int64_t s[3] = {2, 5, 256};
    mygpt_torch_size(&sb, 3, s);
    cr_expect_str_eq(mygpt_sb_str(&sb), "torch.Size([2, 5, 256])");
    mygpt_sb_free(&sb);
    mygpt_torch_size(&sb, 0, s);
    cr_expect_str_eq(mygpt_sb_str(&sb), "torch.Size([])");
    mygpt_sb_free(&sb);
    mygpt_py_tuple(&sb, 2, s);
    cr_expect_str_eq(mygpt_sb_str(&sb), "(2, 5)");
    mygpt_sb_free(&sb);
    mygpt_py_tuple(&sb, 1, s);
    cr_expect_str_eq(mygpt_sb_str(&sb), "(2,)");
    mygpt_sb_free(&sb);
    mygpt_py_fixed(&sb, 177.22869873046875, 4);
    mygpt_sb_append(&sb, " ");
    mygpt_py_sci(&sb, 1.3063e-07, 2);
    mygpt_sb_append(&sb, " ");
    mygpt_py_fixed(&sb, NAN, 4);
    cr_expect_str_eq(mygpt_sb_str(&sb), "177.2287 1.31e-07 nan");
    mygpt_sb_free(&sb);
    // into a buffer, as the loops print a loss: a NaN of either sign is "nan" (printf: "-nan")
    char buf[64];
    cr_expect_str_eq(mygpt_py_fixed_str(buf, sizeof buf, -(double)NAN, 3), "nan");
    cr_expect_str_eq(mygpt_py_fixed_str(buf, sizeof buf, -INFINITY, 3), "-inf");
    cr_expect_str_eq(mygpt_py_fixed_str(buf, sizeof buf, 14.750289, 6), "14.750289");
}

/* ---- golden printer cases --------------------------------------------------- */

typedef enum { MODE_TORCH, MODE_NUMPY } print_mode;

/* Each line: label, dtype, shape, suffix, round, data, expected (tab separated). */
static void replay_printer(const char *file, print_mode mode)
{
    golden_reader gold = golden_reader_must_open(file);
    char *line;
    int cases = 0, failures = 0;
    const size_t maxv = 1 << 16;
    void *data = malloc(maxv * sizeof(int64_t));
    while ((line = golden_read(&gold))) {
        char *w[7];
        cr_assert_eq(golden_split(line, '\t', w, 7), 7, "%s:%ld: malformed", file, gold.lineno);
        golden_unescape(w[6]);
        mygpt_dtype dt = strcmp(w[1], "f32") == 0 ? MYGPT_F32
                         : strcmp(w[1], "i64") == 0 ? MYGPT_I64 : MYGPT_BOOL;
        int64_t shape[MYGPT_MAX_DIMS];
        int ndim = 0;
        if (strcmp(w[2], "-") != 0) {
            char *p = w[2];
            for (;;) {
                shape[ndim++] = strtoll(p, &p, 10);
                if (*p != ',')
                    break;
                p++;
            }
        }
        size_t n;
        if (dt == MYGPT_F32) {
            n = golden_parse_f32(w[5], data, maxv);
        } else {
            int64_t *iv = data;
            n = golden_parse_i64(w[5], iv, maxv);
            if (dt == MYGPT_BOOL) { /* repack as bytes */
                unsigned char *bv = data;
                for (size_t i = 0; i < n; i++)
                    bv[i] = (unsigned char)(iv[i] != 0);
            }
        }
        mygpt_tview t;
        cr_assert_eq(mygpt_tview_make(&t, dt, data, ndim, shape, NULL), MYGPT_OK);
        cr_assert_eq((int64_t)n, mygpt_tview_numel(&t), "%s:%ld: data count", file, gold.lineno);
        mygpt_strbuf sb = {0};
        if (mode == MODE_TORCH) {
            mygpt_torch_opts o = {0};
            char grad[64];
            if (strncmp(w[3], "grad_fn=<", 9) == 0) {
                snprintf(grad, sizeof grad, "%.*s", (int)strlen(w[3]) - 10, w[3] + 9);
                o.grad_fn = grad;
            } else if (strcmp(w[3], "requires_grad=True") == 0) {
                o.requires_grad = 1;
            }
            cr_assert_eq(mygpt_torch_repr(&sb, &t, &o), MYGPT_OK);
        } else {
            if (strcmp(w[4], "-") != 0 && dt == MYGPT_F32) {
                float *fv = data;
                for (size_t i = 0; i < n; i++)
                    fv[i] = mygpt_numpy_round_f32(fv[i], atoi(w[4]));
            }
            cr_assert_eq(mygpt_numpy_str(&sb, &t), MYGPT_OK);
        }
        if (strcmp(mygpt_sb_str(&sb), w[6]) != 0) {
            failures++;
            cr_log_error("%s:%ld (%s):\n--- python\n%s\n--- mygpt\n%s", file, gold.lineno, w[0], w[6],
                         mygpt_sb_str(&sb));
        }
        mygpt_sb_free(&sb);
        cases++;
    }
    cr_expect_eq(failures, 0, "%s: %d of %d cases print differently", file, failures, cases);
    cr_expect_gt(cases, 50, "%s: read only %d cases", file, cases);
    free(data);
    golden_reader_close(&gold);
}

Test(print_golden, torch_repr_matches_pytorch)
{
    replay_printer("print_torch.txt", MODE_TORCH);
}

Test(print_golden, numpy_str_matches_numpy)
{
    replay_printer("print_numpy.txt", MODE_NUMPY);
}

Test(print_golden, number_formats_match_python)
{
    golden_reader gold = golden_reader_must_open("numfmt.txt");
    char *line;
    int cases = 0, failures = 0;
    while ((line = golden_read(&gold))) {
        char *w[3];
        cr_assert_eq(golden_split(line, '\t', w, 3), 3, "numfmt.txt:%ld malformed", gold.lineno);
        mygpt_strbuf sb = {0};
        if (strcmp(w[0], "repr") == 0) {
            uint64_t b = strtoull(w[1], NULL, 16);
            double d;
            memcpy(&d, &b, sizeof d);
            mygpt_py_float_repr(&sb, d);
        } else if (strcmp(w[0], "f32str") == 0) {
            uint32_t b = (uint32_t)strtoul(w[1], NULL, 16);
            float x;
            memcpy(&x, &b, sizeof x);
            mygpt_np_float32_str(&sb, x);
        } else {
            mygpt_py_int_commas(&sb, strtoll(w[1], NULL, 10));
        }
        if (strcmp(mygpt_sb_str(&sb), w[2]) != 0) {
            failures++;
            cr_log_error("numfmt.txt:%ld %s %s: python '%s', mygpt '%s'", gold.lineno, w[0], w[1], w[2],
                         mygpt_sb_str(&sb));
        }
        mygpt_sb_free(&sb);
        cases++;
    }
    cr_expect_eq(failures, 0, "%d of %d number formats differ", failures, cases);
    cr_expect_gt(cases, 500);
    golden_reader_close(&gold);
}

Test(print_errors, bad_views_are_refused)
{
    mygpt_tview v;
    mygpt_error err = {0};
    const int64_t neg[2] = {2, -1}, huge[3] = {INT64_C(1) << 30, INT64_C(1) << 30, INT64_C(1) << 30};
    float x = 0;
    cr_expect_eq(mygpt_tview_make(&v, MYGPT_F32, &x, 2, neg, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "negative size -1") != NULL, "%s", err.message);
    cr_expect_eq(mygpt_tview_make(&v, MYGPT_F32, &x, 3, huge, &err), MYGPT_EOVERFLOW);
    cr_expect_eq(mygpt_tview_make(&v, MYGPT_F32, &x, 9, neg, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_tview_make(&v, MYGPT_F32, &x, -1, neg, &err), MYGPT_EINVAL);
}

/* fuzz_args found it (`mygpt randn --shape 0,39999999999,9999,99982`, then with the 0
 * last): an empty tensor's other sizes may multiply past int64 (signed overflow,
 * undefined); it prints as PyTorch and numpy print it, wherever the zero is. A view
 * whose element count overflows (made by hand: mygpt_tview_make refuses it) is refused
 * by the printer too, nothing written. */
Test(print_torch, huge_sizes_of_an_empty_tensor_and_an_impossible_shape)
{
    const int64_t first[4] = {0, 39999999999, 9999, 99982}, last[4] = {39999999999, 9999, 99982, 0};
    mygpt_tview t;
    mygpt_strbuf sb = {0};
    cr_assert_eq(mygpt_tview_make(&t, MYGPT_F32, NULL, 4, first, NULL), MYGPT_OK);
    cr_expect_eq(mygpt_tview_numel(&t), 0);
    cr_expect_eq(mygpt_torch_repr(&sb, &t, NULL), MYGPT_OK);
    cr_expect_str_eq(mygpt_sb_str(&sb), "tensor([], size=(0, 39999999999, 9999, 99982))");
    mygpt_sb_free(&sb);
    cr_assert_eq(mygpt_tview_make(&t, MYGPT_F32, NULL, 4, last, NULL), MYGPT_OK);
    cr_expect_eq(mygpt_tview_numel(&t), 0);
    cr_expect_eq(mygpt_torch_repr(&sb, &t, NULL), MYGPT_OK);
    cr_expect_str_eq(mygpt_sb_str(&sb), "tensor([], size=(39999999999, 9999, 99982, 0))");
    mygpt_sb_free(&sb);
    cr_expect_eq(mygpt_numpy_str(&sb, &t), MYGPT_OK); /* numpy prints any empty array as [] */
    cr_expect_str_eq(mygpt_sb_str(&sb), "[]");
    mygpt_sb_free(&sb);
    const int64_t huge[3] = {4000000000, 4000000000, 4000000000};
    cr_expect_eq(mygpt_tview_make(&t, MYGPT_F32, NULL, 3, huge, NULL), MYGPT_EOVERFLOW);
    const float x = 0;
    const mygpt_tview by_hand = {MYGPT_F32, 3, {4000000000, 4000000000, 4000000000}, &x};
    cr_expect_eq(mygpt_torch_repr(&sb, &by_hand, NULL), MYGPT_EINVAL);
    cr_expect_eq(mygpt_numpy_str(&sb, &by_hand), MYGPT_EINVAL);
    cr_expect_eq(sb.len, 0);
    mygpt_sb_free(&sb);
}

/* Whatever bytes a token holds (a split emoji, CJK, control bytes, markup),
 * mygpt_sb_append_shown makes text an XML parser accepts and a terminal shows: valid
 * UTF-8, no control character, < > & only as entities; and valid text passes as it is.
 * 20,000 random byte strings, and cases of each kind. */
static void expect_xml_text(const char *out, size_t n, const char *what)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        const int l = mygpt_utf8_decode(out + i, n - i, &cp);
        cr_assert_gt(l, 0, "%s: invalid UTF-8 at %zu: '%s'", what, i, out);
        cr_assert(cp >= 0x20 && cp != 0x7F && !(cp >= 0x80 && cp < 0xA0), "%s: control U+%04X", what, cp);
        cr_assert(cp != '<' && cp != '>', "%s: a raw < or >", what);
        if (cp == '&')
            cr_assert(strncmp(out + i, "&lt;", 4) == 0 || strncmp(out + i, "&gt;", 4) == 0 ||
                          strncmp(out + i, "&amp;", 5) == 0,
                      "%s: a raw &", what);
        i += (size_t)l;
    }
}

Test(print_text, shown_text_is_valid_xml_text_for_any_bytes)
{
    const char *cases[] = {"Hi \xf0\x9f\x98", "\x80", " \xe6", "\xe6\x97\xa5\xe6\x9c\xac", "\x01\x02\x1b[31m", "<b>&amp;",
                           "\xed\xa0\x80", "\xc0\xaf", "\xef\xbf\xbe", "\xc2\x85"};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mygpt_strbuf sb = {0};
        cr_assert_eq(mygpt_sb_append_shown(&sb, cases[k], strlen(cases[k]), 1), MYGPT_OK);
        expect_xml_text(mygpt_sb_str(&sb), strlen(mygpt_sb_str(&sb)), cases[k]);
        mygpt_sb_free(&sb);
    }
    mygpt_strbuf sb = {0};
    const char *fine = "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 tab\tno";
    mygpt_sb_append_shown(&sb, fine, strlen(fine), 0); // the tab is a control: \x09
    cr_expect_str_eq(mygpt_sb_str(&sb), "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 tab\\x09no");
    mygpt_sb_free(&sb);
    uint64_t state = 25;
    for (int round = 0; round < 20000; round++) {
        char bytes[16];
        const size_t n = 1 + round % 16;
        for (size_t i = 0; i < n; i++) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            bytes[i] = (char)(state >> 56);
        }
        mygpt_strbuf out = {0};
        cr_assert_eq(mygpt_sb_append_shown(&out, bytes, n, 1), MYGPT_OK);
        expect_xml_text(mygpt_sb_str(&out), strlen(mygpt_sb_str(&out)), "random bytes");
        mygpt_sb_free(&out);
    }
}

/* Text decoded as tiktoken's decode returns it (Python's bytes.decode("utf-8",
 * "replace")): each cut or invalid sequence is one U+FFFD, as Python 3.11 gives it for
 * these bytes (cases printed by python3 itself). */
Test(print_text, replaced_text_is_pythons_decode_with_replace)
{
    const char *cases[][2] = {
        {"\xe6\x97", "\xef\xbf\xbd"},
        {"\xe6\x97\xa5\x78\xff", "\xe6\x97\xa5\x78\xef\xbf\xbd"},
        {"\xf0\x9f\x98\x20\x61", "\xef\xbf\xbd\x20\x61"},
        {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},
        {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        {"\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd"},
        {"\x6f\x6b\xe2\x82", "\x6f\x6b\xef\xbf\xbd"},
        {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mygpt_strbuf sb = {0};
        cr_assert_eq(mygpt_sb_append_replaced(&sb, cases[k][0], strlen(cases[k][0])), MYGPT_OK);
        cr_expect_str_eq(mygpt_sb_str(&sb), cases[k][1], "case %zu", k);
        mygpt_sb_free(&sb);
    }
}

/* mygpt_utf8_valid_prefix: where the first byte that starts no whole character is, or
 * the whole length (a cut character at the end, an overlong form, a surrogate, a stray
 * continuation byte, a NUL counted as the character it is) */
Test(print_text, the_valid_prefix_ends_at_the_first_broken_character)
{
    const struct {
        const char *s;
        size_t n, want;
    } cases[] = {{"", 0, 0},
                 {"abc", 3, 3},
                 {"a\0b", 3, 3},
                 {"h\xc3\xa9llo", 6, 6},
                 {"\xf0\x9f\x98\x80!", 5, 5},
                 {"ok \xf0\x9f\x98", 6, 3},
                 {"\xe6\x97\xa5\xe6", 4, 3},
                 {"ab\x80" "cd", 5, 2},
                 {"\xc0\xaf", 2, 0},
                 {"x\xed\xa0\x80", 4, 1},
                 {"\xe6\x97\xa5", 2, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_eq(mygpt_utf8_valid_prefix(cases[i].s, cases[i].n), cases[i].want, "case %zu: %zu, not %zu", i,
                     mygpt_utf8_valid_prefix(cases[i].s, cases[i].n), cases[i].want);
}
