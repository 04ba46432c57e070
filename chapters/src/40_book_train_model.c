/*
 * 40_book_train_model - Raschka's *Build a Large Language Model (From Scratch)*, appendix D
 * (adding bells and whistles to the training loop), as the repository's notebook runs it:
 * D.1 the warmup's length (20 % of the steps); D.3 the largest gradient of a fresh GPTModel
 * before and after clip_grad_norm_(max_norm=1.0); D.4 train_model, chapter 5's loop with a
 * linear warmup from 1e-5 to the peak 0.001, a cosine decay to 1e-5 and gradient clipping
 * from the end of the warmup (trainer/book_train.c with lib/learn/schedule.c and clip.c), 15
 * epochs of GPT_CONFIG_124M (context 256) on the-verdict from torch.manual_seed(123), its
 * log and samples (tools/reference_book_appD.py runs it in PyTorch: the first 13 lines agree,
 * later ones part in the last digits, chapters/ERRATA.md).
 * --book: the printed book's train_model, which clips from the step after the warmup.
 * --smoke: the same code on one block of that width for one epoch (its gradients are
 * clipped too), checked line for line by scripts/chapters.sh.
 */
#include <stdio.h>
#include <stdlib.h>

#include "book_train.h"
#include "verdict.h"

/* print(find_highest_gradient(model)): the largest gradient of any parameter */
static void print_highest_gradient(const mygpt_trainer *tr)
{
    const size_t n = tr->model->num_parameters;
    float max = tr->grads_memory[0];
    for (size_t i = 1; i < n; i++)
        if (tr->grads_memory[i] > max)
            max = tr->grads_memory[i];
    ch_torch(&max, 0, NULL, NULL);
    printf("\n");
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "40_book_train_model",
                 "The book's appendix D: learning-rate warmup, cosine decay and gradient clipping;\n"
                 "train_model runs GPTModel (GPT_CONFIG_124M, context 256) on the-verdict for 15 epochs,\n"
                 "its log and samples. Takes many minutes (a 162M-parameter model, 135 steps).",
                 0, CH_SMOKE | CH_BOOK);
    verdict v;
    verdict_load(&ch, &v);
    mygpt_error err = {0};
    // GPT_CONFIG_124M with context_length 256; --smoke: one such block, one epoch (a model
    // just wide enough that its gradient norm passes 1: clipping changes its steps)
    const mygpt_arch book = MYGPT_ARCH_LLMS_FROM_SCRATCH;
    const mygpt_config cfg = ch.smoke ? (mygpt_config){50257, 768, 12, 1, 256, book, 0, 0.1}
                                      : (mygpt_config){50257, 768, 12, 12, 256, book, 0, 0.1};
    const size_t B = 2, T = 256;
    const long n_epochs = ch.smoke ? 1 : 15;

    // torch.manual_seed(123); create_dataloader_v1(...) as in chapter 5 (they draw nothing yet)
    book_data d;
    book_data_init(&ch, &v, B, T, &d);
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 123);

    // D.1: total_steps = len(train_loader) * n_epochs; warmup_steps = int(0.2 * total_steps)
    const long total_steps = (long)d.train.num_batches * n_epochs;
    const long warmup_steps = (long)(0.2 * (double)total_steps);
    printf("%ld\n", warmup_steps);

    // D.1 and D.2 each loop over train_loader for n_epochs (drawing its shuffles, training
    // nothing); D.3 takes the last batch of D.2's loop
    for (long e = 0; e < 2 * n_epochs; e++)
        chapter_check(&ch, mygpt_dataloader_epoch(&d.train, &rng, 1, &err), &err);
    chapter_check(&ch, mygpt_dataloader_batch(&d.train, d.train.num_batches - 1, d.x, d.y, &err), &err);
    // D.3: torch.manual_seed(123); model = GPTModel(...); loss.backward(), in training mode
    mygpt_rng_seed(&rng, 123);
    mygpt_gpt *g;
    mygpt_trainer *tr;
    chapter_check(&ch, mygpt_gpt_create_from(&g, &cfg, &rng, &err), &err);
    chapter_check(&ch, mygpt_trainer_create(&tr, g, &err), &err);
    tr->dropout_rng = &rng;
    float loss;
    chapter_check(&ch, mygpt_trainer_forward(tr, d.x, d.y, (int)B, (int)T, &loss, &err), &err);
    chapter_check(&ch, mygpt_trainer_backward(tr, &err), &err);
    print_highest_gradient(tr);
    chapter_check(&ch, mygpt_trainer_clip_grad_norm(tr, 1.0, NULL, &err), &err);
    print_highest_gradient(tr);
    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);

    // D.4: torch.manual_seed(123); model = GPTModel(...);
    // optimizer = AdamW(model.parameters(), lr=peak_lr, weight_decay=0.1) with peak_lr = 0.001
    // (the book leaves lr= out: AdamW's default, the same 0.001)
    mygpt_rng_seed(&rng, 123);
    chapter_check(&ch, mygpt_gpt_create_from(&g, &cfg, &rng, &err), &err);
    chapter_check(&ch, mygpt_trainer_create(&tr, g, &err), &err);
    tr->dropout_rng = &rng; // model.train()
    mygpt_optimizer opt;
    mygpt_adamw_init(&opt, 0.001);
    opt.weight_decay = 0.1;

    // train_model(..., n_epochs=15, eval_freq=5, eval_iter=1, start_context="Every effort moves you",
    //             warmup_steps=warmup_steps, initial_lr=1e-5, min_lr=1e-5)
    const mygpt_lr_schedule schedule = {.peak = opt.lr, .initial = 1e-5, .min = 1e-5,
                                        .warmup_steps = warmup_steps, .total_steps = total_steps, .cosine = 1};
    const book_run run = {.epochs = n_epochs, .eval_every = 5, .eval_batches = 1, .tok = v.tok,
                          .prompt = d.prompt, .n_prompt = d.n_prompt, .sample_tokens = ch.smoke ? 5 : 50,
                          .progress = stderr, .schedule = &schedule, .clip_norm = 1.0,
                          // if global_step >= warmup_steps: clip (the printed book: > warmup_steps)
                          .clip_from = ch.book ? warmup_steps + 1 : warmup_steps, .step_word = "Iter"};
    long steps;
    chapter_check(&ch, book_train(stdout, tr, &opt, &d.train, &d.val, &rng, &run, d.x, d.y, &steps, &err), &err);

    mygpt_trainer_free(tr);
    mygpt_optimizer_free(&opt);
    book_data_free(&d);
    mygpt_gpt_free(g);
    verdict_free(&v);
    return 0;
}
