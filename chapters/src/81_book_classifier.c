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
 *
 * --gpt2 DIR: the book's own run (its chapter-6 notebook, gpt_class_finetune.py without
 * --test_mode): the model is the Hugging Face GPT-2 in DIR (model.safetensors and its
 * config.json: GPT-2 small, 124M, is the book's), its head replaced by nn.Linear(768, 2)
 * after torch.manual_seed(123), the rest as above. The book prints, before fine-tuning,
 * "Training accuracy: 46.25%", "Validation accuracy: 45.00%", "Test accuracy: 48.75%",
 * "Training loss: 2.453", "Validation loss: 2.583", "Test loss: 2.322"; then a log from
 * "Ep 1 (Step 000000): Train loss 2.153, Val loss 2.392" to "Ep 5 (Step 000600): Train loss
 * 0.083, Val loss 0.074", its last epoch "Training accuracy: 100.00% | Validation accuracy:
 * 97.50%", and over the whole loaders 97.21%, 97.32% and 95.67%. Not run here: there are
 * no GPT-2 weights on this machine (what is checked is that the flag loads a Hugging Face
 * folder and refuses a model that is not GPT-2's vocabulary).
 * Needs the GPT-2 vocabulary and the three CSV files in the data folder (scripts/fetch-data.sh
 * copies them from corpus/); absent, it says so and exits 77 (skipped; 1 under CI=true).
 */
#include <stdio.h>
#include <string.h>

#include "classifier_train.h"
#include "finetune_setup.h"
#include "spam_chapter.h"


int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "81_book_classifier",
                 "The book's chapter 6 (6.5-6.7) with gpt_class_finetune.py's --test_mode model:\n"
                 "the output head replaced by nn.Linear(12, 2), everything frozen but the last block,\n"
                 "the final LayerNorm and the head; accuracies and losses before fine-tuning,\n"
                 "train_classifier_simple's log (AdamW, 5 epochs), the accuracies after.",
                 0, CH_SMOKE | CH_GPT2);
    mygpt_error err = {0};
    // torch.manual_seed(123); the loaders (batch 8; the training one shuffled, drop_last)
    spam_run r;
    spam_run_init(&ch, &r);

    // model = GPTModel(BASE_CONFIG) from the generator at 123; for param in model.parameters():
    // param.requires_grad = False; torch.manual_seed(123); model.out_head = nn.Linear(12, 2)
    // (num_classes 2: mygpt draws the head that way); the last block and final_norm train
    const mygpt_config cfg = book_test_mode_config(2);
    mygpt_gpt *g;
    mygpt_trainer *tr;
    if (ch.gpt2) { // the book's own run: GPT-2's weights, then torch.manual_seed(123); out_head = nn.Linear(768, 2)
        mygpt_gpt *lm;
        chapter_check_flag(&ch, "--gpt2", finetune_model_load(&lm, ch.gpt2, &err), &err);
        char model[4200];
        snprintf(model, sizeof model, "--gpt2 %s", ch.gpt2);
        spam_run_fits(&ch, &r, lm->config.max_seq_len, model);
        chapter_check(&ch, classifier_from_lm(&g, lm, 2, &err), &err);
        mygpt_gpt_free(lm);
        g->config.dropout = 0.0; // BASE_CONFIG's drop_rate
    } else {
        spam_run_fits(&ch, &r, cfg.max_seq_len, "the --test_mode model");
        chapter_check(&ch, mygpt_gpt_create_from(&g, &cfg, &r.rng, &err), &err);
    }
    chapter_check(&ch, mygpt_trainer_create(&tr, g, &err), &err);
    chapter_check(&ch, mygpt_trainer_freeze_for_classification(tr, &err), &err);
    printf("Trainable parameters: %zu of %zu\n", mygpt_trainer_trainable_count(tr), g->num_parameters);

    // 6.6: torch.manual_seed(123); calc_accuracy_loader(..., num_batches=10), calc_loss_loader(..., 5)
    mygpt_rng_seed(&r.rng, 123);
    chapter_check(&ch, spam_print_accuracies(stdout, g, &r.l, &r.rng, 10, r.x, r.y, &err), &err);
    chapter_check(&ch, spam_print_losses(stdout, g, &r.l, &r.rng, 5, r.x, r.y, &err), &err);

    // 6.7: torch.manual_seed(123); AdamW(model.parameters(), lr=5e-5, weight_decay=0.1);
    // train_classifier_simple(num_epochs=5, eval_freq=50, eval_iter=5), then the accuracies
    chapter_check(&ch, spam_finetune_print(stdout, tr, &r.l, &r.rng, 5e-5, ch.smoke ? 1 : 5, r.x, r.y, &err), &err);

    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
    spam_run_free(&r);
    return 0;
}
