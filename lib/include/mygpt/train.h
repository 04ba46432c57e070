/*
 * mygpt/train.h - learning: the loss, the backward pass of the GPT, and PyTorch's
 * optimizers (document 000's chapters 13 and 14).
 *
 *   mygpt_trainer *tr;
 *   mygpt_trainer_create(&tr, gpt, &err);                            // the .grad of every parameter
 *   float loss;
 *   mygpt_trainer_zero_grad(tr, &err);                               // opt.zero_grad()
 *   mygpt_trainer_forward(tr, x, y, B, T, &loss, &err);              // loss = F.cross_entropy(...)
 *   mygpt_trainer_backward(tr, &err);                                // loss.backward()
 *   mygpt_optimizer_step(&opt, gpt->params_memory, tr->grads_memory, // opt.step()
 *                        gpt->num_parameters, &err);
 *   mygpt_trainer_free(tr);
 *
 * The model is the model (its parameters and an inference pass); what learning needs
 * besides (the gradients, the activations the backward keeps, their scratch) is the
 * trainer's. Gradients live in one block with the parameters' layout (tr->grads_memory,
 * carved into tr->grads like gpt->params) and accumulate across backward calls until
 * zeroed, as .grad does. Every backward loop is parallel (OpenMP) and bit-identical for any
 * thread count: a weight's gradient sums over the B*T rows, so threads split the
 * weight's elements and each sums all rows in one fixed order.
 */
#ifndef MYGPT_TRAIN_H
#define MYGPT_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"
#include "mygpt/gpt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* ---- the loss (loss.c) -------------------------------------------------------------- */

/* The target that the loss skips: F.cross_entropy's default ignore_index, which the
 * book's custom_collate_fn writes over the padding. */
#define MYGPT_IGNORE_INDEX (-100)

/* F.cross_entropy(logits, targets) with reduction 'mean', bit for bit as PyTorch 1.13
 * computes it on an AVX2 CPU (log_softmax with SLEEF's expf/logf on 8 lanes, nll_loss's
 * cascade sum): *loss, and logp (N, V) = log_softmax(logits) for the backward pass.
 * logits (N, V), targets (N) in [0, V) or MYGPT_IGNORE_INDEX (else MYGPT_ERANGE): the
 * mean is over the other rows, NaN (0 / 0, as PyTorch) when every row is ignored. */
mygpt_status mygpt_cross_entropy_forward(float *loss, float *logp, const float *logits,
                                         const int64_t *targets, size_t N, int V,
                                         mygpt_error *err);

/* d(loss)/d(logits) (N, V) from logp: (softmax - onehot) / K as PyTorch's backward
 * computes it, K the rows whose target is not MYGPT_IGNORE_INDEX; an ignored row's
 * gradient is zero. Writes dlogits (does not accumulate). */
void mygpt_cross_entropy_backward(float *dlogits, const float *logp, const int64_t *targets,
                                  size_t N, int V);

/* ---- the GPT's backward pass (train.c) ---------------------------------------------- */

/* Activations one training forward keeps for the backward (sized for B, T; reused while
 * they fit). Per layer l, [l] below is the l-th (B, T, ...) slice. */
typedef struct mygpt_train_acts {
    int B, T;           /* what they hold now                                          */
    size_t capacity_bt; /* the largest B * T they were sized for                       */
    size_t capacity_btt;/* and B * T * T (the attention probabilities)                 */
    int64_t *ids;       /* (B, T) the inputs, for the embedding's gradient             */
    int64_t *targets;   /* (B, T)                                                      */
    float *resid;       /* (L + 1, B, T, C) residual stream entering layer l; [L] final */
    float *ln1, *ln1_mean, *ln1_denom;  /* (L, B, T, C), (L, B, T), (L, B, T)           */
    float *q, *k, *v;   /* (L, B, T, C)                                                */
    float *att;         /* (L, B, NH, T, T) attention probabilities                    */
    float *atty;        /* (L, B, T, C) attention output before W_o                    */
    float *resid_mid;   /* (L, B, T, C) residual after the attention branch            */
    float *ln2, *ln2_mean, *ln2_denom;
    float *fch;         /* (L, B, T, H) fc1 output before GELU (H the hidden size, 4C) */
    float *fc3;         /* (L, B, T, H) SwiGLU's w3 output (llama), else none          */
    float *fch_gelu;    /* (L, B, T, H) after GELU (SwiGLU's product)                  */
    float *lnf, *lnf_mean, *lnf_denom;  /* (B, T, C), (B, T), (B, T)                    */
    float *logits;      /* (B, T, V), then d(loss)/d(logits)                           */
    float *logp;        /* (B, T, V) log_softmax(logits)                               */
    /* gradient scratch for one layer at a time */
    float *dresid, *dresid2, *dln, *datty, *dq, *dk, *dv; /* (B, T, C) each            */
    float *dfch, *dfch_gelu;                              /* (B, T, H) each            */
    float *workspace;   /* the matmul backward's partial sums: k's and v's dinp (N x C)    */
    size_t ws_len;      /* floats in workspace                                          */
    float *memory;      /* the single allocation behind the float buffers              */
    size_t memory_len;  /* its floats                                                  */
    int has_forward;    /* 1 after a forward, until the backward uses it               */
    uint8_t *keep;      /* train mode's dropout keeps, in the order they are drawn: the
                           embedding's (B, T, C), then per layer the attention's
                           (B, NH, T, T), W_o's and fc2's (B, T, C); NULL without dropout */
    size_t keep_len;    /* bytes allocated at keep                                      */
    int dropped;        /* 1 when the last forward drew keeps                            */
    int last_only;      /* 1 when the loss is the last position's (mygpt_trainer_forward_last):
                           targets[0 .. B) hold the labels, logp[0 .. B * V) their log_softmax */
} mygpt_train_acts;

/* What training a model needs besides the model. */
typedef struct mygpt_trainer {
    mygpt_gpt *model;         /* the model it trains (not owned: it outlives the trainer) */
    float *grads_memory;      /* model->num_parameters floats, the parameters' layout      */
    mygpt_params grads;       /* views into grads_memory, as model->params                 */
    int grads_are_zero;       /* 1 after zero_grad, until a backward                       */
    float *grads_scratch;     /* a later backward's own gradients, before they are added    */
    mygpt_train_acts acts;    /* what the backward needs                                    */
    struct mygpt_rng *dropout_rng; /* train mode (model.train()): the forward draws the
                                      dropouts' masks of the model's config.dropout from it;
                                      NULL (the default): eval mode, no dropout        */
    uint8_t *trainable;       /* requires_grad per state_dict entry (mygpt_trainer_set_trainable);
                                 NULL: every parameter trains                               */
    int decay_groups;         /* 1: mygpt_trainer_step decays only the state_dict entries of 2 or
                                 more dimensions, as the two groups of nanoGPT's and llama2.c's
                                 configure_optimizers; 0 (the default): every parameter, as
                                 AdamW(model.parameters())                                  */
} mygpt_trainer;

/* A trainer for model, with its gradients allocated and zero. The model must not be
 * packed (mygpt_gpt_pack): a training step changes its weights, so a packing would go
 * stale (MYGPT_EINVAL); while a trainer holds the model, mygpt_gpt_pack refuses too.
 * MYGPT_ENOMEM. */
mygpt_status mygpt_trainer_create(mygpt_trainer **out, mygpt_gpt *model, mygpt_error *err);

/* Frees the trainer (not its model). */
void mygpt_trainer_free(mygpt_trainer *tr);

/* Sets every gradient to 0 (opt.zero_grad()). */
mygpt_status mygpt_trainer_zero_grad(mygpt_trainer *tr, mygpt_error *err);

/* The forward pass with targets (B, T), keeping what the backward needs: *loss is
 * F.cross_entropy(gpt(ids).flatten(0, 1), targets.flatten()); the logits (in
 * tr->acts.logits until the backward) are the same bits as mygpt_gpt_forward's in eval
 * mode. In train mode (tr->dropout_rng set, config.dropout > 0) it first draws every
 * dropout's mask, in the order the book's forward draws them. targets NULL: the logits
 * only (model(ids) in train mode; no loss, no backward). A target MYGPT_IGNORE_INDEX is
 * left out of the loss (ignore_index=-100). Errors as mygpt_gpt_forward's, and targets
 * outside [0, V) other than MYGPT_IGNORE_INDEX. */
mygpt_status mygpt_trainer_forward(mygpt_trainer *tr, const int64_t *ids, const int64_t *targets, int B,
                                   int T, float *loss, mygpt_error *err);

/* loss.backward() for the last mygpt_trainer_forward (or _forward_last): adds every
 * trainable parameter's gradient into tr->grads. The token embedding gets the tied head's
 * gradient and the lookup's. A frozen parameter's gradient stays as it is (zero), and the
 * backward stops below the lowest layer with a trainable parameter (the embeddings only
 * when one of them trains). MYGPT_EINVAL without a forward since the last backward. */
mygpt_status mygpt_trainer_backward(mygpt_trainer *tr, mygpt_error *err);

/* The loss alone (no gradients kept): mygpt_gpt_forward, then the cross-entropy, as
 * under torch.no_grad(). Same bits as mygpt_trainer_forward's loss. */
mygpt_status mygpt_gpt_loss(mygpt_gpt *gpt, const int64_t *ids, const int64_t *targets, int B,
                            int T, float *loss, mygpt_error *err);

/* ---- optimizers (optim.c) ----------------------------------------------------------- */

typedef enum mygpt_optimizer_kind { MYGPT_SGD = 1, MYGPT_ADAMW = 2 } mygpt_optimizer_kind;

/* torch.optim.SGD / torch.optim.AdamW over one flat block of n parameters, PyTorch
 * 1.13's default single-tensor path, bit for bit. Hyper-parameters are Python floats
 * (doubles); they are rounded to float32 where PyTorch rounds them. */
typedef struct mygpt_optimizer {
    mygpt_optimizer_kind kind;
    double lr;
    double momentum, dampening, weight_decay; /* SGD (defaults 0, 0, 0)          */
    int nesterov;                             /* SGD                             */
    double beta1, beta2, eps;                 /* AdamW (defaults 0.9, 0.999, 1e-8; weight_decay 0.01) */
    long step;                                /* steps taken                     */
    size_t n;                                 /* parameters (fixed by the first step) */
    float *buf;                               /* SGD momentum buffer, or AdamW exp_avg */
    float *buf2;                              /* AdamW exp_avg_sq                */
    int nonfinite;                            /* the last step left a parameter or a state value
                                                 that is not finite (NaN, an infinity) */
} mygpt_optimizer;

/* Fills *opt with PyTorch's defaults for the kind and the given lr (no allocation). */
void mygpt_sgd_init(mygpt_optimizer *opt, double lr);
void mygpt_adamw_init(mygpt_optimizer *opt, double lr);

/* opt.step(): updates params (n) from grads (n). Errors: bad hyper-parameters (lr < 0,
 * momentum < 0, betas outside [0, 1), eps < 0, nesterov without momentum or with
 * dampening, as PyTorch refuses them), n different from the first step's, out of memory. */
mygpt_status mygpt_optimizer_step(mygpt_optimizer *opt, float *params, const float *grads, size_t n,
                                  mygpt_error *err);

/* opt.step() over `count` ranges of one block, params[start[k] .. start[k] + len[k]) with the
 * gradients at the same offsets: the parameters that have a gradient (PyTorch's step skips a
 * parameter whose .grad is None, a frozen one: it gets no update, no weight decay and no
 * state). The state holds one float per updated parameter (two for AdamW), range after range;
 * the ranges must be the same at every step (their total is checked). Errors as
 * mygpt_optimizer_step's. mygpt_optimizer_step is this with the one range [0, n). */
mygpt_status mygpt_optimizer_step_ranges(mygpt_optimizer *opt, float *params, const float *grads,
                                         const size_t *start, const size_t *len, int count, mygpt_error *err);

/* opt.step() over ranges as mygpt_optimizer_step_ranges, where range k takes the weight decay
 * only when decays[k] is nonzero (decays NULL: every range): torch.optim's parameter groups
 * that differ in weight_decay alone (one with opt->weight_decay, one with 0.0) step as one
 * optimizer, with one step count and one state, the same bits. */
mygpt_status mygpt_optimizer_step_groups(mygpt_optimizer *opt, float *params, const float *grads, const size_t *start,
                                         const size_t *len, const uint8_t *decays, int count, mygpt_error *err);

void mygpt_optimizer_free(mygpt_optimizer *opt);

/* ---- classification fine-tuning (the book's chapter 6: classify.c) ------------------ */

/* param.requires_grad = on for every state_dict entry whose name starts with prefix, a
 * whole part of it ("" for all; "trf_blocks.11", "final_norm.", "out_head": "trf_blocks.1"
 * is not "trf_blocks.10"): frozen parameters get no gradient, the backward does not go
 * below what trains, and mygpt_trainer_step leaves them alone. *count (or NULL): the
 * entries named. MYGPT_EINVAL for a NULL prefix or one that names nothing; MYGPT_ENOMEM. */
mygpt_status mygpt_trainer_set_trainable(mygpt_trainer *tr, const char *prefix, int on, int *count,
                                         mygpt_error *err);

/* The book's section 6.5: every parameter frozen but the last transformer block, the final
 * LayerNorm and the classification head. MYGPT_EINVAL for a model without one (num_classes
 * 0: its head is the language model's); MYGPT_ENOMEM. */
mygpt_status mygpt_trainer_freeze_for_classification(mygpt_trainer *tr, mygpt_error *err);

/* The book's appendix E: every parameter frozen but the LoRA adapters' A and B
 * (mygpt/lora.h). MYGPT_EINVAL for a model without adapters; MYGPT_ENOMEM. */
mygpt_status mygpt_trainer_freeze_for_lora(mygpt_trainer *tr, mygpt_error *err);

/* Whether state_dict entry j trains (1 without a mask; 0 for a j that is no entry). */
int mygpt_trainer_is_trainable(const mygpt_trainer *tr, int j);

/* Parameters that train: sum(p.numel() for p in model.parameters() if p.requires_grad). */
size_t mygpt_trainer_trainable_count(const mygpt_trainer *tr);

/* opt.step() over the parameters that train (mygpt_optimizer_step_groups over their ranges),
 * with tr->decay_groups the weight decay on the entries of 2 or more dimensions only. */
mygpt_status mygpt_trainer_step(mygpt_trainer *tr, mygpt_optimizer *opt, mygpt_error *err);

/* The forward of the book's calc_loss_batch: *loss = F.cross_entropy(model(ids)[:, -1, :], labels),
 * ids (B, T), labels (B) in [0, num_classes) (MYGPT_ERANGE otherwise; MYGPT_EINVAL for a model
 * without a classification head), keeping what mygpt_trainer_backward needs. The last
 * position's logits are tr->acts.logits[((b + 1) * T - 1) * num_classes ...]. */
mygpt_status mygpt_trainer_forward_last(mygpt_trainer *tr, const int64_t *ids, const int64_t *labels, int B, int T,
                                        float *loss, mygpt_error *err);

/* Under torch.no_grad(): the batch's loss F.cross_entropy(model(ids)[:, -1, :], labels) (loss
 * NULL: not computed) and *correct, the rows whose last-position argmax (the first of equal
 * maxima) is the label (correct NULL: not counted), from mygpt_gpt_forward's logits. Errors
 * as mygpt_trainer_forward_last's, and MYGPT_ERANGE when counting meets a row whose logits
 * are not all finite (finite weights that overflow: no argmax to count). */
mygpt_status mygpt_classifier_batch(mygpt_gpt *gpt, const int64_t *ids, const int64_t *labels, int B, int T,
                                    float *loss, int *correct, mygpt_error *err);

/* ---- the training loop's bells: a learning-rate schedule, gradient clipping --------- */
/* (the book's appendix D: schedule.c, clip.c) */

/* The learning rate of each step of the appendix's train_model: steps 0 .. warmup_steps - 1
 * rise linearly from `initial` towards `peak` (D.1), then, with cosine, a half cosine falls
 * from `peak` to `min` at total_steps (D.2); without it the rate stays at the peak. */
typedef struct mygpt_lr_schedule {
    double peak;        /* peak_lr: the optimizer's lr                                   */
    double initial;     /* initial_lr: step 0's rate under a warmup                       */
    double min;         /* min_lr: where the cosine ends                                  */
    long warmup_steps;  /* 0: no warmup                                                   */
    long total_steps;   /* len(train_loader) * n_epochs: the cosine's end                 */
    int cosine;         /* 1: the cosine decay after the warmup                           */
} mygpt_lr_schedule;

/* MYGPT_EINVAL for a rate that is negative or not finite, negative warmup steps, or a
 * cosine with no step after the warmup (total_steps <= warmup_steps). */
mygpt_status mygpt_lr_schedule_check(const mygpt_lr_schedule *s, mygpt_error *err);

/* Step `step`'s learning rate (from 0), the double train_model puts in param_group["lr"]
 * (set opt->lr to it before the step), bit for bit: Python's doubles in its order. After
 * total_steps the cosine goes on as the formula does. s must pass mygpt_lr_schedule_check. */
double mygpt_lr_at(const mygpt_lr_schedule *s, long step);

/* torch.norm(x) of n floats (the 2-norm), PyTorch 1.13's float32 sum on an AVX2 CPU bit
 * for bit: 8 lanes of fused x * x + acc, the lanes added in order, the tail one by one
 * (clip.c says exactly how). */
float mygpt_norm2(const float *x, size_t n);

/* torch.nn.utils.clip_grad_norm_(parameters, max_norm) over `count` gradient tensors
 * (grads[i] of sizes[i] floats, in model.parameters() order: the order the norms are
 * summed in), bit for bit: the norm of every tensor's norm, then every gradient times
 * min(max_norm / (total + 1e-6), 1) in float32. *total_norm (or NULL): the norm before
 * clipping, what clip_grad_norm_ returns. A gradient that is not finite is clipped as
 * PyTorch's default does it: an infinite norm zeroes the finite gradients (an infinite one
 * becomes NaN), a NaN makes every gradient NaN. MYGPT_EINVAL for max_norm <= 0, not finite, or count < 0;
 * MYGPT_ENOMEM. The same bits for any thread count. */
mygpt_status mygpt_clip_grad_norm(float *const *grads, const size_t *sizes, int count, double max_norm,
                                  float *total_norm, mygpt_error *err);

/* The same over a trainer's gradients, in its model's parameters() order (the state_dict's):
 * torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm) after loss.backward(), which
 * leaves out the frozen parameters (their .grad is None). */
mygpt_status mygpt_trainer_clip_grad_norm(mygpt_trainer *tr, double max_norm, float *total_norm,
                                          mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
