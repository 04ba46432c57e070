/*
 * checkpoint.c - safetensors files for the GPT (see mygpt/checkpoint.h): a writer (whole
 * or not at all, the signals held: io/whole.c), and a reader that
 * parses the header with the library's JSON reader (io/json.h), checks every size and
 * offset before it touches the data, and reads the data with pread (never mapped).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "mygpt/lora.h"
#include "mygpt/quantize.h"
#include "mygpt/tensor.h"
#include "base/base.h"
#include "base/text.h"
#include "io/json.h"
#include "io/whole.h"
#include "model/lora.h"
#include "model/params.h"
#include "model/quantized.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian: this reader and writer assume a little-endian host"
#endif

#define MAX_HEADER (100u << 20) /* safetensors' own limit on the JSON header: 100 MB */
#define CONFIG_JSON_MAX (1u << 20) /* Hugging Face's config.json: a few hundred bytes */

/* ---- the files' tensors ------------------------------------------------------------ */

/* One tensor of a file: the table's rows it holds (several when Hugging Face fuses them:
 * c_attn = W_q | W_k | W_v), of one layer (-1: the whole model), stored transposed
 * when it is a Conv1D weight (in, out). */
typedef struct file_tensor {
    char name[112];
    int ndim;
    int64_t shape[2];
    int parts, rows[3], layer, transposed;
} file_tensor;

/* The tensors of cfg's model in its file layout (Hugging Face's for gpt2, the
 * state_dict's otherwise), in state_dict order, into out (room for
 * mygpt_state_dict_len(cfg) of them): returns their count. adapters: the LoRA adapters
 * only, by the book's state_dict names whatever the layout; else everything else. */
static int file_tensors(const mygpt_config *cfg, file_tensor *out, int adapters)
{
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

/* Where the table's tensors are, as bytes of es each: the parameters' floats (es 4), or
 * a quantized model's stored values (es 1 or 2) */
typedef struct tensor_bytes {
    char *base[MYGPT_NUM_PARAM_TENSORS];
    size_t es;
} tensor_bytes;

static tensor_bytes float_bytes(const mygpt_params *w)
{
    tensor_bytes tb = {.es = sizeof(float)};
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        tb.base[i] = (char *)mygpt_param_tensor(w, i);
    return tb;
}

static tensor_bytes quantized_bytes(const mygpt_quantized *qz)
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

/* The transposing copy of move_tensor for elements of one type */
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

/* Copies between the file's bytes of tensor t and the tensors tb points at: to_file 1
 * writes file (numel elements) from them, 0 fills them from file. Conv1D's (in, out) is
 * the transpose of nn.Linear's (out, in); fused parts sit side by side along out. */
static void move_tensor(const mygpt_config *cfg, const tensor_bytes *tb, const file_tensor *t, void *file,
                        int to_file)
{
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

/* An int8 file tensor's scales: its parts' (rows, groups) one after another (fused
 * parts along rows, whatever the layout of the values), as a float32 tensor named
 * "<name>.scales". to_file as move_tensor. */
static size_t scales_len(const mygpt_config *cfg, const file_tensor *t)
{
    size_t n = 0;
    for (int k = 0; k < t->parts; k++) {
        mygpt_param_info info;
        mygpt_param_info_get(cfg, t->rows[k], &info);
        n += (size_t)info.shape[0] * mygpt_int8_groups((int)info.shape[1]);
    }
    return n;
}

static void move_scales(const mygpt_config *cfg, const mygpt_quantized *qz, const file_tensor *t, float *file,
                        int to_file)
{
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

/* Whether file tensor t is stored quantized in a model of format w */
static int is_quantized(const mygpt_config *cfg, const file_tensor *t, mygpt_weights w)
{
    return w != MYGPT_WEIGHTS_FP32 && mygpt_weights_quantizes(cfg, t->rows[0]);
}

/* The first of the nt file tensors ts stored as float32 in a model of format wf whose
 * values (at floats) hold a NaN or an infinity: its index, *value the first such value;
 * or -1 when every one is finite. */
static int nonfinite_tensor(const mygpt_config *cfg, const tensor_bytes *floats, const file_tensor *ts, int nt,
                            mygpt_weights wf, double *value)
{
    for (int i = 0; i < nt; i++)
        for (int k = 0; k < ts[i].parts && !is_quantized(cfg, &ts[i], wf); k++) {
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

/* ---- writing ------------------------------------------------------------------------ */

/* Hugging Face's config.json for a gpt2 model */
static mygpt_status hf_config(mygpt_strbuf *sb, const mygpt_config *c)
{
    return mygpt_sb_printf(sb,
                           "{\n  \"architectures\": [\"GPT2LMHeadModel\"],\n  \"model_type\": \"gpt2\",\n"
                           "  \"activation_function\": \"gelu_new\",\n  \"layer_norm_epsilon\": 1e-05,\n"
                           "  \"vocab_size\": %d,\n  \"n_positions\": %d,\n  \"n_ctx\": %d,\n  \"n_embd\": %d,\n"
                           "  \"n_layer\": %d,\n  \"n_head\": %d,\n  \"n_inner\": null,\n"
                           "  \"resid_pdrop\": %.17g,\n  \"embd_pdrop\": %.17g,\n  \"attn_pdrop\": %.17g,\n"
                           "  \"tie_word_embeddings\": true\n}\n",
                           c->vocab_size, c->max_seq_len, c->max_seq_len, c->embed_dim, c->num_layers, c->num_heads,
                           c->dropout, c->dropout, c->dropout);
}

/* path's folder + "/config.json" */
static int beside(char *out, size_t n, const char *path, const char *file)
{
    const char *slash = strrchr(path, '/');
    const int dir = slash ? (int)(slash - path) : 0;
    return slash ? (size_t)snprintf(out, n, "%.*s/%s", dir, path, file) < n : (size_t)snprintf(out, n, "%s", file) < n;
}

/* A config.json (at most 1 MB) read into *text and parsed into *j, which the caller frees
 * whatever this returns */
static mygpt_status read_config_json(const char *path, char **text, mygpt_json *j, mygpt_error *err)
{
    size_t len = 0;
    MYGPT_TRY(mygpt_read_file_max(path, CONFIG_JSON_MAX, text, &len, err));
    return mygpt_json_parse(j, *text, len, 64, (size_t)1 << 16, path, err);
}

/* The config.json beside a gpt2 checkpoint (conf), before anything is written: MYGPT_OK
 * with *present 0 (there is none: mygpt writes its own) or 1 (it is there, a JSON object
 * whose vocab_size, n_positions, n_embd, n_layer and n_head are cfg's, with whatever
 * formatting and other keys: kept as it is); else an error saying why it is not replaced
 * (a link, not a regular file, unreadable, over 1 MB, not JSON, another model). */
static mygpt_status config_json_check(const char *conf, const mygpt_config *c, int *present, mygpt_error *err)
{
    struct stat sb;
    *present = 0;
    if (lstat(conf, &sb) != 0)
        return errno == ENOENT ? MYGPT_OK : mygpt_fail(err, MYGPT_EIO, "cannot use %s: %s", conf, strerror(errno));
    if (S_ISLNK(sb.st_mode))
        return mygpt_fail(err, MYGPT_EINVAL, "%s is a symbolic link: not replaced (save elsewhere)", conf);
    if (!S_ISREG(sb.st_mode))
        return mygpt_fail(err, MYGPT_EINVAL, "%s is %s, not a regular file: not replaced (save elsewhere)", conf,
                          S_ISDIR(sb.st_mode) ? "a directory" : "a device, FIFO or socket");
    char *text = NULL;
    mygpt_json j = {0};
    mygpt_status st = read_config_json(conf, &text, &j, err);
    if (st != MYGPT_OK) {
        if (err) {
            mygpt_error inner = *err;
            st = mygpt_fail(err, st == MYGPT_ENOMEM ? st : MYGPT_EINVAL,
                            "%s: not replaced, it may describe another model (save elsewhere)", inner.message);
        }
        goto cleanup;
    }
    if (j.v[0].type != MYGPT_JSON_OBJECT)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EINVAL, "%s is not a JSON object: not replaced (save elsewhere)",
                                         conf));
    const char *names[5] = {"vocab_size", "n_positions", "n_embd", "n_layer", "n_head"};
    const int want[5] = {c->vocab_size, c->max_seq_len, c->embed_dim, c->num_layers, c->num_heads};
    for (int i = 0; i < 5; i++) {
        size_t count;
        long long v = -1;
        const size_t at = mygpt_json_get(&j, 0, names[i], &count);
        if (count == 1 && mygpt_json_integer(&j, at, 0, INT32_MAX, &v) && v == want[i])
            continue;
        const int quoted = count && j.v[at].type == MYGPT_JSON_STRING; // its text as written, cut at 24 bytes
        const size_t from = count ? j.v[at].start - (size_t)quoted : 0, to = count ? j.v[at].end + (size_t)quoted : 0;
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EINVAL,
                                         "%s describes another model (%s %.*s%s, this model's %d): not replaced "
                                         "(save elsewhere)", conf, names[i], (int)(to - from > 24 ? 24 : to - from),
                                         text + from, count == 0 ? "missing" : count > 1 ? " and more" : "", want[i]));
    }
    *present = 1;
cleanup:
    mygpt_json_free(&j);
    free(text);
    return st;
}

mygpt_status mygpt_checkpoint_check_save(const mygpt_gpt *g, const char *path, mygpt_error *err)
{
    MYGPT_TRY(mygpt_checkpoint_check_path(path, err));
    if (g->config.arch != MYGPT_ARCH_GPT2 || g->config.lora_rank > 0) // adapters: no config.json
        return MYGPT_OK;
    char conf[4096];
    int present;
    if (!beside(conf, sizeof conf, path, "config.json"))
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "checkpoint path too long");
    return config_json_check(conf, &g->config, &present, err);
}

#define FNV_START 14695981039346656037ull

/* FNV-1a 64 of n bytes, going on from h (FNV_START to begin) */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* The base checksum adapters record ("lora_base") and are checked against: FNV-1a 64 over
 * the float32 bytes of every tensor of g's parameter table, in the table's order, but the
 * adapters and a head that is a copy of the token embedding (a GPT-2's head untied,
 * mygpt_lora_untie_head: hashed as the tied head, which is no tensor of its own), so the
 * GPT-2 file and the book's GPTModel made of it have one checksum. Never 0. */
static uint64_t base_checksum(const mygpt_gpt *g)
{
    uint64_t h = FNV_START;
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        mygpt_param_info info;
        mygpt_param_info_get(&g->config, i, &info);
        const float *t = mygpt_param_tensor(&g->params, i);
        const size_t n = g->param_sizes[i];
        if (n == 0 || info.role == MYGPT_ROLE_LORA_A || info.role == MYGPT_ROLE_LORA_B ||
            (i == MYGPT_PARAM_lmw && n == g->param_sizes[MYGPT_PARAM_wte] && memcmp(t, g->params.wte, n * sizeof *t) == 0))
            continue;
        h = fnv1a(h, t, n * sizeof *t);
    }
    return h ? h : 1;
}

/* The save itself (the model, or its adapters only), with the interrupting signals
 * held (mygpt_checkpoint_save). */
static mygpt_status save(const mygpt_gpt *g, const char *path, int adapters, mygpt_error *err);

mygpt_status mygpt_checkpoint_save(const mygpt_gpt *g, const char *path, mygpt_error *err)
{
    if (g->config.lora_rank > 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s: the model has LoRA adapters: save them alone "
                          "(mygpt_checkpoint_save_adapters), or merge them into the weights first (mygpt_lora_merge)",
                          path);
    sigset_t was;
    const int held = mygpt_hold_signals(&was);
    const mygpt_status st = save(g, path, 0, err);
    mygpt_release_signals(held, &was);
    return st;
}

mygpt_status mygpt_checkpoint_save_adapters(const mygpt_gpt *g, const char *path, mygpt_error *err)
{
    if (g->config.lora_rank <= 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s: the model has no LoRA adapters to save", path);
    sigset_t was;
    const int held = mygpt_hold_signals(&was);
    const mygpt_status st = save(g, path, 1, err);
    mygpt_release_signals(held, &was);
    return st;
}

static mygpt_status save(const mygpt_gpt *g, const char *path, int adapters, mygpt_error *err)
{
    mygpt_strbuf h = {0}, conf = {0};
    const mygpt_config *c = &g->config;
    float *buf = NULL;
    mygpt_status st = MYGPT_OK;
    file_tensor *ts = malloc((size_t)mygpt_state_dict_len(c) * sizeof *ts);
    if (!ts)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the checkpoint header");
    const int n = file_tensors(c, ts, adapters);
    const mygpt_weights wf = g->quantized ? g->weights : MYGPT_WEIGHTS_FP32;
    mygpt_sb_printf(&h, "{\"__metadata__\":{\"format\":\"pt\",\"arch\":\"%s\",\"vocab_size\":\"%d\",\"embed_dim\":\"%d\","
                        "\"num_heads\":\"%d\",\"num_layers\":\"%d\",\"max_seq_len\":\"%d\"",
                    mygpt_arch_name(c->arch), c->vocab_size, c->embed_dim, c->num_heads, c->num_layers, c->max_seq_len);
    if (wf == MYGPT_WEIGHTS_INT8)
        mygpt_sb_printf(&h, ",\"weights\":\"int8\",\"group_size\":\"%d\"", MYGPT_INT8_GROUP);
    else if (wf == MYGPT_WEIGHTS_BF16)
        mygpt_sb_append(&h, ",\"weights\":\"bf16\"");
    if (adapters) // and the model they adapt, in the sizes above (num_classes: lmB's shape) and its weights
        mygpt_sb_printf(&h, ",\"lora_rank\":\"%d\",\"lora_alpha\":\"%.17g\",\"lora_base\":\"%016llx\"", c->lora_rank,
                        c->lora_alpha, (unsigned long long)base_checksum(g));
    else if (g->lora_merged) // adapters merged into it: not to be added again
        mygpt_sb_printf(&h, ",\"lora_merged\":\"%016llx\"", (unsigned long long)g->lora_merged);
    mygpt_sb_append(&h, "}");
    size_t offset = 0, biggest = 0;
    for (int i = 0; i < n; i++) {
        const size_t numel = (size_t)ts[i].shape[0] * (size_t)(ts[i].ndim == 2 ? ts[i].shape[1] : 1);
        const int quant = is_quantized(c, &ts[i], wf);
        const size_t bytes = numel * mygpt_weights_value_bytes(quant ? wf : MYGPT_WEIGHTS_FP32);
        const char *dtype = !quant ? "F32" : wf == MYGPT_WEIGHTS_BF16 ? "BF16" : "I8";
        biggest = numel > biggest ? numel : biggest;
        if (ts[i].ndim == 2)
            mygpt_sb_printf(&h, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld,%lld],\"data_offsets\":[%zu,%zu]}",
                            ts[i].name, dtype, (long long)ts[i].shape[0], (long long)ts[i].shape[1], offset,
                            offset + bytes);
        else
            mygpt_sb_printf(&h, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld],\"data_offsets\":[%zu,%zu]}",
                            ts[i].name, dtype, (long long)ts[i].shape[0], offset, offset + bytes);
        offset += bytes;
        if (quant && wf == MYGPT_WEIGHTS_INT8) { // its scales, right after it
            const size_t ns = scales_len(c, &ts[i]), groups = ns / ((size_t)ts[i].shape[ts[i].transposed ? 1 : 0]);
            mygpt_sb_printf(&h, ",\"%s.scales\":{\"dtype\":\"F32\",\"shape\":[%zu,%zu],\"data_offsets\":[%zu,%zu]}",
                            ts[i].name, ns / groups, groups, offset, offset + ns * sizeof(float));
            offset += ns * sizeof(float);
        }
    }
    mygpt_sb_append(&h, "}");
    const tensor_bytes floats = float_bytes(&g->params);
    const tensor_bytes stored = wf != MYGPT_WEIGHTS_FP32 ? quantized_bytes(g->quantized) : floats;
    // a NaN or an infinity is never written (the reader refuses it): a diverged model
    // never replaces a good file
    double bad;
    const int nonfinite = nonfinite_tensor(c, &floats, ts, n, wf, &bad);
    if (nonfinite >= 0)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ERANGE, "%s: %s holds a non-finite value (%g): not saved", path,
                                         ts[nonfinite].name, bad));
    while (h.len % 8) // the data starts 8-byte aligned
        mygpt_sb_append(&h, " ");
    buf = malloc((biggest ? biggest : 1) * sizeof *buf);
    if (h.failed || !buf)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the checkpoint"));
    MYGPT_TRY_CLEANUP(st, mygpt_checkpoint_check_path(path, err));
    // gpt2: Hugging Face's config.json beside the file, unless one there says otherwise
    char conf_path[4096];
    int conf_present = 0;
    if (c->arch == MYGPT_ARCH_GPT2 && !adapters) {
        hf_config(&conf, c);
        if (conf.failed || !beside(conf_path, sizeof conf_path, path, "config.json"))
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EINVAL, "%s", "checkpoint path too long"));
        MYGPT_TRY_CLEANUP(st, config_json_check(conf_path, c, &conf_present, err));
    }
    char tmp[4200];
    FILE *f = mygpt_temp_beside(path, tmp, sizeof tmp, &st, err);
    if (!f)
        goto cleanup; // st says why
    unsigned char len8[8];
    for (int b = 0; b < 8; b++)
        len8[b] = (unsigned char)((uint64_t)h.len >> (8 * b));
    int ok = fwrite(len8, 1, 8, f) == 8 && fwrite(h.data, 1, h.len, f) == h.len;
    for (int i = 0; ok && i < n; i++) {
        const size_t numel = (size_t)ts[i].shape[0] * (size_t)(ts[i].ndim == 2 ? ts[i].shape[1] : 1);
        const tensor_bytes *tb = is_quantized(c, &ts[i], wf) ? &stored : &floats;
        move_tensor(c, tb, &ts[i], buf, 1);
        ok = fwrite(buf, tb->es, numel, f) == numel;
        if (ok && tb == &stored && wf == MYGPT_WEIGHTS_INT8) {
            const size_t ns = scales_len(c, &ts[i]);
            move_scales(c, g->quantized, &ts[i], buf, 1);
            ok = fwrite(buf, sizeof(float), ns, f) == ns;
        }
    }
    MYGPT_TRY_CLEANUP(st, mygpt_commit_temp(f, tmp, path, ok, err));
    if (c->arch == MYGPT_ARCH_GPT2 && !adapters && !conf_present) // one that agrees is kept as it is
        st = mygpt_write_whole_unheld(conf_path, conf.data, conf.len, err);
cleanup:
    mygpt_sb_free(&conf);
    mygpt_sb_free(&h);
    free(buf);
    free(ts);
    return st;
}

/* ---- reading: the header, through the library's JSON reader (io/json.h) --------- */

/* Values a header may hold: an entry takes about 13, so 300 k tensors; a model has a
 * few thousand at most */
#define MAX_HEADER_VALUES ((size_t)1 << 22)

typedef struct entry {
    char name[128];
    char dtype[16];
    unsigned long long shape[4], offsets[2];
    int ndim, noff;
} entry;

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
static const char *json_entry(const mygpt_json *j, size_t v, entry *e)
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

/* What __metadata__ says of a file beyond its model: a training state's format, the
 * checksums that tie adapters to their base (0: not recorded) */
typedef struct file_marks {
    int train_state;      /* "format": "mygpt-train-state" (mygpt/train_state.h), not a model */
    uint64_t lora_base;   /* adapters: "lora_base", the base_checksum of their model        */
    uint64_t lora_merged; /* a model: "lora_merged", the FNV-1a 64 of the adapters in it   */
} file_marks;

/* "__metadata__" (value m): strings to strings, any of them; mygpt reads the five sizes
 * of the configuration, the architecture and how the weights are stored ("weights":
 * "bf16" or "int8" with "group_size": "64"), the file_marks, and ignores the other keys.
 * NULL, or what is wrong */
static const char *json_metadata(const mygpt_json *j, size_t m, mygpt_config *cfg, int *found, mygpt_weights *wf,
                                 file_marks *marks)
{
    static const char *const names[5] = {"vocab_size", "embed_dim", "num_heads", "num_layers", "max_seq_len"};
    int *fields[5] = {&cfg->vocab_size, &cfg->embed_dim, &cfg->num_heads, &cfg->num_layers, &cfg->max_seq_len};
    if (j->v[m].type != MYGPT_JSON_OBJECT)
        return "__metadata__ is not a JSON object";
    for (size_t k = m + 1, c = 0; c < j->v[m].count; c++, k = j->v[k + 1].next) {
        if (j->v[k + 1].type != MYGPT_JSON_STRING)
            return "a value in __metadata__ is not a string (safetensors' metadata maps strings to strings)";
        int which = -1; // 0-4 a size, 5 arch, 6 weights, 7 group_size, 8 lora_rank, 9 lora_alpha
        for (int i = 0; i < 5 && which < 0; i++)
            which = mygpt_json_equals(j, k, names[i]) ? i : -1;
        which = which >= 0                                 ? which
                : mygpt_json_equals(j, k, "arch")          ? 5
                : mygpt_json_equals(j, k, "weights")       ? 6
                : mygpt_json_equals(j, k, "group_size")    ? 7
                : mygpt_json_equals(j, k, "lora_rank")     ? 8
                : mygpt_json_equals(j, k, "lora_alpha")    ? 9
                : mygpt_json_equals(j, k, "format")        ? 10
                : mygpt_json_equals(j, k, "lora_base")     ? 11
                : mygpt_json_equals(j, k, "lora_merged")   ? 12
                                                           : -1;
        if (which < 0)
            continue; // another program's: any string
        char val[64];
        const size_t l = mygpt_json_string(j, k + 1, val, sizeof val);
        if (l == (size_t)-1 || l != strlen(val))
            val[0] = '\0'; // too long, or a NUL inside: no valid value
        if (which == 10) { // "pt" (safetensors' own), or another program's
            marks->train_state = strcmp(val, "mygpt-train-state") == 0; // mygpt/train_state.h
            continue;
        }
        if (which == 11 || which == 12) { // 16 hex digits, as save writes them
            char *endp;
            errno = 0;
            const unsigned long long v = strtoull(val, &endp, 16);
            if (strlen(val) != 16 || strspn(val, "0123456789abcdef") != 16 || *endp != '\0' || errno || v == 0)
                return "__metadata__'s lora_base or lora_merged is not a checksum (16 hex digits)";
            *(which == 11 ? &marks->lora_base : &marks->lora_merged) = (uint64_t)v;
            continue;
        }
        if (which == 5 && mygpt_arch_parse(val, &cfg->arch, NULL) != MYGPT_OK)
            return "__metadata__ names an unknown architecture";
        if (which == 6 && mygpt_weights_parse(val, wf, NULL) != MYGPT_OK)
            return "__metadata__ names an unknown weight format (fp32, bf16, int8)";
        if (which == 7 && strcmp(val, "64") != 0)
            return "__metadata__'s int8 group_size is not 64, the only one mygpt reads";
        if (which == 8 || which == 9) { // a file of LoRA adapters (mygpt_checkpoint_save_adapters)
            char *endp;
            errno = 0;
            const double v = strtod(val, &endp);
            if (*val == '\0' || *endp != '\0' || errno ||
                (which == 8 ? !(v >= 1 && v <= MYGPT_LORA_MAX_RANK && v == (int)v)
                            : !(v >= MYGPT_LORA_ALPHA_MIN && v <= MYGPT_LORA_ALPHA_MAX)))
                return which == 8 ? "__metadata__'s lora_rank is not a whole number from 1 to MYGPT_LORA_MAX_RANK"
                                  : "__metadata__'s lora_alpha is not a number from 1e-30 to 1e+30 "
                                    "(MYGPT_LORA_ALPHA_MIN, _MAX)";
            if (which == 8)
                cfg->lora_rank = (int)v;
            else
                cfg->lora_alpha = v;
            continue;
        }
        if (which < 5) {
            char *endp;
            errno = 0;
            const long v = strtol(val, &endp, 10);
            if (*val == '\0' || *endp != '\0' || errno || v < 1 || v > (1 << 24))
                return "a configuration value in __metadata__ is not a size";
            *fields[which] = (int)v;
            *found |= 1 << which;
        }
    }
    return NULL;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

static int by_offset(const void *a, const void *b)
{
    const entry *x = *(const entry *const *)a, *y = *(const entry *const *)b;
    return (x->offsets[0] > y->offsets[0]) - (x->offsets[0] < y->offsets[0]);
}

/* As the safetensors format requires: the tensors' byte ranges tile the data exactly,
 * from 0 to its end, without holes or overlaps. 1, 0, or -1 out of memory. */
static int offsets_tile(const entry *entries, size_t n, size_t data_len)
{
    const entry **at = malloc((n ? n : 1) * sizeof *at);
    if (!at)
        return -1;
    for (size_t k = 0; k < n; k++)
        at[k] = &entries[k];
    qsort(at, n, sizeof *at, by_offset);
    unsigned long long end = 0;
    int ok = 1;
    for (size_t k = 0; k < n && ok; k++) {
        ok = at[k]->noff == 2 && at[k]->offsets[0] == end && at[k]->offsets[1] >= end;
        end = at[k]->offsets[1];
    }
    free(at);
    return ok && end == data_len;
}

/* The entry named name (after any "transformer." prefix), or NULL: entries are sorted by name */
static const entry *find(const entry *entries, size_t n, const char *name)
{
    entry key;
    if (strlen(name) >= sizeof key.name)
        return NULL;
    strcpy(key.name, name);
    return bsearch(&key, entries, n, sizeof *entries, by_name);
}

/* Layers of a file: 1 + the largest N in names "<prefix>.N...." */
static int count_layers(const entry *entries, size_t n, const char *prefix)
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

/* The top-level "n_head" of the (Hugging Face) config.json beside path, read with the
 * library's JSON reader: *heads 0 when there is no config.json (then heads of 64, as
 * documented); one that is there but unusable is an error that says why. */
static mygpt_status config_json_heads(const char *path, int *heads, mygpt_error *err)
{
    char conf[4096], *text = NULL;
    struct stat sb;
    *heads = 0;
    if (!beside(conf, sizeof conf, path, "config.json"))
        return mygpt_fail(err, MYGPT_EINVAL, "%s: path too long for the config.json beside it", path);
    if (lstat(conf, &sb) != 0 && errno == ENOENT)
        return MYGPT_OK;
    mygpt_json j = {0};
    mygpt_status st = read_config_json(conf, &text, &j, err);
    if (st != MYGPT_OK) {
        if (err) {
            mygpt_error inner = *err;
            st = mygpt_fail(err, st, "%s (it gives a gpt2 checkpoint's heads)", inner.message);
        }
        goto cleanup;
    }
    size_t count;
    long long v = 0;
    const size_t at = mygpt_json_get(&j, 0, "n_head", &count);
    if (j.v[0].type != MYGPT_JSON_OBJECT)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s is not a JSON object (it gives a gpt2 checkpoint's "
                                         "heads)", conf));
    if (count != 1)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: %s (it gives a gpt2 checkpoint's heads)", conf,
                                         count ? "\"n_head\" appears more than once" : "no top-level \"n_head\""));
    if (!mygpt_json_integer(&j, at, 1, 1 << 24, &v))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: \"n_head\" is not a whole number in [1, 2^24] "
                                         "(the heads)", conf));
    *heads = (int)v;
cleanup:
    mygpt_json_free(&j);
    free(text);
    return st;
}

/* Buffers a state_dict holds besides the parameters: the causal masks of the course's
 * blocks, of the book's and of Hugging Face's ("attn.bias", and older "masked_bias") */
static int is_buffer(const char *name)
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

/* n bytes at offset off of fd into buf: 0, or -1 with errno (0 when the file ended first) */
static int read_at(int fd, void *buf, size_t n, size_t off)
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
static mygpt_status read_failed(const char *path, mygpt_error *err)
{
    if (errno)
        return mygpt_fail(err, MYGPT_EIO, "cannot read %s: %s", path, strerror(errno));
    return mygpt_fail(err, MYGPT_EIO, "%s changed while being read (it ended before its header's size)", path);
}

/* 1 if the n bytes at offsets a and b of fd are the same, 0 if not, -1 (errno) if they cannot be read */
static int same_bytes(int fd, size_t a, size_t b, size_t n)
{
    char x[1 << 14], y[1 << 14];
    for (size_t k = 0; k < n; k += sizeof x) {
        const size_t m = n - k < sizeof x ? n - k : sizeof x;
        if (read_at(fd, x, m, a + k) != 0 || read_at(fd, y, m, b + k) != 0)
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

/* A file's header as both readers need it: the file open, its JSON parsed into the
 * entries (sorted by name, none twice), the __metadata__'s configuration (found: the
 * sizes' bits, 1 << 0 .. 4) and weight format, and where the data is. */
typedef struct header_read {
    int fd;
    struct stat sbuf;
    char *header;
    entry *entries;
    size_t n;
    mygpt_config cfg;
    int found;
    mygpt_weights wf;
    file_marks marks;
    size_t data_at, data_len;
} header_read;

/* A file replaced or rewritten while it was read may hold parts of two files: MYGPT_EIO
 * when it is not as read_header found it. */
static mygpt_status unchanged_since_read(const header_read *h, const char *path, mygpt_error *err)
{
    struct stat now;
    if (fstat(h->fd, &now) != 0 || now.st_size != h->sbuf.st_size || now.st_mtim.tv_sec != h->sbuf.st_mtim.tv_sec ||
        now.st_mtim.tv_nsec != h->sbuf.st_mtim.tv_nsec)
        return mygpt_fail(err, MYGPT_EIO, "%s changed while being read (written to by another program): not loaded",
                          path);
    return MYGPT_OK;
}

static void header_free(header_read *h)
{
    free(h->entries);
    free(h->header);
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
    h->entries = NULL;
    h->header = NULL;
}

static mygpt_status read_header(const char *path, header_read *h, mygpt_error *err)
{
    mygpt_status st = MYGPT_OK;
    mygpt_json doc = {0};
    memset(h, 0, sizeof *h);
    h->wf = MYGPT_WEIGHTS_FP32;
    // read, not mapped: a mapped file cut by another process (cp over it) would kill this
    // one with SIGBUS; read, a file that changes is an error naming it
    const int fd = h->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); // a FIFO: refused below, not waited on
    if (fd < 0)
        return mygpt_fail(err, MYGPT_EIO, "cannot open %s: %s", path, strerror(errno));
    struct stat *sb = &h->sbuf;
    if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EIO, "cannot read %s: not a regular file (a directory, device, "
                                         "FIFO or socket)", path));
    const size_t len = (size_t)sb->st_size;
    if (len < 8)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: too short for a safetensors file (%zu bytes)", path,
                                         len));
    unsigned char len8[9]; // the header's length, and its first byte when there is one
    if (read_at(fd, len8, len > 8 ? 9 : 8, 0) != 0)
        MYGPT_TRY_CLEANUP(st, read_failed(path, err));
    const char *kind = pytorch_kind(len8, len > 8 ? 9 : 8);
    if (kind)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: not a safetensors file (it looks like a PyTorch "
                                         "checkpoint, %s: convert it to safetensors with "
                                         "safetensors.torch.save_file, see cli/README.md)", path, kind));
    uint64_t hlen = 0;
    for (int b = 0; b < 8; b++)
        hlen |= (uint64_t)len8[b] << (8 * b);
    if (hlen > MAX_HEADER || hlen > len - 8)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: header length %llu is larger than the file allows",
                                         path, (unsigned long long)hlen));
    if (!(h->header = malloc(hlen ? (size_t)hlen : 1)))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint header"));
    if (read_at(fd, h->header, (size_t)hlen, 8) != 0)
        MYGPT_TRY_CLEANUP(st, read_failed(path, err));
    h->data_at = 8 + (size_t)hlen; // the data's offset in the file
    h->data_len = len - 8 - (size_t)hlen;
    // the header's JSON (one pass, bounded), then the configuration and the entries
    char what[320];
    snprintf(what, sizeof what, "%s (its header)", path); // only a message: may be cut
    MYGPT_TRY_CLEANUP(st, mygpt_json_parse(&doc, h->header, (size_t)hlen, 8, MAX_HEADER_VALUES, what, err));
    size_t seen_metadata = 0;
    const char *why = NULL;
    if (doc.v[0].type != MYGPT_JSON_OBJECT)
        why = "the JSON header is not an object";
    else if (!(h->entries = malloc(((size_t)doc.v[0].count + 1) * sizeof *h->entries)))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint header"));
    for (size_t k = 1, m = 0; !why && m < doc.v[0].count; m++, k = doc.v[k + 1].next) {
        if (mygpt_json_equals(&doc, k, "__metadata__")) {
            why = seen_metadata++ ? "__metadata__ appears twice in the header"
                                  : json_metadata(&doc, k + 1, &h->cfg, &h->found, &h->wf, &h->marks);
            continue;
        }
        char name[sizeof h->entries->name + 12];
        const size_t l = mygpt_json_string(&doc, k, name, sizeof name);
        // files saved from GPT2LMHeadModel put "transformer." before every name
        const char *bare = l != (size_t)-1 && strncmp(name, "transformer.", 12) == 0 ? name + 12 : name;
        if (l == (size_t)-1 || strlen(bare) >= sizeof h->entries->name)
            why = "a tensor name in the header is longer than 127 bytes";
        else if (l != strlen(name))
            why = "a NUL (\\u0000) inside a tensor name of the header";
        else if (!(why = json_entry(&doc, k + 1, &h->entries[h->n])))
            strcpy(h->entries[h->n++].name, bare);
    }
    mygpt_json_free(&doc);
    if (why)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: %s", path, why));
    qsort(h->entries, h->n, sizeof *h->entries, by_name); // sorted by name: duplicates side by side, find() a binary search
    for (size_t k = 1; k < h->n; k++)
        if (strcmp(h->entries[k - 1].name, h->entries[k].name) == 0)
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: tensor %s is named twice in the header", path,
                                             h->entries[k].name));
cleanup:
    mygpt_json_free(&doc);
    if (st != MYGPT_OK)
        header_free(h);
    return st;
}

mygpt_status mygpt_checkpoint_load(mygpt_gpt **out, const char *path, mygpt_error *err)
{
    *out = NULL;
    mygpt_status st = MYGPT_OK;
    mygpt_gpt *g = NULL;
    mygpt_quantized *qz = NULL;
    file_tensor *ts = NULL;
    int nt = 0;
    const entry **found_at = NULL, **scales_at = NULL; // int8: each quantized tensor's "<name>.scales"
    unsigned char *used = NULL;                        // the entries the model takes
    header_read h;
    MYGPT_TRY(read_header(path, &h, err));
    const int fd = h.fd;
    const entry *entries = h.entries;
    const size_t n = h.n, data_at = h.data_at, data_len = h.data_len;
    mygpt_config cfg = h.cfg;
    const int found = h.found;
    const mygpt_weights wf = h.wf;
    if (cfg.lora_rank > 0)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EINVAL, "%s holds LoRA adapters only: load the model they were "
                                         "trained on and apply them (mygpt_checkpoint_load_adapters)", path));
    if (h.marks.train_state) // its tensors are a run's, not a model's: said so, not counted
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EINVAL, "%s is a training state (for mygpt train --resume), "
                                         "not a model: give the model train saves with --save (the run's train "
                                         "command with --resume STATE --save MODEL writes it)", path));
    // the architecture from the names; sizes from __metadata__, or from the shapes
    const entry *wte = NULL, *wpe = NULL;
    if ((wte = find(entries, n, "wte.weight"))) {
        cfg.arch = MYGPT_ARCH_GPT2;
        wpe = find(entries, n, "wpe.weight");
        if (!(found & 8))
            cfg.num_layers = count_layers(entries, n, "h");
    } else if ((wte = find(entries, n, "tok_emb.weight"))) {
        cfg.arch = MYGPT_ARCH_LLMS_FROM_SCRATCH;
        wpe = find(entries, n, "pos_emb.weight");
        cfg.qkv_bias = find(entries, n, "trf_blocks.0.att.W_query.bias") != NULL;
        if (!(found & 8))
            cfg.num_layers = count_layers(entries, n, "trf_blocks");
    } else if (found != 31) {
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: __metadata__ lacks the configuration (vocab_size, "
                                         "embed_dim, num_heads, num_layers, max_seq_len) and no token embedding names "
                                         "another layout (GPT-2's wte.weight, the book's tok_emb.weight)", path));
    }
    if (cfg.arch != MYGPT_ARCH_COURSE) {
        if (!wpe || wte->ndim != 2 || wpe->ndim != 2 || wte->shape[1] != wpe->shape[1] || wte->shape[0] > (1u << 24) ||
            wte->shape[1] > (1u << 24) || wpe->shape[0] > (1u << 24))
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: the token and position embeddings are missing "
                                             "or misshapen", path));
        cfg.vocab_size = (int)wte->shape[0];
        cfg.embed_dim = (int)wte->shape[1];
        cfg.max_seq_len = (int)wpe->shape[0];
        if (!(found & 4) && cfg.arch == MYGPT_ARCH_GPT2) // heads: __metadata__, Hugging Face's
            MYGPT_TRY_CLEANUP(st, config_json_heads(path, &cfg.num_heads, err)); // config.json, or heads of 64
        if (cfg.num_heads == 0 && cfg.embed_dim % 64 == 0)
            cfg.num_heads = cfg.embed_dim / 64;
        if (cfg.num_heads == 0)
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: the number of heads is not in the file "
                                             "(__metadata__'s num_heads, or a gpt2's config.json beside it) and C=%d "
                                             "is not a multiple of 64", path, cfg.embed_dim));
    }
    const int tiled = offsets_tile(entries, n, data_len);
    if (tiled < 0)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint header"));
    if (!tiled)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: the tensors' data offsets do not tile the %zu "
                                         "bytes of data", path, data_len));
    // a classification head (the book's chapter 6: nn.Linear(C, num_classes)) is the one
    // head with a bias: its length is num_classes
    const entry *head_bias = find(entries, n, cfg.arch == MYGPT_ARCH_LLMS_FROM_SCRATCH ? "out_head.bias"
                                                                                       : "lm_head.bias");
    if (head_bias && (head_bias->ndim != 1 || head_bias->shape[0] < 1 || head_bias->shape[0] > (1u << 24)))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: %s is not a vector of the classes", path,
                                         head_bias->name));
    cfg.num_classes = head_bias ? (int)head_bias->shape[0] : 0;
    // Everything is checked against the header before anything is allocated for the model:
    // a small file whose __metadata__ claims a huge model costs nothing.
    MYGPT_TRY_CLEANUP(st, mygpt_config_validate(&cfg, err));
    // a file tensor holds at most 3 of the table's (c_attn): no more can be needed than 3n
    if ((size_t)mygpt_state_dict_len(&cfg) > 3 * n + 3)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: the configuration needs %d tensors; the file holds "
                                         "%zu", path, mygpt_state_dict_len(&cfg), n));
    if (!(ts = malloc((size_t)mygpt_state_dict_len(&cfg) * sizeof *ts)))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint"));
    nt = file_tensors(&cfg, ts, 0);
    if (!(found_at = malloc((size_t)nt * sizeof *found_at)) || !(scales_at = calloc((size_t)nt, sizeof *scales_at)))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint"));
    for (int i = 0; i < nt; i++) { // every tensor the model needs, as it needs it
        const file_tensor *want = &ts[i];
        const entry *e = found_at[i] = find(entries, n, want->name);
        const size_t numel = (size_t)want->shape[0] * (size_t)(want->ndim == 2 ? want->shape[1] : 1);
        const int quant = is_quantized(&cfg, want, wf);
        const char *dtype = !quant ? "F32" : wf == MYGPT_WEIGHTS_BF16 ? "BF16" : "I8";
        const size_t es = mygpt_weights_value_bytes(quant ? wf : MYGPT_WEIGHTS_FP32);
        if (!e)
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: tensor %s is missing", path, want->name));
        if (strcmp(e->dtype, dtype) != 0)
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: %s has dtype %s, not %s%s", path, e->name,
                                             e->dtype, dtype, wf != MYGPT_WEIGHTS_FP32 ? " (the file's __metadata__ "
                                             "says its weights are quantized)" : ""));
        if (e->ndim != want->ndim || e->shape[0] != (unsigned long long)want->shape[0] ||
            (e->ndim == 2 && e->shape[1] != (unsigned long long)want->shape[1]))
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: %s does not have the shape the configuration "
                                             "gives", path, e->name));
        if (e->noff != 2 || e->offsets[0] > e->offsets[1] || e->offsets[1] > data_len ||
            e->offsets[1] - e->offsets[0] != numel * es)
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: the data offsets of %s do not fit the data (%zu "
                                             "bytes)", path, e->name, data_len));
        if (!quant || wf != MYGPT_WEIGHTS_INT8)
            continue;
        char sname[128];
        snprintf(sname, sizeof sname, "%s.scales", want->name);
        const entry *se = scales_at[i] = find(entries, n, sname);
        const size_t ns = scales_len(&cfg, want), groups = ns / (size_t)want->shape[want->transposed ? 1 : 0];
        if (!se)
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: tensor %s (the int8 scales of %s) is missing",
                                             path, sname, want->name));
        if (strcmp(se->dtype, "F32") != 0 || se->ndim != 2 || se->shape[0] != ns / groups || se->shape[1] != groups ||
            se->noff != 2 || se->offsets[1] - se->offsets[0] != ns * sizeof(float))
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: %s is not F32 of shape [%zu, %zu]", path, sname,
                                             ns / groups, groups));
    }
    if (!(used = calloc(n ? n : 1, 1)))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint"));
    for (int i = 0; i < nt; i++) {
        used[found_at[i] - entries] = 1;
        if (scales_at[i])
            used[scales_at[i] - entries] = 1;
    }
    for (size_t k = 0; k < n; k++) { // nothing else but buffers and a tied head
        if (used[k] || is_buffer(entries[k].name))
            continue;
        const entry *e = &entries[k];
        const int same = cfg.arch == MYGPT_ARCH_GPT2 && strcmp(e->name, "lm_head.weight") == 0 &&
                                 strcmp(e->dtype, "F32") == 0 &&
                                 e->offsets[1] - e->offsets[0] == wte->offsets[1] - wte->offsets[0]
                             ? same_bytes(fd, data_at + e->offsets[0], data_at + wte->offsets[0],
                                          e->offsets[1] - e->offsets[0])
                             : 0;
        if (same < 0)
            MYGPT_TRY_CLEANUP(st, read_failed(path, err));
        if (same)
            continue; // the tied head, written out
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: unexpected tensor %s%s", path, e->name,
                                         strcmp(e->name, "lm_head.weight") == 0
                                             ? " (an lm_head that is not the token embedding)" : ""));
    }
    MYGPT_TRY_CLEANUP(st, mygpt_gpt_alloc(&g, &cfg, err)); // draws nothing: every value comes from the file
    if (wf != MYGPT_WEIGHTS_FP32)
        MYGPT_TRY_CLEANUP(st, mygpt_quantized_alloc(&qz, &cfg, wf, err));
    const tensor_bytes floats = float_bytes(&g->params);
    const tensor_bytes stored = qz ? quantized_bytes(qz) : floats;
    for (int i = 0; i < nt; i++) {
        const int quant = is_quantized(&cfg, &ts[i], wf);
        for (int part = 0; part < 1 + (quant && wf == MYGPT_WEIGHTS_INT8); part++) {
            const entry *e = part ? scales_at[i] : found_at[i]; // the values, then int8's scales
            const size_t bytes = e->offsets[1] - e->offsets[0];
            void *tmp = malloc(bytes ? bytes : 1); // aligned for any element
            if (!tmp)
                MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint"));
            if (read_at(fd, tmp, bytes, data_at + e->offsets[0]) != 0) {
                free(tmp);
                MYGPT_TRY_CLEANUP(st, read_failed(path, err));
            }
            const char *src = tmp;
            if (part)
                move_scales(&cfg, qz, &ts[i], (float *)(uintptr_t)src, 0);
            else
                move_tensor(&cfg, quant ? &stored : &floats, &ts[i], (void *)(uintptr_t)src, 0);
            free(tmp);
        }
    }
    // a NaN or an infinity would only show as token 0 forever: refused, named (quantized
    // values are checked as they are attached)
    double bad;
    const int nonfinite = nonfinite_tensor(&cfg, &floats, ts, nt, wf, &bad);
    if (nonfinite >= 0)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: %s holds a non-finite value (%g)", path,
                                         ts[nonfinite].name, bad));
    if (qz) {
        st = mygpt_gpt_attach_quantized(g, qz, err); // checks the stored values; frees qz on failure
        qz = NULL;
        if (st != MYGPT_OK) {
            mygpt_error inner = err ? *err : (mygpt_error){0};
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, st, "%s: %s", path, inner.message));
        }
    }
    MYGPT_TRY_CLEANUP(st, unchanged_since_read(&h, path, err));
    g->lora_merged = h.marks.lora_merged;
    *out = g;
    g = NULL;
cleanup:
    mygpt_gpt_free(g);
    mygpt_quantized_free(qz);
    free(used);
    free(scales_at);
    free(found_at);
    free(ts);
    header_free(&h);
    return st;
}

/* ---- LoRA adapters ------------------------------------------------------------------ */

/* A file's adapters, read: its n tensors ts and their values */
typedef struct file_adapters {
    const file_tensor *ts;
    float **data;
    int n;
} file_adapters;

/* Puts the adapters' values into m, a model with adapters of their configuration */
static void put_adapters(void *ctx, mygpt_gpt *m)
{
    const file_adapters *v = ctx;
    const tensor_bytes floats = float_bytes(&m->params);
    for (int i = 0; i < v->n; i++)
        move_tensor(&m->config, &floats, &v->ts[i], v->data[i], 0);
}

mygpt_status mygpt_checkpoint_load_adapters(mygpt_gpt *g, const char *path, mygpt_error *err)
{
    mygpt_status st = MYGPT_OK;
    file_tensor *ts = NULL;
    float **data = NULL;
    int nt = 0;
    header_read h;
    MYGPT_TRY(read_header(path, &h, err));
    const mygpt_config *base = &g->config;
    mygpt_config cfg = *base; // the model with the file's adapters
    cfg.lora_rank = h.cfg.lora_rank;
    cfg.lora_alpha = h.cfg.lora_alpha;
    if (h.cfg.lora_rank <= 0 || !(h.cfg.lora_alpha > 0))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: not a file of LoRA adapters (its __metadata__ has "
                                         "no lora_rank and lora_alpha)", path));
    if (base->lora_rank > 0)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EINVAL, "%s: the model has LoRA adapters already", path));
    // the model they were trained on: the sizes and the architecture __metadata__ names (a
    // GPT-2 made the book's GPTModel, its head untied, for adapters that wrap the head)
    const int untie = h.cfg.arch == MYGPT_ARCH_LLMS_FROM_SCRATCH && mygpt_lora_untied_config(base, &cfg);
    cfg.lora_rank = h.cfg.lora_rank;
    cfg.lora_alpha = h.cfg.lora_alpha;
    if (h.found != 31 || h.cfg.arch != cfg.arch || h.cfg.vocab_size != base->vocab_size ||
        h.cfg.embed_dim != base->embed_dim || h.cfg.num_heads != base->num_heads ||
        h.cfg.num_layers != base->num_layers || h.cfg.max_seq_len != base->max_seq_len)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EINVAL, "%s: the adapters are for another model (%s, V=%d C=%d "
                                         "heads=%d layers=%d context=%d), not this one (%s, V=%d C=%d heads=%d "
                                         "layers=%d context=%d)", path, mygpt_arch_name(h.cfg.arch),
                                         h.cfg.vocab_size, h.cfg.embed_dim, h.cfg.num_heads, h.cfg.num_layers,
                                         h.cfg.max_seq_len, mygpt_arch_name(base->arch), base->vocab_size,
                                         base->embed_dim, base->num_heads, base->num_layers, base->max_seq_len));
    MYGPT_TRY_CLEANUP(st, mygpt_config_validate(&cfg, err));
    if (!(ts = malloc((size_t)mygpt_state_dict_len(&cfg) * sizeof *ts)))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading adapters"));
    nt = file_tensors(&cfg, ts, 1);
    if ((size_t)nt != h.n)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: holds %zu tensors, where the adapters of this model "
                                         "are %d (a head of another size, or tensors that are not adapters)", path,
                                         h.n, nt));
    const int tiled = offsets_tile(h.entries, h.n, h.data_len);
    if (tiled <= 0)
        MYGPT_TRY_CLEANUP(st, tiled < 0 ? mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading adapters")
                                        : mygpt_fail(err, MYGPT_EFORMAT, "%s: the tensors' data offsets do not tile the "
                                                     "%zu bytes of data", path, h.data_len));
    if (!(data = calloc((size_t)nt, sizeof *data)))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading adapters"));
    // every value read and checked before the model changes
    uint64_t id = FNV_START; // the adapters' own checksum, over their values in the file's order
    for (int i = 0; i < nt; i++) {
        const entry *e = find(h.entries, h.n, ts[i].name);
        const size_t numel = (size_t)ts[i].shape[0] * (size_t)ts[i].shape[1];
        if (!e)
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: tensor %s is missing", path, ts[i].name));
        if (strcmp(e->dtype, "F32") != 0 || e->ndim != 2 || e->shape[0] != (unsigned long long)ts[i].shape[0] ||
            e->shape[1] != (unsigned long long)ts[i].shape[1] || e->noff != 2 || e->offsets[0] > e->offsets[1] ||
            e->offsets[1] > h.data_len || e->offsets[1] - e->offsets[0] != numel * sizeof(float))
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: %s is not F32 of shape [%lld, %lld] within the "
                                             "data", path, e->name, (long long)ts[i].shape[0],
                                             (long long)ts[i].shape[1]));
        if (!(data[i] = malloc(numel * sizeof(float))))
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading adapters"));
        if (read_at(h.fd, data[i], numel * sizeof(float), h.data_at + e->offsets[0]) != 0)
            MYGPT_TRY_CLEANUP(st, read_failed(path, err));
        for (size_t k = 0; k < numel; k++)
            if (!isfinite(data[i][k]))
                MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: %s holds a non-finite value (%g)", path,
                                                 e->name, (double)data[i][k]));
        id = fnv1a(id, data[i], numel * sizeof(float));
    }
    id = id ? id : 1;
    MYGPT_TRY_CLEANUP(st, unchanged_since_read(&h, path, err));
    // the model they were trained on, by its weights (files written before mygpt recorded
    // lora_base are taken on the sizes alone); merged already, they would be added twice
    if (g->lora_merged == id)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EINVAL, "%s: the adapters are already merged into this model (its "
                                         "lora_merged): use it as it is, or apply them to the model they were trained "
                                         "on", path));
    const uint64_t have = h.marks.lora_base && g->weights == MYGPT_WEIGHTS_FP32 ? base_checksum(g) : 0;
    if (have && have != h.marks.lora_base)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EINVAL, "%s: the adapters were trained on another base model "
                                         "(checksum %016llx; this model's is %016llx)", path,
                                         (unsigned long long)h.marks.lora_base, (unsigned long long)have));
    const file_adapters values = {ts, data, nt};
    if ((st = mygpt_lora_add_values(g, cfg.lora_rank, cfg.lora_alpha, untie, put_adapters, (void *)&values, err)) ==
        MYGPT_ERANGE) { // finite adapters whose merge is not
        const mygpt_error inner = err ? *err : (mygpt_error){0};
        mygpt_fail(err, st, "%s: %s", path, inner.message);
    }
    if (st == MYGPT_OK)
        g->lora_from = id;
cleanup:
    for (int i = 0; data && i < nt; i++)
        free(data[i]);
    free(data);
    free(ts);
    header_free(&h);
    return st;
}
