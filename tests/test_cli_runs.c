/*
 * test_cli_runs.c - a run of mygpt train is never lost: every run keeps its model, its
 * training state, its log and its plot in a folder of its own (runs/NAME/, or --out DIR)
 * that its first and last lines name, never one that is there already; Ctrl-C (the tool's
 * own, MYGPT_TRAIN_SIGINT_AFTER) saves the state where the docs say with and without
 * --save and --out and --checkpoint-every, and --resume of it continues the run in its
 * folder; --keep-best keeps the model of the lowest validation loss beside the last; a
 * training state is a model for every command that reads one.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_common.h"
#include "data.h"

#define TINY "train --preset tiny --steps 6 --eval-every 2 --text DATA/the-verdict.txt"

/* A fresh folder for the test, which becomes the current one (runs/ is made there) */
static void enter_new_dir(char *dir)
{
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chdir(dir), 0);
}

/* The data folder, the-verdict there (else the test skips) and a fresh current folder */
static const char *verdict_and_new_dir(char *dir)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    enter_new_dir(dir);
    return data;
}

/* The test's clean-up: what it made (names, for rm -rf in dir), then dir, which must be
 * left empty */
static void clean_up(const char *dir, const char *names)
{
    proc_result r;
    char script[600];
    snprintf(script, sizeof script, "cd %s && rm -rf %s", dir, names);
    run_shell(script, &r);
    proc_result_free(&r);
    cr_expect_eq(rmdir(dir), 0, "files were left beside %s", names);
}

/* The one folder in runs/ (its path into path), or fails */
static void only_run(char *path, size_t cap)
{
    DIR *d = opendir("runs");
    cr_assert_not_null(d, "no runs/ folder");
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') {
            snprintf(path, cap, "runs/%s", e->d_name);
            n++;
        }
    closedir(d);
    cr_assert_eq(n, 1, "runs/ holds %d folders, not 1", n);
}

static int exists(const char *dir, const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* The first and the last line of text (into first, last) */
static void first_last(const char *text, char *first, char *last, size_t cap)
{
    const char *nl = strchr(text, '\n');
    snprintf(first, cap, "%.*s", nl ? (int)(nl - text) : (int)strlen(text), text);
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == '\n')
        n--;
    size_t s = n;
    while (s > 0 && text[s - 1] != '\n')
        s--;
    snprintf(last, cap, "%.*s", (int)(n - s), text + s);
}

/* The straight run's stdout and model, to compare a stopped and resumed one with */
static char *straight_run(const char *data, const char *dir, char *model, size_t cap)
{
    proc_result r;
    train_run(TINY " --save DIR/straight.safetensors", dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(model, cap, "%s/straight.safetensors", dir);
    char *out = strdup(r.out);
    proc_result_free(&r);
    return out;
}

/* Without --save: runs/tiny-DATE-TIME/ with the model, the state, the log and its plot,
 * named by the first and last lines; a second run gets a folder of its own */
Test(cli_runs, a_run_without_save_keeps_everything_in_a_folder_of_its_own, .timeout = 300)
{
    char dir[] = "/tmp/mygpt-runs-XXXXXX", run[300], first[400], last[2000];
    const char *data = verdict_and_new_dir(dir);
    proc_result r;
    train_run(TINY, dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    only_run(run, sizeof run);
    cr_expect(strncmp(run, "runs/tiny-", 10) == 0, "%s", run);
    static const char *const files[] = {"model.safetensors", "state.safetensors", "log.csv", "log.svg"};
    for (int i = 0; i < 4; i++)
        cr_expect(exists(run, files[i]), "%s/%s is missing", run, files[i]);
    first_last(r.err, first, last, sizeof first);
    cr_expect(strstr(first, run) && strstr(first, "the run goes to"), "first line: %s", first);
    cr_expect(strstr(last, run) && strstr(last, "model.safetensors") && strstr(last, "state.safetensors"),
              "last line: %s", last);
    proc_result_free(&r);
    // the state of the end is the model of the end: generate reads both alike
    char words[800];
    proc_result a, b;
    snprintf(words, sizeof words, "generate --checkpoint %s/model.safetensors --ids 1,2 --max-new 4 --no-stream", run);
    run_tool_words(words, data, &a);
    snprintf(words, sizeof words, "generate --checkpoint %s/state.safetensors --ids 1,2 --max-new 4 --no-stream", run);
    run_tool_words(words, data, &b);
    cr_expect_eq(a.status, 0, "%s", a.err);
    cr_expect_eq(b.status, 0, "%s", b.err);
    cr_expect_str_eq(a.out, b.out);
    proc_result_free(&a);
    proc_result_free(&b);
    // the same command again: another folder, the first one as it was
    train_run(TINY, dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_eq(entries_in("runs"), 2, "the second run did not get a folder of its own");
    proc_result_free(&r);
    clean_up(dir, "runs");
}

/* --out DIR: made and filled; a folder that holds files, or a file, is refused before
 * any work, and left as it was */
Test(cli_runs, out_names_the_folder_and_never_reuses_one_with_files, .timeout = 300)
{
    char dir[] = "/tmp/mygpt-runs-out-XXXXXX", out[300];
    const char *data = verdict_and_new_dir(dir);
    proc_result r;
    train_run(TINY " --out DIR/mine", dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    snprintf(out, sizeof out, "%s/mine", dir);
    cr_expect(exists(out, "model.safetensors") && exists(out, "state.safetensors") && exists(out, "log.csv") &&
              exists(out, "log.svg"));
    cr_expect(access("runs", F_OK) != 0, "runs/ was made beside --out");
    proc_result_free(&r);
    // the folder now holds a run: another run is refused there
    train_run(TINY " --out DIR/mine", dir, data, NULL, &r);
    expect_one_line_refusal(&r, 2, "--out", "--out DIR/mine a second time");
    cr_expect(strstr(r.err, "holds files already") != NULL, "%s", r.err);
    proc_result_free(&r);
    // a folder of the user's own
    snprintf(out, sizeof out, "%s/theirs", dir);
    mkdir(out, 0777);
    snprintf(out, sizeof out, "%s/theirs/notes.txt", dir);
    write_file(out, "mine");
    train_run(TINY " --out DIR/theirs", dir, data, NULL, &r);
    expect_one_line_refusal(&r, 2, "not reused", "--out a folder with files");
    proc_result_free(&r);
    expect_file_holds(out, "mine", "--out a folder with files");
    snprintf(out, sizeof out, "%s/theirs", dir);
    cr_expect_eq(entries_in(out), 1, "a file was added to the user's folder");
    // a file where the folder would be
    train_run(TINY " --out DIR/theirs/notes.txt", dir, data, NULL, &r);
    expect_one_line_refusal(&r, 2, "--out", "--out a file");
    proc_result_free(&r);
    // an empty folder another run holds (here, this test: a run holds its folder so) is
    // not shared, even before that run has written anything there
    snprintf(out, sizeof out, "%s/busy", dir);
    cr_assert_eq(mkdir(out, 0777), 0);
    const int held = open(out, O_RDONLY | O_DIRECTORY);
    cr_assert(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0);
    train_run(TINY " --out DIR/busy", dir, data, NULL, &r);
    expect_one_line_refusal(&r, 2, "another run", "--out a folder another run holds");
    proc_result_free(&r);
    close(held);
    cr_expect_eq(entries_in(out), 0, "a file was written in the held folder");
    cr_expect(access(out, F_OK) == 0, "the held folder was removed");
    clean_up(dir, "mine theirs busy");
}

/* Ctrl-C without --save: the state in the run's folder (no hidden .state.safetensors, no
 * mygpt-train.state.safetensors), and --resume of it continues in that folder, printing
 * and saving what the straight run does */
Test(cli_runs, ctrl_c_without_save_keeps_the_state_in_the_folder_and_resume_continues_there, .timeout = 300)
{
    char dir[] = "/tmp/mygpt-runs-int-XXXXXX", run[300], straight[400], words[800], model[400];
    const char *data = verdict_and_new_dir(dir);
    char *want = straight_run(data, dir, straight, sizeof straight);
    proc_result r;
    train_run(TINY, dir, data, "3", &r);
    cr_assert_eq(r.status, 128 + SIGINT, "exit %d: %s", r.status, r.err);
    only_run(run, sizeof run);
    cr_expect(exists(run, "state.safetensors"), "Ctrl-C saved no state in %s", run);
    cr_expect(!exists(run, "model.safetensors"), "an interrupted run saved the model of its end");
    cr_expect(access(".state.safetensors", F_OK) != 0, "a hidden state was written");
    cr_expect(access("mygpt-train.state.safetensors", F_OK) != 0, "a state was written outside the folder");
    char said[400];
    snprintf(said, sizeof said, "the training state is in %s/state.safetensors", run);
    cr_expect(strstr(r.err, said) != NULL, "%s", r.err);
    char *before = strdup(r.out);
    proc_result_free(&r);
    snprintf(words, sizeof words, TINY " --resume %s/state.safetensors", run);
    train_run(words, dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_eq(entries_in("runs"), 1, "the resumed run made another folder");
    char both[100000];
    snprintf(both, sizeof both, "%s%s", before, r.out);
    cr_expect_str_eq(both, want, "stopped and resumed: %s", both);
    snprintf(model, sizeof model, "%s/model.safetensors", run);
    cr_expect(same_files(model, straight), "the resumed run's model is not the straight run's");
    proc_result_free(&r);
    free(before);
    free(want);
    clean_up(dir, "runs straight.safetensors");
}

/* Ctrl-C with --out, with --save, with both, and with --checkpoint-every: the state goes
 * where the help says, and no model is written by an interrupted run */
Test(cli_runs, ctrl_c_saves_the_state_where_the_flags_say, .timeout = 300)
{
    char dir[] = "/tmp/mygpt-runs-where-XXXXXX", path[400];
    const char *data = verdict_and_new_dir(dir);
    const struct {
        const char *flags, *state, *absent;
    } cases[] = {
        {"--out DIR/o", "o/state.safetensors", "o/model.safetensors"},
        {"--save DIR/m.safetensors", "m.state.safetensors", "m.safetensors"},
        {"--save DIR/b.safetensors --out DIR/b", "b/state.safetensors", "b.safetensors"},
        {"--out DIR/k --checkpoint-every 2", "k/state.safetensors", "k/model.safetensors"},
        {"--save DIR/s.safetensors --checkpoint-every 2", "s.state.safetensors", "s.safetensors"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char words[600];
        proc_result r;
        snprintf(words, sizeof words, TINY " %s", cases[i].flags);
        train_run(words, dir, data, "3", &r);
        cr_expect_eq(r.status, 128 + SIGINT, "%s: exit %d: %s", cases[i].flags, r.status, r.err);
        snprintf(path, sizeof path, "%s/%s", dir, cases[i].state);
        cr_expect(access(path, F_OK) == 0, "%s: no %s", cases[i].flags, cases[i].state);
        cr_expect(strstr(r.err, cases[i].state) != NULL, "%s: %s", cases[i].flags, r.err);
        snprintf(path, sizeof path, "%s/%s", dir, cases[i].absent);
        cr_expect(access(path, F_OK) != 0, "%s: %s was written", cases[i].flags, cases[i].absent);
        proc_result_free(&r);
    }
    cr_expect(access("runs", F_OK) != 0, "a run with --save or --out made runs/");
    // --checkpoint-every without Ctrl-C and without a folder: the state of step 4 beside --save
    proc_result r;
    train_run(TINY " --save DIR/c.safetensors --checkpoint-every 4", dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    snprintf(path, sizeof path, "%s/c.state.safetensors", dir);
    cr_expect(access(path, F_OK) == 0, "--checkpoint-every 4 saved no state");
    proc_result_free(&r);
    clean_up(dir, "o b k m.state.safetensors s.state.safetensors c.safetensors c.state.safetensors");
}

/* The step of the lowest validation loss of the lines "step N train_loss X val_loss Y"
 * (the first of equal ones), or -1 */
static long lowest_step(const char *out)
{
    long best = -1;
    double low = 0;
    for (const char *p = out; (p = strstr(p, "step ")); p++) {
        long step;
        double tl, vl;
        if (sscanf(p, "step %ld train_loss %lf val_loss %lf", &step, &tl, &vl) == 3 && (best < 0 || vl < low)) {
            best = step;
            low = vl;
        }
    }
    return best;
}

/* --keep-best: the model saved after the evaluation of the lowest validation loss, the
 * one a run stopped there saves, kept beside the last (in the folder, or beside --save) */
Test(cli_runs, keep_best_keeps_the_model_of_the_lowest_validation_loss, .timeout = 300)
{
    char dir[] = "/tmp/mygpt-runs-best-XXXXXX", words[600], best[400], there[400];
    const char *data = verdict_and_new_dir(dir);
    // a learning rate that overshoots: the validation loss falls and climbs, lowest before the end
    const char *run = "train --preset tiny --steps 12 --eval-every 1 --lr 1 --text DATA/the-verdict.txt";
    proc_result r;
    snprintf(words, sizeof words, "%s --out DIR/o --keep-best", run);
    train_run(words, dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const long step = lowest_step(r.out);
    cr_assert(step >= 0, "%s", r.out);
    cr_expect(step < 11, "the validation loss was lowest at the last step: the test shows nothing (%s)", r.out);
    char said[200];
    snprintf(said, sizeof said, "at step %ld, is the model in %s/o/best.safetensors", step, dir);
    cr_expect(strstr(r.err, said) != NULL, "'%s' lacks '%s'", r.err, said);
    proc_result_free(&r);
    // the same run stopped after that step saves the same weights
    snprintf(words, sizeof words, "train --preset tiny --steps %ld --eval-every 1 --lr 1 --text DATA/the-verdict.txt "
             "--save DIR/there.safetensors", step + 1);
    train_run(words, dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    proc_result_free(&r);
    snprintf(best, sizeof best, "%s/o/best.safetensors", dir);
    snprintf(there, sizeof there, "%s/there.safetensors", dir);
    cr_expect(same_files(best, there), "best.safetensors is not the model after step %ld", step);
    // without a folder: beside --save
    snprintf(words, sizeof words, "%s --save DIR/m.safetensors --keep-best", run);
    train_run(words, dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    snprintf(best, sizeof best, "%s/m.best.safetensors", dir);
    cr_expect(same_files(best, there), "m.best.safetensors is not the model after step %ld", step);
    proc_result_free(&r);
    clean_up(dir, "o m.safetensors m.best.safetensors m.state.safetensors there.safetensors");
}

/* --keep-best beside --save: a file of the user's where the best model would go is refused
 * before the first step and kept as it was; a model mygpt saved there is replaced */
Test(cli_runs, keep_best_beside_save_never_replaces_a_file_that_is_no_model, .timeout = 300)
{
    char dir[] = "/tmp/mygpt-runs-best-user-XXXXXX", path[400];
    const char *data = verdict_and_new_dir(dir);
    snprintf(path, sizeof path, "%s/m.best.safetensors", dir);
    write_file(path, "my notes");
    proc_result r;
    train_run(TINY " --save DIR/m.safetensors --keep-best", dir, data, NULL, &r);
    expect_one_line_refusal(&r, 2, "--keep-best", "--keep-best over a file of the user's");
    cr_expect(strstr(r.err, "m.best.safetensors") && strstr(r.err, "not replaced"), "%s", r.err);
    proc_result_free(&r);
    expect_file_holds(path, "my notes", "--keep-best over a file of the user's");
    cr_expect(!exists(dir, "m.safetensors"), "the refused run trained and saved");
    // a model mygpt saved there is the best of an earlier run: replaced
    remove(path);
    train_run(TINY " --save DIR/m.safetensors --keep-best", dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    proc_result_free(&r);
    char first[400];
    snprintf(first, sizeof first, "%s/first.safetensors", dir);
    cr_assert_eq(link(path, first), 0, "the first run kept no best model"); // its bytes, whatever befalls path
    train_run(TINY " --save DIR/m.safetensors --keep-best --seed 7", dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    proc_result_free(&r);
    cr_expect(exists(dir, "m.best.safetensors"), "the second run left no best model");
    cr_expect(!same_files(path, first), "the earlier run's best model was not replaced by the new run's");
    clean_up(dir, "m.safetensors m.best.safetensors m.state.safetensors first.safetensors");
}

/* What is no regular file where a run reads or writes its state or its best model (a FIFO
 * no one writes, a link) is refused before the first step or passed over, never waited on
 * or followed: the unnamed state's FIFO is not a state (the run goes on, saving none
 * there), a FIFO or a dangling link as the best model is refused (beside --save and in a
 * run folder resumed), and so is a FIFO given to --resume. */
Test(cli_runs, a_fifo_or_a_link_in_the_way_is_refused_not_waited_on, .timeout = 300)
{
    char dir[] = "/tmp/mygpt-runs-fifo-XXXXXX", path[400];
    const char *data = verdict_and_new_dir(dir);
    snprintf(path, sizeof path, "%s/f.state.safetensors", dir);
    cr_assert_eq(mkfifo(path, 0644), 0);
    proc_result r;
    train_run(TINY " --save DIR/f.safetensors", dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    static const struct {
        const char *name;
        int link; // 1: a link to nowhere at name, 0: a FIFO
        const char *words, *says;
    } REFUSED[] = {{"g.best.safetensors", 0, TINY " --save DIR/g.safetensors --keep-best", "--keep-best: "},
                   {"h.best.safetensors", 1, TINY " --save DIR/h.safetensors --keep-best", "--keep-best: "},
                   {"s.fifo", 0, TINY " --resume DIR/s.fifo", "--resume: "}};
    for (size_t i = 0; i < sizeof REFUSED / sizeof REFUSED[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, REFUSED[i].name);
        cr_assert_eq(REFUSED[i].link ? symlink("nowhere", path) : mkfifo(path, 0644), 0, "%s", path);
        train_run(REFUSED[i].words, dir, data, NULL, &r);
        expect_one_line_refusal(&r, 2, REFUSED[i].says, REFUSED[i].words);
        cr_expect(strstr(r.err, REFUSED[i].link ? "symbolic link" : "FIFO") != NULL, "%s", r.err);
        proc_result_free(&r);
    }
    train_run("train --preset tiny --steps 4 --text DATA/the-verdict.txt --out DIR/o --checkpoint-every 2", dir, data,
              NULL, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    snprintf(path, sizeof path, "%s/o/best.safetensors", dir);
    cr_assert_eq(mkfifo(path, 0644), 0);
    train_run(TINY " --keep-best --resume DIR/o/state.safetensors", dir, data, NULL, &r);
    expect_one_line_refusal(&r, 2, "--keep-best: ", "a FIFO as a run folder's best model");
    proc_result_free(&r);
    cr_expect(!exists(dir, "g.safetensors") && !exists(dir, "h.safetensors"), "a refused run trained and saved");
    clean_up(dir, "f.safetensors f.state.safetensors g.best.safetensors h.best.safetensors s.fifo o");
}

/* A training state is a model: forward, attention, generate and chat read it as they read
 * the model saved at the same step; finetune starts from it; quantize and merge write from
 * it what they write from that model */
Test(cli_runs, a_training_state_is_a_model_for_every_command, .timeout = 300)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("sms_spam_train.csv");
    char dir[] = "/tmp/mygpt-runs-state-XXXXXX";
    enter_new_dir(dir);
    proc_result r;
    train_run(TINY " --out DIR/o", dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    proc_result_free(&r);
    static const char *const commands[] = {
        "forward --checkpoint DIR/o/F --ids 1,2,3 --format exact",
        "attention --checkpoint DIR/o/F --ids 1,2,3",
        "generate --checkpoint DIR/o/F --ids 1,2 --max-new 5 --temperature 0.8 --sample-seed 3 --no-stream",
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char words[600], *f;
        proc_result a, b;
        snprintf(words, sizeof words, "%s", commands[i]);
        f = strstr(words, "/F");
        memmove(f + 18, f + 2, strlen(f + 2) + 1);
        memcpy(f, "/model.safetensors", 18);
        run_in_dir(words, dir, data, &a);
        memcpy(f, "/state.safetensors", 18);
        run_in_dir(words, dir, data, &b);
        cr_expect_eq(a.status, 0, "%s: %s", words, a.err);
        cr_expect_eq(b.status, 0, "%s: %s", words, b.err);
        cr_expect(a.out[0] != '\0' && strcmp(a.out, b.out) == 0, "%s: the state's output differs", words);
        proc_result_free(&a);
        proc_result_free(&b);
    }
    char chat[600];
    snprintf(chat, sizeof chat, "%s/o/state.safetensors", dir);
    char *argv[] = {(char *)MYGPT_EXE, "chat", "--checkpoint", chat, "--max-new", "3", NULL};
    cr_assert_eq(run_process_input(argv, "hello\n", &r), 0);
    cr_expect_eq(r.status, 0, "chat: %s", r.err);
    cr_expect(strstr(r.err, "training state") == NULL, "%s", r.err);
    proc_result_free(&r);
    run_in_dir("finetune --task classify --checkpoint DIR/o/state.safetensors --epochs 0 --max-length 16 --batch 64 "
               "--save DIR/c.safetensors", dir, data, &r);
    cr_expect_eq(r.status, 0, "finetune: %s", r.err);
    cr_expect(strstr(r.out, "Test accuracy") != NULL, "%s", r.out);
    proc_result_free(&r);
    // quantize and merge write from a state the file they write from the model of its step
    static const char *const writes[][2] = {
        {"quantize DIR/o/model.safetensors DIR/qm.safetensors --weights int8",
         "quantize DIR/o/state.safetensors DIR/qs.safetensors --weights int8"},
        {"merge DIR/o/model.safetensors DIR/a.safetensors DIR/mm.safetensors",
         "merge DIR/o/state.safetensors DIR/a.safetensors DIR/ms.safetensors"},
    };
    run_in_dir("finetune --task instruct --checkpoint DIR/o/state.safetensors --entries 20 --epochs 0 "
               "--max-length 16 --max-new 1 --lora 2 --save DIR/a.safetensors", dir, data, &r);
    cr_expect_eq(r.status, 0, "finetune --lora: %s", r.err);
    proc_result_free(&r);
    for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++) {
        for (int k = 0; k < 2; k++) {
            run_in_dir(writes[i][k], dir, data, &r);
            cr_expect_eq(r.status, 0, "%s: %s", writes[i][k], r.err);
            proc_result_free(&r);
        }
        char a[600], b[600];
        const char *names[][2] = {{"qm", "qs"}, {"mm", "ms"}};
        snprintf(a, sizeof a, "%s/%s.safetensors", dir, names[i][0]);
        snprintf(b, sizeof b, "%s/%s.safetensors", dir, names[i][1]);
        cr_expect(same_files(a, b), "%s: the state's file differs from the model's", writes[i][1]);
    }
    clean_up(dir, "o c.safetensors a.safetensors qm.safetensors qs.safetensors mm.safetensors ms.safetensors");
}

/* forward, generate and attention --checkpoint: the model's own sizes, so a size flag
 * beside it is refused, never ignored (generate's --seed seeds its sampler: taken) */
Test(cli_runs, forward_refuses_model_flags_beside_a_checkpoint)
{
    proc_result r;
    cr_assert_eq(run_tool_words("forward --checkpoint x.safetensors --vocab 5 --ids 1", NULL, &r), 0);
    expect_one_line_refusal(&r, 2, "--vocab cannot be used with --checkpoint", "forward --checkpoint --vocab");
    proc_result_free(&r);
    cr_assert_eq(run_tool_words("generate --checkpoint x.safetensors --seed 1 --layers 7 --ids 1 --max-new 1", NULL,
                                &r), 0);
    expect_one_line_refusal(&r, 2, "--layers cannot be used with --checkpoint", "generate --checkpoint --layers");
    proc_result_free(&r);
    cr_assert_eq(run_tool_words("attention --checkpoint x.safetensors --max-seq 4 --ids 1", NULL, &r), 0);
    expect_one_line_refusal(&r, 2, "--max-seq cannot be used with --checkpoint", "attention --checkpoint --max-seq");
    proc_result_free(&r);
    cr_assert_eq(run_tool_words("forward --seed 1 --vocab 5 --embed 4 --heads 2 --layers 1 --adapters a --ids 1",
                                NULL, &r), 0);
    expect_one_line_refusal(&r, 2, "--adapters FILE needs --checkpoint", "forward --adapters");
    proc_result_free(&r);
}
