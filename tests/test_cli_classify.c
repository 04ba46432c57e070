/*
 * test_cli_classify.c - the user's own input: mygpt classify is the book's
 * classify_review (the label and its softmax probability of the last position's logits,
 * the text padded as the classifier was trained) on --text or every line of standard
 * input; and the messages a wrong file gets: a text file given as a model, a file of
 * adapters given as a model, a chat model that answers nothing, finetune's responses that
 * --responses was not given for.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "data.h"
#include "mygpt/checkpoint.h"
#include "mygpt/lora.h"

/* What the library computes for text: classify_review's label and probability with the
 * classifier at path, rows of T tokens */
static void expected_label(const char *path, const char *text, size_t T, int *label, double *p)
{
    mygpt_tokenizer *tok = NULL;
    mygpt_gpt *g = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_tokenizer_load_dir(&tok, data_dir_or_skip(), &err), MYGPT_OK, "%s", err.message);
    cr_assert_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK, "%s", err.message);
    int64_t *ids = NULL, row[512];
    size_t n = 0;
    cr_assert_eq(mygpt_encode(tok, text, strlen(text), &ids, &n, &err), MYGPT_OK);
    cr_assert(T <= 512);
    for (size_t i = 0; i < T; i++) // input_ids[:max_length] + [50256] * (max_length - len)
        row[i] = i < n ? ids[i] : 50256;
    cr_assert_eq(mygpt_gpt_forward(g, row, 1, (int)T, &err), MYGPT_OK, "%s", err.message);
    const float *last = g->acts.logits + (T - 1) * 2;
    *label = last[1] > last[0];
    *p = 1.0 / (1.0 + exp((double)last[1 - *label] - (double)last[*label]));
    free(ids);
    mygpt_gpt_free(g);
    mygpt_tokenizer_free(tok);
}

/* The book's padding: the longest text of its training set */
static size_t book_length(void)
{
    mygpt_tokenizer *tok = NULL;
    mygpt_spam_dataset ds = {0};
    mygpt_error err = {0};
    char path[4200];
    snprintf(path, sizeof path, "%s/sms_spam_train.csv", data_dir_or_skip());
    cr_assert_eq(mygpt_tokenizer_load_dir(&tok, data_dir_or_skip(), &err), MYGPT_OK);
    cr_assert_eq(mygpt_spam_dataset_load(&ds, path, tok, 0, 50256, 2, &err), MYGPT_OK, "%s", err.message);
    const size_t T = ds.max_length;
    mygpt_spam_dataset_free(&ds);
    mygpt_tokenizer_free(tok);
    return T;
}

static const char *const TEXTS[3] = {
    "You are a winner you have been specially selected to receive $1000 cash or a $2000 award.",
    "Hey, just wanted to check if we're still on for dinner tonight? Let me know!",
    "",
};

/* The book's --test_mode classifier, not trained (its answers are its own, as computed),
 * saved as DIR/c.safetensors (its path into model, 300 bytes) in a fresh folder (dir, a
 * mkdtemp template); skipped without the data folder's training set and vocabulary */
static void untrained_classifier(char *dir, char *model)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("sms_spam_train.csv");
    data_file_or_skip("encoder.json");
    cr_assert_not_null(mkdtemp(dir));
    proc_result r;
    run_in_dir("finetune --task classify --preset test --epochs 0 --save DIR/c.safetensors", dir, data, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    proc_result_free(&r);
    snprintf(model, 300, "%s/c.safetensors", dir);
}

/* --text and standard input: one line a text, the label and its probability as the
 * library's forward gives them, with the book's padding or --max-length's */
Test(cli_classify, classify_prints_the_label_and_probability_of_each_text, .timeout = 300)
{
    char dir[] = "/tmp/mygpt-classify-XXXXXX", model[300];
    untrained_classifier(dir, model);
    proc_result r;
    const size_t T = book_length();
    char lines[2000] = "";
    for (int i = 0; i < 3; i++) {
        int label;
        double p;
        expected_label(model, TEXTS[i], T, &label, &p);
        char want[64];
        snprintf(want, sizeof want, "%s\t%.4f\n", label ? "spam" : "not spam", p);
        char *argv[] = {(char *)MYGPT_EXE, "classify", "--checkpoint", model, "--text", (char *)TEXTS[i], NULL};
        cr_assert_eq(run_process(argv, &r), 0);
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect_str_eq(r.out, want, "'%s'", TEXTS[i]);
        cr_expect_str_empty(r.err);
        proc_result_free(&r);
        strcat(lines, want);
    }
    // the same three as lines of standard input (a carriage return before a newline left out)
    char input[600];
    snprintf(input, sizeof input, "%s\r\n%s\n%s\n", TEXTS[0], TEXTS[1], TEXTS[2]);
    char *argv[] = {(char *)MYGPT_EXE, "classify", "--checkpoint", model, NULL};
    cr_assert_eq(run_process_input(argv, input, &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, lines);
    proc_result_free(&r);
    // --max-length: rows of that length
    int label;
    double p;
    expected_label(model, TEXTS[1], 7, &label, &p);
    char want[64];
    snprintf(want, sizeof want, "%s\t%.4f\n", label ? "spam" : "not spam", p);
    char *cut[] = {(char *)MYGPT_EXE, "classify", "--checkpoint", model, "--max-length", "7", "--text",
                   (char *)TEXTS[1], NULL};
    cr_assert_eq(run_process(cut, &r), 0);
    cr_expect_str_eq(r.out, want);
    proc_result_free(&r);
    unlink(model);
    cr_expect_eq(rmdir(dir), 0, "files were left");
}

/* What classify refuses, in one line: no checkpoint, a language model, a checkpoint that
 * is not there, a length past the model's context (16), a classifier whose finite weights
 * compute logits that are not (3e38 in its head: no class to print, as generate refuses
 * such logits); finetune's accuracies refuse that one too */
Test(cli_classify, classify_refuses_what_is_not_a_classifier, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-classify-no-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char lm[300], cls[300];
    snprintf(lm, sizeof lm, "%s/lm.safetensors", dir);
    snprintf(cls, sizeof cls, "%s/cls.safetensors", dir);
    const mygpt_config cfg = {50257, 8, 2, 1, 16}, cls_cfg = {50257, 8, 2, 1, 16, .num_classes = 2};
    save_new_model(lm, &cfg, 1);
    save_new_model(cls, &cls_cfg, 1);
    char huge[300];
    snprintf(huge, sizeof huge, "%s/huge.safetensors", dir);
    mygpt_gpt *g = NULL;
    cr_assert_eq(mygpt_gpt_create(&g, &cls_cfg, 1, NULL), MYGPT_OK);
    for (int i = 0; i < cls_cfg.num_classes * cls_cfg.embed_dim; i++)
        g->params.lmw[i] = 3e38f;
    cr_assert_eq(mygpt_checkpoint_save(g, huge, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    const struct {
        const char *words, *msg;
    } refused[] = {
        {"classify --text hi", "--checkpoint FILE is required"},
        {"classify --checkpoint DIR/lm.safetensors --text hi", "a language model, not a classifier"},
        {"classify --checkpoint DIR/nothing.safetensors --text hi", "nothing.safetensors"},
        {"classify --checkpoint DIR/cls.safetensors --text hi --max-length 17", "--max-length"},
        {"classify --checkpoint DIR/huge.safetensors --text hi", "its weights compute no class"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        proc_result r;
        run_in_dir(refused[i].words, dir, data, &r);
        expect_one_line_refusal(&r, 2, refused[i].msg, refused[i].words);
        proc_result_free(&r);
    }
    proc_result r;
    run_in_dir("finetune --task classify --checkpoint DIR/huge.safetensors --epochs 0 --max-length 16", dir, data, &r);
    cr_expect_eq(r.status, 2, "finetune on huge weights: exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "the model's weights compute no class") && !strstr(r.out, "accuracy"), "%s%s", r.out,
              r.err);
    proc_result_free(&r);
    unlink(lm);
    unlink(cls);
    unlink(huge);
    cr_expect_eq(rmdir(dir), 0, "files were left");
}

/* A text that is not UTF-8 is refused naming where it came from: --text, or the line of
 * standard input (the lines before it classified and printed) */
Test(cli_classify, a_text_that_is_not_utf8_names_its_flag_or_line, .timeout = 120)
{
    char dir[] = "/tmp/mygpt-classify-utf8-XXXXXX", model[300];
    untrained_classifier(dir, model);
    proc_result r;
    char *one[] = {(char *)MYGPT_EXE, "classify", "--checkpoint", model, "--max-length", "8", "--text", "caf\xe9",
                   NULL};
    cr_assert_eq(run_process(one, &r), 0);
    expect_one_line_refusal(&r, 2, "--text: the text is not valid UTF-8 (byte offset 3)", "classify --text");
    proc_result_free(&r);
    // a special token in a text: tokenizer.encode refuses it (the book's classify_review raises)
    char *special[] = {(char *)MYGPT_EXE, "classify", "--checkpoint", model, "--max-length", "8", "--text",
                       "win <|endoftext|> now", NULL};
    cr_assert_eq(run_process(special, &r), 0);
    expect_one_line_refusal(&r, 2, "--text: the text holds <|endoftext|>", "classify --text with a special token");
    proc_result_free(&r);
    char *lines[] = {(char *)MYGPT_EXE, "classify", "--checkpoint", model, "--max-length", "8", NULL};
    cr_assert_eq(run_process_input(lines, "fine\nalso fine\ncaf\xe9\nnever read\n", &r), 0);
    cr_expect_eq(r.status, 2, "exit %d", r.status);
    cr_expect_eq(count_lines(r.out), 2, "%s", r.out);
    cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "standard input line 3: the text is not valid UTF-8 (byte offset 3)") != NULL, "%s",
              r.err);
    proc_result_free(&r);
    unlink(model);
    cr_expect_eq(rmdir(dir), 0, "files were left");
}

/* A text file, or a file of adapters, given where a model goes: one line that says what
 * it is, no C function's name, no header length */
Test(cli_classify, a_file_that_is_no_model_is_named_for_what_it_is, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    char dir[] = "/tmp/mygpt-notmodel-XXXXXX", path[300];
    cr_assert_not_null(mkdtemp(dir));
    proc_result r;
    run_in_dir("generate --checkpoint DATA/the-verdict.txt --ids 1 --max-new 1", dir, data, &r);
    expect_one_line_refusal(&r, 2, "is not a model file (a text file?)", "generate --checkpoint a text");
    cr_expect(strstr(r.err, "header length") == NULL, "%s", r.err);
    proc_result_free(&r);
    // adapters alone
    const mygpt_config cfg = {50257, 8, 2, 1, 16, MYGPT_ARCH_LLMS_FROM_SCRATCH};
    mygpt_gpt *g = NULL;
    mygpt_rng rng;
    mygpt_rng_seed(&rng, 1);
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 1, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_lora_add(g, 2, 2.0, &rng, NULL), MYGPT_OK);
    snprintf(path, sizeof path, "%s/ad.safetensors", dir);
    cr_assert_eq(mygpt_checkpoint_save_adapters(g, path, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    static const char *const readers[] = {"generate --checkpoint DIR/ad.safetensors --ids 1 --max-new 1",
                                          "forward --checkpoint DIR/ad.safetensors --ids 1",
                                          "classify --checkpoint DIR/ad.safetensors --text hi"};
    for (int i = 0; i < 3; i++) {
        run_in_dir(readers[i], dir, data, &r);
        expect_one_line_refusal(&r, 2, "adapters: use --adapters with their base model", readers[i]);
        cr_expect(strstr(r.err, "mygpt_") == NULL, "%s", r.err);
        proc_result_free(&r);
    }
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "files were left");
}

/* A chat model whose every answer is <|endoftext|> at once: the chat says it answered
 * nothing and why that may be, once */
Test(cli_classify, chat_says_why_a_model_answers_nothing, .timeout = 120)
{
    data_dir_or_skip();
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-silent-XXXXXX", path[300];
    cr_assert_not_null(mkdtemp(dir));
    const mygpt_config cfg = {50257, 8, 2, 1, 256}; // room for two turns and their template
    mygpt_gpt *g = NULL;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 1, NULL), MYGPT_OK);
    // the head is the token embedding: the final LayerNorm puts out (1, 0, ...), and only
    // <|endoftext|>'s row has a first coordinate, so every logit but its own is 0
    for (int i = 0; i < cfg.embed_dim; i++) {
        g->params.lnfw[i] = 0.0f;
        g->params.lnfb[i] = i == 0 ? 1.0f : 0.0f;
    }
    for (int v = 0; v < cfg.vocab_size; v++)
        g->params.wte[(size_t)v * cfg.embed_dim] = v == 50256 ? 10.0f : 0.0f;
    snprintf(path, sizeof path, "%s/silent.safetensors", dir);
    cr_assert_eq(mygpt_checkpoint_save(g, path, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    proc_result r;
    char *argv[] = {(char *)MYGPT_EXE, "chat", "--checkpoint", path, "--max-new", "8", NULL};
    cr_assert_eq(run_process_input(argv, "hello\nagain\n", &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "the model answered nothing") && strstr(r.err, "instruction-tuned?"), "%s", r.err);
    proc_result_free(&r);
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "files were left");
}

/* finetune --task instruct without --responses says where the responses went: nowhere,
 * and the flag that writes them */
Test(cli_classify, instruct_without_responses_says_how_to_have_them, .timeout = 600)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("instruction-data.json");
    data_file_or_skip("encoder.json");
    proc_result r;
    cr_assert_eq(run_tool_words("finetune --task instruct --entries 4 --batch 2 --epochs 1 --eval-freq 1 "
                                "--eval-iter 1 --max-new 4", data, &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\nGenerating responses\n") != NULL, "%s", r.out);
    cr_expect(strstr(r.err, "the responses to the 4 test entries were not saved: --responses FILE writes them") != NULL,
              "%s", r.err);
    proc_result_free(&r);
}
