/*
 * 210_book_dataloader - the book's chapter 2 (2.6): create_dataloader_v1 over the-verdict
 * with batch_size=1, max_length=4, stride=1 (its first two batches), then with
 * batch_size=8, max_length=4, stride=4 (the first batch's inputs and targets).
 */
#include <stdio.h>
#include <stdlib.h>

#include "book_text.h"

/* print(batch): [tensor(inputs), tensor(targets)] of batch b (one row) */
static void print_pair(const chapter *ch, const mygpt_dataloader *dl, size_t b)
{
    int64_t inputs[4], targets[4];
    const int64_t shape[2] = {1, 4};
    mygpt_error err = {0};
    chapter_check(ch, mygpt_dataloader_batch(dl, b, inputs, targets, &err), &err);
    printf("[");
    ch_torch_i64(inputs, 2, shape);
    printf(", ");
    ch_torch_i64(targets, 2, shape);
    printf("]\n");
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "210_book_dataloader",
                 "The book's chapter 2, section 2.6: the first two batches of\n"
                 "create_dataloader_v1(batch_size=1, max_length=4, stride=1, shuffle=False), then the\n"
                 "first batch of batch_size=8, max_length=4, stride=4.",
                 0, 0);
    size_t len, n;
    char *raw_text = book_verdict(&ch, &len);
    mygpt_tokenizer *tok = book_gpt2(&ch);
    mygpt_error err = {0};
    int64_t *ids;
    chapter_check(&ch, mygpt_encode(tok, raw_text, len, &ids, &n, &err), &err);

    mygpt_dataloader dl; // batch_size=1, max_length=4, stride=1
    chapter_check(&ch, mygpt_dataloader_init(&dl, ids, n, 1, 4, 1, &err), &err);
    print_pair(&ch, &dl, 0); // first_batch = next(data_iter)
    print_pair(&ch, &dl, 1); // second_batch = next(data_iter)
    mygpt_dataloader_free(&dl);

    enum { BATCH = 8, MAX_LENGTH = 4 }; // stride = max_length: no overlap
    chapter_check(&ch, mygpt_dataloader_init(&dl, ids, n, BATCH, MAX_LENGTH, MAX_LENGTH, &err), &err);
    int64_t inputs[BATCH * MAX_LENGTH], targets[BATCH * MAX_LENGTH];
    const int64_t shape[2] = {BATCH, MAX_LENGTH};
    chapter_check(&ch, mygpt_dataloader_batch(&dl, 0, inputs, targets, &err), &err);
    printf("Inputs:\n ");
    ch_torch_i64(inputs, 2, shape);
    printf("\n\nTargets:\n ");
    ch_torch_i64(targets, 2, shape);
    printf("\n");
    mygpt_dataloader_free(&dl);
    free(ids);
    mygpt_tokenizer_free(tok);
    free(raw_text);
    return 0;
}
