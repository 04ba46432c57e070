/*
 * layout.c - a model's tensors as a checkpoint file lays them out (see io/layout.h):
 * their names, shapes, fused parts and transposes, and the moves of their bytes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mygpt/gpt.h"
#include "mygpt/quantize.h"
#include "mygpt/tensor.h"
#include "io/layout.h"
#include "model/params.h"
#include "model/quantized.h"

int mygpt_file_tensors(const mygpt_config *cfg, file_tensor *out, file_kind kind)
{
    const int adapters = kind == FILE_ADAPTERS;
    const int hf = cfg->arch == MYGPT_ARCH_GPT2, n = mygpt_state_dict_len(cfg);
    int count = 0;
    for (int j = 0; j < n; j++) {
        mygpt_state_entry e;
        mygpt_param_info info;
        mygpt_state_dict_entry(cfg, NULL, j, &e);
        mygpt_param_info_get(cfg, e.tensor, &info);
        if (adapters != (info.role == MYGPT_ROLE_LORA_A || info.role == MYGPT_ROLE_LORA_B))
            continue;
        char name[112];
        if (!hf || adapters)
            snprintf(name, sizeof name, "%s", e.name);
        else if (e.layer >= 0)
            snprintf(name, sizeof name, "h.%d.%s", e.layer, info.hf_name);
        else
            snprintf(name, sizeof name, "%s", info.hf_name);
        file_tensor *t = NULL;
        for (int k = count - 1; k >= 0 && !t; k--) // a name met before: fused (c_attn = q | k | v)
            if (strcmp(out[k].name, name) == 0)
                t = &out[k];
        if (t && t->parts < 3) {
            t->rows[t->parts++] = e.tensor;
            t->shape[t->ndim - 1] += e.shape[0];
            continue;
        }
        t = &out[count++];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "%s", name);
        t->rows[0] = e.tensor;
        t->parts = 1;
        t->layer = e.layer;
        t->ndim = e.ndim;
        t->transposed = hf && info.role == MYGPT_ROLE_LINEAR && e.layer >= 0; // Conv1D; a head is nn.Linear
        t->shape[0] = t->transposed ? e.shape[1] : e.shape[0];
        t->shape[1] = t->transposed ? e.shape[0] : e.shape[1];
    }
    return count;
}

tensor_bytes mygpt_float_bytes(const mygpt_params *w)
{
    tensor_bytes tb = {.es = sizeof(float)};
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        tb.base[i] = (char *)mygpt_param_tensor(w, i);
    return tb;
}

tensor_bytes mygpt_quantized_bytes(const mygpt_quantized *qz)
{
    tensor_bytes tb = {.es = mygpt_weights_value_bytes(qz->format)};
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        tb.base[i] = qz->q[i];
    return tb;
}

/* Part k of file tensor t: its data and shape (rows, cols). */
static char *part_data(const mygpt_config *cfg, const tensor_bytes *tb, const file_tensor *t, int k, size_t *rows,
                       size_t *cols)
{
    mygpt_param_info info;
    mygpt_param_info_get(cfg, t->rows[k], &info);
    *rows = (size_t)info.shape[0];
    *cols = (size_t)info.shape[1];
    return tb->base[t->rows[k]] + (t->layer >= 0 ? (size_t)t->layer * *rows * *cols * tb->es : 0);
}

/* The transposing copy of mygpt_move_tensor for elements of one type */
#define TRANSPOSE_COPY(T)                                                                          \
    do {                                                                                           \
        T *f = (T *)file, *q = (T *)p;                                                             \
        for (size_t o0 = 0; o0 < rows; o0 += TILE)                                                 \
            for (size_t i0 = 0; i0 < cols; i0 += TILE)                                             \
                for (size_t o = o0; o < rows && o < o0 + TILE; o++)                                \
                    for (size_t i = i0; i < cols && i < i0 + TILE; i++) {                          \
                        if (to_file)                                                               \
                            f[i * width + col0 + o] = q[o * cols + i];                             \
                        else                                                                       \
                            q[o * cols + i] = f[i * width + col0 + o];                             \
                    }                                                                              \
    } while (0)

void mygpt_move_tensor(const mygpt_config *cfg, const tensor_bytes *tb, const file_tensor *t, void *file,
                       move_dir dir)
{
    const int to_file = dir == TO_FILE;
    enum { TILE = 32 };
    const size_t es = tb->es;
    size_t col0 = 0;
    const size_t width = t->ndim == 2 ? (size_t)t->shape[1] : (size_t)t->shape[0];
    for (int k = 0; k < t->parts; k++) {
        size_t rows, cols;
        char *p = part_data(cfg, tb, t, k, &rows, &cols);
        if (!t->transposed && t->parts == 1) { // as it is
            if (to_file)
                memcpy(file, p, rows * cols * es);
            else
                memcpy(p, file, rows * cols * es);
        } else if (!t->transposed) { // fused biases: rows elements from col0
            if (to_file)
                memcpy((char *)file + col0 * es, p, rows * es);
            else
                memcpy(p, (char *)file + col0 * es, rows * es);
        } else if (es == 4) { // weight (rows = out, cols = in) at file[i][col0 + o], in tiles that stay in cache
            TRANSPOSE_COPY(uint32_t);
        } else if (es == 2) {
            TRANSPOSE_COPY(uint16_t);
        } else {
            TRANSPOSE_COPY(uint8_t);
        }
        col0 += rows;
    }
}

size_t mygpt_scales_len(const mygpt_config *cfg, const file_tensor *t)
{
    size_t n = 0;
    for (int k = 0; k < t->parts; k++) {
        mygpt_param_info info;
        mygpt_param_info_get(cfg, t->rows[k], &info);
        n += (size_t)info.shape[0] * mygpt_int8_groups((int)info.shape[1]);
    }
    return n;
}

void mygpt_move_scales(const mygpt_config *cfg, const mygpt_quantized *qz, const file_tensor *t, float *file,
                       move_dir dir)
{
    const int to_file = dir == TO_FILE;
    for (int k = 0; k < t->parts; k++) {
        mygpt_param_info info;
        mygpt_param_info_get(cfg, t->rows[k], &info);
        const size_t n = (size_t)info.shape[0] * mygpt_int8_groups((int)info.shape[1]);
        float *p = qz->scales[t->rows[k]] + (t->layer >= 0 ? (size_t)t->layer * n : 0);
        if (to_file)
            memcpy(file, p, n * sizeof *p);
        else
            memcpy(p, file, n * sizeof *p);
        file += n;
    }
}

bool mygpt_is_quantized(const mygpt_config *cfg, const file_tensor *t, mygpt_weights w)
{
    return w != MYGPT_WEIGHTS_FP32 && mygpt_weights_quantizes(cfg, t->rows[0]);
}

int mygpt_nonfinite_tensor(const mygpt_config *cfg, const tensor_bytes *floats, const file_tensor *ts, int nt,
                           mygpt_weights wf, double *value)
{
    for (int i = 0; i < nt; i++)
        for (int k = 0; k < ts[i].parts && !mygpt_is_quantized(cfg, &ts[i], wf); k++) {
            size_t rows, cols;
            const float *v = (const float *)part_data(cfg, floats, &ts[i], k, &rows, &cols);
            const size_t at = mygpt_first_nonfinite(v, rows * cols);
            if (at < rows * cols) {
                *value = v[at];
                return i;
            }
        }
    return -1;
}
int mygpt_unquantized_tensor(const mygpt_config *cfg, const mygpt_quantized *qz, const file_tensor *ts, int nt,
                             mygpt_weights wf, int *part, mygpt_error *err)
{
    const tensor_bytes stored = mygpt_quantized_bytes(qz);
    for (int i = 0; i < nt; i++)
        for (int k = 0; k < ts[i].parts && mygpt_is_quantized(cfg, &ts[i], wf); k++) {
            size_t rows, cols;
            const void *q = part_data(cfg, &stored, &ts[i], k, &rows, &cols);
            const float *scales = qz->scales[ts[i].rows[k]]; // (int8's: a row's groups)
            if (scales && ts[i].layer >= 0)
                scales += (size_t)ts[i].layer * rows * mygpt_int8_groups((int)cols);
            if (mygpt_weights_traits_of(wf)->check(q, scales, rows, (int)cols, err) != MYGPT_OK) {
                *part = k;
                return i;
            }
        }
    return -1;
}

bool mygpt_is_buffer(const char *name)
{
    static const char *const kinds[][2] = {
        {"blocks.", ".attn.mask"}, {"trf_blocks.", ".att.mask"}, {"h.", ".attn.bias"}, {"h.", ".attn.masked_bias"}};
    const size_t nl = strlen(name);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const size_t pl = strlen(kinds[i][0]), el = strlen(kinds[i][1]);
        if (nl > pl + el && strncmp(name, kinds[i][0], pl) == 0 && strcmp(name + nl - el, kinds[i][1]) == 0)
            return 1;
    }
    return 0;
}

