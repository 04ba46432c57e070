/*
 * mygpt/print.h - printing numbers and tensors exactly as Python shows them.
 *
 * Every printer appends to a mygpt_strbuf (a growable, NUL-terminated string)
 * so the same text can go to stdout, a file or a test's string comparison.
 * Specification: docs/pytorch-parity.md sections 7 (torch) and 8 (numpy).
 * All functions are thread-safe (no shared state).
 */
#ifndef MYGPT_PRINT_H
#define MYGPT_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mygpt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* ---- string buffer ---------------------------------------------------------- */

typedef struct mygpt_strbuf {
    char *data;   /* NUL-terminated; NULL until the first append */
    size_t len;
    size_t cap;
    int failed;   /* set once an allocation fails; later appends do nothing */
} mygpt_strbuf;

/* The text so far ("" when empty). */
const char *mygpt_sb_str(const mygpt_strbuf *sb);
void mygpt_sb_free(mygpt_strbuf *sb);

/* ---- tensor views --------------------------------------------------------- */

typedef enum mygpt_dtype { MYGPT_F32 = 0, MYGPT_I64 = 1, MYGPT_BOOL = 2 } mygpt_dtype;

#define MYGPT_MAX_DIMS 8

/* A read-only, contiguous (row-major) view of tensor data owned by someone else.
 * For MYGPT_BOOL the data is one byte per element (0 = False). */
typedef struct mygpt_tview {
    mygpt_dtype dtype;
    int ndim;                       /* 0 .. MYGPT_MAX_DIMS */
    int64_t shape[MYGPT_MAX_DIMS];
    const void *data;
} mygpt_tview;

/* Builds a view from a shape array; fails on negative sizes or ndim out of range. */
mygpt_status mygpt_tview_make(mygpt_tview *v, mygpt_dtype dtype, const void *data, int ndim,
                              const int64_t *shape, mygpt_error *err);
/* Number of elements (product of the shape; 1 for 0-D). */
int64_t mygpt_tview_numel(const mygpt_tview *v);

/* ---- torch ----------------------------------------------------------------- */

/* Options for mygpt_torch_repr; a zeroed struct prints plain `tensor(...)`. */
typedef struct mygpt_torch_opts {
    const char *grad_fn;  /* e.g. "SelectBackward0" -> ", grad_fn=<SelectBackward0>" */
    int requires_grad;    /* leaf that requires grad -> ", requires_grad=True"        */
    int parameter;        /* nn.Parameter: "Parameter containing:\n" prefix           */
    int sci_off;          /* torch.set_printoptions(sci_mode=False): fixed notation, in
                             the width the automatic choice gave (as PyTorch pads)   */
} mygpt_torch_opts;

/* Appends what Python's print(t) shows for a torch tensor (default print
 * options: precision 4, threshold 1000, edgeitems 3, linewidth 80), with no
 * trailing newline. opts may be NULL. */
mygpt_status mygpt_torch_repr(mygpt_strbuf *sb, const mygpt_tview *t, const mygpt_torch_opts *opts);

/* Appends `torch.Size([2, 3])`. */
mygpt_status mygpt_torch_size(mygpt_strbuf *sb, int ndim, const int64_t *shape);

/* Appends a Python tuple of ints: `(2, 12)`, `(5,)`, `()`. */
mygpt_status mygpt_py_tuple(mygpt_strbuf *sb, int ndim, const int64_t *shape);

/* ---- numpy ----------------------------------------------------------------- */

/* Appends what print(arr) shows for a numpy array (numpy 1.24 defaults:
 * precision 8, maxprec, linewidth 75, threshold 1000, edgeitems 3). */
mygpt_status mygpt_numpy_str(mygpt_strbuf *sb, const mygpt_tview *t);

/* numpy's float32 .round(decimals): f32(rint(f32(x * 10^d)) / 10^d) in float32. */
float mygpt_numpy_round_f32(float x, int decimals);

/* ---- text ------------------------------------------------------------------ */

/* One UTF-8 character at text (n bytes available): its length (1-4) and code point, or
 * 0 when the bytes there are not a whole, valid character (overlong, surrogate, cut). */
int mygpt_utf8_decode(const char *text, size_t n, uint32_t *cp);

/* How many of text's first n bytes are whole, valid UTF-8 characters from its start: n
 * when all are, else the offset of the first byte that starts none. */
size_t mygpt_utf8_valid_prefix(const char *text, size_t n);

/* Appends n bytes of text so a terminal, and with xml an XML parser, take it as text:
 * every valid printable character as it is (with xml: < > & as entities); a control
 * character or a byte of no whole character (a token that splits one) as \xNN. */
mygpt_status mygpt_sb_append_shown(mygpt_strbuf *sb, const char *s, size_t n, int xml);

/* Appends n bytes as Python's bytes.decode("utf-8", errors="replace") reads them (what
 * tiktoken's decode returns): each cut or invalid sequence becomes one U+FFFD. */
mygpt_status mygpt_sb_append_replaced(mygpt_strbuf *sb, const char *s, size_t n);

/* ---- Python number formats ------------------------------------------------ */

/* Python's repr(float) for a double: shortest round-trip digits ("1.0",
 * "0.12345600128173828", "1e-05", "-inf", "nan"). */
mygpt_status mygpt_py_float_repr(mygpt_strbuf *sb, double x);

/* str(np.float32(x)): shortest float32 digits ("3.0", "0.3798", "1e-05"). */
mygpt_status mygpt_np_float32_str(mygpt_strbuf *sb, float x);

/* f"{n:,}": an integer with thousands separators ("124,412,160"). */
mygpt_status mygpt_py_int_commas(mygpt_strbuf *sb, long long n);

/* f"{x:.Nf}" / f"{x:.Ne}" for a double, with Python's nan/inf spelling. */
mygpt_status mygpt_py_fixed(mygpt_strbuf *sb, double x, int decimals);
/* The same into buf (n bytes; 64 hold a float32 loss at 6 decimals), returned: how the
 * loops and the tool print a loss ("nan" whatever its sign bit, where printf says "-nan"). */
const char *mygpt_py_fixed_str(char *buf, size_t n, double x, int decimals);
mygpt_status mygpt_py_sci(mygpt_strbuf *sb, double x, int decimals);


#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
