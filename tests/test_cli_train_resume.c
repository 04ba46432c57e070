/*
 * test_cli_train_resume.c - mygpt train stopped by Ctrl-C and resumed prints and saves
 * what the straight run does, in both loops; --resume refuses a state of another model
 * or run, naming the difference; a second Ctrl-C saves nothing. The Ctrl-C is the tool's
 * own (MYGPT_TRAIN_SIGINT_AFTER), so it falls on a chosen step.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "data.h"
#include "golden.h"
#include "mygpt/checkpoint.h"

/* A run interrupted (Ctrl-C after `at` steps: the step finishes, the state is saved)
 * then resumed prints, with what it printed before, what the straight run prints, and
 * saves the same weights, bit for bit. */
static void interrupted_and_resumed(const char *flags, const int *at, int n_at, const char *dir, const char *data)
{
    char words[1024], straight_out[100000], path_a[300], path_b[300], after[16];
    proc_result r;
    snprintf(words, sizeof words, "train %s --save DIR/straight.safetensors", flags);
    train_run(words, dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "the straight run: exit %d: %s", r.status, r.err);
    snprintf(straight_out, sizeof straight_out, "%s", r.out);
    proc_result_free(&r);
    snprintf(path_a, sizeof path_a, "%s/straight.safetensors", dir);
    snprintf(path_b, sizeof path_b, "%s/resumed.safetensors", dir);
    for (int i = 0; i < n_at; i++) {
        char both[100000];
        snprintf(after, sizeof after, "%d", at[i]);
        snprintf(words, sizeof words, "train %s --save DIR/resumed.safetensors", flags);
        train_run(words, dir, data, after, &r);
        cr_expect_eq(r.status, 128 + SIGINT, "Ctrl-C after step %d: exit %d: %s", at[i], r.status, r.err);
        char said[120];
        snprintf(said, sizeof said, "interrupted after step %d: the training state is in", at[i]);
        cr_expect(strstr(r.err, said) != NULL, "%s", r.err);
        cr_expect(access(path_b, F_OK) != 0, "the weights were saved by an interrupted run");
        snprintf(both, sizeof both, "%s", r.out);
        proc_result_free(&r);
        snprintf(words, sizeof words, "train %s --save DIR/resumed.safetensors --resume DIR/resumed.state.safetensors",
                 flags);
        train_run(words, dir, data, NULL, &r);
        cr_expect_eq(r.status, 0, "resumed after step %d: exit %d: %s", at[i], r.status, r.err);
        snprintf(both + strlen(both), sizeof both - strlen(both), "%s", r.out);
        proc_result_free(&r);
        cr_expect_str_eq(both, straight_out, "interrupted after step %d, then resumed: what it printed differs", at[i]);
        cr_expect(same_files(path_a, path_b), "interrupted after step %d, then resumed: other weights", at[i]);
        unlink(path_b);
    }
}

Test(cli_train, a_run_interrupted_and_resumed_prints_and_saves_what_the_straight_run_does, .timeout = 1200)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    const char *verdict = data_file_or_skip("the-verdict.txt"); // last: its buffer is reused
    char dir[] = "/tmp/mygpt_resume_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    // under the sanitizers (a step of 64 windows takes seconds there) the runs below that
    // run there take the-verdict's first 2706 bytes in batches of 8: the same 9 batches
    // an epoch, an eighth of the work
    const char *text = TEST_SANITIZED ? "DIR/verdict_part.txt" : "DATA/the-verdict.txt";
    const int batch = TEST_SANITIZED ? 8 : 64;
    if (TEST_SANITIZED)
        write_verdict_part(verdict, dir, 2800);
    // the course's loop, AdamW, dropout drawing from the generator: 8 batches an epoch, so
    // after step 1, in the middle, at the epoch's end, just after it and before the last
    const char *adamw = "--arch llms-from-scratch --dropout 0.1 --seed 3 --vocab 50257 --embed 8 --heads 2 "
                        "--layers 1 --max-seq 8 --context 8 --batch 64 --steps 12 --optimizer adamw --lr 0.01 "
                        "--eval-every 3 --text DATA/the-verdict.txt";
    const int at_adamw[] = {1, 5, 8, 9, 11};
    // under the sanitizers only the SGD run and the book's loop, which between them save
    // and restore every kind of state, at one point each
    if (!TEST_SANITIZED)
        interrupted_and_resumed(adamw, at_adamw, 5, dir, data);
    // SGD with momentum (its buffer in the state), the course's model
    char sgd[400];
    snprintf(sgd, sizeof sgd, "--seed 4 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 "
             "--batch %d --steps 6 --optimizer sgd --lr 0.5 --momentum 0.9 --eval-every 4 --text %s", batch, text);
    const int at_sgd[] = {3};
    interrupted_and_resumed(sgd, at_sgd, 1, dir, data);
    // appendix D's schedule and clipping in the course's loop: in the warmup,
    // at its end, in the decay
    const char *sched = "--seed 6 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 "
                        "--steps 8 --optimizer adamw --lr 0.01 --eval-every 3 --warmup 3 --lr-initial 1e-4 --cosine "
                        "--lr-min 1e-4 --clip-grad 0.05 --text DATA/the-verdict.txt";
    const int at_sched[] = {2, 3, 6};
    if (!TEST_SANITIZED)
        interrupted_and_resumed(sched, at_sched, 3, dir, data);
    // the book's loop: its evaluations, its samples after each epoch, across the epochs;
    // with appendix D's schedule and clipping, whose steps go on across the epochs
    char book[600];
    snprintf(book, sizeof book, "--arch llms-from-scratch --dropout 0.1 --seed 5 --vocab 50257 --embed 8 --heads 2 "
             "--layers 1 --max-seq 8 --context 8 --batch %d --epochs 2 --optimizer adamw --lr 0.001 "
             "--weight-decay 0.1 --eval-every 3 --eval-batches 2 --sample-prompt Every_effort "
             "--sample-tokens 4 --warmup 4 --cosine --clip-grad 0.05 --text %s", batch, text);
    const int at_book[] = {2, 8, 13};
    interrupted_and_resumed(book, TEST_SANITIZED ? at_book + 1 : at_book, TEST_SANITIZED ? 1 : 3, dir, data);
    char path[300];
    snprintf(path, sizeof path, "%s/straight.safetensors", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/resumed.state.safetensors", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/verdict_part.txt", dir);
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* --resume refuses a state of another model or of another run, and a file that is no
 * training state, with one line naming the difference; a second Ctrl-C ends the run at
 * once, saving nothing */
Test(cli_train, a_resume_of_another_run_is_refused_and_a_second_ctrl_c_saves_nothing, .timeout = 600)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_refuse_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *run = "train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 "
                      "--steps 6 --lr 0.01 --text DATA/the-verdict.txt --state DIR/s.safetensors";
    proc_result r;
    train_run(run, dir, data, "2", &r);
    cr_assert_eq(r.status, 128 + SIGINT, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    train_run("train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
              "--lr 0.01 --warmup 2 --cosine --clip-grad 0.5 --text DATA/the-verdict.txt --state DIR/d.safetensors",
              dir, data, "1", &r);
    cr_assert_eq(r.status, 128 + SIGINT, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    const struct {
        const char *words, *msg;
    } refused[] = {
        {"train --seed 3 --vocab 50257 --embed 16 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "holds the training of another model (embed_dim 8; this run's is 16)"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.02 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "was saved by a run with --lr 0.01, not 0.02"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --optimizer sgd --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "with the optimizer adamw, not sgd"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --text DATA/encoder.json --resume DIR/s.safetensors",
         "was saved by a run with --text 4612 + 534 tokens, FNV-1a "},
        // the flag that differs and both values, not the loader's window count
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 4 --batch 4 --steps 6 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "was saved by a run with --context 8, not 4"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 2 --steps 6 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "was saved by a run with --batch 4, not 2"},
        {"train --seed 4 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "was saved by a run with --seed 3, not 4"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --eval-every 2 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "was saved by a run with --eval-every 20, not 2"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 1 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "is at step 2, past the run's end (--steps 1)"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/m.safetensors",
         "m.safetensors is not a training state"},
        // a state given to --init-from is named as one, not refused by its tensor count
        // (generate, chat, finetune read it as a model: test_cli_runs.c)
        {"train --steps 1 --text DATA/the-verdict.txt --context 8 --init-from DIR/s.safetensors",
         "s.safetensors is a training state (for mygpt train --resume), not a model"},
        // appendix D's settings: a schedule the saving run did not have, or
        // another one, or another clipping, or none of either
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --warmup 2 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "was saved by a run with --warmup (not given), not 2"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --warmup 3 --cosine --clip-grad 0.5 --text DATA/the-verdict.txt --resume DIR/d.safetensors",
         "was saved by a run with --warmup 2, not 3"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --warmup 2 --lr-initial 0.001 --cosine --clip-grad 0.5 --text DATA/the-verdict.txt "
         "--resume DIR/d.safetensors",
         "was saved by a run with --lr-initial 1e-05, not 0.001"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 7 "
         "--lr 0.01 --warmup 2 --cosine --clip-grad 0.5 --text DATA/the-verdict.txt --resume DIR/d.safetensors",
         "was saved by a run with --cosine over 6 steps, not over 7 steps"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --warmup 2 --cosine --lr-min 0 --clip-grad 0.5 --text DATA/the-verdict.txt "
         "--resume DIR/d.safetensors",
         "was saved by a run with --lr-min 1e-05, not 0"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --warmup 2 --cosine --clip-grad 0.25 --text DATA/the-verdict.txt --resume DIR/d.safetensors",
         "was saved by a run with --clip-grad 0.5, not 0.25"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --warmup 2 --cosine --text DATA/the-verdict.txt --resume DIR/d.safetensors",
         "was saved by a run with --clip-grad 0.5, not without it"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/d.safetensors",
         "was saved by a run with --warmup 2, not without it"},
    };
    const mygpt_config cfg = {50257, 8, 2, 1, 8};
    char path[300];
    // the state cut short (a disk that filled before mygpt wrote it whole, a copy cut)
    snprintf(path, sizeof path, "%s/s.safetensors", dir);
    size_t whole = 0;
    char *bytes = file_bytes(path, &whole);
    cr_assert(bytes && whole > 100);
    snprintf(path, sizeof path, "%s/cut.safetensors", dir);
    for (size_t keep = 6; keep < whole; keep = keep * 4 + 3) {
        FILE *cut = fopen(path, "wb");
        fwrite(bytes, 1, keep, cut);
        fclose(cut);
        train_run("train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 "
                  "--steps 6 --lr 0.01 --text DATA/the-verdict.txt --resume DIR/cut.safetensors", dir, data, NULL, &r);
        cr_expect_eq(r.status, 2, "cut at %zu of %zu bytes: exit %d: %s", keep, whole, r.status, r.err);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, "--resume: ") != NULL, "%s", r.err);
        proc_result_free(&r);
    }
    free(bytes);
    unlink(path);
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    save_new_model(path, &cfg, 3);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        train_run(refused[i].words, dir, data, NULL, &r);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", refused[i].msg, r.status, r.err);
        cr_expect_str_empty(r.out, "%s", r.out);
        cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
        cr_expect(strstr(r.err, refused[i].msg) != NULL, "'%s' lacks '%s'", r.err, refused[i].msg);
        proc_result_free(&r);
    }
    unlink(path);
    snprintf(path, sizeof path, "%s/d.safetensors", dir);
    unlink(path);
    // an unnamed state's file that is there and is no training state is not replaced
    snprintf(path, sizeof path, "%s/w.state.safetensors", dir);
    FILE *f = fopen(path, "w");
    fputs("mine", f);
    fclose(f);
    train_run("train --preset tiny --steps 3 --text DATA/the-verdict.txt --save DIR/w.safetensors "
              "--checkpoint-every 1", dir, data, NULL, &r);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "is not a training state: not replaced") != NULL, "%s", r.err);
    proc_result_free(&r);
    train_run("train --preset tiny --steps 3 --text DATA/the-verdict.txt --save DIR/w.safetensors", dir, data, "1", &r);
    cr_expect_eq(r.status, 128 + SIGINT, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "no training state saved") != NULL, "%s", r.err);
    proc_result_free(&r);
    size_t n = 0;
    char *mine = file_bytes(path, &n);
    cr_expect(mine && n == 4 && memcmp(mine, "mine", 4) == 0, "the file was replaced");
    free(mine);
    unlink(path);
    // Ctrl-C after the last step: the run is done, its model saved, no state
    train_run("train --preset tiny --steps 3 --text DATA/the-verdict.txt --save DIR/done.safetensors", dir, data, "3",
              &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    snprintf(path, sizeof path, "%s/done.safetensors", dir);
    cr_expect_eq(unlink(path), 0, "Ctrl-C after the last step: the model was not saved");
    snprintf(path, sizeof path, "%s/done.state.safetensors", dir);
    cr_expect(access(path, F_OK) != 0, "Ctrl-C after the last step saved a state");
    proc_result_free(&r);
    // a second Ctrl-C: at once, nothing saved
    snprintf(path, sizeof path, "%s/s.safetensors", dir);
    unlink(path);
    train_run(run, dir, data, "2,2", &r);
    cr_expect_eq(r.status, 128 + SIGINT, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "interrupted") == NULL, "%s", r.err);
    cr_expect(access(path, F_OK) != 0, "a second Ctrl-C saved the state");
    proc_result_free(&r);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}
