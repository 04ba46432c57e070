/*
 * 401_book_dummy_gpt - the book's chapter 4 (4.1 Coding an LLM architecture): the batch
 * of "Every effort moves you" and "Every day holds a", and DummyGPTModel(GPT_CONFIG_124M)
 * after torch.manual_seed(123): token and position embeddings, dropout (a new module is
 * in training mode), placeholder blocks and norm that return their input, and the
 * output head nn.Linear(768, 50257, bias=False); its logits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book_text.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "401_book_dummy_gpt",
                 "The book's chapter 4, section 4.1: a batch of two texts and the logits of\n"
                 "DummyGPTModel(GPT_CONFIG_124M) after torch.manual_seed(123).",
                 123, CH_SEED);
    enum { B = 2, T = 4, VOCAB = 50257, CONTEXT = 1024, EMB = 768 };
    const double drop_rate = 0.1;
    mygpt_tokenizer *tok = book_gpt2(&ch);
    const char *texts[B] = {"Every effort moves you", "Every day holds a"};
    int64_t batch[B * T]; // torch.stack([torch.tensor(tokenizer.encode(txt)) ...], dim=0)
    for (int b = 0; b < B; b++) {
        size_t n;
        int64_t *ids = book_encode(&ch, tok, texts[b], &n);
        if (n != T) {
            fprintf(stderr, "%s: \"%s\" has %zu tokens, not the %d torch.stack needs\n", ch.name, texts[b], n, T);
            return 1;
        }
        memcpy(batch + b * T, ids, sizeof(int64_t) * T);
        free(ids);
    }
    ch_torch_i64(batch, 2, (int64_t[]){B, T});
    printf("\n");

    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    mygpt_error err = {0};
    float *tok_emb = chapter_alloc(&ch, (size_t)VOCAB * EMB, sizeof(float));
    float *pos_emb = chapter_alloc(&ch, (size_t)CONTEXT * EMB, sizeof(float));
    float *out_head = chapter_alloc(&ch, (size_t)VOCAB * EMB, sizeof(float));
    float *logits = chapter_alloc(&ch, (size_t)B * T * VOCAB, sizeof(float));
    chapter_check(&ch, mygpt_init_embedding(&rng, tok_emb, VOCAB, EMB, &err), &err);
    chapter_check(&ch, mygpt_init_embedding(&rng, pos_emb, CONTEXT, EMB, &err), &err);
    chapter_check(&ch, mygpt_init_linear(&rng, out_head, NULL, EMB, VOCAB, &err), &err);

    // x = tok_emb(in_idx) + pos_emb(torch.arange(seq_len)); x = drop_emb(x): (B, T, EMB)
    float x[B * T * EMB];
    uint8_t keep[B * T * EMB];
    const mygpt_embedding_tables tables = {tok_emb, VOCAB, pos_emb, CONTEXT};
    chapter_check(&ch, mygpt_embedding_forward(x, batch, tables, B, T, EMB, &err), &err);
    chapter_check(&ch, mygpt_dropout_mask(&rng, keep, B * T * EMB, drop_rate, &err), &err);
    mygpt_dropout_apply(x, x, keep, B * T * EMB, drop_rate);
    // the DummyTransformerBlocks and DummyLayerNorm return x; logits = out_head(x)
    chapter_check(&ch, mygpt_matmul(logits, x, out_head, NULL, B * T, EMB, VOCAB, &err), &err);
    const int64_t shape[3] = {B, T, VOCAB};
    printf("Output shape: ");
    ch_size(3, shape);
    printf("\n");
    ch_torch(logits, 3, shape, "UnsafeViewBackward0");
    printf("\n");
    free(tok_emb);
    free(pos_emb);
    free(out_head);
    free(logits);
    mygpt_tokenizer_free(tok);
    return 0;
}
