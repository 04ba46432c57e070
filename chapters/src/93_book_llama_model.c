/*
 * 93_book_llama_model - Raschka's LLMs-from-scratch, ch05/07_gpt_to_llama,
 * converting-gpt-to-llama2.ipynb, sections 1.5-1.7: the TransformerBlock with RMSNorm, RoPE
 * attention and the SwiGLU FeedForward, and Llama2Model around it (no position embedding, an
 * untied out_head), run on a configuration small enough to print (vocabulary 50, context 8,
 * width 16, 2 heads, 2 layers, hidden size 24, float32). The weights are drawn as the
 * notebook's constructors draw them after torch.manual_seed(123): the Embedding's normal_,
 * then per block W_query, W_key, W_value, out_proj, fc1, fc2, fc3 (kaiming-uniform), then
 * out_head. Printed: the parameter count, the logits of five token ids under
 * torch.no_grad() (their first 8 columns) and the greedy next token at each position. The
 * notebook runs its model only with Meta's 7B weights; what this prints is what
 * tools/reference_book_llama.py --model prints from the notebook's cells.
 */
#include <stdio.h>

#include "chapter.h"

/* the notebook's keys, our sizes: emb_dim 16, n_heads 2, n_layers 2, hidden_dim 24 */
static const mygpt_config LLAMA2_CONFIG_MINI = {
    .vocab_size = 50, .embed_dim = 16, .num_heads = 2, .num_layers = 2, .max_seq_len = 8,
    .arch = MYGPT_ARCH_LLAMA, .ffn_hidden = 24, .rope = MYGPT_ROPE_HALVES, .untied_head = 1};

// lesson: draw
/* Llama2Model(cfg) after torch.manual_seed: each module draws as it is built. The notebook's
 * fc1 and fc2 are llama's w1 and w3 (C -> H), its fc3 is w2 (H -> C). */
static void draw_notebook_weights(const chapter *ch, mygpt_gpt *g, mygpt_rng *rng)
{
    const mygpt_config *cfg = &g->config;
    const size_t C = (size_t)cfg->embed_dim, V = (size_t)cfg->vocab_size, H = (size_t)mygpt_ffn_hidden(cfg);
    mygpt_params *w = &g->params;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_init_embedding(rng, w->wte, V, C, &err), &err); // tok_emb (V, C)
    for (size_t l = 0; l < (size_t)cfg->num_layers; l++) {
        float *att[4] = {w->wq + l * C * C, w->wk + l * C * C, w->wv + l * C * C, w->wo + l * C * C};
        for (int k = 0; k < 4; k++) // W_query, W_key, W_value, out_proj (C, C)
            chapter_check(ch, mygpt_init_linear(rng, att[k], NULL, C, C, &err), &err);
        chapter_check(ch, mygpt_init_linear(rng, w->fc1w + l * H * C, NULL, C, H, &err), &err); // fc1 (H, C)
        chapter_check(ch, mygpt_init_linear(rng, w->w3w + l * H * C, NULL, C, H, &err), &err);  // fc2 (H, C)
        chapter_check(ch, mygpt_init_linear(rng, w->fc2w + l * C * H, NULL, H, C, &err), &err); // fc3 (C, H)
    } // the RMSNorm weights are ones: no draw
    chapter_check(ch, mygpt_init_linear(rng, w->lmw, NULL, C, V, &err), &err); // out_head (V, C)
}
// end lesson: draw

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "93_book_llama_model",
                 "GPT to Llama 2, sections 1.5-1.7: Llama2Model on a small configuration after\n"
                 "torch.manual_seed(123): its parameters, the logits of five ids, the greedy next tokens.",
                 123, CH_SEED);
    mygpt_error err = {0};
    mygpt_rng rng = {0};
    mygpt_gpt *g = NULL;
    // lesson: model
    mygpt_rng_seed(&rng, ch.seed);
    chapter_check(&ch, mygpt_gpt_create_from(&g, &LLAMA2_CONFIG_MINI, &rng, &err), &err); // llama2.c's draws
    mygpt_rng_seed(&rng, ch.seed); // torch.manual_seed(123) again: the notebook's draws replace them
    draw_notebook_weights(&ch, g, &rng);
    const int64_t ids[5] = {3, 14, 15, 9, 26};
    chapter_check(&ch, mygpt_gpt_forward(g, ids, 1, 5, &err), &err); // logits (1, 5, V)
    // end lesson: model
    mygpt_param_counts pc;
    mygpt_gpt_counts(g, &pc);
    printf("Total number of parameters: ");
    ch_commas((long long)pc.total);
    const int V = g->config.vocab_size;
    const int64_t shape[3] = {1, 5, V}, first[2] = {5, 8}, next_shape[2] = {1, 5};
    printf("\nlogits.shape: ");
    ch_size(3, shape);
    float cols[5 * 8];
    int64_t next[5];
    for (int t = 0; t < 5; t++) {
        const float *row = g->acts.logits + (size_t)t * V;
        next[t] = 0;
        for (int v = 0; v < V; v++) {
            if (v < 8)
                cols[t * 8 + v] = row[v];
            if (row[v] > row[next[t]]) // argmax: the first of equal maxima
                next[t] = v;
        }
    }
    printf("\nlogits[0, :, :8]:\n ");
    ch_torch(cols, 2, first, NULL);
    printf("\nnext tokens: ");
    ch_torch_i64(next, 2, next_shape);
    printf("\n");
    mygpt_gpt_free(g);
    return 0;
}
