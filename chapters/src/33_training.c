/*
 * 33_training - the course's chapter 14: "the SGD loop from Chapter 4 ... a small text
 * dataset, and watch the loss go down". Chapter 32's GPT-2-vocabulary model trains on
 * the-verdict with torch.optim.SGD, then (again from the same start) with AdamW; every
 * 10 steps it prints, in LLMs-from-scratch's form, the step's training loss and the mean
 * validation loss. Writes the loss curves (33_loss_curves.svg) and the AdamW model
 * (verdict_gpt.safetensors, which chapter 34 speaks with) into the figures folder;
 * tokens/s goes to stderr (a timing is not part of the expected text).
 *
 * Exactly tools/reference_train.py's loop; its losses are PyTorch's within float32
 * rounding (the expected file compares them to the last printed digit).
 */
#include <stdio.h>
#include <stdlib.h>

#include "verdict.h"

#define MAX_POINTS 16

typedef struct run {
    float step[MAX_POINTS], train[MAX_POINTS], val[MAX_POINTS];
    int n;
    long long tokens;
} run;

static void on_eval(void *ctx, long step, int epoch, float train_loss, double val_loss, long long tokens)
{
    run *r = ctx;
    printf("Ep %d (Step %06ld): Train loss %.3f, Val loss %.3f\n", epoch, step, (double)train_loss, val_loss);
    if (r->n < MAX_POINTS) {
        r->step[r->n] = (float)step;
        r->train[r->n] = train_loss;
        r->val[r->n] = (float)val_loss;
        r->n++;
    }
    r->tokens = tokens;
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "33_training",
                 "The course's chapter 14: GPT(50257, 64, 4, 2, 32) (torch.manual_seed(123)) trained on\n"
                 "the-verdict with SGD (lr 0.1, 40 steps), then AdamW (lr 0.01, 60 steps); writes\n"
                 "33_loss_curves.svg and verdict_gpt.safetensors into FIGURES.",
                 0, CH_FIGURES | CH_SMOKE);
    verdict v;
    verdict_load(&ch, &v);
    const mygpt_config cfg = verdict_config(&v);
    // what it writes, asked before it trains: its own files there are replaced, nothing else
    char path[4200];
    verdict_model_path(&ch, path, sizeof path);
    mygpt_gpt_free(verdict_saved_model(&ch, &v, path));
    chapter_check_figure(&ch, "33_loss_curves.svg");
    printf("GPT(%d, %d, %d, %d, %d), torch.manual_seed(%d), on the-verdict: %zu training and %zu\n"
           "validation tokens, batches of %d x %d, %zu batches per epoch\n",
           cfg.vocab_size, cfg.embed_dim, cfg.num_heads, cfg.num_layers, cfg.max_seq_len, VERDICT_SEED,
           v.ntrain, v.nval, VERDICT_BATCH, VERDICT_CONTEXT, v.train.num_batches);

    // SGD: torch.manual_seed(123); model = GPT(...); torch.optim.SGD(model.parameters(), lr=0.1)
    run sgd = {0}, adamw = {0};
    mygpt_error err = {0};
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, VERDICT_SEED);
    mygpt_gpt *g;
    chapter_check(&ch, mygpt_gpt_create_from(&g, &cfg, &rng, &err), &err);
    mygpt_optimizer opt;
    mygpt_sgd_init(&opt, 0.1);
    printf("\nSGD (lr 0.1), 40 steps:\n");
    double t0 = chapter_now_s();
    verdict_train(&ch, &v, g, &rng, &opt, ch.smoke ? 3 : 40, ch.smoke ? 1 : 10, on_eval, &sgd);
    fprintf(stderr, "33_training: SGD %lld tokens, %.0f tokens/s\n", sgd.tokens, sgd.tokens / (chapter_now_s() - t0));
    printf("tokens seen: ");
    ch_commas(sgd.tokens);
    printf("\n");
    mygpt_optimizer_free(&opt);
    mygpt_gpt_free(g);

    // AdamW from the same start
    printf("\nAdamW (lr 0.01, weight decay 0.01), 60 steps:\n");
    t0 = chapter_now_s();
    g = verdict_adamw_model(&ch, &v, on_eval, &adamw);
    fprintf(stderr, "33_training: AdamW %lld tokens, %.0f tokens/s\n", adamw.tokens,
            adamw.tokens / (chapter_now_s() - t0));
    printf("tokens seen: ");
    ch_commas(adamw.tokens);
    printf("\n");

    // the loss curves: training and validation, both optimizers, against the step
    mygpt_svg fig;
    mygpt_svg_begin(&fig, 820, 480);
    const mygpt_svg_series s[4] = {
        {.x = sgd.step, .y = sgd.train, .n = sgd.n, .label = "SGD train", .markers = 1},
        {.x = sgd.step, .y = sgd.val, .n = sgd.n, .label = "SGD val", .markers = 1},
        {.x = adamw.step, .y = adamw.train, .n = adamw.n, .label = "AdamW train", .markers = 1},
        {.x = adamw.step, .y = adamw.val, .n = adamw.n, .label = "AdamW val", .markers = 1}};
    float ymax = 0;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < s[k].n; i++)
            ymax = s[k].y[i] > ymax ? s[k].y[i] : ymax;
    const mygpt_svg_panel p = {80, 50, 560, 360, "Training on the-verdict: cross-entropy loss", "step",
                               "loss", .legend_outside = 1};
    mygpt_svg_line_plot(&fig, &p, s, 4, 0.0, ymax);
    chapter_save_figure(&ch, &fig, "33_loss_curves.svg");

    mygpt_gpt_free(verdict_saved_model(&ch, &v, path)); // still its own, or nothing
    chapter_check(&ch, mygpt_checkpoint_check_path(path, &err), &err); // a folder not there: bad input
    chapter_check_write(&ch, mygpt_checkpoint_save(g, path, &err), &err);
    fprintf(stderr, "33_training: model written to %s\n", path);
    mygpt_gpt_free(g);
    verdict_free(&v);
    return 0;
}
