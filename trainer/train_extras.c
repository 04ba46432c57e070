/*
 * train_extras.c - presets, the progress line, the loss log and Ctrl-C for `mygpt
 * train`'s session (train_session.c; see train_extras.h).
 */
#include "train_extras.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "mygpt/print.h"
#include "mygpt/sp_tokenizer.h"
#include "mygpt/svg.h"
#include "train_step.h"

/* ---- presets ------------------------------------------------------------------------- */

typedef struct preset {
    const char *name, *what;
    const char *flags[40]; /* name, value (NULL for a switch), ..., NULL */
    int nanogpt;           /* nanoGPT's loop: its --eval-batches (eval_iters) stays with --steps */
} preset;

/* verdict first: the defaults */
static const preset PRESETS[] = {
    {"verdict",
     "the defaults: the course's GPT (C 64, 4 heads, 2 layers) on windows of 64 tokens, "
     "AdamW, 400 steps: it learns the-verdict by heart (a "
     "prompt that starts a window, such as \"I HAD always thought\", goes on in Wharton's words)",
     {"seed", "123", "vocab", "50257", "embed", "64", "heads", "4", "layers", "2", "max-seq", "64",
      "context", "64", "batch", "8", "steps", "400", "optimizer", "adamw", "lr", "1e-2",
      "eval-every", "20", NULL}},
    {"book-ch5",
     "the book's chapter 5 (train_model_simple): its GPT-2-sized model (162M parameters at context 256), "
     "10 epochs",
     {"arch", "llms-from-scratch", "seed", "123", "vocab", "50257", "embed", "768", "heads", "12",
      "layers", "12", "max-seq", "256", "dropout", "0.1", "context", "256", "batch", "2",
      "epochs", "10", "optimizer", "adamw", "lr", "4e-4", "weight-decay", "0.1", "eval-every", "5",
      "eval-batches", "5", "sample-prompt", "Every effort moves you", "sample-tokens", "50", NULL}},
    {"tiny", "a model small enough to try every flag in seconds (the text it writes is not readable)",
     {"seed", "123", "vocab", "50257", "embed", "16", "heads", "2", "layers", "1", "max-seq", "16",
      "context", "16", "batch", "4", "steps", "30", "optimizer", "adamw", "lr", "1e-2",
      "eval-every", "10", NULL}},
    {"shakespeare-char",
     "nanoGPT's README run on a CPU (python train.py config/train_shakespeare_char.py --device=cpu "
     "--compile=False --eval_iters=20 --log_interval=1 --block_size=64 --batch_size=12 --n_layer=4 "
     "--n_head=4 --n_embd=128 --max_iters=2000 --lr_decay_iters=2000 --dropout=0.0): a character-level "
     "GPT on Tiny Shakespeare (--text corpus/tinyshakespeare.txt), its loss lines train.py's. --arch nanogpt "
     "runs train.py's loop: iterations 0 to --steps, --eval-batches random batches of each split, the "
     "warmup lr (it + 1) / (K + 1), clipping at every iteration, the text's characters as the vocabulary "
     "(mygpt generate --chars FILE writes with them)",
     {"arch", "nanogpt", "seed", "1337", "vocab", "65", "embed", "128", "heads", "4", "layers", "4",
      "max-seq", "64", "context", "64", "batch", "12", "steps", "2000", "optimizer", "adamw", "lr", "1e-3",
      "weight-decay", "0.1", "warmup", "100", "cosine", NULL, "lr-min", "1e-4", "clip-grad", "1.0",
      "eval-every", "250", "eval-batches", "20", NULL},
     1},
};

static int is_model_flag(const char *f)
{
    static const char *const model[] = {"vocab", "embed", "heads", "layers", "max-seq", "arch", "qkv-bias"};
    for (size_t i = 0; i < sizeof model / sizeof model[0]; i++)
        if (strcmp(f, model[i]) == 0)
            return 1;
    return 0;
}

static int is_book_flag(const char *f)
{
    return strcmp(f, "epochs") == 0 || strcmp(f, "eval-batches") == 0 || strcmp(f, "sample-prompt") == 0 ||
           strcmp(f, "sample-tokens") == 0;
}

/* Adds flag name = value to a as if given (value lives as long as the program). 0, or
 * EXIT_USAGE after one line saying who (whose) had no room. */
static int add_flag(const char *cmd, parsed_args *a, const arg_spec *specs, const char *name, const char *value,
                    const char *whose)
{
    const arg_spec *s = NULL;
    for (int k = 0; specs[k].name && !s; k++)
        s = strcmp(specs[k].name, name) == 0 ? &specs[k] : NULL;
    if (!s || a->nhits == (int)(sizeof a->hits / sizeof a->hits[0])) {
        cli_error(cmd, "%s: too many flags", whose);
        return EXIT_USAGE;
    }
    a->hits[a->nhits++] = (arg_hit){s, value};
    return 0;
}

int train_apply_preset(const char *cmd, parsed_args *a, const arg_spec *specs)
{
    const char *name = args_get(a, "preset");
    const preset *p = NULL;
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0] && !p; i++)
        if (!name || strcmp(name, PRESETS[i].name) == 0)
            p = &PRESETS[i];
    if (!p) {
        cli_error(
            cmd, "--preset: unknown preset '%s' (verdict, book-ch5, tiny or shakespeare-char; 'mygpt train --help' lists them)",
            name);
        return EXIT_USAGE;
    }
    const int init_from = args_has(a, "init-from"), user_epochs = args_has(a, "epochs"),
              user_steps = args_has(a, "steps");
    // the model's sizes all from the preset: --max-seq may follow a larger --context (a
    // user's own sizes, a tokenizer's vocabulary among them, keep the default 64, and a
    // longer context is refused, as before)
    const int sizes_given = args_has(a, "vocab") || args_has(a, "tokenizer") || args_has(a, "embed") ||
                            args_has(a, "heads") || args_has(a, "layers");
    // --tokenizer without --vocab: the model's vocabulary is the tokenizer's, whose ids are
    // its rows (an unreadable file is said when the data is read)
    mygpt_sp_tokenizer *sp = NULL;
    mygpt_error err = {0};
    if (args_has(a, "tokenizer") && !args_has(a, "vocab") && !init_from &&
        mygpt_sp_load(&sp, args_get(a, "tokenizer"), 0, &err) == MYGPT_OK) {
        static char v[16]; // the flag points at it for the program's life (one call a program)
        snprintf(v, sizeof v, "%d", mygpt_sp_vocab_size(sp));
        mygpt_sp_free(sp);
        if (add_flag(cmd, a, specs, "vocab", v, "--tokenizer"))
            return EXIT_USAGE;
    }
    const int n = a->nhits; // only the user's own flags (and the tokenizer's size) decide what is left out
    for (int i = 0; p->flags[i]; i += 2) {
        const char *f = p->flags[i], *v = p->flags[i + 1];
        int given = 0;
        for (int k = 0; k < n && !given; k++)
            given = strcmp(a->hits[k].spec->name, f) == 0;
        if (given || (init_from && is_model_flag(f)) || (user_epochs && strcmp(f, "steps") == 0) ||
            (user_steps && is_book_flag(f) && !p->nanogpt) || (user_epochs && !name && strcmp(f, "eval-every") == 0))
            continue;
        const char *ctx = args_get(a, "context");
        static char wider[32]; // as the tokenizer's size above
        int64_t T = 0;
        if (strcmp(f, "max-seq") == 0 && ctx && !sizes_given) {
            // room for the user's --context, which may be as long as a model's context
            if (parse_i64(cmd, "context", ctx, 1, MYGPT_MAX_DIM, &T))
                return EXIT_USAGE;
            if (T > strtoll(v, NULL, 10)) {
                snprintf(wider, sizeof wider, "%lld", (long long)T);
                v = wider;
            }
        }
        char whose[64];
        snprintf(whose, sizeof whose, "--preset %s", p->name);
        if (add_flag(cmd, a, specs, f, v, whose))
            return EXIT_USAGE;
    }
    return 0;
}

void train_print_presets(FILE *f)
{
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++) {
        const preset *p = &PRESETS[i];
        fprintf(f, "  %-9s", p->name);
        int col = 11;
        for (const char *w = p->what; *w;) { // the description, wrapped at 90 columns
            const size_t len = strcspn(w, " ");
            if (col + 1 + (int)len > 90) {
                fputs("\n          ", f);
                col = 10;
            }
            col += fprintf(f, " %.*s", (int)len, w);
            w += len + (w[len] == ' ');
        }
        fputs(":\n           ", f);
        col = 11;
        for (int k = 0; p->flags[k]; k += 2) {
            const char *v = p->flags[k + 1];
            const int quote = v && strchr(v, ' ');
            const int w = (int)strlen(p->flags[k]) + 3 + (v ? (int)strlen(v) + 2 * quote : 0);
            if (col + w > 90) {
                fputs("\n           ", f);
                col = 11;
            }
            col += fprintf(f, " --%s%s%s%s%s", p->flags[k], v ? " " : "", quote ? "\"" : "", v ? v : "",
                           quote ? "\"" : "");
        }
        fputc('\n', f);
    }
}

/* ---- progress ------------------------------------------------------------------------ */

void progress_start(train_progress *p, FILE *f, long long first, long long total, long long tokens_per_step,
                    int show_lr)
{
    memset(p, 0, sizeof *p);
    p->f = f;
    p->show_lr = show_lr;
    p->tty = isatty(fileno(f));
    p->first = first;
    p->total = total;
    p->tokens_per_step = tokens_per_step;
    p->t0 = cli_now_s();
}

/* "12s", "4m05s", "1h02m" */
static void duration(char *out, size_t n, double s)
{
    const long long t = (long long)(s + 0.5);
    if (t < 60)
        snprintf(out, n, "%llds", t);
    else if (t < 3600)
        snprintf(out, n, "%lldm%02llds", t / 60, t % 60);
    else
        snprintf(out, n, "%lldh%02lldm", t / 3600, t / 60 % 60);
}

void progress_step(train_progress *p, long long steps, double loss, double lr, int evaluated)
{
    const int last = steps >= p->total;
    if (!p->tty && !evaluated && !last)
        return;
    const double elapsed = cli_now_s() - p->t0;
    const long long here = steps - p->first > 0 ? steps - p->first : 1;
    const double per = elapsed / (double)here;
    char eta[32];
    duration(eta, sizeof eta, per * (double)(p->total - steps));
    char line[256], rate[40] = "";
    if (p->show_lr)
        snprintf(rate, sizeof rate, ", lr %.3g", lr);
    char shown[64];
    snprintf(line, sizeof line, "step %lld/%lld, loss %s%s, %.0f ms/step, %.0f tokens/s, %s %s", steps,
             p->total, mygpt_py_fixed_str(shown, sizeof shown, loss, 4), rate, 1e3 * per, elapsed > 0 ? (double)(here * p->tokens_per_step) / elapsed : 0.0,
             last ? "took" : "ETA", last ? (duration(eta, sizeof eta, elapsed), eta) : eta);
    if (!p->tty) {
        fprintf(p->f, "mygpt train: %s\n", line);
        fflush(p->f);
        return;
    }
    enum { WIDTH = 20 };
    char bar[WIDTH + 1];
    const int full = (int)((double)WIDTH * (double)steps / (double)(p->total ? p->total : 1));
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < full ? '#' : '.';
    bar[WIDTH] = '\0';
    fprintf(p->f, "\r\033[K[%s] %s", bar, line);
    fflush(p->f);
    p->shown = 1;
}

void progress_clear(train_progress *p)
{
    if (p->tty && p->shown) {
        fputs("\r\033[K", p->f);
        fflush(p->f);
        p->shown = 0;
    }
}

/* ---- the loss log --------------------------------------------------------------------- */

#define LOG_HEADER "step,train_loss,val_loss,lr,ms\n"
#define PLOT_TITLE "mygpt train --log: the loss of the run"

/* printf at the end of the log's text */
static void rows_printf(train_log *l, const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    const int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (!l->rows.failed && n >= 0 && l->rows.len + (size_t)n + 1 > l->rows.cap) {
        const size_t cap = (l->rows.len + (size_t)n + 1) * 2;
        char *p = realloc(l->rows.data, cap);
        if (p) {
            l->rows.data = p;
            l->rows.cap = cap;
        } else {
            l->rows.failed = 1;
        }
    }
    if (!l->rows.failed && n >= 0) {
        vsnprintf(l->rows.data + l->rows.len, (size_t)n + 1, fmt, again);
        l->rows.len += (size_t)n;
    }
    va_end(again);
}

/* Whether an SVG at path may be replaced: absent, or a plot this log wrote (not a link,
 * a FIFO or a folder: mygpt_file_head) */
static int plot_is_ours(const char *path)
{
    char head[8];
    const long n = mygpt_file_head(path, head, sizeof head);
    if (n < 0)
        return n == MYGPT_HEAD_ABSENT;
    char *text = NULL;
    size_t len = 0;
    const int ours =
        mygpt_read_file_max(path, 16u << 20, &text, &len, NULL) == MYGPT_OK && strstr(text, PLOT_TITLE);
    free(text);
    return ours;
}

static int log_grow(train_log *l)
{
    if (l->n < l->cap && l->nv < l->cap)
        return 0;
    const size_t cap = l->cap ? 2 * l->cap : 256;
    float **curves[] = {&l->x, &l->train, &l->lr, &l->vx, &l->val};
    for (size_t i = 0; i < sizeof curves / sizeof curves[0]; i++) {
        float *p = realloc(*curves[i], cap * sizeof(float));
        if (!p)
            return 1; // what was kept stays freeable
        *curves[i] = p;
    }
    l->cap = cap;
    return 0;
}

static void log_point(train_log *l, long long step, double tl, const double *vl, double lr)
{
    if (log_grow(l)) {
        l->rows.failed = 1;
        return;
    }
    l->x[l->n] = (float)step;
    l->lr[l->n] = (float)lr;
    l->train[l->n++] = (float)tl;
    if (vl) {
        l->vx[l->nv] = (float)step;
        l->val[l->nv++] = (float)*vl;
    }
}

void train_log_plot_path(char *svg, size_t cap, const char *csv)
{
    const size_t n = strlen(csv);
    const int dot_csv = n > 4 && strcmp(csv + n - 4, ".csv") == 0;
    snprintf(svg, cap, "%.*s.svg", (int)(dot_csv ? n - 4 : n), csv);
}

int train_log_open(const char *cmd, train_log *l, const char *csv, long long resume_step)
{
    memset(l, 0, sizeof *l);
    if (strlen(csv) >= sizeof l->csv) {
        cli_error(cmd, "--log: the path is too long");
        return EXIT_USAGE;
    }
    snprintf(l->csv, sizeof l->csv, "%s", csv);
    train_log_plot_path(l->svg, sizeof l->svg, csv);
    mygpt_error err = {0};
    if (mygpt_checkpoint_check_path(l->csv, &err) != MYGPT_OK ||
        (plot_is_ours(l->svg) && mygpt_checkpoint_check_path(l->svg, &err) != MYGPT_OK)) {
        cli_error(cmd, "--log: %s", err.message);
        return EXIT_USAGE;
    }
    const int log_kept = !cli_replaceable_text(l->csv, LOG_HEADER); // (a folder, a link: check_path said)
    if (log_kept || !plot_is_ours(l->svg)) {
        cli_error(cmd, "--log: %s is there and is not a loss %s of mygpt train: not replaced (move it, or log elsewhere)",
                  log_kept ? l->csv : l->svg, log_kept ? "log" : "plot");
        return EXIT_USAGE;
    }
    rows_printf(l, "%s", LOG_HEADER);
    char *text = NULL;
    size_t len = 0;
    // a resumed run: the rows of the run before, up to its state's step
    if (resume_step > 0 && mygpt_read_file_max(l->csv, 1u << 30, &text, &len, NULL) == MYGPT_OK &&
        strncmp(text, LOG_HEADER, strlen(LOG_HEADER)) == 0) {
        for (char *line = text + strlen(LOG_HEADER), *end; *line; line = end + 1) {
            if (!(end = strchr(line, '\n')))
                break;
            long long step;
            double tl, vl;
            char *f = line;
            step = strtoll(f, &f, 10);
            if (step >= resume_step || *f != ',')
                break;
            tl = strtod(f + 1, &f);
            const int has_val = f[0] == ',' && f[1] != ',';
            vl = has_val ? strtod(f + 1, &f) : 0;
            const double lr = f[0] == ',' ? strtod(f + 1 + (f[1] == ','), NULL) : 0; // after an empty val_loss
            log_point(l, step, tl, has_val ? &vl : NULL, lr);
            rows_printf(l, "%.*s\n", (int)(end - line), line);
        }
    }
    free(text);
    return 0;
}

void train_log_row(train_log *l, long long step, double train_loss, const double *val_loss, double lr,
                   double ms)
{
    char shown[64];
    log_point(l, step, train_loss, val_loss, lr);
    rows_printf(l, "%lld,%s,", step, mygpt_py_fixed_str(shown, sizeof shown, train_loss, 6));
    if (val_loss)
        rows_printf(l, "%s", mygpt_py_fixed_str(shown, sizeof shown, *val_loss, 6));
    char rate[32];
    train_shortest(rate, sizeof rate, lr);
    rows_printf(l, ",%s,%.3f\n", rate, ms);
}

void train_shortest(char *out, size_t n, double v)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, n, "%.*g", digits, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

int train_log_write(const char *cmd, train_log *l)
{
    mygpt_error err = {0};
    if (l->rows.failed) {
        cli_error(cmd, "--log: out of memory for the log");
        return EXIT_RUNTIME;
    }
    mygpt_status st = mygpt_write_file(l->csv, l->rows.data, l->rows.len, &err);
    if (st != MYGPT_OK)
        return cli_write_fail(cmd, st, &err);
    float ymax = 0;
    for (size_t i = 0; i < l->n; i++)
        ymax = isfinite(l->train[i]) && l->train[i] > ymax ? l->train[i] : ymax;
    for (size_t i = 0; i < l->nv; i++)
        ymax = isfinite(l->val[i]) && l->val[i] > ymax ? l->val[i] : ymax;
    // a schedule's learning rates, in units of a power of ten (the axis's ticks show two
    // decimals): 1e-3 for a peak of 0.001
    float lr_max = 0;
    for (size_t i = 0; i < l->n; i++)
        lr_max = isfinite(l->lr[i]) && l->lr[i] > lr_max ? l->lr[i] : lr_max;
    const int e = lr_max > 0 ? (int)floor(log10(lr_max)) : 0;
    const float unit = (float)pow(10.0, e);
    float *scaled = l->lr_curve ? malloc((l->n ? l->n : 1) * sizeof *scaled) : NULL;
    if (l->lr_curve && !scaled) {
        cli_error(cmd, "--log: out of memory for the plot");
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; scaled && i < l->n; i++)
        scaled[i] = l->lr[i] / unit;
    mygpt_svg fig;
    mygpt_svg_begin(&fig, 820, l->lr_curve ? 700 : 480);
    const mygpt_svg_series s[2] = {
        {.x = l->x, .y = l->train, .n = (int)l->n, .label = "train (the step's batch)"},
        {.x = l->vx, .y = l->val, .n = (int)l->nv, .label = "validation", .markers = 1}};
    const mygpt_svg_panel p = {80, 50, 520, 360, PLOT_TITLE, "step", "loss", .legend_outside = 1};
    mygpt_svg_line_plot(&fig, &p, s, l->nv ? 2 : 1, 0.0, ymax > 0 ? ymax : 1.0);
    if (scaled) { // a schedule: its curve below, on the same steps
        char ylabel[40];
        snprintf(ylabel, sizeof ylabel, "lr (units of 1e%d)", e);
        const mygpt_svg_series r = {.x = l->x, .y = scaled, .n = (int)l->n, .label = "learning rate"};
        const mygpt_svg_panel q = {80, 490, 520, 150, "the learning rate of each step", "step", ylabel,
                                   .legend_outside = 1};
        mygpt_svg_line_plot(&fig, &q, &r, 1, 0.0, lr_max > 0 ? lr_max / unit : 1.0);
        free(scaled);
    }
    if ((st = mygpt_svg_save(&fig, l->svg, &err)) != MYGPT_OK)
        return cli_write_fail(cmd, st, &err);
    return 0;
}

void train_log_free(train_log *l)
{
    free(l->rows.data);
    free(l->x);
    free(l->train);
    free(l->lr);
    free(l->vx);
    free(l->val);
    memset(l, 0, sizeof *l);
}

int train_loop_fail(const char *cmd, mygpt_status st, const mygpt_error *err)
{
    const int rc = cli_fail(cmd, st, err);
    return train_diverged(err) ? EXIT_RUNTIME : rc;
}

/* ---- Ctrl-C ---------------------------------------------------------------------------- */

static volatile sig_atomic_t interrupts;

static void on_sigint(int sig)
{
    if (interrupts++) { // the second: at once
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

void train_catch_sigint(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
}

int train_interrupted(void)
{
    return interrupts > 0;
}

void train_end_by_sigint(void)
{
    fflush(stdout);
    fflush(stderr);
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
}

void train_test_sigint(long long steps)
{
    const char *at = getenv("MYGPT_TRAIN_SIGINT_AFTER");
    char *end;
    if (!at || strtoll(at, &end, 10) != steps || end == at)
        return;
    raise(SIGINT);
    if (*end == ',')
        raise(SIGINT);
}

/* Whether path is absent (1), or a regular file whose safetensors header holds `mark`
 * in its first bytes (1), or anything else (0: another file, a link, a FIFO, a folder) */
static int path_is_free_for(const char *path, const char *mark)
{
    char head[512];
    const long n = mygpt_file_head(path, head, sizeof head);
    return n == MYGPT_HEAD_ABSENT || (n > 8 && strstr(head + 8, mark) != NULL);
}

int train_state_path_is_free(const char *path)
{
    return path_is_free_for(path, "\"format\":\"mygpt-train-state\"");
}

int train_model_path_is_free(const char *path)
{
    return path_is_free_for(path, "{\"__metadata__\":{\"format\":\"pt\",") || mygpt_llama2c_model_file(path);
}
