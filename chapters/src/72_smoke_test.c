/*
 * 72_smoke_test - document 004, "Wire-up: from data to attention": a batch from
 * the data pipeline, through Embed, through single-head causal self-attention.
 *
 * Stand-in: the document reads TinyStories' valid.bin (step 03), which does not
 * exist here. A stream of 20,000 random token ids (torch.randint(0, 4096, ...)
 * after torch.manual_seed(SEED)) stands in, batched the same way (get_batch: random
 * offsets, x = data[i : i + seq_len], y = data[i + 1 : i + 1 + seq_len]).
 * CausalSelfAttention (step 05, not shown) is W_q, W_k, W_v, W_o = nn.Linear(d, d,
 * bias=False) around one causal head; only shapes are printed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "doc004_embed.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "72_smoke_test",
                 "Document 004 smoke test: get_batch(data, 2, 12) -> Embed(4096, 64, 64) ->\n"
                 "CausalSelfAttention(64, 64); prints the shape after each stage. Random token\n"
                 "ids stand in for TinyStories' valid.bin.", 0, CH_SEED | CH_SEED_UNSEEN);
    enum { V = 4096, D = 64, MAXSEQ = 64, NDATA = 20000, B = 2, T = 12 };
    mygpt_rng rng = {0};
    mygpt_error err = {0};
    mygpt_rng_seed(&rng, ch.seed);

    // data = load_token_array(...): the stand-in token stream
    int64_t *data = chapter_alloc(&ch, NDATA, sizeof(int64_t));
    chapter_check(&ch, mygpt_randint(&rng, data, NDATA, 0, V, &err), &err);
    // x, y = get_batch(data, batch_size=2, seq_len=12); the smoke test only uses x
    ch_tensor x = ch_tensor_i64(&ch, 2, (int64_t[]){B, T});
    int64_t ix[B];
    chapter_check(&ch, mygpt_randint(&rng, ix, B, 0, NDATA - T, &err), &err);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            x.ids[b * T + t] = data[ix[b] + t];
    printf("x: ");
    ch_print_tuple(&x);

    // embed = Embed(4096, 64, 64); e = embed(x)
    embed em;
    embed_create(&ch, &em, &rng, V, D, MAXSEQ);
    ch_tensor e = embed_apply(&ch, &em, &x);
    printf("\nafter embed: ");
    ch_print_tuple(&e);

    // attn = CausalSelfAttention(d_model=64, max_seq_len=64); a = attn(e)
    ch_tensor w[4]; // W_q, W_k, W_v, W_o: nn.Linear(64, 64, bias=False), weight (out, in)
    for (int m = 0; m < 4; m++) {
        w[m] = ch_tensor_f32(&ch, 2, (int64_t[]){D, D});
        chapter_check(&ch, mygpt_init_linear(&rng, w[m].data, NULL, D, D, &err), &err);
    }
    ch_tensor q = ch_linear_apply(&ch, &e, &w[0]), k = ch_linear_apply(&ch, &e, &w[1]);
    ch_tensor v = ch_linear_apply(&ch, &e, &w[2]);
    ch_tensor att = ch_tensor_f32(&ch, q.ndim, q.shape); // one head: the output has q's shape
    const size_t scratch_len = mygpt_attention_scratch_size((int)q.shape[1], (int)q.shape[2], 1);
    float *scratch = chapter_alloc(&ch, scratch_len, sizeof(float));
    const mygpt_attention_shape shape = {(int)q.shape[0], (int)q.shape[1], (int)q.shape[2], 1}; // one head
    chapter_check(&ch, mygpt_attention_forward(att.data, NULL, (mygpt_qkv){q.data, k.data, v.data}, scratch,
                                               scratch_len, shape, MYGPT_IMPL_REFERENCE, &err), &err);
    ch_tensor a = ch_linear_apply(&ch, &att, &w[3]);
    printf("\nafter attention: ");
    ch_print_tuple(&a);
    printf("\n");

    ch_tensor *all[] = {&x, &e, &q, &k, &v, &att, &a, &w[0], &w[1], &w[2], &w[3]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ch_tensor_free(all[i]);
    free(scratch);
    free(data);
    embed_free(&em);
    return 0;
}
