/*
 * 212_book_input_embeddings - the book's chapter 2 (2.8 Encoding word positions): the
 * first batch of 8 windows of 4 ids of the-verdict, its token embeddings
 * (nn.Embedding(50257, 256)), the position embeddings of 0..3 and their sum; the notebook
 * prints their shapes (the values are drawn from the generator after chapter 211's, as the
 * notebook runs on, but none is printed).
 */
#include <stdio.h>
#include <stdlib.h>

#include "book_text.h"
#include "ch_tensor.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "212_book_input_embeddings",
                 "The book's chapter 2, section 2.8: a batch of token ids, and the shapes of its\n"
                 "token embeddings, the position embeddings and their sum.",
                 0, 0);
    size_t len, n;
    char *raw_text = book_verdict(&ch, &len);
    mygpt_tokenizer *tok = book_gpt2(&ch);
    mygpt_error err = {0};
    int64_t *ids;
    chapter_check(&ch, mygpt_encode(tok, raw_text, len, &ids, &n, &err), &err);
    enum { BATCH = 8, MAX_LENGTH = 4, OUTPUT_DIM = 256, CONTEXT_LENGTH = MAX_LENGTH };
    mygpt_dataloader dl;
    chapter_check(&ch, mygpt_dataloader_init(&dl, ids, n, BATCH, MAX_LENGTH, MAX_LENGTH, &err), &err);
    ch_tensor inputs = ch_tensor_i64(&ch, 2, (int64_t[]){BATCH, MAX_LENGTH});
    ch_tensor targets = ch_tensor_i64(&ch, 2, inputs.shape);
    chapter_check(&ch, mygpt_dataloader_batch(&dl, 0, inputs.ids, targets.ids, &err), &err);
    printf("Token IDs:\n ");
    ch_torch_i64(inputs.ids, 2, inputs.shape);
    printf("\n\nInputs shape:\n ");
    ch_print_size(&inputs);
    printf("\n");

    // the notebook's generator: torch.manual_seed(123), nn.Embedding(6, 3), then these two
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 123);
    ch_tensor small = ch_embedding_new(&ch, &rng, 6, 3);
    ch_tensor tok_emb = ch_embedding_new(&ch, &rng, (int)mygpt_tokenizer_vocab_size(tok), OUTPUT_DIM);
    ch_tensor pos_emb = ch_embedding_new(&ch, &rng, CONTEXT_LENGTH, OUTPUT_DIM);
    ch_tensor arange = ch_tensor_i64(&ch, 1, (int64_t[]){CONTEXT_LENGTH}); // torch.arange(max_length)
    for (int t = 0; t < CONTEXT_LENGTH; t++)
        arange.ids[t] = t;
    ch_tensor token_embeddings = ch_embedding_apply(&ch, &tok_emb, NULL, &inputs);
    ch_tensor pos_embeddings = ch_embedding_apply(&ch, &pos_emb, NULL, &arange);
    ch_tensor input_embeddings = ch_add_positions(&ch, &token_embeddings, &pos_emb); // (8, 4, 256)
    ch_tensor *shown[3] = {&token_embeddings, &pos_embeddings, &input_embeddings};
    for (int k = 0; k < 3; k++) {
        ch_print_size(shown[k]);
        printf("\n");
    }
    ch_tensor *all[] = {&inputs, &targets, &small, &tok_emb, &pos_emb, &arange, &token_embeddings,
                        &pos_embeddings, &input_embeddings};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ch_tensor_free(all[i]);
    mygpt_dataloader_free(&dl);
    free(ids);
    mygpt_tokenizer_free(tok);
    free(raw_text);
    return 0;
}
