/*
 * 61_verdict_dataloader - document 003: The Verdict (Edith Wharton, 1908) through
 * GPT-2's tokenizer and create_dataloader_v1(batch_size=8, max_length=4, stride=4,
 * shuffle=False); the first batch of token ids, then token + position embeddings.
 *
 * Needs the text and the GPT-2 vocabulary in the data folder (mygpt_data_dir;
 * scripts/fetch-data.sh fills it), or --text PATH. When they are absent it says how to
 * get them and exits 77, which the checker reports as skipped, never as passed (under
 * CI=true, absent data exits 1; chapter_data_dir). Present but broken files are an error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch_tensor.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "61_verdict_dataloader",
                 "Document 003: the first batch of create_dataloader_v1(the-verdict, batch_size=8,\n"
                 "max_length=4, stride=4, shuffle=False), then token and position embeddings\n"
                 "(torch.manual_seed(123); nn.Embedding(50257, 256), nn.Embedding(4, 256)).\n"
                 "Data folder: $MYGPT_DATA, else build/data beside the program (a link to the\n"
                 "source tree's data/, filled by scripts/fetch-data.sh), else PREFIX/share/mygpt.\n"
                 "The text defaults to the-verdict.txt there.",
                 123, CH_SEED | CH_SEED_UNSEEN | CH_TEXT);
    // the data folder's vocabulary (and its the-verdict.txt unless --text names the text);
    // absent: a skip, exit 77 (under CI=true, where absent data is a failure, 1)
    char data[4096], text_path[4200];
    mygpt_error err = {0};
    const char *const needed[3] = {"encoder.json", "vocab.bpe", "the-verdict.txt"}; /* --text is read below */
    chapter_data_dir(&ch, data, sizeof data, needed, ch.text ? 2 : 3);
    snprintf(text_path, sizeof text_path, "%s/the-verdict.txt", data);
    const char *path = ch.text ? ch.text : text_path;

    mygpt_tokenizer *tok;
    chapter_check(&ch, mygpt_tokenizer_load_dir(&tok, data, &err), &err);
    size_t tn;
    char *raw_text;
    const mygpt_status st = mygpt_read_file(path, &raw_text, &tn, &err);
    if (st != MYGPT_OK)
        mygpt_tokenizer_free(tok);
    chapter_check(&ch, st, &err);
    int64_t *ids;
    size_t n;
    const mygpt_status encoded = mygpt_encode(tok, raw_text, tn, &ids, &n, &err);
    if (encoded != MYGPT_OK) { // (the text's file named: the tokenizer sees only its bytes)
        const mygpt_error inner = err;
        snprintf(err.message, sizeof err.message, "%s%.4000s: %.4000s", ch.text ? "--text " : "", path, inner.message);
    }
    chapter_check(&ch, encoded, &err);

    enum { BATCH = 8, MAX_LENGTH = 4, STRIDE = 4, OUTPUT_DIM = 256, CONTEXT = MAX_LENGTH };
    mygpt_dataloader dl;
    chapter_check(&ch, mygpt_dataloader_init(&dl, ids, n, BATCH, MAX_LENGTH, STRIDE, &err), &err);
    if (dl.num_batches == 0)
        chapter_refuse(&ch, "%s%s: its %zu tokens hold no batch of %d windows of %d tokens (one needs %d tokens)",
                       ch.text ? "--text " : "", path, n, BATCH, MAX_LENGTH, BATCH * STRIDE + 1);
    // inputs, targets = next(iter(dataloader)): (batch_size, max_length) each
    ch_tensor inputs = ch_tensor_i64(&ch, 2, (int64_t[]){dl.batch_size, dl.max_length});
    ch_tensor targets = ch_tensor_i64(&ch, 2, inputs.shape);
    chapter_check(&ch, mygpt_dataloader_batch(&dl, 0, inputs.ids, targets.ids, &err), &err);
    printf("Token IDs:\n ");                 // print("Token IDs:\n", inputs)
    ch_torch_i64(inputs.ids, inputs.ndim, inputs.shape);
    printf("\n\nInputs shape:\n ");          // print("\nInputs shape:\n", inputs.shape)
    ch_print_size(&inputs);
    printf("\n");

    // token_embedding_layer = nn.Embedding(vocab_size, output_dim); then the positions
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    ch_tensor tok_emb = ch_embedding_new(&ch, &rng, (int)mygpt_tokenizer_vocab_size(tok), OUTPUT_DIM);
    ch_tensor pos_emb = ch_embedding_new(&ch, &rng, CONTEXT, OUTPUT_DIM);
    ch_tensor arange = ch_tensor_i64(&ch, 1, (int64_t[]){CONTEXT}); // torch.arange(context_length)
    for (int t = 0; t < CONTEXT; t++)
        arange.ids[t] = t;
    ch_tensor token_embeddings = ch_embedding_apply(&ch, &tok_emb, NULL, &inputs);
    ch_tensor pos_embeddings = ch_embedding_apply(&ch, &pos_emb, NULL, &arange);
    ch_tensor input_embeddings = ch_add_positions(&ch, &token_embeddings, &pos_emb);
    printf("\n");
    ch_print_size(&token_embeddings);
    printf("\n\n");
    ch_print_size(&pos_embeddings);
    printf("\n\n");
    ch_print_size(&input_embeddings);
    printf("\n");
    ch_tensor *all[] = {&inputs, &targets, &tok_emb, &pos_emb, &arange, &token_embeddings,
                        &pos_embeddings, &input_embeddings};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ch_tensor_free(all[i]);
    free(ids);
    free(raw_text);
    mygpt_tokenizer_free(tok);
    return 0;
}
