/*
 * classify.c - classification fine-tuning as the book's chapter 6 does it: which
 * parameters train (requires_grad per state_dict entry: chapter 6's freezing, and
 * appendix E's, where only the LoRA adapters train), the optimizer's step over those
 * only, and the loss and the accuracy on the last position's logits
 * (F.cross_entropy(model(x)[:, -1, :], y), argmax(model(x)[:, -1, :]) == y).
 */
#include <stdlib.h>
#include <string.h>

#include "mygpt/tensor.h"
#include "mygpt/train.h"
#include "base/base.h"
#include "model/params.h"

/* ---- which parameters train ------------------------------------------------------------- */

mygpt_status mygpt_trainer_set_trainable(mygpt_trainer *tr, const char *prefix, int on, int *count,
                                         mygpt_error *err)
{
    const mygpt_config *cfg = &tr->model->config;
    const int n = mygpt_state_dict_len(cfg);
    if (!prefix)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "a parameter prefix is needed (\"\" for all)");
    if (!tr->trainable) { // every parameter trains until told otherwise
        if (!(tr->trainable = malloc((size_t)n)))
            return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the trainable mask");
        memset(tr->trainable, 1, (size_t)n);
    }
    const size_t len = strlen(prefix);
    int named = 0;
    for (int j = 0; j < n; j++) {
        mygpt_state_entry e;
        mygpt_state_dict_entry(cfg, NULL, j, &e);
        // a prefix names whole parts of a name: "trf_blocks.1" is not "trf_blocks.10.*"
        if (strncmp(e.name, prefix, len) == 0 &&
            (len == 0 || prefix[len - 1] == '.' || e.name[len] == '.' || e.name[len] == '\0')) {
            tr->trainable[j] = on != 0;
            named++;
        }
    }
    if (count)
        *count = named;
    if (named == 0)
        return mygpt_fail(err, MYGPT_EINVAL, "no parameter's name starts with '%s'", prefix);
    return MYGPT_OK;
}

mygpt_status mygpt_trainer_freeze_for_classification(mygpt_trainer *tr, mygpt_error *err)
{
    const mygpt_config *cfg = &tr->model->config;
    const int n = mygpt_state_dict_len(cfg);
    if (cfg->num_classes <= 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "the model has no classification head to train (num_classes 0)");
    // for param in model.parameters(): param.requires_grad = False
    MYGPT_TRY(mygpt_trainer_set_trainable(tr, "", 0, NULL, err));
    // then requires_grad = True for model.trf_blocks[-1], model.final_norm and model.out_head:
    // the last layer's entries and the whole-model ones after the blocks
    for (int j = 0; j < n; j++) {
        mygpt_state_entry e;
        mygpt_state_dict_entry(cfg, NULL, j, &e);
        if (e.layer == cfg->num_layers - 1 ||
            (e.layer < 0 && e.tensor != MYGPT_PARAM_wte && e.tensor != MYGPT_PARAM_wpe))
            tr->trainable[j] = 1;
    }
    return MYGPT_OK;
}

mygpt_status mygpt_trainer_freeze_for_lora(mygpt_trainer *tr, mygpt_error *err)
{
    const mygpt_config *cfg = &tr->model->config;
    if (cfg->lora_rank <= 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "the model has no LoRA adapters to train (mygpt_lora_add first)");
    // for param in model.parameters(): param.requires_grad = False, before the adapters
    // were added; theirs are new parameters, trainable
    MYGPT_TRY(mygpt_trainer_set_trainable(tr, "", 0, NULL, err));
    const int n = mygpt_state_dict_len(cfg);
    for (int j = 0; j < n; j++) {
        mygpt_state_entry e;
        mygpt_state_dict_entry(cfg, NULL, j, &e);
        mygpt_param_info info;
        mygpt_param_info_get(cfg, e.tensor, &info);
        if (info.role == MYGPT_ROLE_LORA_A || info.role == MYGPT_ROLE_LORA_B)
            tr->trainable[j] = 1;
    }
    return MYGPT_OK;
}

int mygpt_trainer_is_trainable(const mygpt_trainer *tr, int j)
{
    if (j < 0 || j >= mygpt_state_dict_len(&tr->model->config))
        return 0; // no such entry
    return !tr->trainable || tr->trainable[j];
}

size_t mygpt_trainer_trainable_count(const mygpt_trainer *tr)
{
    const mygpt_config *cfg = &tr->model->config;
    size_t total = 0;
    for (int j = 0; j < mygpt_state_dict_len(cfg); j++)
        if (mygpt_trainer_is_trainable(tr, j)) {
            mygpt_state_entry e;
            mygpt_state_dict_entry(cfg, NULL, j, &e);
            total += e.numel;
        }
    return total;
}

mygpt_status mygpt_trainer_step(mygpt_trainer *tr, mygpt_optimizer *opt, mygpt_error *err)
{
    mygpt_gpt *g = tr->model;
    if (!tr->trainable && !tr->decay_groups)
        return mygpt_optimizer_step(opt, g->params_memory, tr->grads_memory, g->num_parameters, err);
    const int n = mygpt_state_dict_len(&g->config);
    size_t *start = malloc((size_t)n * sizeof *start), *len = malloc((size_t)n * sizeof *len);
    uint8_t *decays = malloc((size_t)n);
    if (!start || !len || !decays) {
        free(start);
        free(len);
        free(decays);
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the optimizer's ranges");
    }
    int count = 0; // the trainable entries, in parameters() order: each its own range
    for (int j = 0; j < n; j++)
        if (mygpt_trainer_is_trainable(tr, j)) {
            mygpt_state_entry e;
            mygpt_state_dict_entry(&g->config, &g->params, j, &e);
            start[count] = (size_t)(e.data - g->params_memory);
            decays[count] = !tr->decay_groups || e.ndim >= 2; // configure_optimizers: p.dim() >= 2
            len[count++] = e.numel;
        }
    const mygpt_status st = mygpt_optimizer_step_groups(opt, g->params_memory, tr->grads_memory, start, len, decays,
                                                        count, err);
    free(start);
    free(len);
    free(decays);
    return st;
}

/* ---- the loss and the accuracy on the last position ------------------------------------ */

/* Checks the labels (B) against a classification head of V classes. */
static mygpt_status check_labels(const mygpt_config *cfg, const int64_t *labels, int B, mygpt_error *err)
{
    if (cfg->num_classes < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "the model has no classification head (num_classes is 0)");
    for (int b = 0; b < B; b++)
        if (labels[b] < 0 || labels[b] >= cfg->num_classes)
            return mygpt_fail(err, MYGPT_ERANGE, "label %lld of row %d is outside [0, %d)", (long long)labels[b], b,
                              cfg->num_classes);
    return MYGPT_OK;
}

/* dst (B, V) = the last position's rows of logits (B, T, V) */
static void gather_last(float *dst, const float *logits, int B, int T, int V)
{
    // lesson: gather_last
    for (int b = 0; b < B; b++)
        memcpy(dst + (size_t)b * V, logits + ((size_t)(b + 1) * T - 1) * V, (size_t)V * sizeof *dst);
    // end lesson: gather_last
}

mygpt_status mygpt_trainer_forward_last(mygpt_trainer *tr, const int64_t *ids, const int64_t *labels, int B, int T,
                                        float *loss, mygpt_error *err)
{
    const mygpt_config *cfg = &tr->model->config;
    MYGPT_TRY(check_labels(cfg, labels, B, err));
    MYGPT_TRY(mygpt_trainer_forward(tr, ids, NULL, B, T, NULL, err)); // logits = model(x)   (B, T, V)
    mygpt_train_acts *a = &tr->acts;
    const int V = cfg->num_classes;
    // logits[:, -1, :] (B, V): the rows themselves when T is 1, else gathered into logp's
    // second B * V floats (logp holds B * T * V; its first B * V get the log_softmax)
    const float *last = a->logits;
    if (T > 1) {
        gather_last(a->logp + (size_t)B * V, a->logits, B, T, V);
        last = a->logp + (size_t)B * V;
    }
    MYGPT_TRY(mygpt_cross_entropy_forward(loss, a->logp, last, labels, (size_t)B, V, err));
    memcpy(a->targets, labels, (size_t)B * sizeof *labels);
    a->last_only = 1;
    a->has_forward = 1;
    return MYGPT_OK;
}

mygpt_status mygpt_classifier_batch(mygpt_gpt *g, const int64_t *ids, const int64_t *labels, int B, int T,
                                    float *loss, int *correct, mygpt_error *err)
{
    const mygpt_config *cfg = &g->config;
    MYGPT_TRY(check_labels(cfg, labels, B, err));
    MYGPT_TRY(mygpt_gpt_forward(g, ids, B, T, err));
    const int V = cfg->num_classes;
    float *last = malloc(2 * (size_t)B * V * sizeof *last); // (B, V) logits, then (B, V) log_softmax
    if (!last)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the last position's logits");
    gather_last(last, g->acts.logits, B, T, V);
    mygpt_status st = MYGPT_OK;
    if (loss)
        st = mygpt_cross_entropy_forward(loss, last + (size_t)B * V, last, labels, (size_t)B, V, err);
    if (correct && st == MYGPT_OK) { // torch.argmax(logits, dim=-1): the first of equal maxima
        *correct = 0;
        for (int b = 0; b < B && st == MYGPT_OK; b++) {
            const float *row = last + (size_t)b * V;
            const size_t bad = mygpt_first_nonfinite(row, (size_t)V);
            if (bad < (size_t)V) { // weights finite but huge: no class to count (as generate refuses)
                st = mygpt_fail(err, MYGPT_ERANGE, "row %d's logit %zu is %g: the model's weights compute no class",
                                b, bad, (double)row[bad]);
                break;
            }
            int best = 0;
            for (int c = 1; c < V; c++)
                best = row[c] > row[best] ? c : best;
            *correct += best == labels[b];
        }
    }
    free(last);
    return st;
}
