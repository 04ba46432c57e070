/* fuzz_print.c - the printers on random shapes and arbitrary float bit patterns (NaN,
 * inf, denormals, -0): torch repr with every suffix kind, numpy str with and without
 * rounding, and the scalar formats. Nothing may crash or read out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 8)
        return 0;
    const int ndim = data[0] % 5;
    int64_t shape[4];
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) {
        shape[d] = data[1 + d] % 9; /* 0..8, so empty tensors appear too */
        numel *= shape[d];
    }
    const mygpt_dtype dt = (mygpt_dtype)(data[5] % 3);
    const int flags = data[6], round_k = data[7] % 12;
    data += 8, size -= 8;
    const size_t elem = dt == MYGPT_BOOL ? 1 : dt == MYGPT_I64 ? 8 : 4;
    unsigned char *buf = calloc((size_t)(numel ? numel : 1), elem);
    memcpy(buf, data, size < (size_t)numel * elem ? size : (size_t)numel * elem);
    mygpt_tview v;
    if (mygpt_tview_make(&v, dt, buf, ndim, shape, NULL) != MYGPT_OK)
        __builtin_trap();
    mygpt_torch_opts o = {0};
    o.grad_fn = (flags & 1) ? "SelectBackward0" : NULL;
    o.requires_grad = (flags >> 1) & 1;
    o.parameter = (flags >> 2) & 1;
    mygpt_strbuf sb = {0};
    mygpt_torch_repr(&sb, &v, &o);
    mygpt_sb_free(&sb);
    mygpt_numpy_str(&sb, &v);
    mygpt_sb_free(&sb);
    if (dt == MYGPT_F32) {
        float *f = (float *)buf;
        for (int64_t i = 0; i < numel; i++)
            f[i] = mygpt_numpy_round_f32(f[i], round_k);
        mygpt_numpy_str(&sb, &v);
        mygpt_sb_free(&sb);
        if (numel > 0) {
            mygpt_np_float32_str(&sb, f[0]);
            mygpt_py_fixed(&sb, f[0], round_k);
            mygpt_py_sci(&sb, f[0], round_k);
            mygpt_sb_free(&sb);
        }
    }
    if (size >= 8) {
        double d;
        memcpy(&d, data, 8);
        mygpt_py_float_repr(&sb, d);
        mygpt_sb_free(&sb);
    }
    free(buf);
    return 0;
}
