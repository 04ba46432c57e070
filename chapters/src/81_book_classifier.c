/*
 * 81_book_classifier - Raschka's *Build a Large Language Model (From Scratch)*, chapter 6
 * (sections 6.5-6.7): classification fine-tuning on the SMS spam texts. The model is the one
 * the book's gpt_class_finetune.py builds with --test_mode (no OpenAI weights here): its
 * GPTModel with vocabulary 50257, context 120, width 12, one block of 2 heads, no qkv bias,
 * no dropout, drawn after torch.manual_seed(123). Every parameter is frozen, the output head
 * becomes nn.Linear(12, 2) after torch.manual_seed(123), and the last block and the final
 * LayerNorm train again; then, as the chapter: the accuracies of 10 batches and the losses
 * of 5 before fine-tuning (6.6), train_classifier_simple with AdamW (lr 5e-5, weight decay
 * 0.1, 5 epochs, eval_freq 50, eval_iter 5: its log, 6.7) and the accuracies over the whole
 * loaders. The loss and the accuracy read the last position's logits. What it prints is what
 * tools/reference_book_ch6.py --train prints with PyTorch 1.13.
 *
 * --smoke: the same with one epoch (tools/reference_book_ch6.py --train --smoke).
 * Needs the GPT-2 vocabulary and the three CSV files in the data folder (scripts/fetch-data.sh
 * copies them from corpus/); absent, it says so and exits 77 (skipped; 1 under CI=true).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chapter.h"
#include "classifier_train.h"


int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "81_book_classifier",
                 "The book's chapter 6 (6.5-6.7) with gpt_class_finetune.py's --test_mode model:\n"
                 "the output head replaced by nn.Linear(12, 2), everything frozen but the last block,\n"
                 "the final LayerNorm and the head; accuracies and losses before fine-tuning,\n"
                 "train_classifier_simple's log (AdamW, 5 epochs), the accuracies after.",
                 0, CH_SMOKE);
    static const char *const files[5] = {"sms_spam_train.csv", "sms_spam_validation.csv", "sms_spam_test.csv",
                                         "encoder.json", "vocab.bpe"};
    char dir[4096], path[3][4200];
    chapter_data_dir(&ch, dir, sizeof dir, files, 5);
    for (int i = 0; i < 3; i++)
        snprintf(path[i], sizeof path[i], "%s/%s", dir, files[i]);
    mygpt_error err = {0};
    mygpt_tokenizer *tok;
    chapter_check(&ch, mygpt_tokenizer_load_dir(&tok, dir, &err), &err);
    mygpt_spam_dataset ds[3];
    for (int s = 0; s < 3; s++)
        chapter_check(&ch, mygpt_spam_dataset_load(&ds[s], path[s], tok, s ? ds[0].max_length : 0,
                                                   MYGPT_ENDOFTEXT_ID, &err), &err);

    // torch.manual_seed(123); the loaders (batch 8; the training one shuffled, drop_last)
    enum { BATCH = 8 };
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 123);
    mygpt_spam_loader train, train_eval, val, test;
    chapter_check(&ch, mygpt_spam_loader_init(&train, &ds[0], BATCH, 1, &err), &err);
    chapter_check(&ch, mygpt_spam_loader_init(&train_eval, &ds[0], BATCH, 1, &err), &err); // iter() again
    chapter_check(&ch, mygpt_spam_loader_init(&val, &ds[1], BATCH, 0, &err), &err);
    chapter_check(&ch, mygpt_spam_loader_init(&test, &ds[2], BATCH, 0, &err), &err);

    // model = GPTModel(BASE_CONFIG) from the generator at 123; for param in model.parameters():
    // param.requires_grad = False; torch.manual_seed(123); model.out_head = nn.Linear(12, 2)
    // (num_classes 2: mygpt draws the head that way); the last block and final_norm train
    const mygpt_config cfg = {.vocab_size = 50257, .embed_dim = 12, .num_heads = 2, .num_layers = 1,
                              .max_seq_len = 120, .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH, .num_classes = 2};
    mygpt_gpt *g;
    mygpt_trainer *tr;
    chapter_check(&ch, mygpt_gpt_create_from(&g, &cfg, &rng, &err), &err);
    chapter_check(&ch, mygpt_trainer_create(&tr, g, &err), &err);
    chapter_check(&ch, mygpt_trainer_freeze_for_classification(tr, &err), &err);
    printf("Trainable parameters: %zu of %zu\n", mygpt_trainer_trainable_count(tr), g->num_parameters);

    const size_t T = ds[0].max_length;
    int64_t *x = chapter_alloc(&ch, BATCH * T, sizeof *x), y[BATCH];
    // 6.6: torch.manual_seed(123); calc_accuracy_loader(..., num_batches=10), calc_loss_loader(..., 5)
    mygpt_rng_seed(&rng, 123);
    static const char *split_names[3] = {"Training", "Validation", "Test"};
    mygpt_spam_loader *loaders[3] = {&train_eval, &val, &test};
    for (int s = 0; s < 3; s++) {
        double acc;
        chapter_check(&ch, classifier_loader_accuracy(g, loaders[s], s == 0, &rng, 10, x, y, &acc, &err), &err);
        printf("%s accuracy: %.2f%%\n", split_names[s], acc * 100);
    }
    for (int s = 0; s < 3; s++) {
        double loss;
        chapter_check(&ch, classifier_loader_loss(g, loaders[s], s == 0, &rng, 5, x, y, &loss, &err), &err);
        printf("%s loss: %.3f\n", split_names[s], loss);
    }

    // 6.7: torch.manual_seed(123); AdamW(model.parameters(), lr=5e-5, weight_decay=0.1);
    // train_classifier_simple(num_epochs=5, eval_freq=50, eval_iter=5)
    mygpt_rng_seed(&rng, 123);
    mygpt_optimizer opt;
    mygpt_adamw_init(&opt, 5e-5);
    opt.weight_decay = 0.1;
    const classifier_run run = {.epochs = ch.smoke ? 1 : 5, .eval_freq = 50, .eval_iter = 5};
    long seen;
    chapter_check(&ch, classifier_train(stdout, tr, &opt, &train, &train_eval, &val, &rng, &run, x, y, &seen, &err),
                  &err);
    printf("Examples seen: %ld\n", seen);
    for (int s = 0; s < 3; s++) { // calc_accuracy_loader over every batch
        double acc;
        chapter_check(&ch, classifier_loader_accuracy(g, loaders[s], s == 0, &rng, 0, x, y, &acc, &err), &err);
        printf("%s accuracy: %.2f%%\n", split_names[s], acc * 100);
    }

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
