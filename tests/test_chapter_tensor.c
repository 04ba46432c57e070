/*
 * test_chapter_tensor.c - the chapters print shapes and parameter counts read off
 * tensors (chapters/src/ch_tensor.c), not written by hand: each operation's output
 * shape must follow from its inputs' shapes.
 */
#include <criterion/criterion.h>

#include "ch_tensor.h"

static const chapter CH = {.name = "test", .seed = 0};

static void expect_shape(const ch_tensor *t, int ndim, const int64_t *shape)
{
    cr_assert_eq(t->ndim, ndim);
    for (int i = 0; i < ndim; i++)
        cr_expect_eq(t->shape[i], shape[i], "dim %d: %lld, not %lld", i, (long long)t->shape[i],
                     (long long)shape[i]);
}

Test(chapter_tensor, shapes_follow_from_the_inputs)
{
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 1);
    ch_tensor tok = ch_embedding_new(&CH, &rng, 11, 6), pos = ch_embedding_new(&CH, &rng, 9, 6);
    expect_shape(&tok, 2, (int64_t[]){11, 6});
    cr_expect_eq(ch_numel(&tok) + ch_numel(&pos), 11 * 6 + 9 * 6);
    ch_tensor ids = ch_tensor_i64(&CH, 2, (int64_t[]){3, 7});
    for (size_t i = 0; i < ch_numel(&ids); i++)
        ids.ids[i] = (int64_t)(i % 11);
    ch_tensor e = ch_embedding_apply(&CH, &tok, &pos, &ids);
    expect_shape(&e, 3, (int64_t[]){3, 7, 6});
    /* with positions = without + pos[t] */
    ch_tensor plain = ch_embedding_apply(&CH, &tok, NULL, &ids);
    ch_tensor plus = ch_add_positions(&CH, &plain, &pos);
    expect_shape(&plus, 3, (int64_t[]){3, 7, 6});
    for (size_t i = 0; i < ch_numel(&e); i++)
        cr_assert_eq(e.data[i], plus.data[i]);
    ch_tensor w = ch_tensor_f32(&CH, 2, (int64_t[]){4, 6});
    ch_tensor y = ch_linear_apply(&CH, &e, &w);
    expect_shape(&y, 3, (int64_t[]){3, 7, 4});
    ch_tensor *all[] = {&tok, &pos, &ids, &e, &plain, &plus, &w, &y};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ch_tensor_free(all[i]);
}
