/*
 * test_cli_nanogpt.c - `mygpt train --preset shakespeare-char` against nanoGPT's own
 * train.py (tests/golden/nanogpt/short.txt and dropout.txt, made by tools/reference_nanogpt.py under
 * PyTorch 1.13 with --dtype=float32), then `mygpt generate --chars` on the model it saves,
 * and the refusals of a vocabulary that is not the text's.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "data.h"
#include "golden.h"

/* Runs `mygpt train WORDS` and expects, line for line, the first LINES lines train.py
 * printed in the golden file GOLDEN (an iter line up to its loss: its time is the
 * machine's), and no more */
static void expect_train_py_lines(const char *words, const char *golden, int lines_wanted)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("tinyshakespeare.txt");
    proc_result r = {0};
    cr_assert_eq(run_tool_words(words, data, &r), 0);
    cr_assert_eq(r.status, 0, "mygpt train: exit %d: %s", r.status, r.err);
    golden_reader g;
    cr_assert_eq(golden_reader_open(&g, golden), 0, "tests/golden/%s is missing", golden);
    char *next = r.out, *want;
    int lines = 0;
    while (lines < lines_wanted && (want = golden_read(&g))) {
        char *nl = strchr(next, '\n');
        cr_assert_not_null(nl, "mygpt printed fewer lines than train.py: missing '%s'", want);
        *nl = '\0';
        char *time = strstr(next, ", time ");
        if (strncmp(next, "iter ", 5) == 0 && time)
            *time = '\0';
        cr_expect_str_eq(next, want, "%s: golden line %ld", golden, g.lineno);
        next = nl + 1;
        lines++;
    }
    golden_reader_close(&g);
    cr_expect_eq(lines, lines_wanted, "%s: %d lines, not %d", golden, lines, lines_wanted);
    cr_expect_str_empty(next, "mygpt printed more lines than train.py: '%s'", next);
    proc_result_free(&r);
}

/* The first 30 iterations of the README's CPU run, an evaluation every 10 (its
 * eval_iters 20): every line train.py prints, the same. Under the sanitizers the first 10,
 * whose lines begin the same golden */
Test(cli_nanogpt, the_first_30_iterations_print_train_py_lines, .timeout = 600)
{
    if (TEST_SANITIZED)
        expect_train_py_lines("train --preset shakespeare-char --text DATA/tinyshakespeare.txt --steps 10 "
                              "--eval-every 10", "nanogpt/short.txt", 13); // 2 evaluations, 11 iterations
    else
        expect_train_py_lines("train --preset shakespeare-char --text DATA/tinyshakespeare.txt --steps 30 "
                              "--eval-every 10", "nanogpt/short.txt", 35); // 4 evaluations, 31 iterations
}

/* With --dropout 0.2 (train.py's --dropout=0.2): its masks are train.py's, so are its lines
 * (tests/golden/nanogpt/dropout.txt: tools/reference_nanogpt.py -- --max_iters=10
 * --eval_interval=5 --dropout=0.2) */
Test(cli_nanogpt, dropout_draws_train_py_masks, .timeout = 600)
{
    expect_train_py_lines("train --preset shakespeare-char --text DATA/tinyshakespeare.txt --steps 10 "
                          "--eval-every 5 --dropout 0.2", "nanogpt/dropout.txt", 14); // 3 evaluations, 11 iterations
}

/* A model saved after a step writes sample.py's way: the prompt "\n", then characters of
 * the text, the same twice from the same seed */
Test(cli_nanogpt, generate_writes_the_texts_characters, .timeout = 300)
{
    const char *text = data_file_or_skip("tinyshakespeare.txt");
    char dir[] = "/tmp/mygpt_nanogpt_XXXXXX", model[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(model, sizeof model, "%s/m.safetensors", dir);
    char *train[] = {(char *)MYGPT_EXE, "train", "--preset", "shakespeare-char", "--text", (char *)text, "--steps",
                     "1", "--eval-every", "1", "--eval-batches", "1", "--save", model, NULL};
    proc_result r = {0}, again = {0};
    cr_assert_eq(run_process(train, &r), 0);
    cr_assert_eq(r.status, 0, "mygpt train: exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    char *gen[] = {(char *)MYGPT_EXE, "generate", "--checkpoint", model, "--chars", (char *)text, "--prompt", "\n",
                   "--max-new", "40", "--seed", "1337", "--temperature", "0.8", "--top-k", "200", "--no-stream",
                   NULL};
    cr_assert_eq(run_process(gen, &r), 0);
    cr_assert_eq(r.status, 0, "mygpt generate: exit %d: %s", r.status, r.err);
    cr_expect_eq(strlen(r.out), 42, "the prompt, 40 characters and a newline: '%s'", r.out);
    cr_expect_eq(r.out[0], '\n');
    for (const char *c = r.out; *c; c++)
        cr_expect(*c == '\n' || (*c >= ' ' && *c <= 'z'), "not one of Tiny Shakespeare's characters: %d", *c);
    cr_assert_eq(run_process(gen, &again), 0);
    cr_expect_str_eq(again.out, r.out);
    proc_result_free(&r);
    proc_result_free(&again);
    const char *names[] = {"m.safetensors"};
    remove_test_dir(dir, names, 1);
}

/* The vocabulary is the text's characters: a --vocab or a --chars file of another size
 * is refused in one line */
Test(cli_nanogpt, a_vocabulary_not_the_texts_is_refused, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("tinyshakespeare.txt");
    data_file_or_skip("the-verdict.txt");
    proc_result r = {0};
    cr_assert_eq(run_tool_words("train --preset shakespeare-char --text DATA/tinyshakespeare.txt --vocab 64 "
                                "--steps 1", data, &r), 0);
    expect_one_line_refusal(&r, 2, "the model's vocabulary is 64 (--vocab, or the preset's), but --text", "train");
    proc_result_free(&r);
    char dir[] = "/tmp/mygpt_nanogpt_XXXXXX", words[1024];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(words, sizeof words, "train --preset shakespeare-char --text DATA/tinyshakespeare.txt --steps 1 "
             "--eval-every 1 --eval-batches 1 --save %s/m.safetensors", dir);
    cr_assert_eq(run_tool_words(words, data, &r), 0);
    cr_assert_eq(r.status, 0, "mygpt train: exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    snprintf(words, sizeof words, "generate --checkpoint %s/m.safetensors --chars DATA/the-verdict.txt --prompt A "
             "--max-new 1", dir);
    cr_assert_eq(run_tool_words(words, data, &r), 0);
    expect_one_line_refusal(&r, 2, "distinct characters, but the model's vocabulary has 65", "generate");
    proc_result_free(&r);
    const char *names[] = {"m.safetensors"};
    remove_test_dir(dir, names, 1);
}
