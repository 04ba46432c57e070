/*
 * 87_book_lora - Raschka's *Build a Large Language Model (From Scratch)*, appendix E:
 * parameter-efficient fine-tuning with LoRA, in appendix-E.ipynb's order. First the counts
 * the book prints for GPT-2 small with its 2-class head (from the parameter table: the
 * model is not built); then, on the model gpt_class_finetune.py builds with --test_mode (no
 * OpenAI weights here: vocabulary 50257, context 120, width 12, one block of 2 heads, no
 * qkv bias, drawn after torch.manual_seed(123)), with its head replaced by nn.Linear(12, 2)
 * after torch.manual_seed(123): the accuracies of 10 batches; the trainable count before
 * and after freezing every parameter and with every nn.Linear wrapped in LinearWithLoRA
 * (rank 16, alpha 16: each A drawn from the generator where the notebook draws it, after the
 * accuracies' shuffle; B zeros); the accuracies again (unchanged: B is zero);
 * train_classifier_simple with AdamW (lr 8e-4, weight decay 0.1, 5 epochs, eval_freq 50,
 * eval_iter 5) training only A and B; the accuracies over the whole loaders. What it prints
 * is what tools/reference_book_ch6.py --lora prints with PyTorch 1.13.
 *
 * --smoke: the same with one epoch (tools/reference_book_ch6.py --lora --smoke).
 * Needs the GPT-2 vocabulary and the three CSV files in the data folder (scripts/fetch-data.sh
 * copies them from corpus/); absent, it says so and exits 77 (skipped; 1 under CI=true).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chapter.h"
#include "classifier_train.h"

enum { RANK = 16, ALPHA = 16, BATCH = 8 };

/* f"Total trainable ...: {n:,}" */
static void print_count(chapter *ch, const char *what, size_t n)
{
    mygpt_strbuf sb = {0};
    chapter_check(ch, mygpt_py_int_commas(&sb, (long long)n), NULL);
    printf("Total trainable %s: %s\n", what, sb.data);
    mygpt_sb_free(&sb);
}

/* calc_accuracy_loader over num_batches of each loader (0: all), printed as the notebook */
static void print_accuracies(chapter *ch, mygpt_gpt *g, mygpt_spam_loader *const loaders[3], mygpt_rng *rng,
                             size_t num_batches, int64_t *x, int64_t *y)
{
    static const char *names[3] = {"Training", "Validation", "Test"};
    mygpt_error err = {0};
    for (int s = 0; s < 3; s++) {
        double acc;
        chapter_check(ch, classifier_loader_accuracy(g, loaders[s], s == 0, rng, num_batches, x, y, &acc, &err), &err);
        printf("%s accuracy: %.2f%%\n", names[s], acc * 100);
    }
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "87_book_lora",
                 "The book's appendix E: LoRA. The trainable counts of GPT-2 small with the 2-class\n"
                 "head before and after freezing and with every Linear wrapped in LinearWithLoRA\n"
                 "(rank 16, alpha 16); then on gpt_class_finetune.py's --test_mode model: accuracies,\n"
                 "the same counts, train_classifier_simple training only the adapters (AdamW lr 8e-4,\n"
                 "5 epochs) and the accuracies after.",
                 0, CH_SMOKE);
    mygpt_error err = {0};

    // model_configs["gpt2-small (124M)"] with out_head = nn.Linear(768, 2): counted from the
    // table, its 124 M floats never allocated
    printf("GPT-2 small (124M) with the 2-class head, as the book prints it:\n");
    mygpt_config big = {.vocab_size = 50257, .embed_dim = 768, .num_heads = 12, .num_layers = 12,
                        .max_seq_len = 1024, .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH, .qkv_bias = 1, .num_classes = 2};
    mygpt_param_counts pc;
    chapter_check(&ch, mygpt_param_count(&big, &pc, &err), &err);
    print_count(&ch, "parameters before", pc.total);
    print_count(&ch, "parameters after", 0); // for param in model.parameters(): requires_grad = False
    big.lora_rank = RANK;
    big.lora_alpha = ALPHA;
    chapter_check(&ch, mygpt_param_count(&big, &pc, &err), &err);
    print_count(&ch, "LoRA parameters", pc.lora);

    printf("\nThe --test_mode model:\n");
    static const char *const files[5] = {"sms_spam_train.csv", "sms_spam_validation.csv", "sms_spam_test.csv",
                                         "encoder.json", "vocab.bpe"};
    char dir[4096], path[3][4200];
    chapter_data_dir(&ch, dir, sizeof dir, files, 5);
    for (int i = 0; i < 3; i++)
        snprintf(path[i], sizeof path[i], "%s/%s", dir, files[i]);
    mygpt_tokenizer *tok;
    chapter_check(&ch, mygpt_tokenizer_load_dir(&tok, dir, &err), &err);
    mygpt_spam_dataset ds[3];
    for (int s = 0; s < 3; s++)
        chapter_check(&ch, mygpt_spam_dataset_load(&ds[s], path[s], tok, s ? ds[0].max_length : 0,
                                                   MYGPT_ENDOFTEXT_ID, &err), &err);
    // torch.manual_seed(123); the loaders (batch 8; the training one shuffled, drop_last)
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 123);
    mygpt_spam_loader train, train_eval, val, test;
    chapter_check(&ch, mygpt_spam_loader_init(&train, &ds[0], BATCH, 1, &err), &err);
    chapter_check(&ch, mygpt_spam_loader_init(&train_eval, &ds[0], BATCH, 1, &err), &err); // iter() again
    chapter_check(&ch, mygpt_spam_loader_init(&val, &ds[1], BATCH, 0, &err), &err);
    chapter_check(&ch, mygpt_spam_loader_init(&test, &ds[2], BATCH, 0, &err), &err);
    mygpt_spam_loader *const loaders[3] = {&train_eval, &val, &test};

    // model = GPTModel(BASE_CONFIG) from the generator at 123; torch.manual_seed(123);
    // model.out_head = nn.Linear(12, 2) (num_classes 2: mygpt draws the head that way)
    const mygpt_config cfg = {.vocab_size = 50257, .embed_dim = 12, .num_heads = 2, .num_layers = 1,
                              .max_seq_len = 120, .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH, .num_classes = 2};
    mygpt_gpt *g;
    chapter_check(&ch, mygpt_gpt_create_from(&g, &cfg, &rng, &err), &err);
    const size_t T = ds[0].max_length;
    int64_t *x = chapter_alloc(&ch, BATCH * T, sizeof *x), y[BATCH];
    // torch.manual_seed(123); calc_accuracy_loader(..., num_batches=10): the training loader's
    // shuffle draws from the generator, and the adapters' A come after it
    mygpt_rng_seed(&rng, 123);
    print_accuracies(&ch, g, loaders, &rng, 10, x, y);
    print_count(&ch, "parameters before", g->num_parameters);
    print_count(&ch, "parameters after", 0);
    // replace_linear_with_lora(model, rank=16, alpha=16); only the adapters train
    chapter_check(&ch, mygpt_lora_add(g, RANK, ALPHA, &rng, &err), &err);
    mygpt_trainer *tr;
    chapter_check(&ch, mygpt_trainer_create(&tr, g, &err), &err);
    chapter_check(&ch, mygpt_trainer_freeze_for_lora(tr, &err), &err);
    print_count(&ch, "LoRA parameters", mygpt_trainer_trainable_count(tr));
    mygpt_rng_seed(&rng, 123);
    print_accuracies(&ch, g, loaders, &rng, 10, x, y);

    // torch.manual_seed(123); AdamW(model.parameters(), lr=8e-4, weight_decay=0.1);
    // train_classifier_simple(num_epochs=5, eval_freq=50, eval_iter=5)
    mygpt_rng_seed(&rng, 123);
    mygpt_optimizer opt;
    mygpt_adamw_init(&opt, 8e-4);
    opt.weight_decay = 0.1;
    const classifier_run run = {.epochs = ch.smoke ? 1 : 5, .eval_freq = 50, .eval_iter = 5};
    long seen;
    chapter_check(&ch, classifier_train(stdout, tr, &opt, &train, &train_eval, &val, &rng, &run, x, y, &seen, &err),
                  &err);
    printf("Examples seen: %ld\n", seen);
    print_accuracies(&ch, g, loaders, &rng, 0, x, y);

    mygpt_optimizer_free(&opt);
    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
    free(x);
    mygpt_spam_loader_free(&train);
    mygpt_spam_loader_free(&train_eval);
    mygpt_spam_loader_free(&val);
    mygpt_spam_loader_free(&test);
    for (int s = 0; s < 3; s++)
        mygpt_spam_dataset_free(&ds[s]);
    mygpt_tokenizer_free(tok);
    return 0;
}
