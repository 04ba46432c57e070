/*
 * test_train.c - the loss, the backward pass and the optimizers against PyTorch
 * (goldens from tools/gen_train_goldens.py), a finite-difference check in double
 * precision, and bit-identity across thread counts.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "mygpt/gpt.h"
#include "mygpt/layers.h"
#include "mygpt/train.h"
#include "model/params.h"
#include "base/parallel.h"

static int same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* A whole line's values after its keyword, parsed into a new array of n floats. */
static float *f32_line(const char *line, size_t n)
{
    float *v = malloc((n ? n : 1) * sizeof *v);
    cr_assert_eq(golden_parse_f32(line, v, n), n);
    return v;
}

/* ---- the loss -------------------------------------------------------------------- */

Test(train_loss, cross_entropy_and_its_gradient_are_pytorchs_bits)
{
    golden_reader gold = golden_reader_must_open("loss.txt");
    char *line;
    int cases = 0;
    size_t N = 0;
    int V = 0;
    float *x = NULL, *logp = NULL, *dx = NULL;
    int64_t *y = NULL;
    float loss = 0;
    while ((line = golden_read(&gold))) {
        if (sscanf(line, "case %zu %d", &N, &V) == 2) {
            free(x); free(logp); free(dx); free(y);
            x = NULL;
            y = malloc(N * sizeof *y);
            logp = malloc(N * V * sizeof *logp);
            dx = malloc(N * V * sizeof *dx);
        } else if (strncmp(line, "logits ", 7) == 0) {
            x = f32_line(line + 7, N * V);
        } else if (strncmp(line, "targets ", 8) == 0) {
            cr_assert_eq(golden_parse_i64(line + 8, y, N), N);
        } else if (strncmp(line, "loss ", 5) == 0) {
            mygpt_error err = {0};
            cr_assert_eq(mygpt_cross_entropy_forward(&loss, logp, x, y, N, V, &err), MYGPT_OK, "%s", err.message);
            const float want = golden_unhex32(line + 5);
            cr_expect(same_bits(loss, want), "N=%zu V=%d: loss %.9g, PyTorch %.9g", N, V, loss, want);
        } else if (strncmp(line, "dlogits ", 8) == 0) {
            float *want = f32_line(line + 8, N * V);
            mygpt_cross_entropy_backward(dx, logp, y, N, V);
            size_t diff = 0;
            for (size_t i = 0; i < N * V; i++)
                diff += !same_bits(dx[i], want[i]);
            cr_expect_eq(diff, 0, "N=%zu V=%d: %zu of %zu gradients differ from PyTorch's bits", N, V,
                         diff, N * V);
            free(want);
            cases++;
        }
    }
    free(x); free(logp); free(dx); free(y);
    golden_reader_close(&gold);
    cr_expect_geq(cases, 12);
}

Test(train_loss, bad_targets_are_refused)
{
    float x[4] = {0}, lp[4], loss;
    int64_t y[2] = {0, 2};
    mygpt_error err = {0};
    cr_expect_eq(mygpt_cross_entropy_forward(&loss, lp, x, y, 2, 2, &err), MYGPT_ERANGE);
    cr_expect(strstr(err.message, "target 2 at row 1") != NULL, "%s", err.message);
    y[1] = -1;
    cr_expect_eq(mygpt_cross_entropy_forward(&loss, lp, x, y, 2, 2, &err), MYGPT_ERANGE);
    cr_expect_eq(mygpt_cross_entropy_forward(&loss, lp, x, y, 0, 2, &err), MYGPT_EINVAL);
}

/* The backward takes targets too (it returns nothing): one outside the row must not be
 * written to; that row's gradient then has no -1/N anywhere, as the scalar loop gives. */
Test(train_loss, backward_with_a_target_outside_the_row_writes_inside_it)
{
    enum { N = 2, V = 13 };
    float x[N * V], lp[N * V], good[N * V], bad[N * V + 1], loss;
    for (int i = 0; i < N * V; i++)
        x[i] = (float)((i * 7) % 11) * 0.25f;
    const int64_t y[N] = {0, 0}, outside[N] = {-1, V};
    mygpt_error err = {0};
    cr_assert_eq(mygpt_cross_entropy_forward(&loss, lp, x, y, N, V, &err), MYGPT_OK, "%s", err.message);
    mygpt_cross_entropy_backward(good, lp, y, N, V);
    bad[N * V] = 42.0f; /* just past the last row */
    mygpt_cross_entropy_backward(bad, lp, outside, N, V);
    cr_expect_eq(bad[N * V], 42.0f, "written past the rows");
    for (int n = 0; n < N; n++) {
        cr_expect(good[n * V] < 0 && bad[n * V] > 0, "row %d: %g, %g", n, good[n * V], bad[n * V]);
        for (int i = 1; i < V; i++)
            cr_expect(same_bits(good[n * V + i], bad[n * V + i]), "row %d entry %d", n, i);
    }
}

/* ---- gradients of the whole model --------------------------------------------------- */

typedef struct grad_case {
    uint64_t seed;
    mygpt_config cfg;
    int B, T;
    int64_t *ids, *targets;
} grad_case;

Test(train_grads, every_gradient_within_1e5_of_autograd, .timeout = 300)
{
    golden_reader gold = golden_reader_must_open("grads.txt");
    char *line;
    grad_case c = {0};
    mygpt_gpt *g = NULL;
    mygpt_trainer *tr = NULL;
    int tensor = 0, configs = 0;
    size_t covered = 0;
    double worst = 0;
    while ((line = golden_read(&gold))) {
        unsigned long long seed;
        if (sscanf(line, "config %llu %d %d %d %d %d %d %d", &seed, &c.cfg.vocab_size, &c.cfg.embed_dim,
                   &c.cfg.num_heads, &c.cfg.num_layers, &c.cfg.max_seq_len, &c.B, &c.T) == 8) {
            c.seed = seed;
            c.ids = malloc((size_t)c.B * c.T * sizeof *c.ids);
            c.targets = malloc((size_t)c.B * c.T * sizeof *c.targets);
            tensor = 0;
        } else if (strncmp(line, "ids ", 4) == 0) {
            golden_parse_i64(line + 4, c.ids, (size_t)c.B * c.T);
        } else if (strncmp(line, "targets ", 8) == 0) {
            golden_parse_i64(line + 8, c.targets, (size_t)c.B * c.T);
        } else if (strncmp(line, "loss ", 5) == 0) {
            mygpt_error err = {0};
            float loss;
            cr_assert_eq(mygpt_gpt_create(&g, &c.cfg, c.seed, &err), MYGPT_OK, "%s", err.message);
            cr_assert_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_OK);
            cr_assert_eq(mygpt_trainer_zero_grad(tr, &err), MYGPT_OK);
            cr_assert_eq(mygpt_trainer_forward(tr, c.ids, c.targets, c.B, c.T, &loss, &err), MYGPT_OK,
                         "%s", err.message);
            cr_assert_eq(mygpt_trainer_backward(tr, &err), MYGPT_OK, "%s", err.message);
            const float want = golden_unhex32(line + 5);
            cr_expect_leq(fabs(loss - want), 1e-5 * fmax(1, fabs(want)), "config %d: loss %.8g vs %.8g",
                          configs, loss, want);
            covered = 0;
        } else if (strncmp(line, "grad ", 5) == 0) {
            char name[16];
            size_t numel;
            const double tensor_worst = golden_span_worst(&c.cfg, tr->grads_memory, line + 5, name, &numel);
            covered += numel;
            cr_expect_leq(tensor_worst, 1e-5, "config %d (V=%d C=%d h=%d L=%d B=%d T=%d) %s: |dg| %.3g x max(1, max|g|)",
                          configs, c.cfg.vocab_size, c.cfg.embed_dim, c.cfg.num_heads,
                          c.cfg.num_layers, c.B, c.T, name, tensor_worst);
            worst = fmax(worst, tensor_worst);
            tensor++;
        } else if (strcmp(line, "end") == 0) {
            cr_expect_eq(covered, g->num_parameters, "config %d: the golden covers %zu of %zu gradients",
                         configs, covered, g->num_parameters);
            mygpt_trainer_free(tr);
            mygpt_gpt_free(g);
            g = NULL;
            free(c.ids);
            free(c.targets);
            configs++;
        }
    }
    golden_reader_close(&gold);
    cr_expect_geq(configs, 12);
    cr_log_info("worst gradient difference from autograd: %.3g x max(1, max|g|)", worst);
}

/* The training forward gives the inference forward's logits, bit for bit; gradients
 * accumulate across backward calls (twice = exactly double); backward needs a forward. */
Test(train_grads, training_forward_equals_inference_and_gradients_accumulate)
{
    const mygpt_config cfg = {.vocab_size = 30, .embed_dim = 16, .num_heads = 2, .num_layers = 2,
                              .max_seq_len = 12};
    const int B = 2, T = 12;
    int64_t ids[24], tg[24];
    for (int i = 0; i < 24; i++) {
        ids[i] = (i * 7) % 30;
        tg[i] = (i * 11 + 3) % 30;
    }
    mygpt_gpt *g;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, &err), MYGPT_OK);
    mygpt_trainer *tr;
    cr_assert_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_OK);
    cr_expect_eq(mygpt_trainer_backward(tr, &err), MYGPT_EINVAL);
    float loss1, loss2, loss3;
    cr_assert_eq(mygpt_gpt_forward(g, ids, B, T, &err), MYGPT_OK);
    const size_t nl = (size_t)B * T * cfg.vocab_size;
    float *inference = malloc(nl * sizeof *inference);
    memcpy(inference, g->acts.logits, nl * sizeof *inference);
    cr_assert_eq(mygpt_trainer_forward(tr, ids, tg, B, T, &loss1, &err), MYGPT_OK);
    cr_expect(memcmp(inference, tr->acts.logits, nl * sizeof *inference) == 0, "logits differ");
    cr_assert_eq(mygpt_gpt_loss(g, ids, tg, B, T, &loss3, &err), MYGPT_OK);
    cr_expect(same_bits(loss1, loss3));
    cr_assert_eq(mygpt_trainer_zero_grad(tr, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_backward(tr, &err), MYGPT_OK);
    cr_expect_eq(mygpt_trainer_backward(tr, &err), MYGPT_EINVAL, "a second backward of one forward");
    float *once = malloc(g->num_parameters * sizeof *once);
    memcpy(once, tr->grads_memory, g->num_parameters * sizeof *once);
    cr_assert_eq(mygpt_trainer_forward(tr, ids, tg, B, T, &loss2, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_backward(tr, &err), MYGPT_OK);
    for (size_t i = 0; i < g->num_parameters; i++)
        cr_assert(same_bits(tr->grads_memory[i], 2.0f * once[i]), "gradient %zu did not accumulate", i);
    free(inference);
    free(once);
    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
}

/* A trainer's buffers are kept while a smaller (B, T) fits: its loss and gradients are then
 * a fresh trainer's bits (the layers' slices follow the pass's (B, T), not the largest). */
Test(train_grads, a_smaller_batch_in_kept_buffers_gives_a_fresh_trainers_bits)
{
    const mygpt_config cfg = {.vocab_size = 30, .embed_dim = 16, .num_heads = 2, .num_layers = 3,
                              .max_seq_len = 12};
    int64_t ids[24], tg[24];
    for (int i = 0; i < 24; i++) {
        ids[i] = (i * 5 + 1) % 30;
        tg[i] = (i * 13 + 2) % 30;
    }
    mygpt_gpt *g;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 9, &err), MYGPT_OK);
    mygpt_trainer *kept, *fresh;
    cr_assert_eq(mygpt_trainer_create(&kept, g, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_create(&fresh, g, &err), MYGPT_OK);
    float big, small, want;
    cr_assert_eq(mygpt_trainer_forward(kept, ids, tg, 2, 12, &big, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_zero_grad(kept, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_backward(kept, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_forward(kept, ids, tg, 1, 5, &small, &err), MYGPT_OK); // fits: kept
    cr_assert_eq(mygpt_trainer_zero_grad(kept, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_backward(kept, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_forward(fresh, ids, tg, 1, 5, &want, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_zero_grad(fresh, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_backward(fresh, &err), MYGPT_OK);
    cr_expect(same_bits(small, want), "loss %.9g, fresh %.9g", (double)small, (double)want);
    cr_expect(memcmp(kept->grads_memory, fresh->grads_memory, g->num_parameters * sizeof(float)) == 0,
              "gradients differ");
    mygpt_trainer_free(kept);
    mygpt_trainer_free(fresh);
    mygpt_gpt_free(g);
}

/* ---- finite differences in double precision ----------------------------------------- */

/* h = LayerNorm(x) (T, C) with gamma and beta, in double: the mean, then the biased
 * variance, eps 1e-5 */
static void layernorm_double(double *h, const double *x, const double *gamma, const double *beta, int T, int C)
{
    for (int t = 0; t < T; t++) {
        double m = 0, s = 0;
        for (int c = 0; c < C; c++)
            m += x[t * C + c] / C;
        for (int c = 0; c < C; c++)
            s += (x[t * C + c] - m) * (x[t * C + c] - m) / C;
        for (int c = 0; c < C; c++)
            h[t * C + c] = (x[t * C + c] - m) / sqrt(s + 1e-5) * gamma[c] + beta[c];
    }
}

/* The model of model-spec.md in double, plainly: the loss for parameters p (mygpt's
 * layout), so central differences of it check mygpt's float32 gradients without
 * PyTorch. */
static double loss_double(const mygpt_gpt *g, const double *p, const int64_t *ids,
                          const int64_t *tg, int B, int T)
{
    const int C = g->config.embed_dim, NH = g->config.num_heads, L = g->config.num_layers;
    const int V = g->config.vocab_size, d = C / NH;
    const double *w[MYGPT_NUM_PARAM_TENSORS]; // indexed as the parameter table
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        mygpt_param_info info;
        mygpt_param_info_get(&g->config, i, &info);
        w[i] = p + info.offset;
    }
    const double *wte = w[MYGPT_PARAM_wte], *wpe = w[MYGPT_PARAM_wpe];
    double *x = calloc((size_t)T * C, sizeof *x), *h = calloc((size_t)T * C, sizeof *h);
    double *q = calloc((size_t)T * C, sizeof *q), *k = calloc((size_t)T * C, sizeof *k);
    double *v = calloc((size_t)T * C, sizeof *v), *y = calloc((size_t)T * C, sizeof *y);
    double *f = calloc((size_t)T * 4 * C, sizeof *f);
    double total = 0;
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++)
            for (int c = 0; c < C; c++)
                x[t * C + c] = wte[ids[b * T + t] * C + c] + wpe[t * C + c];
        for (int l = 0; l <= L; l++) {
            if (l < L) // h = LN1(x), or LN_f(x) after the last block
                layernorm_double(h, x, w[MYGPT_PARAM_ln1w] + l * C, w[MYGPT_PARAM_ln1b] + l * C, T, C);
            else
                layernorm_double(h, x, w[MYGPT_PARAM_lnfw], w[MYGPT_PARAM_lnfb], T, C);
            if (l == L)
                break;
            const size_t lcc = (size_t)l * C * C;
            for (int t = 0; t < T; t++)
                for (int o = 0; o < C; o++) {
                    double sq = 0, sk = 0, sv = 0;
                    for (int c = 0; c < C; c++) {
                        sq += h[t * C + c] * w[MYGPT_PARAM_wq][lcc + o * C + c];
                        sk += h[t * C + c] * w[MYGPT_PARAM_wk][lcc + o * C + c];
                        sv += h[t * C + c] * w[MYGPT_PARAM_wv][lcc + o * C + c];
                    }
                    q[t * C + o] = sq, k[t * C + o] = sk, v[t * C + o] = sv;
                }
            for (int hd = 0; hd < NH; hd++)
                for (int t = 0; t < T; t++) {
                    double sc[64], mx = -1e300, sum = 0;
                    for (int s = 0; s <= t; s++) {
                        sc[s] = 0;
                        for (int i = 0; i < d; i++)
                            sc[s] += q[t * C + hd * d + i] * k[s * C + hd * d + i];
                        sc[s] /= sqrt((double)d);
                        mx = fmax(mx, sc[s]);
                    }
                    for (int s = 0; s <= t; s++)
                        sum += (sc[s] = exp(sc[s] - mx));
                    for (int i = 0; i < d; i++) {
                        double o = 0;
                        for (int s = 0; s <= t; s++)
                            o += sc[s] / sum * v[s * C + hd * d + i];
                        y[t * C + hd * d + i] = o;
                    }
                }
            for (int t = 0; t < T; t++)
                for (int o = 0; o < C; o++) {
                    double s = 0;
                    for (int c = 0; c < C; c++)
                        s += y[t * C + c] * w[MYGPT_PARAM_wo][lcc + o * C + c];
                    x[t * C + o] += s;
                }
            layernorm_double(h, x, w[MYGPT_PARAM_ln2w] + l * C, w[MYGPT_PARAM_ln2b] + l * C, T, C);
            for (int t = 0; t < T; t++)
                for (int o = 0; o < 4 * C; o++) {
                    double s = w[MYGPT_PARAM_fc1b][(size_t)l * 4 * C + o];
                    for (int c = 0; c < C; c++)
                        s += h[t * C + c] * w[MYGPT_PARAM_fc1w][4 * lcc + (size_t)o * C + c];
                    f[t * 4 * C + o] = 0.5 * s * (1 + erf(s / sqrt(2.0)));
                }
            for (int t = 0; t < T; t++)
                for (int o = 0; o < C; o++) {
                    double s = w[MYGPT_PARAM_fc2b][(size_t)l * C + o];
                    for (int c = 0; c < 4 * C; c++)
                        s += f[t * 4 * C + c] * w[MYGPT_PARAM_fc2w][4 * lcc + (size_t)o * 4 * C + c];
                    x[t * C + o] += s;
                }
        }
        for (int t = 0; t < T; t++) { // logits = h wte^T; loss = logsumexp - logit[target]
            double lg[64], mx = -1e300, sum = 0;
            for (int u = 0; u < V; u++) {
                lg[u] = 0;
                for (int c = 0; c < C; c++)
                    lg[u] += h[t * C + c] * wte[u * C + c];
                mx = fmax(mx, lg[u]);
            }
            for (int u = 0; u < V; u++)
                sum += exp(lg[u] - mx);
            total += mx + log(sum) - lg[tg[b * T + t]];
        }
    }
    free(x); free(h); free(q); free(k); free(v); free(y); free(f);
    return total / (B * T);
}

Test(train_grads, finite_differences_in_double_agree)
{
    const mygpt_config cfg = {.vocab_size = 7, .embed_dim = 6, .num_heads = 2, .num_layers = 2,
                              .max_seq_len = 5};
    const int B = 2, T = 5;
    const int64_t ids[10] = {1, 5, 2, 6, 0, 3, 3, 4, 1, 2}, tg[10] = {5, 2, 6, 0, 1, 3, 4, 1, 2, 6};
    mygpt_gpt *g;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 11, &err), MYGPT_OK);
    mygpt_trainer *tr;
    cr_assert_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_OK);
    // give LayerNorm and the biases non-trivial values, so their gradients are tested too
    for (size_t i = 0; i < g->num_parameters; i++)
        g->params_memory[i] += 0.05f * (float)sin(0.7 * (double)i);
    float loss;
    cr_assert_eq(mygpt_trainer_forward(tr, ids, tg, B, T, &loss, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_backward(tr, &err), MYGPT_OK);
    const size_t n = g->num_parameters;
    double *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = g->params_memory[i];
    const double base = loss_double(g, p, ids, tg, B, T);
    cr_expect_leq(fabs(base - loss), 1e-5, "double loss %.9g vs float %.9g", base, (double)loss);
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        const double h = 1e-4, save = p[i];
        p[i] = save + h;
        const double up = loss_double(g, p, ids, tg, B, T);
        p[i] = save - h;
        const double down = loss_double(g, p, ids, tg, B, T);
        p[i] = save;
        const double fd = (up - down) / (2 * h);
        worst = fmax(worst, fabs(fd - tr->grads_memory[i]));
    }
    cr_log_info("finite differences: worst |fd - grad| = %.3g over %zu parameters", worst, n);
    cr_expect_leq(worst, 1e-5, "worst |finite difference - gradient| = %.3g", worst);
    free(p);
    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
}

/* ---- optimizers ---------------------------------------------------------------------- */

Test(train_optim, sgd_and_adamw_updates_are_pytorchs_bits)
{
    golden_reader gold = golden_reader_must_open("optim.txt");
    char *line;
    mygpt_optimizer opt = {0};
    float *params = NULL;
    size_t n = 0;
    int cases = 0, steps = 0;
    char kind[16];
    while ((line = golden_read(&gold))) {
        double lr, mom, damp, wd, b1, b2, eps;
        int nesterov;
        if (sscanf(line, "case %15s %lf %lf %lf %lf %d %lf %lf %lf", kind, &lr, &mom, &damp, &wd,
                   &nesterov, &b1, &b2, &eps) == 9) {
            if (strcmp(kind, "sgd") == 0) {
                mygpt_sgd_init(&opt, lr);
                opt.momentum = mom;
                opt.dampening = damp;
                opt.nesterov = nesterov;
            } else {
                mygpt_adamw_init(&opt, lr);
                opt.beta1 = b1;
                opt.beta2 = b2;
                opt.eps = eps;
            }
            opt.weight_decay = wd;
        } else if (strncmp(line, "params ", 7) == 0) {
            n = 0;
            for (const char *p = line + 7; *p; p++)
                n += *p != ' ' && (p == line + 7 || p[-1] == ' ');
            params = f32_line(line + 7, n);
        } else if (strncmp(line, "step ", 5) == 0) {
            char *arrow = strstr(line, " -> ");
            cr_assert_not_null(arrow);
            *arrow = '\0';
            float *grads = f32_line(line + 5, n), *want = f32_line(arrow + 4, n);
            mygpt_error err = {0};
            cr_assert_eq(mygpt_optimizer_step(&opt, params, grads, n, &err), MYGPT_OK, "%s", err.message);
            size_t diff = 0;
            for (size_t i = 0; i < n; i++)
                diff += !golden_same_bits_as_x86(params[i], want[i]);
            cr_expect_eq(diff, 0, "case %d (%s lr=%g) step %ld: %zu of %zu parameters differ", cases,
                         kind, opt.lr, opt.step, diff, n);
            memcpy(params, want, n * sizeof *params); // go on from PyTorch's values
            free(grads);
            free(want);
            steps++;
        } else if (strcmp(line, "end") == 0) {
            mygpt_optimizer_free(&opt);
            free(params);
            params = NULL;
            cases++;
        }
    }
    golden_reader_close(&gold);
    cr_expect_geq(cases, 12);
    cr_expect_eq(steps, 3 * cases);
}

Test(train_optim, bad_hyper_parameters_are_refused)
{
    float p[3] = {1, 2, 3}, g[3] = {1, 1, 1};
    mygpt_optimizer o;
    mygpt_error err = {0};
    mygpt_sgd_init(&o, -0.1);
    cr_expect_eq(mygpt_optimizer_step(&o, p, g, 3, &err), MYGPT_EINVAL);
    mygpt_sgd_init(&o, 0.1);
    o.nesterov = 1;
    cr_expect_eq(mygpt_optimizer_step(&o, p, g, 3, &err), MYGPT_EINVAL, "nesterov without momentum");
    mygpt_adamw_init(&o, 0.1);
    o.beta2 = 1.0;
    cr_expect_eq(mygpt_optimizer_step(&o, p, g, 3, &err), MYGPT_EINVAL);
    mygpt_adamw_init(&o, 0.1);
    cr_expect_eq(mygpt_optimizer_step(&o, p, g, 3, &err), MYGPT_OK);
    cr_expect_eq(mygpt_optimizer_step(&o, p, g, 2, &err), MYGPT_EINVAL, "a different size");
    mygpt_optimizer_free(&o);
}

/* A step says whether it left a value that is not finite (what the training loops check
 * before anything may be saved): a weight, AdamW's exp_avg_sq (a gradient of 1e21 squared
 * overflows while the weight stays finite) or SGD's momentum, at any place of a block too
 * large for one thread; a finite step clears it. */
Test(train_optim, a_step_says_whether_it_left_a_value_that_is_not_finite)
{
    const size_t n = 3 * 65536 + 7; // past MYGPT_STREAM_MIN: the parallel loop
    float *p = malloc(n * sizeof *p), *g = malloc(n * sizeof *g);
    cr_assert(p && g);
    const size_t places[] = {0, 65536, n - 1};
    for (int kind = 0; kind < 3; kind++)
        for (size_t k = 0; k < sizeof places / sizeof places[0]; k++) {
            for (size_t i = 0; i < n; i++)
                p[i] = 0.5f, g[i] = 0.25f;
            mygpt_optimizer o;
            mygpt_error err = {0};
            if (kind == 0)
                mygpt_adamw_init(&o, 1e-3);
            else
                mygpt_sgd_init(&o, 1e-3);
            o.momentum = kind == 2 ? 0.9 : o.momentum;
            cr_assert_eq(mygpt_optimizer_step(&o, p, g, n, &err), MYGPT_OK, "%s", err.message);
            cr_expect_eq(o.nonfinite, 0, "optimizer %d: a finite step flagged", kind);
            // AdamW: v = 0.001 g^2 = 1e39 overflows, p stays finite; SGD: p - lr g = 3e38 + 3e41 overflows
            g[places[k]] = kind == 0 ? 1e21f : -3e38f;
            if (kind != 0)
                p[places[k]] = 3e38f, o.lr = 1e3;
            cr_assert_eq(mygpt_optimizer_step(&o, p, g, n, &err), MYGPT_OK, "%s", err.message);
            cr_expect_eq(o.nonfinite, 1, "optimizer %d, place %zu: not flagged", kind, places[k]);
            mygpt_optimizer_free(&o);
        }
    // a finite step after one that was not clears the flag
    mygpt_optimizer o;
    mygpt_error err = {0};
    mygpt_sgd_init(&o, 1.0);
    float q[2] = {3e38f, 0}, d[2] = {-3e38f, 0};
    cr_assert_eq(mygpt_optimizer_step(&o, q, d, 2, &err), MYGPT_OK);
    cr_expect_eq(o.nonfinite, 1);
    q[0] = d[0] = 1;
    cr_assert_eq(mygpt_optimizer_step(&o, q, d, 2, &err), MYGPT_OK);
    cr_expect_eq(o.nonfinite, 0);
    mygpt_optimizer_free(&o);
    free(p);
    free(g);
}

/* ---- loss curves -------------------------------------------------------------------- */

Test(train_curves, thirty_steps_of_sgd_and_adamw_follow_pytorch, .timeout = 300)
{
    golden_reader gold = golden_reader_must_open("curves.txt");
    char *line;
    char optname[16];
    double lr, wd;
    unsigned long long seed;
    mygpt_config cfg = {0};
    int B = 0, T = 0, curves = 0;
    int64_t *ids = NULL, *tg = NULL;
    while ((line = golden_read(&gold))) {
        if (sscanf(line, "curve %15s %lf %lf %llu %d %d %d %d %d %d %d", optname, &lr, &wd, &seed,
                   &cfg.vocab_size, &cfg.embed_dim, &cfg.num_heads, &cfg.num_layers,
                   &cfg.max_seq_len, &B, &T) == 11) {
            ids = malloc((size_t)B * T * sizeof *ids);
            tg = malloc((size_t)B * T * sizeof *tg);
        } else if (strncmp(line, "ids ", 4) == 0) {
            golden_parse_i64(line + 4, ids, (size_t)B * T);
        } else if (strncmp(line, "targets ", 8) == 0) {
            golden_parse_i64(line + 8, tg, (size_t)B * T);
        } else if (strncmp(line, "losses ", 7) == 0) {
            float *want = f32_line(line + 7, 30);
            mygpt_gpt *g;
            mygpt_error err = {0};
            cr_assert_eq(mygpt_gpt_create(&g, &cfg, seed, &err), MYGPT_OK);
            mygpt_trainer *tr;
            cr_assert_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_OK);
            mygpt_optimizer opt;
            if (strcmp(optname, "sgd") == 0)
                mygpt_sgd_init(&opt, lr);
            else
                mygpt_adamw_init(&opt, lr);
            opt.weight_decay = wd;
            double worst = 0;
            for (int s = 0; s < 30; s++) {
                float loss;
                cr_assert_eq(mygpt_trainer_forward(tr, ids, tg, B, T, &loss, &err), MYGPT_OK);
                cr_assert_eq(mygpt_trainer_zero_grad(tr, &err), MYGPT_OK);
                cr_assert_eq(mygpt_trainer_backward(tr, &err), MYGPT_OK);
                cr_assert_eq(mygpt_optimizer_step(&opt, g->params_memory, tr->grads_memory,
                                                  g->num_parameters, &err), MYGPT_OK);
                const double rel = fabs(loss - want[s]) / fabs(want[s]);
                worst = fmax(worst, rel);
                cr_expect_leq(rel, 1e-4, "%s curve %d step %d: loss %.7g, PyTorch %.7g", optname,
                              curves, s, loss, want[s]);
            }
            cr_log_info("%s, config %d: worst relative loss difference over 30 steps %.3g", optname,
                        curves / 2, worst);
            mygpt_optimizer_free(&opt);
            mygpt_trainer_free(tr);
            mygpt_gpt_free(g);
            free(want);
        } else if (strcmp(line, "end") == 0) {
            free(ids);
            free(tg);
            curves++;
        }
    }
    golden_reader_close(&gold);
    cr_expect_eq(curves, 6);
}

/* ---- threads ------------------------------------------------------------------------ */

/* A model big enough that the backward's and the optimizer's loops run in parallel:
 * gradients and AdamW updates are the same bits under 1, 2, 3 and 8 threads. */
Test(train_threads, gradients_and_updates_identical_for_1_2_3_8_threads, .timeout = 300)
{
    const mygpt_config cfg = {.vocab_size = 300, .embed_dim = 128, .num_heads = 4,
                              .num_layers = 2, .max_seq_len = 64};
    const int B = 4, T = 64;
    cr_assert_gt((size_t)B * T * 4 * cfg.embed_dim, MYGPT_STREAM_MIN); /* the backward's fills of (N, 4C) */
    int64_t ids[256], tg[256];
    for (int i = 0; i < 256; i++) {
        ids[i] = (i * 7919) % 300;
        tg[i] = (i * 104729 + 5) % 300;
    }
    const int threads[] = {1, 2, 3, 8};
    const int saved = omp_get_max_threads();
    float *first_g = NULL, *first_p = NULL;
    size_t n = 0;
    for (int k = 0; k < 4; k++) {
        omp_set_num_threads(threads[k]);
        mygpt_gpt *g;
        mygpt_error err = {0};
        float loss;
        cr_assert_eq(mygpt_gpt_create(&g, &cfg, 5, &err), MYGPT_OK);
        mygpt_trainer *tr;
        cr_assert_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_OK);
        mygpt_optimizer opt;
        mygpt_adamw_init(&opt, 1e-3);
        for (int s = 0; s < 2; s++) {
            cr_assert_eq(mygpt_trainer_forward(tr, ids, tg, B, T, &loss, &err), MYGPT_OK);
            cr_assert_eq(mygpt_trainer_zero_grad(tr, &err), MYGPT_OK);
            cr_assert_eq(mygpt_trainer_backward(tr, &err), MYGPT_OK);
            cr_assert_eq(mygpt_optimizer_step(&opt, g->params_memory, tr->grads_memory,
                                              g->num_parameters, &err), MYGPT_OK);
        }
        n = g->num_parameters;
        if (k == 0) {
            first_g = malloc(n * sizeof *first_g);
            first_p = malloc(n * sizeof *first_p);
            memcpy(first_g, tr->grads_memory, n * sizeof *first_g);
            memcpy(first_p, g->params_memory, n * sizeof *first_p);
        } else {
            cr_expect(memcmp(first_g, tr->grads_memory, n * sizeof *first_g) == 0,
                      "gradients with %d threads differ from 1 thread", threads[k]);
            cr_expect(memcmp(first_p, g->params_memory, n * sizeof *first_p) == 0,
                      "parameters after AdamW with %d threads differ", threads[k]);
        }
        mygpt_optimizer_free(&opt);
        mygpt_trainer_free(tr);
        mygpt_gpt_free(g);
    }
    omp_set_num_threads(saved);
    free(first_g);
    free(first_p);
}

/* The fast matmul backward agrees with the textbook loops (other summation order). */
Test(train_grads, fast_matmul_backward_agrees_with_the_naive_one)
{
    const size_t N = 70;
    const int C = 40, OC = 90;
    float *x = malloc(N * C * sizeof *x), *w = malloc((size_t)OC * C * sizeof *w);
    float *dy = malloc(N * OC * sizeof *dy);
    float *dx1 = calloc(N * C, sizeof *dx1), *dx2 = calloc(N * C, sizeof *dx2);
    float *dw1 = calloc((size_t)OC * C, sizeof *dw1), *dw2 = calloc((size_t)OC * C, sizeof *dw2);
    float *db1 = calloc(OC, sizeof *db1), *db2 = calloc(OC, sizeof *db2);
    mygpt_rng r = {0};
    mygpt_rng_seed(&r, 9);
    mygpt_normal_(&r, x, N * C, 0, 1, NULL);
    mygpt_normal_(&r, w, (size_t)OC * C, 0, 1, NULL);
    mygpt_normal_(&r, dy, N * OC, 0, 1, NULL);
    mygpt_matmul_backward_naive((mygpt_linear_grads){dx1, dw1, db1}, dy, x, w, N, C, OC);
    cr_assert_eq(mygpt_matmul_backward((mygpt_linear_grads){dx2, dw2, db2}, dy, x, w, N, C, OC, NULL), MYGPT_OK);
    for (size_t i = 0; i < N * C; i++)
        cr_assert_leq(fabsf(dx1[i] - dx2[i]), 1e-4f * fmaxf(1, fabsf(dx1[i])), "dx[%zu]", i);
    for (size_t i = 0; i < (size_t)OC * C; i++)
        cr_assert_leq(fabsf(dw1[i] - dw2[i]), 1e-4f * fmaxf(1, fabsf(dw1[i])), "dw[%zu]", i);
    for (int i = 0; i < OC; i++)
        cr_assert(same_bits(db1[i], db2[i]), "db[%d]", i);
    free(x); free(w); free(dy); free(dx1); free(dx2); free(dw1); free(dw2); free(db1); free(db2);
}
