/*
 * schedule.c - the learning rate of each step as the book's appendix D computes it
 * (train_model: a linear warmup from initial_lr to the peak, then a cosine decay to min_lr),
 * in Python's doubles: the optimizer receives it as the Python float it is
 * (param_group["lr"] = lr), and mygpt_optimizer.lr is that double.
 */
#include <math.h>

#include "mygpt/train.h"
#include "base/base.h"

mygpt_status mygpt_lr_schedule_check(const mygpt_lr_schedule *s, mygpt_error *err)
{
    if (!(s->peak >= 0.0 && isfinite(s->peak)))
        return mygpt_fail(err, MYGPT_EINVAL, "the peak learning rate must be finite and >= 0, not %g",
                          s->peak);
    if (s->warmup_steps < 0)
        return mygpt_fail(err, MYGPT_EINVAL, "the warmup steps must be >= 0, not %ld", s->warmup_steps);
    if (s->warmup_steps > 0 && !(s->initial >= 0.0 && isfinite(s->initial)))
        return mygpt_fail(err, MYGPT_EINVAL, "the initial learning rate must be finite and >= 0, not %g",
                          s->initial);
    if (s->cosine) {
        if (!(s->min >= 0.0 && isfinite(s->min)))
            return mygpt_fail(err, MYGPT_EINVAL, "the minimum learning rate must be finite and >= 0, not %g",
                              s->min);
        if (s->total_steps <= s->warmup_steps)
            return mygpt_fail(err, MYGPT_EINVAL, "the cosine decay needs steps after the warmup: "
                              "%ld steps in all, %ld of warmup", s->total_steps, s->warmup_steps);
    }
    return MYGPT_OK;
}

/* train_model's lines, with Python's order of operations (C's, left to right):
 *   lr_increment = (peak_lr - initial_lr) / warmup_steps
 *   if global_step < warmup_steps: lr = initial_lr + global_step * lr_increment
 *   else: progress = (global_step - warmup_steps) / (total_training_steps - warmup_steps)
 *         lr = min_lr + (peak_lr - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))
 * (an int over an int is Python's correctly rounded true division: for counts below 2^53
 * the division of the two doubles; math.cos is libm's cos.) */
double mygpt_lr_at(const mygpt_lr_schedule *s, long step)
{
    // lesson: lr_at
    if (step < s->warmup_steps) {
        const double increment = (s->peak - s->initial) / (double)s->warmup_steps;
        return s->initial + (double)step * increment;
    }
    if (!s->cosine)
        return s->peak; // D.1: the peak after the warmup
    const double progress = (double)(step - s->warmup_steps) / (double)(s->total_steps - s->warmup_steps);
    return s->min + (s->peak - s->min) * 0.5 * (1.0 + cos(M_PI * progress));
    // end lesson: lr_at
}
