/*
 * test_plan.c - a pass's plan (lib/model/block.h) is made once and kept: the same pass
 * over the same model takes the kept plan as it is, and any change the plan was made
 * from (the sizes, the code, the thread count, the packing, the tensors) makes a new one;
 * a model whose plan is kept or remade gives the bits of a model that plans afresh.
 */
#include <criterion/criterion.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "model/block.h"
#include "mygpt/gpt.h"

static const mygpt_config TINY = {.vocab_size = 11, .embed_dim = 8, .num_heads = 2, .num_layers = 2,
                                  .max_seq_len = 16, .arch = MYGPT_ARCH_GPT2};

static mygpt_pass_model model_of(const mygpt_gpt *g)
{
    return (mygpt_pass_model){.w = &g->params, .sizes = g->param_sizes, .arch = g->arch, .packed = g->packed};
}

/* Plans (B, T) over g in *mem, then marks the plan kept there (its first layer's W_q says
 * 0 columns, which no plan makes): returns whether the mark was still there, that is
 * whether the plan was kept rather than made again. */
static int plan_kept(mygpt_gpt *g, int B, int T, float **mem, size_t *len)
{
    mygpt_pass p = {.cfg = &g->config, .impl = g->impl, .B = B, .T = T};
    const mygpt_pass_model m = model_of(g);
    cr_assert_eq(mygpt_pass_plan(&p, &m, mem, len, NULL), MYGPT_OK);
    const int kept = p.layer[0].q.C == 0;
    cr_assert_eq(p.head.OC, TINY.vocab_size);
    p.layer[0].q.C = 0;
    return kept;
}

Test(plan, is_kept_until_what_it_was_made_from_changes)
{
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &TINY, 3, NULL), MYGPT_OK);
    float *mem = NULL;
    size_t len = 0;
    const int threads = omp_get_max_threads();
    cr_expect(!plan_kept(g, 2, 5, &mem, &len), "the first plan is made");
    cr_expect(plan_kept(g, 2, 5, &mem, &len), "the same pass again takes the kept plan");
    cr_expect(!plan_kept(g, 2, 6, &mem, &len), "another T makes a new plan");
    cr_expect(!plan_kept(g, 3, 6, &mem, &len), "another B makes a new plan");
    cr_expect(plan_kept(g, 3, 6, &mem, &len));
    g->impl = MYGPT_IMPL_REFERENCE;
    cr_expect(!plan_kept(g, 3, 6, &mem, &len), "other kernels make a new plan");
    g->impl = MYGPT_IMPL_FAST;
    cr_expect(!plan_kept(g, 3, 6, &mem, &len));
    omp_set_num_threads(threads + 1);
    cr_expect(!plan_kept(g, 3, 6, &mem, &len), "another thread count makes a new plan");
    omp_set_num_threads(threads);
    cr_expect(!plan_kept(g, 3, 6, &mem, &len));
    cr_assert_eq(mygpt_gpt_pack(g, NULL), MYGPT_OK);
    cr_expect(!plan_kept(g, 3, 6, &mem, &len), "packing the weights makes a new plan");
    mygpt_gpt_unpack(g);
    cr_expect(!plan_kept(g, 3, 6, &mem, &len), "dropping the packing makes a new plan");
    mygpt_gpt *other;
    cr_assert_eq(mygpt_gpt_create(&other, &TINY, 4, NULL), MYGPT_OK);
    cr_expect(!plan_kept(other, 3, 6, &mem, &len), "another model's tensors make a new plan");
    cr_expect(!plan_kept(g, 3, 6, &mem, &len));
    mygpt_gpt_free(other);
    free(mem);
    mygpt_gpt_free(g);
}

/* One model runs passes of changing sizes, packing and kernels, keeping and remaking its
 * plan; each pass's logits are those of a fresh model's first pass. */
Test(plan, kept_or_remade_gives_a_fresh_models_bits)
{
    static const struct { int B, T, pack, naive; } passes[] = {
        {2, 5, 0, 0}, {2, 5, 0, 0}, {1, 16, 0, 0}, {2, 5, 1, 0}, {2, 5, 1, 0}, {3, 7, 0, 1}, {2, 5, 0, 0},
    };
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &TINY, 4, NULL), MYGPT_OK);
    int64_t ids[3 * 16];
    for (int i = 0; i < 3 * 16; i++)
        ids[i] = (i * 7 + 3) % TINY.vocab_size;
    for (size_t k = 0; k < sizeof passes / sizeof passes[0]; k++) {
        const int B = passes[k].B, T = passes[k].T;
        if (passes[k].pack)
            cr_assert_eq(mygpt_gpt_pack(g, NULL), MYGPT_OK);
        else
            mygpt_gpt_unpack(g);
        g->impl = passes[k].naive ? MYGPT_IMPL_REFERENCE : MYGPT_IMPL_FAST;
        mygpt_gpt *fresh;
        cr_assert_eq(mygpt_gpt_create(&fresh, &TINY, 4, NULL), MYGPT_OK);
        fresh->impl = g->impl;
        cr_assert_eq(mygpt_gpt_forward(g, ids, B, T, NULL), MYGPT_OK);
        cr_assert_eq(mygpt_gpt_forward(fresh, ids, B, T, NULL), MYGPT_OK);
        const size_t n = (size_t)B * T * TINY.vocab_size;
        cr_expect(memcmp(g->acts.logits, fresh->acts.logits, n * sizeof(float)) == 0,
                  "pass %zu (B=%d, T=%d, packed %d, plain loops %d): other logits than a fresh model's", k, B, T,
                  passes[k].pack, passes[k].naive);
        mygpt_gpt_free(fresh);
    }
    mygpt_gpt_free(g);
}
