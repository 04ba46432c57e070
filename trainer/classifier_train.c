/*
 * classifier_train.c - the book's chapter-6 loop (classifier_train.h): its loaders' loss
 * and accuracy, and train_classifier_simple, each as the book's Python does it.
 */
#include <math.h>
#include <stdio.h>

#include "classifier_train.h"
#include "mygpt/print.h"
#include "train_step.h"

/* for i, (x, y) in enumerate(loader): if i < num_batches: fn(x, y) -- one fresh iter(), which
 * draws from rng even when it is cut short. Sums the batches' losses (as Python floats) and
 * counts the right rows and the rows. */
static mygpt_status loader_pass(mygpt_gpt *g, mygpt_spam_loader *dl, int shuffle, mygpt_rng *rng, size_t *num_batches,
                                int64_t *x, int64_t *y, double *loss_sum, long *correct, long *rows,
                                mygpt_error *err)
{
    mygpt_status st = mygpt_spam_loader_epoch(dl, rng, shuffle, err);
    if (st != MYGPT_OK)
        return st;
    const size_t n = *num_batches == 0 || *num_batches > dl->num_batches ? dl->num_batches : *num_batches;
    *num_batches = n;
    for (size_t b = 0; b < n; b++) {
        const int B = (int)mygpt_spam_loader_batch_rows(dl, b), T = (int)dl->ds->max_length;
        if ((st = mygpt_spam_loader_batch(dl, b, x, y, err)) != MYGPT_OK)
            return st;
        float loss;
        int right;
        if ((st = mygpt_classifier_batch(g, x, y, B, T, loss_sum ? &loss : NULL, correct ? &right : NULL, err)) !=
            MYGPT_OK)
            return st;
        if (loss_sum)
            *loss_sum += (double)loss; // total_loss += loss.item()
        if (correct)
            *correct += right;
        *rows += B;
    }
    return MYGPT_OK;
}

mygpt_status classifier_loader_loss(mygpt_gpt *g, mygpt_spam_loader *dl, int shuffle, mygpt_rng *rng,
                                    size_t num_batches, int64_t *x, int64_t *y, double *out, mygpt_error *err)
{
    if (dl->num_batches == 0) { // if len(data_loader) == 0: return float("nan")
        *out = NAN;
        return MYGPT_OK;
    }
    double total = 0.0;
    long rows = 0;
    mygpt_status st = loader_pass(g, dl, shuffle, rng, &num_batches, x, y, &total, NULL, &rows, err);
    *out = total / (double)num_batches;
    return st;
}

mygpt_status classifier_loader_accuracy(mygpt_gpt *g, mygpt_spam_loader *dl, int shuffle, mygpt_rng *rng,
                                        size_t num_batches, int64_t *x, int64_t *y, double *out, mygpt_error *err)
{
    long correct = 0, rows = 0;
    mygpt_status st = loader_pass(g, dl, shuffle, rng, &num_batches, x, y, NULL, &correct, &rows, err);
    *out = (double)correct / (double)rows; // correct_predictions / num_examples
    return st;
}

mygpt_status classifier_train(FILE *out, mygpt_trainer *tr, mygpt_optimizer *opt, mygpt_spam_loader *train,
                              mygpt_spam_loader *train_eval, mygpt_spam_loader *val, mygpt_rng *rng,
                              const classifier_run *run, int64_t *x, int64_t *y, long *examples_seen,
                              mygpt_error *err)
{
    mygpt_gpt *g = tr->model;
    const int T = (int)train->ds->max_length;
    if (run->epochs < 0 || run->eval_freq < 1) {
        err->code = MYGPT_EINVAL;
        snprintf(err->message, sizeof err->message, "epochs %ld and eval_freq %ld: need epochs >= 0, eval_freq >= 1",
                 run->epochs, run->eval_freq);
        return MYGPT_EINVAL;
    }
    long global_step = -1, seen = 0;
    mygpt_status st = MYGPT_OK;
    for (long epoch = 0; epoch < run->epochs && st == MYGPT_OK; epoch++) {
        if ((st = mygpt_spam_loader_epoch(train, rng, 1, err)) != MYGPT_OK)
            break;
        for (size_t b = 0; b < train->num_batches && st == MYGPT_OK; b++) {
            const int B = (int)mygpt_spam_loader_batch_rows(train, b);
            float loss;
            // optimizer.zero_grad(); loss = calc_loss_batch(...); loss.backward(); optimizer.step()
            if ((st = mygpt_spam_loader_batch(train, b, x, y, err)) != MYGPT_OK ||
                (st = mygpt_trainer_zero_grad(tr, err)) != MYGPT_OK ||
                (st = mygpt_trainer_forward_last(tr, x, y, B, T, &loss, err)) != MYGPT_OK ||
                (st = mygpt_trainer_backward(tr, err)) != MYGPT_OK || (st = mygpt_trainer_step(tr, opt, err)) != MYGPT_OK ||
                (st = train_check_finite(tr, opt, global_step + 1, err)) != MYGPT_OK) // before a NaN is saved
                break;
            seen += B;
            global_step++;
            if (global_step % run->eval_freq == 0) { // evaluate_model
                double train_loss, val_loss;
                if ((st = classifier_loader_loss(g, train_eval, 1, rng, run->eval_iter, x, y, &train_loss, err)) !=
                        MYGPT_OK ||
                    (st = classifier_loader_loss(g, val, 0, rng, run->eval_iter, x, y, &val_loss, err)) != MYGPT_OK)
                    break;
                char tl[64], vl[64];
                fprintf(out, "Ep %ld (Step %06ld): Train loss %s, Val loss %s\n", epoch + 1, global_step,
                        mygpt_py_fixed_str(tl, sizeof tl, train_loss, 3), mygpt_py_fixed_str(vl, sizeof vl, val_loss, 3));
                if ((st = train_eval_check(global_step, (const double[2]){train_loss, val_loss}, err)) != MYGPT_OK)
                    break; // before the classifier is saved
            }
        }
        if (st != MYGPT_OK)
            break;
        double train_acc, val_acc;
        if ((st = classifier_loader_accuracy(g, train_eval, 1, rng, run->eval_iter, x, y, &train_acc, err)) !=
                MYGPT_OK ||
            (st = classifier_loader_accuracy(g, val, 0, rng, run->eval_iter, x, y, &val_acc, err)) != MYGPT_OK)
            break;
        fprintf(out, "Training accuracy: %.2f%% | Validation accuracy: %.2f%%\n", train_acc * 100, val_acc * 100);
    }
    if (examples_seen)
        *examples_seen = seen;
    return st;
}
