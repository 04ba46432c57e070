/*
 * llama2c.c - llama2.c's legacy model file (run.c's checkpoint, export.py's legacy_export):
 * seven little-endian int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
 * seq_len; a negative vocab_size: the classifier has weights of its own), then float32
 * tensors stacked over the layers, in the order TENSORS lists them, with two tables of
 * RoPE cosines and sines (seq_len, head_size / 2) before the classifier. The parameter
 * table stacks each tensor over the layers too, so the file is the model's tensors whole,
 * one after another.
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
#include "mygpt/gpt.h"
#include "mygpt/tensor.h"
#include "base/base.h"
#include "io/llama2c.h"
#include "io/whole.h"
#include "model/params.h"

/* the file's tensors before the RoPE tables, in its order (the classifier comes after them) */
static const int TENSORS[] = {MYGPT_PARAM_wte,  MYGPT_PARAM_ln1w, MYGPT_PARAM_wq,   MYGPT_PARAM_wk,
                              MYGPT_PARAM_wv,   MYGPT_PARAM_wo,   MYGPT_PARAM_ln2w, MYGPT_PARAM_fc1w,
                              MYGPT_PARAM_fc2w, MYGPT_PARAM_w3w,  MYGPT_PARAM_lnfw};
/* their names in run.c's TransformerWeights, for the messages */
static const char *const NAMES[] = {"token_embedding_table", "rms_att_weight", "wq", "wk", "wv", "wo",
                                    "rms_ffn_weight", "w1", "w2", "w3", "rms_final_weight"};
enum { NTENSORS = sizeof TENSORS / sizeof TENSORS[0], HEADER_BYTES = 7 * 4 };

/* The configuration a header describes (not yet validated) */
static mygpt_config config_of(const int32_t h[7])
{
    const int vocab = h[5] == INT32_MIN ? 0 : h[5] < 0 ? -h[5] : h[5]; // (INT32_MIN has no positive)
    return (mygpt_config){.arch = MYGPT_ARCH_LLAMA, .embed_dim = h[0], .ffn_hidden = h[1], .num_layers = h[2],
                          .num_heads = h[3], .num_kv_heads = h[4], .vocab_size = vocab, .max_seq_len = h[6],
                          .untied_head = h[5] < 0, .rope = MYGPT_ROPE_INTERLEAVED};
}

/* The floats of the two RoPE tables: seq_len * head_size */
static uint64_t rope_floats(const mygpt_config *c)
{
    return (uint64_t)c->max_seq_len * (uint64_t)(c->embed_dim / c->num_heads);
}


/* reads n bytes at off of fd into dst; MYGPT_EIO if the file is shorter or unreadable */
static mygpt_status read_at(int fd, void *dst, size_t n, uint64_t off, const char *path, mygpt_error *err)
{
    char *d = dst;
    while (n > 0) {
        const size_t want = n < ((size_t)1 << 30) ? n : (size_t)1 << 30;
        const ssize_t got = pread(fd, d, want, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return mygpt_fail(err, MYGPT_EIO, "%s: %s", path, got < 0 ? strerror(errno) : "changed while being read");
        d += got, off += (uint64_t)got, n -= (size_t)got;
    }
    return MYGPT_OK;
}

/* Whether the first 9 bytes b start a safetensors file: its header's length, below 4 GiB
 * (bytes 4 to 7 zero, where a llama2.c header has its hidden_dim), then JSON's '{' (or a
 * '[', a header that is JSON but no object: the safetensors reader says so) */
static int safetensors_start(const unsigned char b[9])
{
    return b[4] == 0 && b[5] == 0 && b[6] == 0 && b[7] == 0 && (b[8] == '{' || b[8] == '[');
}

/* Whether the first 9 bytes b are another format's: a safetensors file's JSON at byte 8,
 * torch.save's zip or pickle (protocol 2 to 5, then an opcode, never a 0 byte), or text
 * (no 0 byte, where a llama2.c header's small numbers have one) */
static int other_format(const unsigned char b[9])
{
    return b[8] == '{' || memcmp(b, "PK\3\4", 4) == 0 || (b[0] == 0x80 && b[1] >= 2 && b[1] <= 5 && b[2] != 0) ||
           memchr(b, 0, 8) == NULL;
}

int mygpt_llama2c_file(const char *path)
{
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat s;
    int32_t h[7] = {0};
    const int read = fstat(fd, &s) == 0 && S_ISREG(s.st_mode) && s.st_size >= 9 && pread(fd, h, sizeof h, 0) >= 9;
    close(fd);
    if (!read || safetensors_start((const unsigned char *)h)) // (a model of 123 layers has '{' at byte 8 too)
        return 0;
    const mygpt_config c = config_of(h);
    if (s.st_size >= HEADER_BYTES && c.ffn_hidden >= 1 && c.num_kv_heads >= 1 &&
        mygpt_config_validate(&c, NULL) == MYGPT_OK)
        return 1;
    // a header of no model that no other format claims: the loader says what is wrong with it
    return !other_format((const unsigned char *)h);
}

/* The floats the file of configuration c holds after its header: every tensor, the RoPE
 * tables, the classifier when it is untied (c validated) */
static uint64_t file_floats(const mygpt_config *c)
{
    size_t sizes[MYGPT_NUM_PARAM_TENSORS];
    mygpt_param_sizes(c, sizes);
    uint64_t n = rope_floats(c);
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        n += sizes[i];
    return n;
}

/* The configuration of the header h of a file of `bytes` bytes, checked against the file's
 * length before anything the header's numbers ask for is allocated */
static mygpt_status check_header(const int32_t h[7], uint64_t bytes, const char *path, mygpt_config *c,
                                 mygpt_error *err)
{
    *c = config_of(h);
    if (h[1] < 1 || h[4] < 1 || c->vocab_size < 1)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s is not a model file: read as llama2.c's, its header's hidden_dim %d, "
                          "n_kv_heads %d and vocab_size %d are no model's", path, h[1], h[4], h[5]);
    mygpt_error why = {0};
    if (mygpt_config_validate(c, &why) != MYGPT_OK) // the sizes' own message, said of the file
        return mygpt_fail(err, MYGPT_EFORMAT, "%s is not a model file: read as llama2.c's, its header (dim %d, "
                          "hidden_dim %d, %d layers, %d heads, %d kv heads, vocab %d, seq_len %d) describes none: %s",
                          path, h[0], h[1], h[2], h[3], h[4], h[5], h[6], why.message);
    const uint64_t want = HEADER_BYTES + 4 * file_floats(c);
    if (bytes != want)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: %llu bytes, not the %llu its header's model has (dim %d, "
                          "hidden_dim %d, %d layers, %d heads, %d kv heads, vocab %d, seq_len %d)", path,
                          (unsigned long long)bytes, (unsigned long long)want, h[0], h[1], h[2], h[3], h[4], h[5], h[6]);
    return MYGPT_OK;
}

int mygpt_llama2c_whole_model(int fd, uint64_t bytes)
{
    int32_t h[7];
    mygpt_config c;
    return bytes >= HEADER_BYTES && pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h &&
           check_header(h, bytes, "", &c, NULL) == MYGPT_OK;
}

int mygpt_llama2c_model_file(const char *path)
{
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    struct stat s;
    const int whole = fd >= 0 && fstat(fd, &s) == 0 && S_ISREG(s.st_mode) &&
                      mygpt_llama2c_whole_model(fd, (uint64_t)s.st_size);
    if (fd >= 0)
        close(fd);
    return whole;
}

/* The table's index of the file's tensor i (TENSORS' order, NTENSORS the classifier), and its name in run.c */
static int tensor_at(int i)
{
    return i < NTENSORS ? TENSORS[i] : MYGPT_PARAM_lmw;
}

static const char *name_at(int i)
{
    return i < NTENSORS ? NAMES[i] : "wcls";
}

/* Tensor i of g (tensor_at's) holding a NaN or an infinity: st, naming it and the first
 * such value (`then` after), which could only make a model that prints token 0 forever */
static mygpt_status check_finite(const mygpt_gpt *g, int i, const char *path, mygpt_status st, const char *then,
                                 mygpt_error *err)
{
    const size_t n = g->param_sizes[tensor_at(i)];
    const float *x = mygpt_param_tensor(&g->params, tensor_at(i));
    const size_t bad = mygpt_first_nonfinite(x, n);
    if (bad < n)
        return mygpt_fail(err, st, "%s: %s holds a non-finite value (%g at %zu)%s", path, name_at(i),
                          (double)x[bad], bad, then);
    return MYGPT_OK;
}

/* Reads tensor i of g (tensor_at's) at off, checked finite */
static mygpt_status read_tensor(mygpt_gpt *g, int fd, int i, uint64_t off, const char *path, mygpt_error *err)
{
    const size_t n = g->param_sizes[tensor_at(i)];
    MYGPT_TRY(read_at(fd, mygpt_param_tensor(&g->params, tensor_at(i)), n * sizeof(float), off, path, err));
    return check_finite(g, i, path, MYGPT_EFORMAT, "", err);
}

/* The model of the file of `bytes` bytes at fd: its header checked, then its tensors read */
static mygpt_status load_fd(mygpt_gpt **out, int fd, uint64_t bytes, const char *path, mygpt_error *err)
{
    int32_t h[7];
    if (bytes < HEADER_BYTES)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: %llu bytes, shorter than llama2.c's 28-byte header", path,
                          (unsigned long long)bytes);
    MYGPT_TRY(read_at(fd, h, sizeof h, 0, path, err));
    mygpt_config c;
    MYGPT_TRY(check_header(h, bytes, path, &c, err));
    mygpt_gpt *g;
    mygpt_error why = {0};
    mygpt_status st = mygpt_gpt_alloc(&g, &c, &why);
    if (st != MYGPT_OK)
        return mygpt_fail(err, st, "%s: %s", path, why.message);
    uint64_t off = HEADER_BYTES;
    for (int i = 0; i < NTENSORS && st == MYGPT_OK; i++) {
        st = read_tensor(g, fd, i, off, path, err);
        off += 4 * (uint64_t)g->param_sizes[TENSORS[i]];
    }
    off += 4 * rope_floats(&c); // recomputed where they are used
    if (st == MYGPT_OK && c.untied_head)
        st = read_tensor(g, fd, NTENSORS, off, path, err);
    if (st != MYGPT_OK) {
        mygpt_gpt_free(g);
        return st;
    }
    *out = g;
    return MYGPT_OK;
}

mygpt_status mygpt_llama2c_load(mygpt_gpt **out, const char *path, mygpt_error *err)
{
    *out = NULL;
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return mygpt_fail_open(err, path, errno);
    struct stat s;
    if (fstat(fd, &s) != 0 || !S_ISREG(s.st_mode)) {
        close(fd);
        return mygpt_fail(err, MYGPT_EIO, "cannot read %s: not a regular file", path);
    }
    const mygpt_status st = load_fd(out, fd, (uint64_t)s.st_size, path, err);
    close(fd);
    return st;
}

/* Writes the model g to f as llama2.c's file; 0 if a write failed */
static int write_model(FILE *f, const mygpt_gpt *g)
{
    const mygpt_config *c = &g->config;
    const int untied = mygpt_arch_get(c).untied_head;
    const int32_t h[7] = {c->embed_dim, mygpt_ffn_hidden(c), c->num_layers, c->num_heads, mygpt_kv_heads(c),
                          untied ? -c->vocab_size : c->vocab_size, c->max_seq_len};
    int ok = fwrite(h, sizeof h, 1, f) == 1;
    for (int i = 0; i < NTENSORS && ok; i++) {
        const size_t n = g->param_sizes[TENSORS[i]];
        ok = fwrite(mygpt_param_tensor(&g->params, TENSORS[i]), sizeof(float), n, f) == n;
    }
    // model.py's freqs_cos and freqs_sin (seq_len, head_size / 2), as run.c would compute them
    const int hs = c->embed_dim / c->num_heads;
    for (int table = 0; table < 2 && ok; table++)
        for (int t = 0; t < c->max_seq_len && ok; t++)
            for (int i = 0; i < hs / 2 && ok; i++) {
                const float freq = 1.0f / powf(10000.0f, (float)(2 * i) / (float)hs);
                const float val = (float)t * freq, x = table == 0 ? cosf(val) : sinf(val);
                ok = fwrite(&x, sizeof x, 1, f) == 1;
            }
    if (ok && untied)
        ok = fwrite(g->params.lmw, sizeof(float), g->param_sizes[MYGPT_PARAM_lmw], f) ==
             g->param_sizes[MYGPT_PARAM_lmw];
    return ok;
}

mygpt_status mygpt_llama2c_check_save(const mygpt_gpt *g, const char *path, mygpt_error *err)
{
    if (g->config.arch != MYGPT_ARCH_LLAMA)
        return mygpt_fail(err, MYGPT_EINVAL, "%s: llama2.c's file holds a llama model, not a %s", path,
                          mygpt_arch_name(g->config.arch));
    if (g->weights != MYGPT_WEIGHTS_FP32)
        return mygpt_fail(err, MYGPT_EINVAL, "%s: llama2.c's file holds float32 weights, not %s", path,
                          mygpt_weights_name(g->weights));
    if (g->config.rope != MYGPT_ROPE_INTERLEAVED) // run.c would rotate other channels together
        return mygpt_fail(err, MYGPT_EINVAL, "%s: llama2.c's file holds a model whose rotary pairs are interleaved "
                          "(run.c's), not halves (Hugging Face's)", path);
    return mygpt_checkpoint_check_path(path, err);
}

mygpt_status mygpt_llama2c_save(const mygpt_gpt *g, const char *path, mygpt_error *err)
{
    MYGPT_TRY(mygpt_llama2c_check_save(g, path, err));
    for (int i = 0; i <= NTENSORS; i++)
        if (i < NTENSORS || mygpt_arch_get(&g->config).untied_head)
            MYGPT_TRY(check_finite(g, i, path, MYGPT_ERANGE, ": not saved", err));
    sigset_t was;
    const int held = mygpt_hold_signals(&was);
    mygpt_status st;
    char tmp[4200];
    FILE *f = mygpt_temp_beside(path, tmp, sizeof tmp, &st, err);
    if (f)
        st = mygpt_commit_temp(f, tmp, path, write_model(f, g), err);
    mygpt_release_signals(held, &was);
    return st;
}
