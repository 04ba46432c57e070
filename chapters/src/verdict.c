/* verdict.c - the-verdict, chapter 14's model and its training loop (see verdict.h). */
#include "verdict.h"
#include "train_step.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void verdict_load(const chapter *ch, verdict *v)
{
    memset(v, 0, sizeof *v);
    static const char *const files[3] = {"encoder.json", "vocab.bpe", "the-verdict.txt"};
    char dir[4096], path[4200];
    chapter_data_dir(ch, dir, sizeof dir, files, 3);
    snprintf(path, sizeof path, "%s/%s", dir, files[2]);
    mygpt_error err = {0};
    chapter_check(ch, mygpt_tokenizer_load_dir(&v->tok, dir, &err), &err);
    char *text;
    size_t n;
    chapter_check(ch, mygpt_read_file(path, &text, &n, &err), &err);
    // train_text, val_text = text[:split], text[split:] with split = int(0.9 * len(text))
    const size_t split = mygpt_utf8_offset(text, n, (size_t)(0.9 * (double)mygpt_utf8_length(text, n)));
    chapter_check(ch, mygpt_encode(v->tok, text, split, &v->train_ids, &v->ntrain, &err), &err);
    chapter_check(ch, mygpt_encode(v->tok, text + split, n - split, &v->val_ids, &v->nval, &err), &err);
    v->val_len = n - split;
    v->val_text = chapter_alloc(ch, v->val_len + 1, 1);
    memcpy(v->val_text, text + split, v->val_len);
    free(text);
    chapter_check(ch, mygpt_dataloader_init(&v->train, v->train_ids, v->ntrain, VERDICT_BATCH,
                                            VERDICT_CONTEXT, VERDICT_CONTEXT, &err), &err);
    chapter_check(ch, mygpt_dataloader_init(&v->val, v->val_ids, v->nval, VERDICT_BATCH, VERDICT_CONTEXT,
                                            VERDICT_CONTEXT, &err), &err);
    mygpt_dataloader_set_drop_last(&v->val, 0);
    v->x = chapter_alloc(ch, VERDICT_BATCH * VERDICT_CONTEXT, sizeof(int64_t));
    v->y = chapter_alloc(ch, VERDICT_BATCH * VERDICT_CONTEXT, sizeof(int64_t));
}

void verdict_free(verdict *v)
{
    mygpt_tokenizer_free(v->tok);
    mygpt_dataloader_free(&v->train);
    mygpt_dataloader_free(&v->val);
    free(v->train_ids);
    free(v->val_ids);
    free(v->x);
    free(v->y);
    free(v->val_text);
}

mygpt_config verdict_config(const verdict *v)
{
    return (mygpt_config){.vocab_size = (int)mygpt_tokenizer_vocab_size(v->tok), .embed_dim = VERDICT_EMBED,
                          .num_heads = VERDICT_HEADS, .num_layers = VERDICT_LAYERS,
                          .max_seq_len = VERDICT_CONTEXT};
}

/* with torch.no_grad(): the mean of the loss over every validation batch */
static double val_loss(const chapter *ch, verdict *v, mygpt_gpt *g, mygpt_rng *rng, const dp_team *team)
{
    mygpt_error err = {0};
    double loss = 0;
    chapter_check(ch, dp_val_loss(team, g, &v->val, rng, v->x, v->y, &loss, &err), &err);
    return loss;
}

void verdict_train_team(const chapter *ch, verdict *v, mygpt_gpt *g, mygpt_rng *rng,
                        mygpt_optimizer *opt, long steps, long every, const dp_team *team,
                        verdict_eval_fn on_eval, void *ctx)
{
    mygpt_error err = {0};
    long step = 0;
    int epoch = 0;
    long long tokens = 0;
    mygpt_trainer *tr;
    chapter_check(ch, mygpt_trainer_create(&tr, g, &err), &err);
    while (step < steps) {
        epoch++;
        chapter_check(ch, mygpt_dataloader_epoch(&v->train, rng, 1, &err), &err); // for x, y in train_loader
        for (size_t b = 0; b < v->train.num_batches && step < steps; b++, step++) {
            double shown;
            chapter_check(ch, mygpt_dataloader_batch(&v->train, b, v->x, v->y, &err), &err);
            chapter_check(ch, dp_train_step(team, tr, opt, v->x, v->y, VERDICT_BATCH, VERDICT_CONTEXT, step, team->size > 1,
                                            ch->name, &shown, &err),
                          &err);
            tokens += VERDICT_BATCH * VERDICT_CONTEXT;
            if (step % every == 0 || step == steps - 1)
                on_eval(ctx, step, epoch, (float)shown, val_loss(ch, v, g, rng, team), tokens);
        }
    }
    mygpt_trainer_free(tr);
}

void verdict_train(const chapter *ch, verdict *v, mygpt_gpt *g, mygpt_rng *rng, mygpt_optimizer *opt,
                   long steps, long every, verdict_eval_fn on_eval, void *ctx)
{
    const dp_team one = {0, 1, 0};
    verdict_train_team(ch, v, g, rng, opt, steps, every, &one, on_eval, ctx);
}

mygpt_gpt *verdict_adamw_model(const chapter *ch, verdict *v, verdict_eval_fn on_eval, void *ctx)
{
    const mygpt_config cfg = verdict_config(v);
    mygpt_rng rng = {0};
    mygpt_error err = {0};
    mygpt_gpt *g;
    mygpt_rng_seed(&rng, VERDICT_SEED); // torch.manual_seed(123); model = GPT(...)
    chapter_check(ch, mygpt_gpt_create_from(&g, &cfg, &rng, &err), &err);
    mygpt_optimizer opt;
    mygpt_adamw_init(&opt, 1e-2); // torch.optim.AdamW(model.parameters(), lr=1e-2)
    verdict_train(ch, v, g, &rng, &opt, ch->smoke ? 3 : 60, ch->smoke ? 1 : 10, on_eval, ctx);
    mygpt_optimizer_free(&opt);
    return g;
}

void verdict_model_path(const chapter *ch, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", ch->figures ? ch->figures : ".",
             ch->smoke ? "verdict_gpt_smoke.safetensors" : "verdict_gpt.safetensors");
}

mygpt_gpt *verdict_saved_model(const chapter *ch, const verdict *v, const char *path)
{
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return NULL;
    mygpt_error err = {0};
    mygpt_gpt *g = NULL;
    const mygpt_config cfg = verdict_config(v);
    if (mygpt_checkpoint_load(&g, path, &err) != MYGPT_OK)
        chapter_refuse(ch, "%s: not chapter 33's model, so not replaced (move it, or pass --figures another "
                       "folder)", err.message);
    // compared field by field (the struct has padding)
    if (g->config.arch != cfg.arch || g->config.vocab_size != cfg.vocab_size ||
        g->config.embed_dim != cfg.embed_dim || g->config.num_heads != cfg.num_heads ||
        g->config.num_layers != cfg.num_layers || g->config.max_seq_len != cfg.max_seq_len) {
        mygpt_gpt_free(g);
        chapter_refuse(ch, "%s is there and is another model than chapter 33's: not replaced (move it, or pass "
                       "--figures another folder)", path);
    }
    return g;
}

static void quiet(void *ctx, long step, int epoch, float train_loss, double val_loss, long long tokens)
{
    (void)ctx, (void)step, (void)epoch, (void)train_loss, (void)val_loss, (void)tokens;
}

mygpt_gpt *verdict_model(const chapter *ch, verdict *v)
{
    mygpt_error err = {0};
    char path[4200];
    verdict_model_path(ch, path, sizeof path);
    mygpt_gpt *g = verdict_saved_model(ch, v, path);
    if (g) {
        fprintf(stderr, "%s: the model of %s\n", ch->name, path);
        return g;
    }
    chapter_check(ch, mygpt_checkpoint_check_path(path, &err), &err); // a folder not there: bad input
    fprintf(stderr, "%s: no %s: training it as chapter 33 does (scripts/chapters.sh keeps one in its build's "
            "figures folder: --figures build/figures)\n", ch->name, path);
    g = verdict_adamw_model(ch, v, quiet, NULL);
    mygpt_gpt_free(verdict_saved_model(ch, v, path)); // a file made meanwhile: still its own, or nothing
    // the cache written, so the next run finds it (a failure only costs that)
    if (mygpt_checkpoint_save(g, path, &err) != MYGPT_OK)
        fprintf(stderr, "%s: %s\n", ch->name, err.message);
    else
        fprintf(stderr, "%s: saved the model as %s (the next run reads it)\n", ch->name, path);
    return g;
}

mygpt_gpt *verdict_load_model(const chapter *ch, verdict *v)
{
    verdict_load(ch, v);
    mygpt_gpt *g = verdict_model(ch, v);
    chapter_apply_weights(ch, g);
    return g;
}

const char *verdict_val_sentence(const verdict *v, size_t *len)
{
    const char *t = v->val_text, *end = t + v->val_len;
    const char *para = strstr(t, "\n\n");
    const char *start = para ? para + 2 : t;
    const char *dot = memchr(start, '.', (size_t)(end - start));
    *len = dot ? (size_t)(dot + 1 - start) : (size_t)(end - start);
    return start;
}

void book_data_init(const chapter *ch, const verdict *v, size_t B, size_t T, book_data *d)
{
    mygpt_error err = {0};
    *d = (book_data){0};
    chapter_check(ch, mygpt_dataloader_init(&d->train, v->train_ids, v->ntrain, B, T, T, &err), &err);
    chapter_check(ch, mygpt_dataloader_init(&d->val, v->val_ids, v->nval, B, T, T, &err), &err);
    mygpt_dataloader_set_drop_last(&d->val, 0);
    const char *start = "Every effort moves you";
    chapter_check(ch, mygpt_encode(v->tok, start, strlen(start), &d->prompt, &d->n_prompt, &err), &err);
    d->x = chapter_alloc(ch, B * T, sizeof *d->x);
    d->y = chapter_alloc(ch, B * T, sizeof *d->y);
}

void book_data_free(book_data *d)
{
    mygpt_dataloader_free(&d->train);
    mygpt_dataloader_free(&d->val);
    free(d->prompt);
    free(d->x);
    free(d->y);
}
