/*
 * 211_book_embedding - the book's chapter 2 (2.7 Creating token embeddings):
 * nn.Embedding(6, 3) after torch.manual_seed(123), its weight, the row of id 3, and the
 * rows of the ids [2, 3, 5, 1].
 */
#include <stdio.h>

#include "book_text.h"
#include "ch_tensor.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "211_book_embedding",
                 "The book's chapter 2, section 2.7: embedding_layer = nn.Embedding(6, 3) after\n"
                 "torch.manual_seed(123), its weight and its lookups of [3] and [2, 3, 5, 1].",
                 123, CH_SEED);
    enum { VOCAB_SIZE = 6, OUTPUT_DIM = 3 };
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    ch_tensor embedding_layer = ch_embedding_new(&ch, &rng, VOCAB_SIZE, OUTPUT_DIM);
    book_print_param(embedding_layer.data, 2, embedding_layer.shape);
    printf("\n");
    int64_t three[1] = {3}, input_ids[4] = {2, 3, 5, 1};
    ch_tensor ids[2] = {ch_view_i64(three, 1, (int64_t[]){1}), ch_view_i64(input_ids, 1, (int64_t[]){4})};
    for (int k = 0; k < 2; k++) { // print(embedding_layer(ids)): (len(ids), 3)
        ch_tensor out = ch_embedding_apply(&ch, &embedding_layer, NULL, &ids[k]);
        ch_torch(out.data, out.ndim, out.shape, "EmbeddingBackward0");
        printf("\n");
        ch_tensor_free(&out);
    }
    ch_tensor_free(&embedding_layer);
    return 0;
}
