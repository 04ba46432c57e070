/*
 * 80_book_spam_data - Raschka's *Build a Large Language Model (From Scratch)*, chapter 6
 * (section 6.3): the SMS spam texts as the book's SpamDataset makes them (GPT-2's
 * tokenizer, every text padded with 50256 to the training set's longest, 120 tokens;
 * validation and test padded or cut to that length) and its DataLoaders (batch 8,
 * torch.manual_seed(123); the training loader shuffled, dropping its last short batch).
 * It prints what the book prints, then the first training batch's labels and first text,
 * as tools/reference_book_ch6.py prints them with PyTorch 1.13.
 *
 * Needs the GPT-2 vocabulary and the three CSV files in the data folder (scripts/fetch-data.sh
 * copies them from corpus/); absent, it says so and exits 77 (skipped; 1 under CI=true).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "finetune_setup.h"
#include "spam_chapter.h"


int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "80_book_spam_data",
                 "The book's chapter 6 (6.3): SpamDataset over sms_spam_{train,validation,test}.csv\n"
                 "(GPT-2's tokenizer, padded with 50256 to the longest training text) and its\n"
                 "DataLoaders (batch 8, the training one shuffled with drop_last) after\n"
                 "torch.manual_seed(123): the batch shapes and counts, and the first training batch.",
                 123, CH_SEED);
    mygpt_error err = {0};
    mygpt_tokenizer *tok;
    mygpt_spam_dataset ds[3];
    char dir[SPAM_DIR_MAX];
    spam_chapter_data(&ch, &tok, ds, dir);
    printf("%zu\n", ds[0].max_length); // print(train_dataset.max_length)

    // torch.manual_seed(123); DataLoader(train_dataset, batch_size=8, shuffle=True, drop_last=True);
    // the validation and test loaders in order, keeping their last short batch
    enum { BATCH = 8 };
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    spam_loaders loaders;
    chapter_check(&ch, spam_loaders_init(&loaders, ds, BATCH, &err), &err);
    mygpt_spam_loader *loader[3] = {&loaders.train, &loaders.val, &loaders.test};

    // for input_batch, target_batch in train_loader: pass
    const size_t T = ds[0].max_length;
    int64_t *first = chapter_alloc(&ch, BATCH * T, sizeof *first); // (8, T)
    int64_t *x = chapter_alloc(&ch, BATCH * T, sizeof *x);
    int64_t first_labels[BATCH], y[BATCH];
    size_t rows = 0;
    chapter_check(&ch, mygpt_spam_loader_epoch(loader[0], &rng, 1, &err), &err);
    for (size_t b = 0; b < loader[0]->num_batches; b++) {
        rows = mygpt_spam_loader_batch_rows(loader[0], b);
        int64_t *inputs = b ? x : first, *labels = b ? y : first_labels; // keep the first batch
        chapter_check(&ch, mygpt_spam_loader_batch(loader[0], b, inputs, labels, &err), &err);
    }
    printf("Train loader:\n");
    printf("Input batch dimensions: ");
    ch_size(2, (int64_t[]){(int64_t)rows, (int64_t)T});
    printf("\nLabel batch dimensions ");
    ch_size(1, (int64_t[]){(int64_t)rows});
    printf("\n%zu training batches\n", loader[0]->num_batches);
    printf("%zu validation batches\n", loader[1]->num_batches);
    printf("%zu test batches\n", loader[2]->num_batches);

    printf("\nThe first training batch's labels (1 = spam):\n");
    ch_torch_i64(first_labels, 1, (int64_t[]){BATCH});
    printf("\nIts first text's token ids (padded with 50256):\n");
    ch_torch_i64(first, 1, (int64_t[]){(int64_t)T});
    printf("\n");

    spam_loaders_free(&loaders);
    spam_datasets_free(ds);
    free(first);
    free(x);
    mygpt_tokenizer_free(tok);
    return 0;
}
