/*
 * 85_book_instruction_data - Raschka's *Build a Large Language Model (From Scratch)*,
 * chapter 7 (sections 7.2 and 7.3): the instruction data as the book prepares it. The
 * 1,100 entries of instruction-data.json, two of them as dicts and in Alpaca's prompt
 * template (format_input plus "### Response:"), the 85 / 5 / 10 % split in file order,
 * custom_collate_fn on the book's three small inputs (padded with 50256, targets shifted,
 * every padding token after the first -100), the cross-entropy that ignores -100, and the
 * training DataLoader (batch 8, shuffled with drop_last, allowed_max_length 1024, after
 * torch.manual_seed(123)): every batch's shape and the last batch's first inputs and
 * targets. It prints what the book prints, as tools/reference_book_ch7.py prints it with
 * PyTorch 1.13.
 *
 * Needs the GPT-2 vocabulary and instruction-data.json in the data folder
 * (scripts/fetch-data.sh copies it from corpus/); absent, it says so and exits 77
 * (skipped; 1 under CI=true).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instruct_chapter.h"
#include "finetune_setup.h"


/* Python's repr of a str (UTF-8): single quotes unless it holds ' and no ", the
 * backslash, the quote and control characters escaped; other characters as they are. */
static void print_py_str(const char *s)
{
    const int dq = strchr(s, '\'') && !strchr(s, '"');
    const char q = dq ? '"' : '\'';
    putchar(q);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\\' || *p == (unsigned char)q)
            printf("\\%c", *p);
        else if (*p == '\n')
            printf("\\n");
        else if (*p == '\r')
            printf("\\r");
        else if (*p == '\t')
            printf("\\t");
        else if (*p < 0x20 || *p == 0x7f)
            printf("\\x%02x", *p);
        else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0xa0) // U+0080..U+00A0 are not printable
            printf("\\x%02x", *++p);
        else
            putchar(*p);
    }
    putchar(q);
}

/* print(entry): {'instruction': ..., 'input': ..., 'output': ...} */
static void print_entry(const mygpt_instruct_entry *e)
{
    printf("{'instruction': ");
    print_py_str(e->instruction);
    printf(", 'input': ");
    print_py_str(e->input);
    printf(", 'output': ");
    print_py_str(e->output);
    printf("}\n");
}

/* print(format_input(entry) + f"\n\n### Response:\n{entry['output']}") */
static void print_prompt_and_response(const chapter *ch, const mygpt_instruct_entry *e)
{
    char *prompt;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_instruct_prompt(&prompt, e->instruction, e->input, &err), &err);
    printf("%s%s%s\n", prompt, MYGPT_INSTRUCT_RESPONSE, e->output);
    free(prompt);
}

/* F.cross_entropy(logits, targets) of a small batch (N rows of V) */
static float cross_entropy(const chapter *ch, const float *logits, const int64_t *targets, size_t N, int V)
{
    float loss, logp[8];
    mygpt_error err = {0};
    chapter_check(ch, mygpt_cross_entropy_forward(&loss, logp, logits, targets, N, V, &err), &err);
    return loss;
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "85_book_instruction_data",
                 "The book's chapter 7 (7.2, 7.3): instruction-data.json, two entries in Alpaca's\n"
                 "template, the 85/5/10 split, custom_collate_fn on three small inputs, the loss\n"
                 "ignoring -100, and the training DataLoader's batch shapes after\n"
                 "torch.manual_seed(123) (batch 8, shuffled, drop_last, allowed_max_length 1024).",
                 123, CH_SEED);
    char path[4200];
    mygpt_tokenizer *tok;
    instruct_chapter_data(&ch, &tok, path);
    mygpt_error err = {0};

    // data = json.load(file), and the book's split (below)
    instruct_splits split;
    chapter_check(&ch, instruct_splits_read(&split, path, 0, &err), &err);
    const mygpt_instruct_data data = split.data;
    printf("Number of entries: %zu\n", data.n);
    const size_t examples[2] = {50, 999};
    for (int k = 0; k < 2; k++) {
        if (examples[k] >= data.n)
            continue;
        printf("%s\n ", k ? "Another example entry:" : "Example entry:");
        print_entry(&data.entry[examples[k]]);
        printf("\n");
        print_prompt_and_response(&ch, &data.entry[examples[k]]);
        printf("\n");
    }

    // train_data = data[:train_portion], test_data = data[train_portion:train_portion + test_portion],
    // val_data = data[train_portion + test_portion:]
    const size_t n_train = split.n_train, n_test = split.n_test, n_val = split.n_val;
    printf("Training set length: %zu\n", n_train);
    printf("Validation set length: %zu\n", n_val);
    printf("Test set length: %zu\n\n", n_test);

    // inputs, targets = custom_collate_fn(([0, 1, 2, 3, 4], [5, 6], [7, 8, 9]))
    static const int64_t in1[] = {0, 1, 2, 3, 4}, in2[] = {5, 6}, in3[] = {7, 8, 9};
    const int64_t *toy[3] = {in1, in2, in3};
    const size_t toy_len[3] = {5, 2, 3};
    size_t T = mygpt_instruct_collate_length(toy_len, 3, 0);
    int64_t *x = chapter_alloc(&ch, 3 * T, sizeof *x), *y = chapter_alloc(&ch, 3 * T, sizeof *y);
    chapter_check(&ch,
                  mygpt_instruct_collate(x, y, &T, &(mygpt_instruct_items){toy, toy_len, NULL, 3}, 0,
                                         MYGPT_ENDOFTEXT_ID, &err),
                  &err);
    ch_torch_i64(x, 2, (int64_t[]){3, (int64_t)T});
    printf("\n");
    ch_torch_i64(y, 2, (int64_t[]){3, (int64_t)T});
    printf("\n\n");
    free(x);
    free(y);

    // the loss over [0, 1], over [0, 1, 1], and over [0, 1, -100]: the -100 row left out
    static const float logits_1[] = {-1.0f, 1.0f, -0.5f, 1.5f};
    static const float logits_2[] = {-1.0f, 1.0f, -0.5f, 1.5f, -0.5f, 1.5f};
    const float loss_1 = cross_entropy(&ch, logits_1, (const int64_t[]){0, 1}, 2, 2);
    const float loss_2 = cross_entropy(&ch, logits_2, (const int64_t[]){0, 1, 1}, 3, 2);
    const float loss_3 = cross_entropy(&ch, logits_2, (const int64_t[]){0, 1, MYGPT_IGNORE_INDEX}, 3, 2);
    ch_torch(&loss_1, 0, NULL, NULL);
    printf("\n");
    ch_torch(&loss_2, 0, NULL, NULL);
    printf("\n");
    ch_torch(&loss_3, 0, NULL, NULL);
    printf("\nloss_1 == loss_3: ");
    ch_torch_bool((const unsigned char[]){loss_1 == loss_3}, 0, NULL);
    printf("\n\n");

    // torch.manual_seed(123); train_dataset = InstructionDataset(train_data, tokenizer)
    // DataLoader(train_dataset, batch_size=8, collate_fn=partial(custom_collate_fn, allowed_max_length=1024),
    //            shuffle=True, drop_last=True)
    enum { BATCH = 8, ALLOWED = 1024 };
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    mygpt_instruct_dataset train;
    chapter_check(&ch, mygpt_instruct_dataset_init(&train, split.train, n_train, tok, &err), &err);
    int64_t *order = chapter_alloc(&ch, n_train ? n_train : 1, sizeof *order);
    mygpt_loader_iter(&rng, order, n_train);
    const size_t batches = n_train / BATCH;
    printf("Train loader:\n");
    x = y = NULL;
    for (size_t b = 0; b < batches; b++) {
        const int64_t *rows = order + b * BATCH;
        T = mygpt_instruct_batch_length(&train, rows, BATCH, ALLOWED);
        free(x);
        free(y);
        x = chapter_alloc(&ch, BATCH * T, sizeof *x); // (8, T)
        y = chapter_alloc(&ch, BATCH * T, sizeof *y); // (8, T)
        chapter_check(
            &ch, mygpt_instruct_batch(&train, rows, BATCH, &(mygpt_instruct_collation){ALLOWED, 0}, x, y, &T, &err),
            &err);
        ch_size(2, (int64_t[]){BATCH, (int64_t)T});
        printf(" ");
        ch_size(2, (int64_t[]){BATCH, (int64_t)T});
        printf("\n");
    }
    if (batches) { // print(inputs[0]), print(targets[0]) of the last batch
        printf("\n");
        ch_torch_i64(x, 1, (int64_t[]){(int64_t)T});
        printf("\n\n");
        ch_torch_i64(y, 1, (int64_t[]){(int64_t)T});
        printf("\n\n");
    }
    // len(loader): the validation and test loaders keep their last short batch
    printf("%zu training batches\n", batches);
    printf("%zu validation batches\n", (n_val + BATCH - 1) / BATCH);
    printf("%zu test batches\n", (n_test + BATCH - 1) / BATCH);

    free(x);
    free(y);
    free(order);
    mygpt_instruct_dataset_free(&train);
    instruct_splits_free(&split);
    mygpt_tokenizer_free(tok);
    return 0;
}
