/*
 * test_cli_finetune.c - mygpt finetune, both tasks: the book's logs, the classifier and
 * the responses it saves, a Hugging Face folder to start from; data checked before the
 * first step, no file written over one read, nothing saved after a diverged step.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_common.h"
#include "data.h"
#include "golden.h"
#include "mygpt/checkpoint.h"
#include "mygpt/data.h"

/* The data both tasks read, and the vocabulary: skipped when absent, failed under CI=true */
static void both_tasks_data_or_skip(void)
{
    data_file_or_skip("sms_spam_train.csv");
    data_file_or_skip("instruction-data.json");
    data_file_or_skip("encoder.json");
}

/* DIR/name holding the header and the first `rows` texts of the data folder's file */
static void head_of(const char *dir, const char *name, int rows)
{
    char from[4300], to[4300];
    snprintf(from, sizeof from, "%s/%s", data_dir_or_skip(), name);
    snprintf(to, sizeof to, "%s/%s", dir, name);
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    cr_assert(in && out, "%s or %s", from, to);
    char *line = NULL;
    size_t cap = 0;
    for (int i = 0; i <= rows && getline(&line, &cap, in) > 0; i++)
        fputs(line, out);
    free(line);
    fclose(in);
    cr_assert_eq(fclose(out), 0);
}

/* --task classify on 24 training texts: the book's log (an evaluation every 2 steps of 6),
 * the three accuracies and classify_review's two answers; the same bytes on 1 and 2 threads;
 * the saved classifier loads with its head of 2 and, tuned for 0 epochs, gives the same
 * accuracies (the training batches are all of the texts: none dropped) */
Test(cli_finetune, classify_prints_the_books_log_and_saves_the_classifier, .timeout = 600)
{
    data_file_or_skip("sms_spam_train.csv");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-finetune-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    head_of(dir, "sms_spam_train.csv", 24);
    head_of(dir, "sms_spam_validation.csv", 6);
    head_of(dir, "sms_spam_test.csv", 5);
    const char *run = "finetune --task classify --data DIR --epochs 1 --batch 4 --eval-freq 2 --eval-iter 2";
    char words[600], out[2][8192];
    proc_result r;
    for (int t = 0; t < (TEST_SANITIZED ? 1 : 2); t++) {
        snprintf(words, sizeof words, "%s --threads %d --save DIR/c%d.safetensors", run, t + 1, t);
        run_in_dir(words, dir, NULL, &r);
        cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
        snprintf(out[t], sizeof out[t], "%s", r.out);
        proc_result_free(&r);
        char *saved = strstr(out[t], "Model saved as ");
        cr_assert(saved != NULL && strchr(saved, '\n') == saved + strlen(saved) - 1, "%s", out[t]);
        *saved = '\0'; // the last line, naming the file
    }
    const char *o = out[0];
    cr_expect(strncmp(o, "Ep 1 (Step 000000): Train loss ", 31) == 0, "%s", o);
    cr_expect(strstr(o, "\nEp 1 (Step 000002): ") && strstr(o, "\nEp 1 (Step 000004): ") &&
                  !strstr(o, "(Step 000006)"), "%s", o);
    cr_expect(strstr(o, "\nTraining accuracy: ") && strstr(o, "% | Validation accuracy: "), "%s", o);
    const char *tail = strstr(o, "\nTraining accuracy: ");
    tail = tail ? strstr(tail + 1, "\nTraining accuracy: ") : NULL;
    cr_assert_not_null(tail, "no final accuracies: %s", o);
    const char *review = strstr(o, "You are a winner you have been specially selected to receive $1000 cash or a $2000 "
                                   "award.\n");
    const char *dinner = strstr(o, "Hey, just wanted to check if we're still on for dinner tonight? Let me know!\n");
    cr_assert(review && dinner, "%s", o);
    for (const char *p = review; p; p = p == review ? dinner : NULL) {
        const char *answer = strchr(p, '\n') + 1;
        cr_expect(strncmp(answer, "spam\n", 5) == 0 || strncmp(answer, "not spam\n", 9) == 0, "%s", answer);
    }
    if (!TEST_SANITIZED)
        cr_expect_str_eq(out[0], out[1], "1 and 2 threads print different numbers");
    char c0[300], c1[300];
    snprintf(c0, sizeof c0, "%s/c0.safetensors", dir);
    snprintf(c1, sizeof c1, "%s/c1.safetensors", dir);
    if (!TEST_SANITIZED)
        cr_expect(same_files(c0, c1), "1 and 2 threads saved different weights");
    mygpt_gpt *g = NULL;
    cr_assert_eq(mygpt_checkpoint_load(&g, c0, NULL), MYGPT_OK);
    cr_expect_eq(g->config.num_classes, 2);
    cr_expect_eq(g->config.embed_dim, 12);
    mygpt_gpt_free(g);
    // the saved classifier, not trained further: the accuracies it ended with
    run_in_dir("finetune --task classify --data DIR --epochs 0 --batch 4 --checkpoint DIR/c0.safetensors", dir, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.out, tail + 1, "the saved classifier's accuracies differ from the run's");
    proc_result_free(&r);
    // --save over a file there: refused unless --force
    snprintf(words, sizeof words, "%s --save DIR/c0.safetensors", run);
    run_in_dir(words, dir, NULL, &r);
    cr_expect_eq(r.status, 2, "exit %d", r.status);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "--save:") && strstr(r.err, "--force"), "%s", r.err);
    cr_expect_str_empty(r.out);
    proc_result_free(&r);
    static const char *const names[] = {"c0.safetensors", "c1.safetensors", "sms_spam_train.csv",
                                        "sms_spam_validation.csv", "sms_spam_test.csv"};
    remove_test_dir(dir, names, sizeof names / sizeof names[0]);
}

/* --task instruct on the first 4 entries of each part: the book's lines, the responses
 * written as instruction-data-with-response.json (the test entries with model_response),
 * and a saved model that `mygpt chat` talks to */
Test(cli_finetune, instruct_writes_the_responses_and_a_model_chat_reads, .timeout = 600)
{
    char json_path[4200];
    snprintf(json_path, sizeof json_path, "%s", data_file_or_skip("instruction-data.json"));
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-finetune-XXXXXX", model[300], responses[300];
    cr_assert_not_null(mkdtemp(dir));
    proc_result r;
    run_in_dir("finetune --task instruct --entries 4 --batch 2 --epochs 1 --eval-freq 1 --eval-iter 1 --max-new 6 "
                 "--save DIR/i.safetensors --responses DIR/r.json",
                 dir, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    const char *o = r.out;
    cr_expect(strncmp(o, "Training set length: 4\nValidation set length: 4\nTest set length: 4\n", 66) == 0, "%s", o);
    cr_expect(strstr(o, "\nInitial losses\n   Training loss: ") && strstr(o, "\nEp 1 (Step 000000): Train loss ") &&
                  strstr(o, "\nEp 1 (Step 000001): ") && !strstr(o, "(Step 000002)") &&
                  strstr(o, "\nGenerating responses\n"), "%s", o);
    proc_result_free(&r);
    // the responses file: the four test entries, each with its model_response
    snprintf(responses, sizeof responses, "%s/r.json", dir);
    snprintf(model, sizeof model, "%s/i.safetensors", dir);
    char *text;
    size_t len;
    cr_assert_eq(mygpt_read_file(responses, &text, &len, NULL), MYGPT_OK);
    mygpt_instruct_data got, all;
    cr_assert_eq(mygpt_instruct_data_parse(&got, responses, text, len, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_instruct_data_read(&all, json_path, NULL), MYGPT_OK);
    size_t n_train, n_test, n_val;
    mygpt_instruct_split(all.n, &n_train, &n_test, &n_val);
    cr_assert_eq(got.n, 4);
    for (size_t i = 0; i < got.n; i++)
        cr_expect_str_eq(got.entry[i].instruction, all.entry[n_train + i].instruction);
    int responses_seen = 0;
    for (const char *p = text; (p = strstr(p, "\"model_response\": \"")) != NULL; p++)
        responses_seen++;
    cr_expect_eq(responses_seen, 4, "%s", text);
    free(text);
    mygpt_instruct_data_free(&got);
    mygpt_instruct_data_free(&all);
    // the saved model talks
    char *argv[] = {MYGPT_EXE, "chat", "--checkpoint", model, "--max-new", "6", NULL};
    cr_assert_eq(run_process_input(argv, "Name a color.\n", &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_eq(count_lines(r.out), 1, "'%s'", r.out);
    proc_result_free(&r);
    // a responses file there is kept
    run_in_dir("finetune --task instruct --entries 4 --batch 2 --epochs 1 --responses DIR/r.json", dir, NULL, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "--responses:") && strstr(r.err, "--force"), "%s", r.err);
    proc_result_free(&r);
    unlink(model);
    unlink(responses);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Bad flags and files: one line naming them, status 2, nothing on stdout; --help and an
 * unknown flag as every program has them */
Test(cli_finetune, bad_flags_and_files_are_one_line)
{
    check_program(MYGPT_EXE, "finetune ", "finetune");
    data_file_or_skip("encoder.json");
    data_file_or_skip("instruction-data.json");
    const char *bad[][2] = {
        {"finetune", "--task classify|instruct is required"},
        {"finetune --task chat", "--task: 'chat' is not classify or instruct"},
        {"finetune --task classify --mask-instructions", "go with --task instruct"},
        {"finetune --task classify --responses x.json", "go with --task instruct"},
        {"finetune --task instruct --checkpoint x --seed 1", "--preset and --seed draw a fresh model"},
        {"finetune --task instruct --preset big", "--preset: 'big' is not a preset"},
        {"finetune --task instruct --checkpoint /nonexistent/m.safetensors", "--checkpoint: "},
        {"finetune --task classify --data /nonexistent", "/nonexistent/sms_spam_train.csv"},
        {"finetune --task instruct --data /nonexistent.json", "/nonexistent.json"},
        {"finetune --task instruct --entries 4 --batch 2 --max-length 121", "--max-length 121: more than the model's "
                                                                              "context of 120"},
        {"finetune --task instruct --entries 1", "too few for a batch of 8"},
        {"finetune --task classify --lr -1", "--lr"},
        {"finetune --task instruct --epochs x", "--epochs"},
        {"finetune --task instruct --save /nonexistent/dir/m.safetensors", "--save: "},
        // a subnormal alpha would be written, and the file then refused
        {"finetune --task instruct --lora 4 --lora-alpha 1e-310", "--lora-alpha must be from 1e-30 to 1e+30, got 1e-310"},
        {"finetune --task instruct --lora 4 --lora-alpha 1e300", "--lora-alpha must be from 1e-30 to 1e+30, got 1e300"},
        {"finetune --task instruct --lora 4 --lora-alpha 0", "--lora-alpha must be from 1e-30 to 1e+30, got 0"},
        {"finetune --task instruct --lora 4 --lora-alpha 9.9e-31", "--lora-alpha must be from 1e-30 to 1e+30"},
        {"finetune --task instruct --lora 4 --lora-alpha -2", "--lora-alpha must be from 1e-30 to 1e+30, got -2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, bad[i][0], &r), 0);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", bad[i][0], r.status, r.err);
        cr_expect_eq(count_lines(r.err), 1, "%s: %s", bad[i][0], r.err);
        cr_expect(strstr(r.err, bad[i][1]) != NULL, "%s: '%s' lacks '%s'", bad[i][0], r.err, bad[i][1]);
        cr_expect_str_empty(r.out, "%s", bad[i][0]);
        proc_result_free(&r);
    }
}

/* A label the 2-class head cannot take (2, in a record of two lines after one of one) or
 * a file with a header and no text, in any of the three files, is refused before the
 * first step: one line naming the file and the record's line, status 2, nothing printed,
 * no --save written. */
Test(cli_finetune, classify_refuses_a_bad_label_or_an_empty_split_of_any_file_before_training, .timeout = 300)
{
    data_file_or_skip("sms_spam_train.csv");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-finetune-XXXXXX", path[300], save[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(save, sizeof save, "%s/c.safetensors", dir);
    static const char *const files[3] = {"sms_spam_train.csv", "sms_spam_validation.csv", "sms_spam_test.csv"};
    static const int rows[3] = {24, 6, 5};
    static const struct { const char *file, *line, *why; } faults[] = {
        {"Label,Text\n0,fine\n1,\"two\nlines\"\n2,three\n", "line 5", "label 2 is outside the classifier's 2 "
                                                                    "classes [0, 2)"},
        {"Label,Text\n", "line 1", "a header and no text after it"},
    };
    for (int split = 0; split < 3; split++)
        for (size_t k = 0; k < sizeof faults / sizeof faults[0]; k++) {
            for (int s = 0; s < 3; s++)
                head_of(dir, files[s], rows[s]);
            snprintf(path, sizeof path, "%s/%s", dir, files[split]);
            FILE *f = fopen(path, "wb");
            cr_assert_not_null(f);
            fputs(faults[k].file, f);
            cr_assert_eq(fclose(f), 0);
            proc_result r;
            run_in_dir("finetune --task classify --data DIR --epochs 1 --batch 4 --eval-freq 2 --eval-iter 2 "
                         "--save DIR/c.safetensors", dir, NULL, &r);
            char want[600];
            snprintf(want, sizeof want, "mygpt finetune: %s %s: %s", path, faults[k].line, faults[k].why);
            cr_expect_eq(r.status, 2, "%s: exit %d: %s", path, r.status, r.err);
            cr_expect(count_lines(r.err) == 1 && strncmp(r.err, want, strlen(want)) == 0, "'%s' is not '%s...'",
                      r.err, want);
            cr_expect_str_empty(r.out, "%s", r.out);
            cr_expect_neq(access(save, F_OK), 0, "%s: the classifier was saved", path);
            unlink(save);
            proc_result_free(&r);
        }
    remove_test_dir(dir, files, 3);
}

/* An entry holding <|endoftext|> (tokenizer.encode refuses it) in the validation or the
 * test part is refused before training, naming the file and the entry's index in it
 * (0-based, as the reader's other errors), not its index in its part. */
Test(cli_finetune, instruct_names_the_file_and_the_entry_that_holds_endoftext, .timeout = 300)
{
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-finetune-XXXXXX", path[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/data.json", dir);
    // 20 entries: training 0-16, test 17-18, validation 19
    static const size_t bad[] = {19, 18};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        fputs("[", f);
        for (size_t e = 0; e < 20; e++)
            fprintf(f, "%s{\"instruction\": \"Say %zu.\", \"input\": \"\", \"output\": \"%zu%s\"}", e ? ", " : "",
                    e, e, e == bad[k] ? " <|endoftext|>" : "");
        fputs("]", f);
        cr_assert_eq(fclose(f), 0);
        proc_result r;
        run_in_dir("finetune --task instruct --data DIR/data.json --batch 2 --epochs 1 --max-new 2", dir, NULL, &r);
        char want[600];
        snprintf(want, sizeof want, "mygpt finetune: %s: entry %zu holds <|endoftext|>, which tokenizer.encode "
                 "refuses\n", path, bad[k]);
        cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
        cr_expect_str_eq(r.err, want);
        cr_expect_str_empty(r.out, "%s", r.out);
        proc_result_free(&r);
    }
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Finetune's --save and --responses are never one file, nor a file --checkpoint (a
 * folder's model.safetensors, its config.json) or --data reads, however spelt (same.bin
 * and ./same.bin), --force or not: refused before the model is read, one line naming both
 * flags, status 2, every file as it was */
Test(cli_finetune, no_file_written_replaces_one_read_or_another_written, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    data_file_or_skip("instruction-data.json");
    char dir[] = "/tmp/mygpt-finetune-XXXXXX", path[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/hf", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/sub", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/hf/model.safetensors", dir);
    const mygpt_config cfg = {50257, 12, 2, 1, 120};
    save_new_model(path, &cfg, 1);
    static const char *const keep[] = {"hf/model.safetensors", "data.json", "sms_spam_test.csv", "hf/config.json"};
    static const char *const text[] = {NULL, "[]\n", "Label,Text\nham,Hello\n", "{}\n"};
    for (size_t k = 1; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, keep[k]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(text[k], f);
        cr_assert_eq(fclose(f), 0);
    }
    cr_assert_eq(chdir(dir), 0);
#define TUNE_SHORT "finetune --task instruct --entries 10 --epochs 0 --max-new 1 "
    static const refused_run runs[] = {
        {TUNE_SHORT "--save same.bin --responses ./same.bin", "--save", "--responses"},
        {TUNE_SHORT "--checkpoint hf --save hf/model.safetensors --force", "--save", "--checkpoint"},
        {TUNE_SHORT "--checkpoint hf/model.safetensors --responses ./hf/model.safetensors --force", "--responses",
         "--checkpoint"},
        {TUNE_SHORT "--data data.json --responses sub/../data.json --force", "--responses", "--data"},
        {"finetune --task classify --epochs 0 --data . --save ./sms_spam_test.csv --force", "--save", "--data"},
        {TUNE_SHORT "--checkpoint hf --responses sub/../hf/config.json --force", "--responses", "--checkpoint"},
    };
    expect_refused_untouched(runs, sizeof runs / sizeof runs[0], dir, data, keep, 4);
    for (size_t k = 0; k < 4; k++)
        unlink(keep[k]);
    rmdir("hf");
    rmdir("sub");
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* A fine-tuning whose first step makes a weight non-finite (lr 1e300) stops there with
 * one line naming the step, status 1, and --save is not written: in both tasks, the
 * classifier's loop too */
Test(cli_finetune, a_step_that_diverges_stops_both_tasks_and_saves_nothing, .timeout = 300)
{
    both_tasks_data_or_skip();
    char dir[] = "/tmp/mygpt-diverge-XXXXXX", saved[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(saved, sizeof saved, "%s/m.safetensors", dir);
    static const char *const runs[] = {
        "finetune --task classify --epochs 1 --lr 1e300 --save DIR/m.safetensors",
        "finetune --task instruct --entries 10 --epochs 1 --max-new 1 --lr 1e300 --save DIR/m.safetensors",
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        proc_result r;
        run_in_dir(runs[i], dir, NULL, &r);
        cr_expect_eq(r.status, 1, "%s: exit %d: %s", runs[i], r.status, r.err);
        cr_expect_eq(count_lines(r.err), 1, "%s: %s", runs[i], r.err);
        cr_expect(strstr(r.err, "mygpt finetune: step 0: the training diverged (") != NULL, "%s: %s", runs[i], r.err);
        cr_expect(strstr(r.out, "Ep 1") == NULL, "%s: a diverged step evaluated: %s", runs[i], r.out);
        cr_expect(access(saved, F_OK) != 0, "%s: the model was saved", runs[i]);
        proc_result_free(&r);
    }
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* A classifier step that leaves its weights finite but huge (lr 1e35) computes NaN losses:
 * the evaluation after it stops the run (status 1, its line printed, then one line naming
 * the step), and --save is not written */
Test(cli_finetune, a_classifier_whose_evaluation_is_nan_is_not_saved, .timeout = 300)
{
    data_file_or_skip("sms_spam_train.csv");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-diverge-XXXXXX", path[300];
    cr_assert_not_null(mkdtemp(dir));
    static const char *const files[3] = {"sms_spam_train.csv", "sms_spam_validation.csv", "sms_spam_test.csv"};
    for (int s = 0; s < 3; s++)
        head_of(dir, files[s], 4);
    proc_result r;
    run_in_dir("finetune --task classify --data DIR --epochs 1 --batch 4 --eval-freq 1 --eval-iter 1 --lr 1e35 "
                 "--save DIR/c.safetensors", dir, NULL, &r);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "mygpt finetune: step 0: the training diverged (the training "
                                                       "loss holds nan after the step's update)"), "%s", r.err);
    cr_expect(strstr(r.out, "Ep 1 (Step 000000): Train loss nan, Val loss nan") != NULL, "%s", r.out);
    snprintf(path, sizeof path, "%s/c.safetensors", dir);
    cr_expect(access(path, F_OK) != 0, "the classifier was saved");
    proc_result_free(&r);
    remove_test_dir(dir, files, 3);
}

/* --checkpoint: a Hugging Face GPT-2 folder (model.safetensors and config.json, a small
 * gpt2 drawn here with GPT-2's vocabulary) tuned on both tasks. The classifier keeps the
 * folder's frozen embeddings bit for bit, its head of 2 new; a context shorter than the
 * padded texts is refused, naming --max-length; the golden's GPT-2 of 60 tokens is
 * refused, naming the file. */
Test(cli_finetune, both_tasks_start_from_a_hugging_face_folder, .timeout = 600)
{
    both_tasks_data_or_skip();
    char dir[] = "/tmp/mygpt-finetune-XXXXXX", path[300];
    cr_assert_not_null(mkdtemp(dir));
    static const char *const subdirs[] = {"hf", "c", "i", "small"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, subdirs[i]);
        cr_assert_eq(mkdir(path, 0700), 0);
    }
    head_of(dir, "sms_spam_train.csv", 24);
    head_of(dir, "sms_spam_validation.csv", 6);
    head_of(dir, "sms_spam_test.csv", 5);
    const mygpt_config cfg = {.vocab_size = 50257, .embed_dim = 16, .num_heads = 2, .num_layers = 1,
                              .max_seq_len = 32, .arch = MYGPT_ARCH_GPT2};
    mygpt_gpt *lm = NULL, *c = NULL;
    cr_assert_eq(mygpt_gpt_create(&lm, &cfg, 5, NULL), MYGPT_OK);
    snprintf(path, sizeof path, "%s/hf/model.safetensors", dir);
    cr_assert_eq(mygpt_checkpoint_save(lm, path, NULL), MYGPT_OK);
    proc_result r;
    run_in_dir("finetune --task classify --data DIR --checkpoint DIR/hf --epochs 1 --batch 4", dir, NULL, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "/sms_spam_train.csv: its texts are padded to ") &&
                  strstr(r.err, "context of 32: give --max-length 32 or less"),
              "%s", r.err);
    proc_result_free(&r);
    run_in_dir("finetune --task classify --data DIR --checkpoint DIR/hf --epochs 1 --batch 4 --max-length 24 "
                 "--save DIR/c/model.safetensors", dir, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, "\nTest accuracy: ") != NULL, "%s", r.out);
    proc_result_free(&r);
    snprintf(path, sizeof path, "%s/c/model.safetensors", dir);
    cr_assert_eq(mygpt_checkpoint_load(&c, path, NULL), MYGPT_OK);
    cr_expect_eq(c->config.num_classes, 2);
    cr_expect_eq(c->config.arch, MYGPT_ARCH_GPT2);
    cr_expect(memcmp(c->params.wte, lm->params.wte, lm->param_sizes[MYGPT_PARAM_wte] * sizeof(float)) == 0 &&
                  memcmp(c->params.wpe, lm->params.wpe, lm->param_sizes[MYGPT_PARAM_wpe] * sizeof(float)) == 0,
              "the frozen embeddings changed");
    cr_expect(memcmp(c->params.fc2w, lm->params.fc2w, lm->param_sizes[MYGPT_PARAM_fc2w] * sizeof(float)) != 0,
              "the last block did not train");
    mygpt_gpt_free(c);
    mygpt_gpt_free(lm);
    // instruct: the folder's language model, its context (32) the batches' limit
    run_in_dir("finetune --task instruct --checkpoint DIR/hf --entries 4 --batch 2 --epochs 1 --max-new 4 "
                 "--save DIR/i/model.safetensors", dir, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, "\nLoaded model: ") && strstr(r.out, "\nGenerating responses\n"), "%s", r.out);
    proc_result_free(&r);
    // the instruct task refuses the classifier; the golden's GPT-2 of 60 tokens is refused
    run_in_dir("finetune --task instruct --checkpoint DIR/c --entries 4 --batch 2", dir, NULL, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "a classifier"), "%s", r.err);
    proc_result_free(&r);
    char golden[4300], link[300];
    snprintf(golden, sizeof golden, "%s/gpt2_hf.safetensors", golden_dir());
    snprintf(link, sizeof link, "%s/small/model.safetensors", dir);
    cr_assert_eq(symlink(golden, link), 0);
    snprintf(golden, sizeof golden, "%s/config.json", golden_dir());
    snprintf(path, sizeof path, "%s/small/config.json", dir);
    cr_assert_eq(symlink(golden, path), 0);
    run_in_dir("finetune --task classify --data DIR --checkpoint DIR/small", dir, NULL, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "small/model.safetensors has a vocabulary of 60 tokens, not GPT-2's 50257"),
              "%s", r.err);
    proc_result_free(&r);
    static const char *const files[] = {"hf/model.safetensors", "hf/config.json", "c/model.safetensors",
                                        "c/config.json", "i/model.safetensors", "i/config.json",
                                        "small/model.safetensors", "small/config.json", "sms_spam_train.csv",
                                        "sms_spam_validation.csv", "sms_spam_test.csv", "hf", "c", "i",
                                        "small"};
    remove_test_dir(dir, files, sizeof files / sizeof files[0]);
}

/* Chapters 81 and 86 --gpt2 DIR: the book's own run on a Hugging Face GPT-2 folder. There
 * are no GPT-2 weights here: what is held is that the folder is read and a model that is
 * not GPT-2's vocabulary (the golden's small GPT-2) or no folder is one line, status 2,
 * before anything is printed. */
Test(cli_finetune, chapters_81_and_86_read_a_gpt2_folder_or_say_why_not)
{
    both_tasks_data_or_skip();
    char dir[] = "/tmp/mygpt-finetune-XXXXXX", golden[4300], link[300], words[600];
    cr_assert_not_null(mkdtemp(dir));
    static const char *const names[2][2] = {{"gpt2_hf.safetensors", "model.safetensors"},
                                            {"config.json", "config.json"}};
    for (int i = 0; i < 2; i++) {
        snprintf(golden, sizeof golden, "%s/%s", golden_dir(), names[i][0]);
        snprintf(link, sizeof link, "%s/%s", dir, names[i][1]);
        cr_assert_eq(symlink(golden, link), 0);
    }
    static const char *const programs[2] = {"81_book_classifier", "86_book_instruction_finetune"};
    for (int p = 0; p < 2; p++) {
        char exe[4300];
        proc_result r;
        snprintf(exe, sizeof exe, "%s/%s", CHAPTER_DIR, programs[p]);
        snprintf(words, sizeof words, "--gpt2 %s --smoke", dir);
        cr_assert_eq(run_words(exe, words, &r), 0);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", programs[p], r.status, r.err);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, "model.safetensors has a vocabulary of 60 tokens, not "
                                                           "GPT-2's 50257"), "%s: %s", programs[p], r.err);
        cr_expect_str_empty(r.out, "%s", programs[p]);
        proc_result_free(&r);
        cr_assert_eq(run_words(exe, "--gpt2 /nonexistent-gpt2 --smoke", &r), 0);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", programs[p], r.status, r.err);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, ": --gpt2: cannot open /nonexistent-gpt2"), "%s: %s",
                  programs[p], r.err); // the flag named, as the file
        cr_expect_str_empty(r.out, "%s", programs[p]);
        proc_result_free(&r);
        cr_assert_eq(run_words(exe, "--help", &r), 0);
        cr_expect(r.status == 0 && strstr(r.out, "[--gpt2 DIR]") && strstr(r.out, "a Hugging Face GPT-2 folder"),
                  "%s: %s", programs[p], r.out);
        proc_result_free(&r);
    }
    for (int i = 0; i < 2; i++) {
        snprintf(link, sizeof link, "%s/%s", dir, names[i][1]);
        unlink(link);
    }
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* --mask-instructions (the book's exercise 7.2) reaches the loaders: the prompt's tokens
 * leave the targets, so the initial losses change; --epochs 0 trains nothing */
Test(cli_finetune, masking_the_instructions_changes_the_losses)
{
    data_file_or_skip("instruction-data.json");
    data_file_or_skip("encoder.json");
    const char *run = "finetune --task instruct --entries 4 --batch 2 --epochs 0 --max-new 1";
    char words[300], losses[2][512];
    for (int m = 0; m < 2; m++) {
        proc_result r;
        snprintf(words, sizeof words, "%s%s", run, m ? " --mask-instructions" : "");
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        cr_assert_eq(r.status, 0, "%s: exit %d: %s", words, r.status, r.err);
        const char *from = strstr(r.out, "Initial losses\n"), *to = from ? strstr(from, "\nGenerating") : NULL;
        cr_assert(from && to && !strstr(r.out, "Ep 1"), "%s", r.out);
        snprintf(losses[m], sizeof losses[m], "%.*s", (int)(to - from), from);
        proc_result_free(&r);
    }
    cr_expect_str_neq(losses[0], losses[1], "--mask-instructions left the losses as they were");
}
