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
 * is what tools/reference_book_ch6.py --lora prints with PyTorch 1.13. `mygpt finetune
 * --task classify --lora 16` runs the same on a checkpoint of the user's.
 *
 * --smoke: the same with one epoch (tools/reference_book_ch6.py --lora --smoke).
 * Needs the GPT-2 vocabulary and the three CSV files in the data folder (scripts/fetch-data.sh
 * copies them from corpus/); absent, it says so and exits 77 (skipped; 1 under CI=true).
 */
#include <stdio.h>

#include "classifier_train.h"
#include "finetune_setup.h"
#include "spam_chapter.h"

enum { RANK = 16, ALPHA = 16 };

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
    print_trainable_count(stdout, "parameters before", pc.total);
    // for param in model.parameters(): param.requires_grad = False: none is left (this model is
    // not built; the --test_mode model's count below is summed over a trainer's mask)
    print_trainable_count(stdout, "parameters after", 0);
    big.lora_rank = RANK;
    big.lora_alpha = ALPHA;
    chapter_check(&ch, mygpt_param_count(&big, &pc, &err), &err);
    print_trainable_count(stdout, "LoRA parameters", pc.lora);

    printf("\nThe --test_mode model:\n");
    // torch.manual_seed(123); the loaders (batch 8; the training one shuffled, drop_last)
    spam_run r;
    spam_run_init(&ch, &r);

    // model = GPTModel(BASE_CONFIG) from the generator at 123; torch.manual_seed(123);
    // model.out_head = nn.Linear(12, 2) (num_classes 2: mygpt draws the head that way)
    const mygpt_config cfg = book_test_mode_config(2);
    mygpt_gpt *g;
    spam_run_fits(&ch, &r, cfg.max_seq_len, "the --test_mode model");
    chapter_check(&ch, mygpt_gpt_create_from(&g, &cfg, &r.rng, &err), &err);
    // torch.manual_seed(123); calc_accuracy_loader(..., num_batches=10): the training loader's
    // shuffle draws from the generator, and the adapters' A come after it
    mygpt_rng_seed(&r.rng, 123);
    chapter_check(&ch, spam_print_accuracies(stdout, g, &r.l, &r.rng, 10, r.x, r.y, &err), &err);
    mygpt_trainer *tr; // only the adapters train
    chapter_check(&ch, lora_wrap_print(stdout, g, RANK, ALPHA, &r.rng, &tr, &err), &err);
    mygpt_rng_seed(&r.rng, 123);
    chapter_check(&ch, spam_print_accuracies(stdout, g, &r.l, &r.rng, 10, r.x, r.y, &err), &err);

    // torch.manual_seed(123); AdamW(model.parameters(), lr=8e-4, weight_decay=0.1);
    // train_classifier_simple(num_epochs=5, eval_freq=50, eval_iter=5): the adapters alone
    chapter_check(&ch, spam_finetune_print(stdout, tr, &r.l, &r.rng, 8e-4, ch.smoke ? 1 : 5, r.x, r.y, &err), &err);

    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
    spam_run_free(&r);
    return 0;
}
