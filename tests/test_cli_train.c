/*
 * test_cli_train.c - mygpt train: what it refuses before the first step, what it never
 * saves (a diverged step, a NaN loss, a file past the size limit, a file it reads), its
 * log, plot and presets. (Its numbers against PyTorch: test_cli_train_reference.c; Ctrl-C
 * and --resume: test_cli_train_resume.c.)
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_common.h"
#include "data.h"
#include "mygpt/checkpoint.h"
#include "mygpt/data.h"

/* A training whose loss becomes NaN stops at that step with an error naming it, and saves
 * nothing (status 1, a runtime failure; an lr of 1e20 keeps the weights finite, so the
 * validation loss after step 0 is what stops it, and it prints as Python prints it, nan). */
Test(cli_train, a_nan_loss_stops_training_and_saves_nothing, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_nan_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char words[1024], saved[300];
    snprintf(saved, sizeof saved, "%s/m.safetensors", dir);
    snprintf(words, sizeof words,
             "train --seed 0 --vocab 50257 --embed 8 --heads 2 --layers 1 --text DATA/the-verdict.txt --context 8 "
             "--batch 2 --steps 5 --optimizer sgd --lr 1e20 --save %s", saved);
    proc_result r = {0};
    cr_assert_eq(run_tool_words(words, data, &r), 0);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "step 0: the training diverged (the validation loss holds nan after the step's update)") &&
                  strstr(r.err, "nothing more is saved") != NULL, "%s", r.err);
    cr_expect_str_eq(r.out, "step 0 train_loss 14.750289 val_loss nan\n");
    cr_expect(access(saved, F_OK) != 0, "a checkpoint was saved");
    proc_result_free(&r);
    rmdir(dir);
}

/* The data folder (skipped without it, the-verdict or the vocabulary), a fresh folder for
 * the test (dir, a mkdtemp template) and the path of the text it writes there (name, into
 * path: 300 bytes) */
static const char *text_test_dir(char *dir, const char *name, char *path)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, 300, "%s/%s", dir, name);
    return data;
}

/* A --text that cannot train is refused naming it, in both loops: a byte that is not
 * UTF-8 at its offset in the file (not in the validation part that holds it), a text too
 * short for a batch */
Test(cli_train, a_text_that_cannot_train_is_refused_naming_it, .timeout = 120)
{
    char dir[] = "/tmp/mygpt_text_XXXXXX", path[300], words[700], want[400];
    const char *data = text_test_dir(dir, "late.txt", path);
    char text[400];
    memset(text, 'a', 390);
    memcpy(text + 100, " word", 5);
    text[390] = '\xff'; // in the last tenth: the validation part
    static const char *const loops[] = {"--steps 1", "--epochs 1"};
    for (int k = 0; k < 4; k++) { // the bad byte, then a text too short, in each loop
        if (k % 2 == 0) {
            FILE *f = fopen(path, "wb");
            cr_assert_not_null(f);
            fwrite(k ? "hello world" : text, 1, k ? 11 : 391, f);
            cr_assert_eq(fclose(f), 0);
        }
        snprintf(words, sizeof words, "train --preset tiny %s --text %s --save %s/m.safetensors", loops[k % 2], path,
                 dir);
        proc_result r;
        run_tool_words(words, data, &r);
        snprintf(want, sizeof want, "--text %s: %s", path,
                 k < 2 ? "the text is not valid UTF-8 (byte offset 390)"
                       : "the training part of the text (2 tokens) holds no batch");
        expect_one_line_refusal(&r, 2, want, words);
        proc_result_free(&r);
    }
    snprintf(want, sizeof want, "%s/m.safetensors", dir);
    cr_expect(access(want, F_OK) != 0, "a refused run saved a model");
    unlink(path);
    cr_expect_eq(rmdir(dir), 0);
}

/* A --vocab smaller than GPT-2's lacks the text's tokens: refused before the first step,
 * naming --text and the token, in both loops (not the forward pass's "token id ... at
 * (0, 0)", which names neither); and --sample-prompt's, whose tokens the text may not hold
 * (refused before the first epoch, not at its end), or which is not UTF-8, names itself */
Test(cli_train, a_vocabulary_that_lacks_the_texts_tokens_is_refused_naming_the_text, .timeout = 120)
{
    char dir[] = "/tmp/mygpt-vocab-XXXXXX", thes[300];
    const char *data = text_test_dir(dir, "thes.txt", thes);
    FILE *f = fopen(thes, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 600; i++) // GPT-2's " the" (262) and "the" (1169) alone
        fputs(" the", f);
    cr_assert_eq(fclose(f), 0);
    static const char *const runs[][2] = {
        {"--steps 1 --vocab 300 --text DATA/the-verdict.txt",
         "the-verdict.txt: its GPT-2 token 367 is outside the model's vocabulary of 300"},
        {"--epochs 1 --vocab 300 --text DATA/the-verdict.txt",
         "the-verdict.txt: its GPT-2 token 367 is outside the model's vocabulary of 300"},
        {"--epochs 1 --vocab 1200 --text DIR/thes.txt --sample-prompt zebra_crossing",
         "--sample-prompt: its GPT-2 token 37052 is outside the model's vocabulary of 1200"},
        {"--epochs 1 --text DIR/thes.txt --sample-prompt caf\xe9", "--sample-prompt: the text is not valid UTF-8"},
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        char words[300];
        proc_result r;
        snprintf(words, sizeof words, "train --preset tiny %s --out DIR/run", runs[k][0]);
        train_run(words, dir, data, NULL, &r);
        expect_one_line_refusal(&r, 2, runs[k][1], words);
        proc_result_free(&r);
        char out[100];
        snprintf(out, sizeof out, "%s/run", dir);
        cr_expect(access(out, F_OK) != 0, "the refused run left its folder %s", out);
        rmdir(out);
    }
    unlink(thes);
    cr_expect_eq(rmdir(dir), 0);
}

/* `train --arch gpt2 --save DIR/m.safetensors` beside a Hugging Face config.json: one of
 * the same model (other formatting, extra keys) is kept and the run saves; one of another
 * model is refused before the first step, nothing saved */
Test(cli_train, a_gpt2_save_beside_a_hugging_face_config_json, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_hfcli_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char words[1024], saved[300], conf[300];
    snprintf(saved, sizeof saved, "%s/m.safetensors", dir);
    snprintf(conf, sizeof conf, "%s/config.json", dir);
    snprintf(words, sizeof words,
             "train --seed 0 --arch gpt2 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 16 "
             "--text DATA/the-verdict.txt --context 8 --batch 2 --steps 2 --optimizer sgd --lr 0.1 --save %s", saved);
    for (int same = 1; same >= 0; same--) {
        char hf[600];
        snprintf(hf, sizeof hf,
                 "{\n  \"architectures\": [\"GPT2LMHeadModel\"],\n  \"task_specific_params\": {\"text-generation\": "
                 "{\"n_head\": 4}},\n  \"n_ctx\": 16,\n  \"n_embd\": %d,\n  \"n_head\": 2,\n  \"n_layer\": 1,\n"
                 "  \"n_positions\": 16,\n  \"transformers_version\": \"4.26.0\",\n  \"vocab_size\": 50257\n}\n",
                 same ? 8 : 16);
        FILE *f = fopen(conf, "w");
        fputs(hf, f);
        fclose(f);
        proc_result r = {0};
        cr_assert_eq(run_tool_words(words, data, &r), 0);
        if (same) {
            cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
            cr_expect_eq(access(saved, F_OK), 0, "not saved");
            expect_file_holds(conf, hf, "a config.json of the same model");
            unlink(saved);
        } else {
            cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
            cr_expect(strstr(r.err, "--save") && strstr(r.err, "n_embd 16") && strstr(r.err, "config.json"), "%s",
                      r.err);
            cr_expect(strstr(r.out, "step") == NULL, "trained first: %s", r.out);
            cr_expect(access(saved, F_OK) != 0, "saved");
        }
        proc_result_free(&r);
    }
    unlink(conf);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* A step that makes the weights non-finite stops the run there, with one line naming the
 * step and status 1, before anything saves: as the last step, the --save over the
 * --init-from model keeps it byte for byte; under --checkpoint-every, the state of the
 * step before stays (not replaced by a NaN one) and still resumes */
Test(cli_train, a_step_that_diverges_saves_nothing_and_keeps_what_was_saved, .timeout = 300)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_diverge_XXXXXX", base[300], init[300], state[300], copy[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(base, sizeof base, "%s/base.safetensors", dir);
    snprintf(init, sizeof init, "%s/init.safetensors", dir);
    snprintf(state, sizeof state, "%s/s.safetensors", dir);
    snprintf(copy, sizeof copy, "%s/copy.safetensors", dir);
    const mygpt_config cfg = {.vocab_size = 50257, .embed_dim = 8, .num_heads = 2, .num_layers = 1, .max_seq_len = 16};
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 5, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, base, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, init, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    proc_result r;
    // the last step blows up: the model it started from is kept
    train_run("train --preset tiny --init-from DIR/init.safetensors --steps 1 --lr 1e300 --text DATA/the-verdict.txt "
              "--save DIR/init.safetensors", dir, data, NULL, &r);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "mygpt train: step 0: the training diverged (") && strstr(r.err, " holds -inf after "),
              "%s", r.err);
    cr_expect_str_empty(r.out, "a diverged step evaluated: %s", r.out);
    cr_expect(same_files(base, init), "the --init-from model was replaced");
    proc_result_free(&r);
    // the warmup's second step blows up: the state of step 1 stays, and resumes (to the same end)
    const char *run = "train --preset tiny --steps 3 --warmup 2 --lr 1e300 --checkpoint-every 1 "
                      "--text DATA/the-verdict.txt --state DIR/s.safetensors";
    train_run(run, dir, data, NULL, &r);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "mygpt train: step 1: the training diverged (") && strstr(r.err, "saved before stays"),
              "%s", r.err);
    proc_result_free(&r);
    size_t n = 0;
    char *bytes = file_bytes(state, &n);
    cr_assert_not_null(bytes);
    static char header[1 << 16];
    size_t hlen = 0;
    for (int b = 7; n > 8 && b >= 0; b--) // the header's length: 8 bytes, little-endian
        hlen = hlen << 8 | (unsigned char)bytes[b];
    cr_assert(hlen < sizeof header && hlen + 8 <= n, "a state of %zu bytes, its header %zu", n, hlen);
    memcpy(header, bytes + 8, hlen);
    header[hlen] = '\0';
    cr_expect(strstr(header, "\"step\":\"1\"") != NULL, "the state is not step 1's: %s", header);
    FILE *f = fopen(copy, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
    free(bytes);
    char resumed[512];
    snprintf(resumed, sizeof resumed, "%s --resume DIR/s.safetensors", run);
    train_run(resumed, dir, data, NULL, &r);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "mygpt train: step 1: the training diverged ("), "not resumed at step 1: %s", r.err);
    cr_expect(same_files(state, copy), "the last good state was replaced");
    proc_result_free(&r);
    unlink(base);
    unlink(init);
    unlink(state);
    unlink(copy);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* --log: a row per step, the validation loss where the step evaluated, and its plot;
 * an SVG there that is not such a plot is refused before the first step; presets and
 * defaults: --help lists them, explicit flags win, an unknown one is refused */
Test(cli_train, the_log_the_plot_and_the_presets, .timeout = 600)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_log_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    proc_result r;
    train_run("train --preset tiny --steps 5 --eval-every 2 --text DATA/the-verdict.txt --log DIR/run.csv", dir, data,
              NULL, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "mygpt train: step 5/5, loss ") != NULL, "no progress line: %s", r.err);
    // a preset is its flags, typed
    proc_result typed;
    train_run("train --seed 123 --vocab 50257 --embed 16 --heads 2 --layers 1 --max-seq 16 --context 16 --batch 4 "
              "--steps 5 --optimizer adamw --lr 1e-2 --eval-every 2 --text DATA/the-verdict.txt", dir, data, NULL,
              &typed);
    cr_expect_eq(typed.status, 0, "exit %d: %s", typed.status, typed.err);
    cr_expect_str_eq(r.out, typed.out);
    cr_expect_eq(count_lines(r.out), 3, "%s", r.out);
    proc_result_free(&r);
    char csv[300], svg[300];
    snprintf(csv, sizeof csv, "%s/run.csv", dir);
    snprintf(svg, sizeof svg, "%s/run.svg", dir);
    size_t n = 0;
    char *text = file_bytes(csv, &n);
    cr_assert_not_null(text);
    text = realloc(text, n + 1);
    text[n] = '\0';
    cr_expect_eq(count_lines(text), 6, "%s", text);
    for (int step = 0; step < 5; step++) { // the losses stdout shows, where it shows them
        char row[64], line[128];
        double tl, vl;
        snprintf(row, sizeof row, "\n%d,", step);
        const char *at = strstr(text, row);
        cr_assert_not_null(at, "no row for step %d: %s", step, text);
        const int evaluated = step % 2 == 0;
        if (evaluated) {
            cr_assert_eq(sscanf(at + strlen(row), "%lf,%lf,0.01,", &tl, &vl), 2, "%s", at);
            snprintf(line, sizeof line, "step %d train_loss %.6f val_loss %.6f\n", step, tl, vl);
            cr_expect(strstr(typed.out, line) != NULL, "the log's row %d is not what stdout shows: %s", step, at);
        } else {
            cr_assert_eq(sscanf(at + strlen(row), "%lf", &tl), 1);
            cr_expect(strstr(at + strlen(row), ",,0.01,") != NULL, "step %d: %s", step, at);
        }
    }
    proc_result_free(&typed);
    free(text);
    text = file_bytes(svg, &n);
    cr_assert_not_null(text, "no plot");
    text = realloc(text, n + 1);
    text[n] = '\0';
    cr_expect(strstr(text, "the loss of the run") != NULL && strstr(text, ">validation<") != NULL, "%s", text);
    free(text);
    // someone's drawing where the plot would go: refused, kept
    unlink(svg);
    FILE *f = fopen(svg, "w");
    fputs("<svg>mine</svg>", f);
    fclose(f);
    train_run("train --preset tiny --steps 2 --text DATA/the-verdict.txt --log DIR/run.csv", dir, data, NULL, &r);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "is not a loss plot of mygpt train: not replaced") != NULL, "%s", r.err);
    proc_result_free(&r);
    text = file_bytes(svg, &n);
    cr_expect(text && n == 15, "the drawing was replaced");
    free(text);
    unlink(svg);
    unlink(csv);
    // presets: listed, refused when unknown, the text the only flag without a default
    cr_assert_eq(run_words(MYGPT_EXE, "train --help", &r), 0);
    cr_expect(strstr(r.out, "book-ch5") && strstr(r.out, "verdict") && strstr(r.out, "--epochs 10"), "%s", r.out);
    proc_result_free(&r);
    const char *bad[][2] = {{"train --preset nosuch --text x", "--preset: unknown preset 'nosuch'"},
                            {"train --preset tiny", "--text FILE is required"},
                            {"train --text x --state /tmp --preset tiny", "--state: /tmp is a directory"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(run_words(MYGPT_EXE, bad[i][0], &r), 0);
        cr_expect_eq(r.status, 2, "%s: exit %d", bad[i][0], r.status);
        cr_expect(strstr(r.err, bad[i][1]) != NULL, "'%s' lacks '%s'", r.err, bad[i][1]);
        proc_result_free(&r);
    }
    // an explicit flag wins over the preset's: --eval-every 3 of tiny's 10
    train_run("train --preset tiny --steps 4 --eval-every 3 --text DATA/the-verdict.txt", dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strncmp(r.out, "step 0 train_loss", 17) == 0 && strstr(r.out, "\nstep 3 train_loss") != NULL &&
              count_lines(r.out) == 2, "%s", r.out);
    proc_result_free(&r);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Train writes no file over one it reads (--text, --init-from, --resume, the tokenizer's)
 * nor two of its files over each other (--save and a GPT-2's config.json beside it,
 * --state or the state beside --save, --log and its plot), however the paths are spelt
 * (DIR/./m, DIR/sub/../m, a link to m) and whether the file is there yet or not: refused
 * before the first step. A state resumed and saved again, or the model a run starts from
 * saved again, is the run going on: those are allowed. */
Test(cli_train, no_file_written_replaces_one_read_or_another_written, .timeout = 300)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    const char *verdict = data_file_or_skip("the-verdict.txt"); // its static buffer: the last call
    char dir[] = "/tmp/mygpt_outputs_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    write_verdict_part(verdict, dir, 3000);
    char path[300], link[300];
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    const mygpt_config cfg = {50257, 8, 2, 1, 16};
    save_new_model(path, &cfg, 1);
    snprintf(path, sizeof path, "%s/sub", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/verdict_part.txt", dir);
    snprintf(link, sizeof link, "%s/link.txt", dir);
    cr_assert_eq(symlink(path, link), 0);
#define TRAIN_SMALL "train --seed 0 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 16 --context 8 --batch 2 " \
                    "--optimizer sgd --lr 0.1 --text DIR/verdict_part.txt "
    static const refused_run runs[] = {
        {TRAIN_SMALL "--steps 2 --log DIR/verdict_part.txt", "--log", "--text"},
        {TRAIN_SMALL "--steps 2 --state DIR/./verdict_part.txt", "--state", "--text"},
        {"train --seed 0 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 16 --context 8 --batch 2 --steps 2 "
         "--optimizer sgd --lr 0.1 --text DIR/link.txt --save DIR/sub/../verdict_part.txt", "--save", "--text"},
        {TRAIN_SMALL "--steps 2 --save DIR/new --state DIR/./new --log DIR/new", "--save", "--state"},
        {TRAIN_SMALL "--steps 2 --save DIR/new --log DIR/sub/../new", "--save", "--log"},
        {TRAIN_SMALL "--steps 2 --save DIR/new.svg --log DIR/new.csv", "--save", "--log's plot"},
        {TRAIN_SMALL "--steps 2 --save DIR/new.safetensors --log DIR/sub/../new.state.safetensors",
         "the training state", "--log"},
        {TRAIN_SMALL "--steps 2 --resume DIR/m.safetensors --log DIR/m.safetensors", "--log", "--resume"},
        {TRAIN_SMALL "--steps 2 --log DIR/sub/../vocab/vocab.bpe", "--log", "the tokenizer"},
        {TRAIN_SMALL "--steps 2 --arch gpt2 --save DIR/g.safetensors --log DIR/./config.json", "--log",
         "a GPT-2 save's config.json"},
    };
    // the tokenizer's files: a copy of the data folder's, which the tool reads from DIR/vocab
    static const char *const keep[] = {"verdict_part.txt", "m.safetensors", "vocab/encoder.json", "vocab/vocab.bpe"};
    snprintf(path, sizeof path, "%s/vocab", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    for (int k = 2; k < 4; k++) {
        char from[4300], to[300];
        size_t n = 0;
        snprintf(from, sizeof from, "%s/%s", data, keep[k] + 6);
        snprintf(to, sizeof to, "%s/%s", dir, keep[k]);
        char *bytes = file_bytes(from, &n);
        FILE *f = fopen(to, "wb");
        cr_assert(bytes && f && fwrite(bytes, 1, n, f) == n && fclose(f) == 0, "%s", to);
        free(bytes);
    }
    setenv("MYGPT_DATA", path, 1);
    expect_refused_untouched(runs, sizeof runs / sizeof runs[0], dir, data, keep, 4);
    // the state resumed is saved again, however spelt
    proc_result r;
    train_run(TRAIN_SMALL "--steps 2 --state DIR/s.safetensors --checkpoint-every 1", dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    train_run(TRAIN_SMALL "--steps 3 --checkpoint-every 1 --resume DIR/s.safetensors --state DIR/sub/../s.safetensors",
              dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "(resumed at step 2)") != NULL, "%s", r.err);
    proc_result_free(&r);
    // and so is the model a run starts from: trained further in place
    train_run("train --seed 0 --context 8 --batch 2 --steps 1 --optimizer sgd --lr 0.1 --text DIR/verdict_part.txt "
              "--init-from DIR/m.safetensors --save DIR/./m.safetensors", dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    // however it was saved (Hugging Face's GPT-2 here, which no other --save replaces)
    snprintf(path, sizeof path, "%s/g", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    for (int k = 0; k < 2; k++) {
        const char *name = k ? "config.json" : "model.safetensors";
        char fixture[4200], to[300];
        size_t gn = 0;
        snprintf(fixture, sizeof fixture, "%s/fixtures/fake_gpt2/%s", TESTS_SOURCE_DIR, name);
        snprintf(to, sizeof to, "%s/g/%s", dir, name);
        char *gb = file_bytes(fixture, &gn);
        FILE *gf = fopen(to, "wb");
        cr_assert(gb && gf && fwrite(gb, 1, gn, gf) == gn && fclose(gf) == 0, "%s", to);
        free(gb);
    }
    train_run("train --seed 0 --context 8 --batch 2 --steps 1 --optimizer sgd --lr 0.1 --text DIR/verdict_part.txt "
              "--init-from DIR/g/model.safetensors --save DIR/g/model.safetensors", dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    static const char *const made[] = {"s.safetensors", "m.safetensors", "g/model.safetensors", "g/config.json",
                                       "g", "verdict_part.txt", "link.txt", "vocab/encoder.json", "vocab/vocab.bpe",
                                       "vocab", "sub"};
    remove_test_dir(dir, made, sizeof made / sizeof made[0]);
}

/* --save, --state and --log write over a model, a training state and a loss log of the
 * tool's own (a run again), never over a file of another kind: refused before the first
 * step, the file as it was */
Test(cli_train, a_file_of_another_kind_is_not_replaced_by_save_state_or_log, .timeout = 300)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    const char *verdict = data_file_or_skip("the-verdict.txt");
    char dir[] = "/tmp/mygpt_notours_XXXXXX", path[300];
    cr_assert_not_null(mkdtemp(dir));
    write_verdict_part(verdict, dir, 3000);
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    write_file(path, "my notes\n");
    static const refused_run runs[] = {
        {TRAIN_SMALL "--steps 2 --save DIR/notes.txt", "--save", "is not a model mygpt saved"},
        {TRAIN_SMALL "--steps 2 --save DIR/m.safetensors --state DIR/notes.txt", "--state", "is not a training state"},
        {TRAIN_SMALL "--steps 2 --save DIR/m.safetensors --log DIR/notes.txt", "--log", "is not a loss log"},
    };
    static const char *const keep[] = {"notes.txt", "verdict_part.txt"};
    expect_refused_untouched(runs, sizeof runs / sizeof runs[0], dir, data, keep, 2);
    // the tool's own files are replaced by a run again
    proc_result r;
    for (int k = 0; k < 2; k++) {
        train_run(TRAIN_SMALL "--steps 2 --save DIR/m.safetensors --state DIR/s.safetensors --checkpoint-every 1 "
                  "--log DIR/log.csv", dir, data, NULL, &r);
        cr_expect_eq(r.status, 0, "run %d: exit %d: %s", k, r.status, r.err);
        proc_result_free(&r);
    }
    static const char *const made[] = {"notes.txt", "verdict_part.txt", "m.safetensors", "s.safetensors", "log.csv",
                                       "log.svg"};
    remove_test_dir(dir, made, sizeof made / sizeof made[0]);
}

/* Under a file-size limit (ulimit -f, SIGXFSZ left as a shell leaves it) a model's save,
 * a training state's and a figure each fail with status 1 and one line naming the file
 * and the limit; no temporary is left, the old file stays */
Test(cli_train, a_file_size_limit_fails_a_save_with_one_line_and_keeps_the_old_file, .timeout = 300)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    const char *verdict = data_file_or_skip("the-verdict.txt"); // its static buffer: the last call
    char dir[] = "/tmp/mygpt_fsize_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    write_verdict_part(verdict, dir, 3000);
    static const struct {
        const char *words, *file;
    } runs[] = {
        {TRAIN_SMALL "--steps 2 --save DIR/m.safetensors", "m.safetensors"},
        {TRAIN_SMALL "--steps 2 --state DIR/s.safetensors --checkpoint-every 1", "s.safetensors"},
        {"attention --seed 0 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 16 "
         "--ids 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 --svg DIR/a.svg", "a.svg"},
    };
    signal(SIGXFSZ, SIG_DFL); // as a shell starts the tool: the signal's default ends a program
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char path[300], *now;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s", dir, runs[i].file);
        proc_result r;
        train_run(runs[i].words, dir, data, NULL, &r); // the old file: the same run's, unlimited (one of its kind)
        cr_expect_eq(r.status, 0, "%s: exit %d: %s", runs[i].file, r.status, r.err);
        proc_result_free(&r);
        size_t old_len = 0;
        char *old = file_bytes(path, &old_len);
        cr_assert(old && old_len > (16 << 10), "%s: no file, or one within the limit", runs[i].file);
        const int files = entries_in(dir);
        struct rlimit was;
        cr_assert_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
        const struct rlimit limit = {16 << 10, was.rlim_max}; // (the soft limit: raised again after)
        cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0); // inherited by the tool
        train_run(runs[i].words, dir, data, NULL, &r);
        setrlimit(RLIMIT_FSIZE, &was);
        cr_expect_eq(r.status, 1, "%s: exit %d: %s", runs[i].file, r.status, r.err);
        int said = 0; // the lines that say it (a training's progress lines aside)
        for (const char *at = r.err; (at = strstr(at, "cannot write")); at++)
            said++;
        cr_expect(said == 1 && strstr(r.err, path) && strstr(r.err, "File too large (the file-size limit)"), "%s: %s",
                  runs[i].file, r.err);
        cr_expect_eq(entries_in(dir), files, "%s: a temporary was left", runs[i].file);
        now = file_bytes(path, &len);
        cr_expect(now && len == old_len && memcmp(now, old, len) == 0, "%s: replaced", runs[i].file);
        proc_result_free(&r);
        free(now);
        free(old);
        unlink(path);
    }
    char part[300];
    snprintf(part, sizeof part, "%s/verdict_part.txt", dir);
    unlink(part);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* A NaN validation loss is Python's nan on stdout and in the log, and the plot leaves a
 * gap there, never a non-finite coordinate (SGD at lr 1e20: finite weights whose logits
 * overflow). Such a model is not saved: the run stops there with status 1, and the model
 * it started from stays as it was. */
Test(cli_train, a_nan_validation_loss_is_nan_in_the_log_and_a_gap_in_the_plot, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_nanlog_XXXXXX", csv[300], svg[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(csv, sizeof csv, "%s/run.csv", dir);
    snprintf(svg, sizeof svg, "%s/run.svg", dir);
    proc_result r;
    train_run("train --seed 0 --vocab 50257 --embed 8 --heads 2 --layers 1 --text DATA/the-verdict.txt --context 8 "
              "--batch 2 --steps 1 --optimizer sgd --lr 1e-3 --save DIR/m.safetensors", dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    char model[300];
    snprintf(model, sizeof model, "%s/m.safetensors", dir);
    size_t before_len = 0, after_len = 0;
    char *before = file_bytes(model, &before_len);
    cr_assert_not_null(before);
    train_run("train --seed 0 --text DATA/the-verdict.txt --context 8 --batch 2 --steps 1 --optimizer sgd --lr 1e20 "
              "--log DIR/run.csv --init-from DIR/m.safetensors --save DIR/m.safetensors", dir, data, NULL, &r);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    // the progress line of the step, then the stop's one line
    const char *stop = strstr(r.err, "mygpt train: step 0: the training diverged (the validation loss holds nan after "
                                     "the step's update)");
    cr_expect(stop && count_lines(stop) == 1, "%s", r.err);
    cr_expect_str_eq(r.out, "step 0 train_loss 14.736188 val_loss nan\n");
    proc_result_free(&r);
    char *after = file_bytes(model, &after_len);
    cr_expect(after && after_len == before_len && memcmp(after, before, before_len) == 0, "the model was replaced");
    free(before);
    free(after);
    unlink(model);
    size_t n = 0;
    char *text = file_bytes(csv, &n);
    cr_assert_not_null(text);
    cr_expect(n > 40 && strncmp(text, "step,train_loss,val_loss,lr,ms\n0,14.736188,nan,1e+20,", 53) == 0, "%.*s",
              (int)n, text);
    free(text);
    text = file_bytes(svg, &n);
    cr_assert_not_null(text);
    text = realloc(text, n + 1);
    text[n] = '\0';
    cr_expect(strstr(text, "nan") == NULL && strstr(text, "inf") == NULL, "a non-finite coordinate: %s", text);
    cr_expect(strstr(text, "points=\"\"") != NULL, "the validation curve is not an empty line: %s", text);
    free(text);
    unlink(csv);
    unlink(svg);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}
