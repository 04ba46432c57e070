/*
 * arch.c - whose GPT a configuration describes: the architectures' names and the
 * switches each sets (mygpt_arch_switches), which the parameter table and the block read.
 */
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "mygpt/config.h"
#include "base/base.h"

/* ---- architectures ------------------------------------------------------------------ */

static const char *const ARCH_NAMES[] = {"course", "llms-from-scratch", "gpt2", "nanogpt", "llama"};
_Static_assert(sizeof ARCH_NAMES / sizeof ARCH_NAMES[0] == MYGPT_ARCH_COUNT, "a name for each architecture");

mygpt_arch_switches mygpt_arch_get(const mygpt_config *cfg)
{
    switch (cfg->arch) {
    case MYGPT_ARCH_LLMS_FROM_SCRATCH:
        return (mygpt_arch_switches){.qkv_bias = cfg->qkv_bias != 0, .out_bias = 1, .gelu_tanh = 1, .untied_head = 1};
    case MYGPT_ARCH_GPT2:
        return (mygpt_arch_switches){.qkv_bias = 1, .out_bias = 1, .gelu_tanh = 1, .untied_head = 0};
    case MYGPT_ARCH_NANOGPT:
        return (mygpt_arch_switches){.bias_free = 1};
    case MYGPT_ARCH_LLAMA:
        return (mygpt_arch_switches){.untied_head = cfg->untied_head != 0, .bias_free = 1, .rmsnorm = 1, .rope = 1,
                                     .swiglu = 1};
    default:
        return (mygpt_arch_switches){0};
    }
}

int mygpt_llama_hidden_dim(int dim, int multiple_of)
{
    if (dim < 1 || dim > (1 << 24) || multiple_of < 1 || multiple_of > (1 << 24))
        return 0;
    const long long h = 2LL * (4LL * dim) / 3; // int(2 * hidden_dim / 3): floor, positive
    const long long m = multiple_of;
    const long long r = m * ((h + m - 1) / m);
    return r > (1 << 24) ? 0 : (int)r;
}

int mygpt_kv_heads(const mygpt_config *cfg)
{
    return cfg->num_kv_heads > 0 ? cfg->num_kv_heads : cfg->num_heads;
}

int mygpt_ffn_hidden(const mygpt_config *cfg)
{
    if (cfg->ffn_hidden > 0)
        return cfg->ffn_hidden;
    if (cfg->arch == MYGPT_ARCH_LLAMA)
        return mygpt_llama_hidden_dim(cfg->embed_dim, 256);
    return cfg->embed_dim <= INT_MAX / 4 ? 4 * cfg->embed_dim : INT_MAX; // (mygpt_config_validate refuses such a C)
}

int mygpt_head_size(const mygpt_config *cfg)
{
    return cfg->num_classes > 0 ? cfg->num_classes : cfg->vocab_size;
}

const char *mygpt_arch_name(mygpt_arch arch)
{
    return (unsigned)arch < sizeof ARCH_NAMES / sizeof ARCH_NAMES[0] ? ARCH_NAMES[arch] : "?";
}

mygpt_status mygpt_arch_parse(const char *name, mygpt_arch *out, mygpt_error *err)
{
    for (size_t i = 0; i < sizeof ARCH_NAMES / sizeof ARCH_NAMES[0]; i++)
        if (strcmp(name, ARCH_NAMES[i]) == 0) {
            *out = (mygpt_arch)i;
            return MYGPT_OK;
        }
    return mygpt_fail(err, MYGPT_EINVAL, "unknown architecture '%s' (course, llms-from-scratch, gpt2, nanogpt or llama)", name);
}
