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
                 "ids stand in for TinyStories' valid.bin.", 0, CH_SEED);
    enum { V = 4096, D = 64, MAXSEQ = 64, NDATA = 20000, B = 2, T = 12 };
    mygpt_rng rng = {0};
    mygpt_error err = {0};
    mygpt_rng_seed(&rng, ch.seed);

    // data = load_token_array(...): the stand-in token stream
    int64_t *data = chapter_alloc(&ch, NDATA, sizeof(int64_t));
    chapter_check(&ch, mygpt_randint(&rng, data, NDATA, 0, V, &err), &err);
    // x, y = get_batch(data, batch_size=2, seq_len=12); the smoke test only uses x
    int64_t ix[B], x[B * T];
    chapter_check(&ch, mygpt_randint(&rng, ix, B, 0, NDATA - T, &err), &err);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            x[b * T + t] = data[ix[b] + t];
    const int64_t xs[2] = {B, T};
    printf("x: ");
    ch_tuple(2, xs);

    embed e;
    embed_create(&ch, &e, &rng, V, D, MAXSEQ);
    float emb[B * T * D];
    embed_forward(&ch, &e, emb, x, B, T);
    const int64_t es[3] = {B, T, D};
    printf("\nafter embed: ");
    ch_tuple(3, es);

    // attn = CausalSelfAttention(d_model=64, max_seq_len=64); a = attn(e)
    float *w = chapter_alloc(&ch, 4 * D * D, sizeof(float)); // W_q, W_k, W_v, W_o (out, in)
    for (int m = 0; m < 4; m++)
        chapter_check(&ch, mygpt_init_linear(&rng, w + m * D * D, NULL, D, D, &err), &err);
    float q[B * T * D], k[B * T * D], v[B * T * D], att[B * T * D], a[B * T * D];
    const size_t scratch_len = mygpt_attention_scratch_size(T, D, 1); // one thread is plenty here
    float *scratch = chapter_alloc(&ch, scratch_len, sizeof(float));
    chapter_check(&ch, mygpt_matmul(q, emb, w + 0 * D * D, NULL, B * T, D, D, &err), &err);
    chapter_check(&ch, mygpt_matmul(k, emb, w + 1 * D * D, NULL, B * T, D, D, &err), &err);
    chapter_check(&ch, mygpt_matmul(v, emb, w + 2 * D * D, NULL, B * T, D, D, &err), &err);
    chapter_check(&ch, mygpt_attention_forward(att, q, k, v, scratch, scratch_len, B, T, D, 1, &err), &err); // one head
    chapter_check(&ch, mygpt_matmul(a, att, w + 3 * D * D, NULL, B * T, D, D, &err), &err);
    printf("\nafter attention: ");
    ch_tuple(3, es);
    printf("\n");
    free(scratch);
    free(w);
    free(data);
    embed_free(&e);
    return 0;
}
