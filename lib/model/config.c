/*
 * config.c - what a configuration may be: the architectures (whose GPT, and the
 * switches each sets) and the checks every model, trainer and file load runs first.
 */
#include <stddef.h>
#include <string.h>

#include "mygpt/gpt.h"
#include "base/base.h"

/* ---- architectures ------------------------------------------------------------------ */

static const char *const ARCH_NAMES[] = {"course", "llms-from-scratch", "gpt2"};

mygpt_arch_switches mygpt_arch_get(const mygpt_config *cfg)
{
    switch (cfg->arch) {
    case MYGPT_ARCH_LLMS_FROM_SCRATCH:
        return (mygpt_arch_switches){.qkv_bias = cfg->qkv_bias != 0, .out_bias = 1, .gelu_tanh = 1, .untied_head = 1};
    case MYGPT_ARCH_GPT2:
        return (mygpt_arch_switches){.qkv_bias = 1, .out_bias = 1, .gelu_tanh = 1, .untied_head = 0};
    default:
        return (mygpt_arch_switches){0};
    }
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
    return mygpt_fail(err, MYGPT_EINVAL, "unknown architecture '%s' (course, llms-from-scratch or gpt2)", name);
}

/* ---- checks ------------------------------------------------------------------- */

/* Largest size we accept for any single dimension: keeps int arithmetic in the
 * kernels safe. */
#define MAX_DIM (1 << 24)

mygpt_status mygpt_config_validate(const mygpt_config *cfg, mygpt_error *err)
{
    const struct { const char *name; int v; } dims[] = {
        {"vocab_size", cfg->vocab_size}, {"embed_dim", cfg->embed_dim},
        {"num_heads", cfg->num_heads},   {"num_layers", cfg->num_layers},
        {"max_seq_len", cfg->max_seq_len}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        if (dims[i].v < 1)
            return mygpt_fail(err, MYGPT_EINVAL, "%s must be at least 1, got %d", dims[i].name,
                              dims[i].v);
        if (dims[i].v > MAX_DIM)
            return mygpt_fail(err, MYGPT_EOVERFLOW, "%s=%d is larger than the supported %d",
                              dims[i].name, dims[i].v, MAX_DIM);
    }
    if ((unsigned)cfg->arch > MYGPT_ARCH_GPT2)
        return mygpt_fail(err, MYGPT_EINVAL, "unknown architecture %d", (int)cfg->arch);
    if (!(cfg->dropout >= 0.0 && cfg->dropout < 1.0))
        return mygpt_fail(err, MYGPT_EINVAL, "dropout must be in [0, 1), got %g", cfg->dropout);
    if (cfg->dropout != 0.0 && cfg->arch == MYGPT_ARCH_COURSE)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "the course's model has no dropout (llms-from-scratch and gpt2 do)");
    if (cfg->embed_dim % cfg->num_heads != 0)
        return mygpt_fail(err, MYGPT_EINVAL,
                          "embed_dim=%d is not divisible by num_heads=%d", cfg->embed_dim,
                          cfg->num_heads);
    mygpt_param_counts pc; // the parameters must fit in memory
    return mygpt_param_count(cfg, &pc, err);
}
