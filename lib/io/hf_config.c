/*
 * hf_config.c - Hugging Face's config.json beside a gpt2 checkpoint (see io/hf_config.h),
 * read with the library's JSON reader.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mygpt/data.h"
#include "base/base.h"
#include "base/text.h"
#include "io/hf_config.h"
#include "io/json.h"

#define CONFIG_JSON_MAX (1u << 20) /* Hugging Face's config.json: a few hundred bytes */

mygpt_status mygpt_hf_config_json(mygpt_strbuf *sb, const mygpt_config *c)
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

int mygpt_path_beside(char *out, size_t n, const char *path, const char *file)
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

/* The sizes a config.json and a model share, as Hugging Face names them */
static const char *const SIZE_KEY[5] = {"vocab_size", "n_positions", "n_embd", "n_layer", "n_head"};

static int size_of(const mygpt_config *c, int i)
{
    const int size[5] = {c->vocab_size, c->max_seq_len, c->embed_dim, c->num_layers, c->num_heads};
    return size[i];
}

/* The first of SIZE_KEY's first n keys (n_head is the last) whose value in the object j
 * is not c's, with its text as written in `shown` (cut at 24 bytes, "missing", or "...
 * and more" for a key given twice); -1 when all agree. A key that is absent disagrees
 * only when `required`. */
static int disagreeing_size(const mygpt_json *j, const char *text, const mygpt_config *c, int n, bool required,
                            char shown[40])
{
    for (int i = 0; i < n; i++) {
        size_t count;
        long long v = -1;
        const size_t at = mygpt_json_get(j, 0, SIZE_KEY[i], &count);
        if ((count == 0 && !required) || (count == 1 && mygpt_json_integer(j, at, 0, INT32_MAX, &v) &&
                                           v == size_of(c, i)))
            continue;
        const int quoted = count && j->v[at].type == MYGPT_JSON_STRING;
        const size_t from = count ? j->v[at].start - (size_t)quoted : 0, to = count ? j->v[at].end + (size_t)quoted : 0;
        snprintf(shown, 40, "%.*s%s", (int)(to - from > 24 ? 24 : to - from), text + from,
                 count == 0 ? "missing" : count > 1 ? " and more" : "");
        return i;
    }
    return -1;
}

mygpt_status mygpt_hf_config_check(const char *conf, const mygpt_config *c, bool *present, mygpt_error *err)
{
    struct stat sb;
    *present = false;
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
    char shown[40];
    const int i = disagreeing_size(&j, text, c, 5, true, shown);
    if (i >= 0)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EINVAL, "%s describes another model (%s %s, this model's %d): "
                                         "not replaced (save elsewhere)", conf, SIZE_KEY[i], shown, size_of(c, i)));
    *present = true;
cleanup:
    mygpt_json_free(&j);
    free(text);
    return st;
}
mygpt_status mygpt_hf_config_heads(const char *path, const mygpt_config *sizes, int *heads, mygpt_error *err)
{
    char conf[4096], *text = NULL;
    struct stat sb;
    *heads = 0;
    if (!mygpt_path_beside(conf, sizeof conf, path, "config.json"))
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
    char shown[40];
    const int i = disagreeing_size(&j, text, sizes, 4, false, shown); // all but n_head, where given
    if (i >= 0)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s describes another model (%s %s, %s's %d): its "
                                         "heads are not this model's", conf, SIZE_KEY[i], shown, path,
                                         size_of(sizes, i)));
    if (sizes->embed_dim % v != 0)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: \"n_head\" %lld does not divide %s's width (n_embd "
                                         "%d): not this model's heads", conf, v, path, sizes->embed_dim));
    *heads = (int)v;
cleanup:
    mygpt_json_free(&j);
    free(text);
    return st;
}

