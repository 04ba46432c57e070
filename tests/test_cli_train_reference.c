/*
 * test_cli_train_reference.c - mygpt train and generate against the PyTorch references:
 * the course's loop (tools/reference_train.py; llama2.c's model.py in it), the book's chapter-5 loop, appendix D's
 * schedule and clipping (each step's learning rate as Python computes it), and the
 * schedule's and clipping's bad flags.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "data.h"
#include "golden.h"

/* Compares one line mygpt printed (got) with the reference's (want), line lineno of the
 * golden file. */
typedef void (*line_check)(const char *got, const char *want, long lineno);

/* Runs the cases of a golden file of the tools' commands (tests/golden/NAME):
 *   case WORDS   (mygpt's arguments, DATA for the data folder, _ for a space in a prompt)
 *   out LINE     (each line it must print, in order, compared by check)
 *   end          (nothing more may follow when strict)
 * Runs only case number `only` (from 1) when it is not 0. Returns the number of cases run. */
static int run_cli_cases(const char *name, line_check check, int strict, int only)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    golden_reader g = golden_reader_must_open(name);
    char *line, *next = NULL;
    proc_result r = {0};
    int cases = 0, seen = 0, have = 0;
    while ((line = golden_read(&g))) {
        if (strncmp(line, "case ", 5) == 0 && only && ++seen != only) {
            while ((line = golden_read(&g)) && strcmp(line, "end") != 0) {
            }
        } else if (strncmp(line, "case ", 5) == 0) {
            cr_assert_eq(run_tool_words(line + 5, data, &r), 0);
            cr_expect_eq(r.status, 0, "mygpt %s: exit %d: %s", line + 5, r.status, r.err);
            next = r.out;
            have = 1;
        } else if (strncmp(line, "out ", 4) == 0) {
            cr_assert(have);
            char *nl = strchr(next, '\n');
            cr_assert_not_null(nl, "mygpt printed fewer lines than PyTorch: missing '%s'", line + 4);
            *nl = '\0';
            check(next, line + 4, g.lineno);
            next = nl + 1;
        } else if (strcmp(line, "end") == 0) {
            if (strict)
                cr_expect_str_empty(next, "mygpt printed more lines than PyTorch: '%s'", next);
            proc_result_free(&r);
            have = 0;
            cases++;
        }
    }
    golden_reader_close(&g);
    return cases;
}

/* losses within float32 noise, other lines (generated ids) exactly */
static void losses_close(const char *got, const char *want, long lineno)
{
    long s1, s2;
    double t1, v1, t2, v2;
    if (sscanf(want, "step %ld train_loss %lf val_loss %lf", &s1, &t1, &v1) == 3) {
        cr_assert_eq(sscanf(got, "step %ld train_loss %lf val_loss %lf", &s2, &t2, &v2), 3, "%s", got);
        cr_expect_eq(s1, s2);
        cr_expect_leq(fabs(t1 - t2), 2e-5, "step %ld train loss %.6f vs PyTorch %.6f", s1, t2, t1);
        cr_expect_leq(fabs(v1 - v2), 2e-5, "step %ld val loss %.6f vs PyTorch %.6f", s1, v2, v1);
    } else {
        cr_expect_str_eq(got, want, "line %ld: generated ids differ from PyTorch's", lineno);
    }
}

static void lines_equal(const char *got, const char *want, long lineno)
{
    cr_expect_str_eq(got, want, "line %ld differs from PyTorch's", lineno);
}

/* `mygpt train` prints the losses of the same training in PyTorch (within float32 noise:
 * 2e-5 absolute here, where the loss is ~10), `mygpt generate` the same tokens.
 * tests/golden/train_cli.txt comes from tools/gen_train_goldens.py. */
Test(cli_train, train_and_generate_follow_the_pytorch_reference, .timeout = 600)
{
    cr_expect_eq(run_cli_cases("train_cli.txt", losses_close, 0, 0), 5);
}

/* `mygpt train --arch llama` prints the losses of llama2.c's model.py trained by the same
 * loop (tools/reference_llama.py --train-cases: tests/golden/llama/train_cli.txt), within
 * the same 2e-5: grouped heads, a hidden size given or by --multiple-of, an untied head,
 * AdamW with weight decay on every parameter and, with --decay-groups, as model.py's
 * configure_optimizers groups it (the RMSNorm weights undecayed: a weight decay of 2 moves
 * the losses by far more than 2e-5 when they decay too), and SGD with momentum. */
Test(cli_train, llama_trains_as_model_py_does, .timeout = 600)
{
    cr_expect_eq(run_cli_cases("llama/train_cli.txt", losses_close, 0, 0), 4);
}

/* `mygpt train --epochs` prints the book's chapter-5 log as tools/reference_book_ch5.py
 * does for the same small runs, line for line (losses to three decimals, greedy samples);
 * with --warmup, --cosine and --clip-grad, appendix D's train_model as
 * tools/reference_book_appD.py runs it (its last case, every step after the warmup
 * clipped). tests/golden/book_cli.txt: tools/gen_book_goldens.py. */
Test(cli_train, the_books_training_loop_prints_pytorchs_log, .timeout = 600)
{
    // under the sanitizers (minutes a case there) the cheapest case, one epoch of one layer
    if (TEST_SANITIZED)
        cr_expect_eq(run_cli_cases("book_cli.txt", lines_equal, 1, 2), 1);
    else
        cr_expect_eq(run_cli_cases("book_cli.txt", lines_equal, 1, 0), 4);
}

/* The learning rates of tests/golden/learn.txt's line that starts with `head` (Python's
 * doubles, from tools/gen_learn_goldens.py): their count, at most max */
static int golden_rates(const char *head, double *rates, int max)
{
    golden_reader g = golden_reader_must_open("learn.txt");
    int n = -1;
    for (char *line; n < 0 && (line = golden_read(&g));) {
        if (strncmp(line, head, strlen(head)) != 0)
            continue;
        const char *p = line + strlen(head);
        char *end;
        for (n = 0; n < max; n++, p = end) {
            rates[n] = strtod(p, &end);
            if (end == p)
                break;
        }
    }
    golden_reader_close(&g);
    cr_assert_geq(n, 1, "learn.txt has no line '%s'", head);
    return n;
}

/* The lr column of a --log CSV (steps 0, 1, ... in order): the count, at most max */
static int log_rates(const char *csv, double *rates, int max)
{
    size_t len = 0;
    char *text = file_bytes(csv, &len);
    cr_assert_not_null(text, "no log %s", csv);
    text = realloc(text, len + 1);
    text[len] = '\0';
    int n = 0;
    for (char *line = strchr(text, '\n'); line && line[1] && n < max; line = strchr(line + 1, '\n')) {
        long step = -1;
        cr_assert_eq(sscanf(line + 1, "%ld,", &step), 1, "%s", line + 1);
        cr_assert_eq(step, n, "the log's rows are not steps 0, 1, ...: %s", text);
        const char *lr = line + 1;
        for (int comma = 0; comma < 3; comma++) // step,train_loss,val_loss,lr,ms
            lr = strchr(lr, ',') + 1;
        rates[n++] = strtod(lr, NULL);
    }
    free(text);
    return n;
}

static void expect_same_rates(const double *got, int n_got, const double *want, int n_want, const char *what)
{
    cr_assert_eq(n_got, n_want, "%s: %d rows for %d steps", what, n_got, n_want);
    for (int i = 0; i < n_want; i++)
        cr_expect(memcmp(&got[i], &want[i], sizeof got[i]) == 0, "%s, step %d: lr %.17g, Python's %.17g", what, i,
                  got[i], want[i]);
}

/* --warmup and --cosine: each step's learning rate in the log's lr column is the one the
 * appendix's train_model computes (tools/gen_learn_goldens.py, in Python), bit for bit,
 * in both loops, with the book's --lr-initial and --lr-min as defaults; the progress line
 * shows it, the plot draws its curve. (The losses of such a run, clipped too, against
 * PyTorch: the_books_training_loop_prints_pytorchs_log.) */
Test(cli_train, the_log_shows_each_steps_learning_rate_as_the_appendix_computes_it, .timeout = 600)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_sched_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char csv[300], svg[300];
    snprintf(csv, sizeof csv, "%s/s.csv", dir);
    snprintf(svg, sizeof svg, "%s/s.svg", dir);
    double want[64], got[64];
    const int n = golden_rates("lr 0.001 1e-05 1e-05 3 18 1 : ", want, 64);
    cr_assert_eq(n, 18);
    proc_result r;
    const char *model = "--seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 ";
    char words[600];
    snprintf(words, sizeof words, "train %s --batch 4 --steps 18 --eval-every 6 --lr 0.001 --warmup 3 --cosine "
             "--text DATA/the-verdict.txt --log DIR/s.csv", model);
    train_run(words, dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "mygpt train: step 18/18, loss ") && strstr(r.err, ", lr 2.08e-05, "), "%s", r.err);
    proc_result_free(&r);
    expect_same_rates(got, log_rates(csv, got, 64), want, n, "--steps");
    size_t len = 0;
    char *text = file_bytes(svg, &len);
    cr_assert_not_null(text, "no plot");
    text = realloc(text, len + 1);
    text[len] = '\0';
    cr_expect(strstr(text, "the learning rate of each step") && strstr(text, "lr (units of 1e-3)"), "no lr curve");
    free(text);
    if (!TEST_SANITIZED) { // the book's loop: 18 batches of 32 windows in an epoch
        snprintf(words, sizeof words, "train %s --batch 32 --epochs 1 --eval-every 100 --eval-batches 1 --lr 0.001 "
                 "--warmup 3 --cosine --text DATA/the-verdict.txt --log DIR/s.csv", model);
        train_run(words, dir, data, NULL, &r);
        cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
        proc_result_free(&r);
        expect_same_rates(got, log_rates(csv, got, 64), want, n, "--epochs");
    }
    // the book's loop knows its steps once the text is read: a cosine with none left is refused then
    snprintf(words, sizeof words, "train %s --batch 32 --epochs 1 --eval-batches 1 --lr 0.001 --warmup 18 --cosine "
             "--text DATA/the-verdict.txt", model);
    train_run(words, dir, data, NULL, &r);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "--cosine: the cosine decay needs steps after the warmup: 18 steps in all, 18 of warmup "
                            "(give fewer --warmup steps, or more --epochs)") != NULL, "%s", r.err);
    proc_result_free(&r);
    // without a schedule the column is --lr on every row, and the plot has no lr curve
    snprintf(words, sizeof words, "train %s --batch 4 --steps 3 --lr 0.001 --text DATA/the-verdict.txt "
             "--log DIR/s.csv", model);
    train_run(words, dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, ", lr ") == NULL, "%s", r.err);
    proc_result_free(&r);
    const double constant[3] = {0.001, 0.001, 0.001};
    expect_same_rates(got, log_rates(csv, got, 64), constant, 3, "a constant --lr");
    text = file_bytes(svg, &len);
    cr_assert_not_null(text, "no plot");
    text = realloc(text, len + 1);
    text[len] = '\0';
    cr_expect(strstr(text, "the learning rate of each step") == NULL, "an lr curve without a schedule");
    free(text);
    unlink(csv);
    unlink(svg);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* --clip-grad NORM: a norm below the gradient's changes the weights; one far above it
 * changes no bit (clip_grad_norm_ then scales by 1) */
Test(cli_train, clipping_changes_the_weights_only_when_the_gradient_is_longer, .timeout = 600)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_clip_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *run = "train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 "
                      "--steps 3 --lr 0.01 --text DATA/the-verdict.txt";
    const char *names[3] = {"plain", "clipped", "huge"}, *flags[3] = {"", "--clip-grad 0.05", "--clip-grad 1e30"};
    char out[3][4096], path[3][300];
    for (int i = 0; i < 3; i++) {
        char words[600];
        proc_result r;
        snprintf(words, sizeof words, "%s %s --save DIR/%s.safetensors", run, flags[i], names[i]);
        train_run(words, dir, data, NULL, &r);
        cr_assert_eq(r.status, 0, "%s: exit %d: %s", names[i], r.status, r.err);
        snprintf(out[i], sizeof out[i], "%s", r.out);
        proc_result_free(&r);
        snprintf(path[i], sizeof path[i], "%s/%s.safetensors", dir, names[i]);
    }
    cr_expect(!same_files(path[0], path[1]), "--clip-grad 0.05 left the weights as they were");
    cr_expect_str_neq(out[0], out[1], "--clip-grad 0.05 left the losses as they were");
    cr_expect(same_files(path[0], path[2]), "--clip-grad 1e30 changed the weights");
    cr_expect_str_eq(out[0], out[2]);
    for (int i = 0; i < 3; i++)
        unlink(path[i]);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Appendix D's flags refused with one line naming the flag, before anything is read */
Test(cli_train, bad_schedule_and_clipping_flags)
{
    const char *run = "train --preset tiny --text /nonexistent --steps 6";
    const char *bad[][2] = {
        {"--lr-min 1e-4", "--lr-min goes with --cosine"},
        {"--cosine --lr-initial 1e-4", "--lr-initial goes with --warmup"},
        {"--clip-grad 0", "--clip-grad must be more than 0"},
        {"--clip-grad -1", "--clip-grad must be more than 0"},
        {"--clip-grad inf", "--clip-grad: 'inf' is not a finite number"},
        {"--warmup -1", "--warmup"},
        {"--warmup 2 --lr-initial nan", "--lr-initial: 'nan' is not a finite number"},
        {"--cosine --lr-min -1e-5", "--lr-min must be at least 0"},
        {"--warmup 6 --cosine", "--cosine: the cosine decay needs steps after the warmup: 6 steps in all, 6 of warmup "
                                "(give fewer --warmup steps, or more --steps)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char words[300];
        proc_result r;
        snprintf(words, sizeof words, "%s %s", run, bad[i][0]);
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", words, r.status, r.err);
        cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
        cr_expect(strstr(r.err, bad[i][1]) != NULL, "'%s' lacks '%s'", r.err, bad[i][1]);
        proc_result_free(&r);
    }
}
