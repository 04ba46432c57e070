/*
 * test_cli_chat.c - mygpt chat: in a pipe each response is generate's tokens on the
 * conversation, cut at the stop rule; a long conversation stays within a small context;
 * in a terminal it prompts, answers and ends at Ctrl-D; bad flags, a failing output and a
 * NUL byte in a line.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "data.h"
#include "golden.h"
#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "mygpt/tokenizer.h"

/* The book's chapter-7 example: the template with its instruction, then the response */
static char *instruct_example(const char *instruction, const char *response)
{
    char *prompt = NULL;
    cr_assert_eq(mygpt_instruct_prompt(&prompt, instruction, NULL, NULL), MYGPT_OK);
    char *ex = malloc(strlen(prompt) + strlen(MYGPT_INSTRUCT_RESPONSE) + strlen(response) + 1);
    cr_assert_not_null(ex);
    strcat(strcat(strcpy(ex, prompt), MYGPT_INSTRUCT_RESPONSE), response);
    free(prompt);
    return ex;
}

/* A model that has seen the template a little (30 steps of `mygpt train --preset tiny`
 * on 120 of its examples, one after another; 15 under the sanitizers, where a step
 * takes a second): greedy, it soon writes a new "###", which the chat's stop rule must
 * catch. Written to DIR/chat.safetensors (path), with a context of CHAT_CONTEXT tokens,
 * room for a few turns. */
#define CHAT_CONTEXT 160
static void train_chat_model(const char *dir, const char *data, char *path, size_t cap)
{
    static const char *const pairs[][2] = {{"Name a color.", "Blue."},
                                           {"Say hello.", "Hello!"},
                                           {"Count to three.", "One, two, three."},
                                           {"Name a fruit.", "An apple."}};
    char text[300], words[1024];
    snprintf(text, sizeof text, "%s/examples.txt", dir);
    FILE *f = fopen(text, "wb");
    cr_assert_not_null(f);
    for (int k = 0; k < 30; k++)
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
            char *ex = instruct_example(pairs[i][0], pairs[i][1]);
            fprintf(f, "%s\n\n", ex);
            free(ex);
        }
    fclose(f);
    snprintf(path, cap, "%s/chat.safetensors", dir);
    snprintf(words, sizeof words, "train --preset tiny --text %s --max-seq %d --steps %d --lr %s --eval-every 30 "
             "--save %s", text, CHAT_CONTEXT, TEST_SANITIZED ? 15 : 30, TEST_SANITIZED ? "3e-2" : "2e-2", path);
    proc_result r;
    cr_assert_eq(run_tool_words(words, data, &r), 0);
    cr_assert_eq(r.status, 0, "mygpt %s: %s", words, r.err);
    proc_result_free(&r);
}

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The stop rule, written here from the command's help: the new tokens' text before its
 * first "###" (*stopped), without the white space around it. Returns how many tokens
 * the chat reads: all, or up to the one that completes that "###". */
static int cut_response(const mygpt_tokenizer *tok, const int64_t *ids, int n, char **kept, int *stopped)
{
    char *text = NULL;
    size_t len = 0;
    int k = 0;
    *stopped = 0;
    while (k < n && !*stopped) {
        free(text);
        k++;
        cr_assert_eq(mygpt_decode(tok, ids, (size_t)k, &text, &len, NULL), MYGPT_OK);
        for (size_t i = 0; i + 3 <= len && !*stopped; i++)
            if (strncmp(text + i, "###", 3) == 0)
                *stopped = 1, len = i;
    }
    size_t a = 0;
    while (a < len && blank(text[a]))
        a++;
    while (len > a && blank(text[len - 1]))
        len--;
    *kept = strndup(text ? text + a : "", len - a);
    free(text);
    return k;
}

/* mygpt generate on text: the new tokens' ids (after n_prompt), as a pipe prints them */
static int generate_new_ids(const char *ckpt, const char *text, const char *sampling, int max_new, int n_prompt,
                            int64_t *ids)
{
    char max[16], *argv[16] = {MYGPT_EXE, "generate", "--checkpoint", (char *)ckpt, "--prompt", (char *)text,
                               "--max-new", max, "--no-stream"};
    int argc = 9;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", sampling);
    for (char *w = strtok(copy, " "); w && argc < 15; w = strtok(NULL, " "))
        argv[argc++] = w;
    argv[argc] = NULL;
    snprintf(max, sizeof max, "%d", max_new);
    proc_result r;
    cr_assert_eq(run_process(argv, &r), 0);
    cr_assert_eq(r.status, 0, "generate: %s", r.err);
    int n = 0;
    for (char *p = r.out; *p && *p != '\n'; n++) {
        long long v = strtoll(p, &p, 10);
        if (n >= n_prompt)
            ids[n - n_prompt] = v;
        while (*p == ' ')
            p++;
    }
    proc_result_free(&r);
    return n - n_prompt;
}

/* What mygpt chat prints for lines, found from mygpt generate on the conversation as
 * the chat's help describes it: each turn the template with the instruction, the
 * response cut at the stop rule, then <|endoftext|>; the oldest turns dropped while the
 * conversation and max_new tokens do not fit in max_seq. What the lines exercised goes
 * to *f. */
typedef struct chat_facts {
    char dropped[300];    /* the note on stderr when turns are first dropped, "" if none are */
    int kept_turns;       /* prompts with an earlier turn before them */
    int for_the_response; /* turns dropped that the prompt alone would not have dropped */
    int stops;            /* responses cut at "###" */
} chat_facts;

static char *expected_chat(const mygpt_tokenizer *tok, const char *ckpt, const char *const *lines, int n_lines,
                           const char *sampling, int max_new, int max_seq, chat_facts *f)
{
    char *turns[16] = {0}, *expected = calloc(1, 1);
    int first = 0, n_turns = 0;
    memset(f, 0, sizeof *f);
    for (int l = 0; l < n_lines; l++) {
        char *prompt = instruct_example(lines[l], ""), *conv = NULL;
        int64_t *ids = NULL;
        size_t n = 0;
        for (;;) {
            size_t len = strlen(prompt) + 1;
            for (int t = first; t < n_turns; t++)
                len += strlen(turns[t]) + strlen("<|endoftext|>");
            conv = realloc(conv, len);
            conv[0] = '\0';
            for (int t = first; t < n_turns; t++)
                strcat(strcat(conv, turns[t]), "<|endoftext|>");
            strcat(conv, prompt);
            free(ids);
            cr_assert_eq(mygpt_encode(tok, conv, strlen(conv), &ids, &n, NULL), MYGPT_OK);
            if ((int)n + max_new <= max_seq || first == n_turns)
                break;
            first++;
            f->for_the_response += (int)n <= max_seq;
        }
        if (first > 0 && !f->dropped[0]) {
            char what[64] = "the oldest turn was dropped";
            if (first > 1)
                snprintf(what, sizeof what, "the %d oldest turns were dropped", first);
            sprintf(f->dropped,
                    "turn %d: the conversation and a response of %d tokens outgrew the model's context of %d: %s",
                    n_turns + 1, max_new, max_seq, what);
        }
        f->kept_turns += first < n_turns;
        int64_t new_ids[1024];
        const int n_new = generate_new_ids(ckpt, conv, l == 0 ? sampling : "", max_new, (int)n, new_ids);
        char *kept;
        int stopped;
        const int k = cut_response(tok, new_ids, n_new, &kept, &stopped);
        f->stops += stopped;
        size_t el = strlen(expected);
        expected = realloc(expected, el + strlen(kept) + 16 * (size_t)(k + 2));
        el += (size_t)sprintf(expected + el, "%s\n", kept);
        for (int i = 0; i < k; i++)
            el += (size_t)sprintf(expected + el, i ? " %lld" : "%lld", (long long)new_ids[i]);
        sprintf(expected + el, "\n");
        turns[n_turns] = malloc(strlen(prompt) + strlen(kept) + 1);
        strcat(strcpy(turns[n_turns++], prompt), kept);
        free(kept);
        free(prompt);
        free(conv);
        free(ids);
    }
    for (int t = 0; t < n_turns; t++)
        free(turns[t]);
    return expected;
}

/* A model of the course's architecture drawn from seed 3, saved at path */
static void random_model(const char *path, int vocab, int max_seq)
{
    const mygpt_config cfg = {.vocab_size = vocab, .embed_dim = 16, .num_heads = 2, .num_layers = 1,
                              .max_seq_len = max_seq};
    save_new_model(path, &cfg, 3);
}

/* In a pipe: each line's response is what mygpt generate continues the conversation
 * with (the same token ids, greedy or sampled), cut at the stop rule; blank lines are
 * skipped; the oldest turns go when the context is full, said once on stderr; end of
 * file ends it with status 0. */
Test(cli_chat, responses_are_generate_cut_at_the_stop_rule, .timeout = 300)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-chat-XXXXXX", ckpt[300], text[300];
    cr_assert_not_null(mkdtemp(dir));
    train_chat_model(dir, data, ckpt, sizeof ckpt);
    mygpt_tokenizer *tok = NULL;
    cr_assert_eq(mygpt_tokenizer_load_dir(&tok, data, NULL), MYGPT_OK);
    static const char *const lines[] = {"Name a color.", "Say hello.", "Count to three.", "Name a fruit.",
                                        "What is 2 + 2?"};
    const int n_lines = TEST_SANITIZED ? 3 : 5;
    // a blank line between, no newline after the last
    const char *input = TEST_SANITIZED
                            ? "Name a color.\nSay hello.\n\n  \nCount to three."
                            : "Name a color.\nSay hello.\n\n  \nCount to three.\nName a fruit.\nWhat is 2 + 2?";
    chat_facts f;
    char *want = expected_chat(tok, ckpt, lines, n_lines, "", 24, CHAT_CONTEXT, &f);
    char *argv[] = {MYGPT_EXE, "chat", "--checkpoint", ckpt, "--max-new", "24", "--print-ids", NULL};
    proc_result r;
    cr_assert_eq(run_process_input(argv, input, &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.out, want, "the chat's responses and ids differ from generate's");
    // what the run exercised: an earlier turn before a prompt, a response cut at "###",
    // and (not under the sanitizers' three lines) a turn dropped to leave room for a response
    cr_expect_gt(f.kept_turns, 0, "no prompt had an earlier turn before it");
    cr_expect_gt(f.stops, 0, "no response met a new \"###\"");
    if (!TEST_SANITIZED) {
        cr_expect_gt(f.for_the_response, 0, "no turn was dropped for the response's room");
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, f.dropped) != NULL, "'%s' lacks '%s'", r.err, f.dropped);
    }
    proc_result_free(&r);
    free(want);
    // sampled: the first response is generate's with --sample-seed S
    want = expected_chat(tok, ckpt, lines, 1, "--temperature 1.5 --top-k 40 --sample-seed 7", 12, CHAT_CONTEXT, &f);
    char *sampled[] = {MYGPT_EXE, "chat", "--checkpoint", ckpt, "--max-new", "12", "--print-ids", "--seed", "7",
                       "--temperature", "1.5", "--top-k", "40", NULL};
    cr_assert_eq(run_process_input(sampled, "Name a color.\n", &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.out, want, "the sampled response differs from generate's");
    proc_result_free(&r);
    free(want);
    // end of file at once: nothing said, status 0
    cr_assert_eq(run_process_input(argv, "", &r), 0);
    cr_expect(r.status == 0 && !r.out[0] && !r.err[0], "exit %d: '%s' '%s'", r.status, r.out, r.err);
    proc_result_free(&r);
    mygpt_tokenizer_free(tok);
    unlink(ckpt);
    snprintf(text, sizeof text, "%s/examples.txt", dir);
    unlink(text);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* A conversation far longer than a small context goes on: the oldest turns dropped, a
 * prompt longer than the context read from its end, each said once. */
Test(cli_chat, a_long_conversation_stays_within_a_small_context, .timeout = 300)
{
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-chat-XXXXXX", ckpt[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(ckpt, sizeof ckpt, "%s/small.safetensors", dir);
    random_model(ckpt, 50257, 32); // the template alone is 38 tokens
    const int turns = TEST_SANITIZED ? 4 : 12;
    char input[4096] = "";
    for (int i = 0; i < turns; i++)
        strcat(input, i % 2 ? "Tell me more.\n" : "Write a haiku about the sea and the long road home.\n");
    char *argv[] = {MYGPT_EXE, "chat", "--checkpoint", ckpt, "--max-new", "6", "--print-ids", NULL};
    proc_result r;
    cr_assert_eq(run_process_input(argv, input, &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_geq(count_lines(r.out), 2 * turns, "%s", r.out); // a response and its ids each turn
    cr_expect_eq(count_lines(r.err), 2, "%s", r.err);
    cr_expect(strstr(r.err, "mygpt chat: the prompt has ") && strstr(r.err, "it reads the last 32\n"), "%s", r.err);
    cr_expect(strstr(r.err, "turn 2: the conversation and a response of 6 tokens outgrew the model's context of 32: "
                         "the oldest turn was dropped, and more will be as it goes on\n"), "%s", r.err);
    proc_result_free(&r);
    unlink(ckpt);
    rmdir(dir);
}

/* Bad flags and files: one line on stderr, nothing on stdout, status 2 */
Test(cli_chat, bad_flags_and_files_are_one_line_and_status_2)
{
    char dir[] = "/tmp/mygpt-chat-XXXXXX", gpt2[300], small[300], classifier[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(gpt2, sizeof gpt2, "%s/gpt2.safetensors", dir);
    snprintf(small, sizeof small, "%s/small.safetensors", dir);
    snprintf(classifier, sizeof classifier, "%s/classifier.safetensors", dir);
    random_model(gpt2, 50257, 64);
    random_model(small, 4, 8);
    const mygpt_config two = {.vocab_size = 50257, .embed_dim = 8, .num_heads = 2, .num_layers = 1, .max_seq_len = 8,
                              .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH, .num_classes = 2}; // the book's chapter 6
    save_new_model(classifier, &two, 3);
    const struct { const char *fmt, *msg; } cases[] = {
        {"chat%.0s", "mygpt chat: --checkpoint FILE is required"},
        {"chat --checkpoint /nonexistent.safetensors%.0s", "cannot open /nonexistent.safetensors"},
        {"chat --checkpoint %s --max-new 0", "--max-new"},
        {"chat --checkpoint %s --temperature -1", "--temperature must be at least 0"},
        {"chat --checkpoint %s --top-p 1.5", "--top-p must be in (0, 1]"},
        {"chat --checkpoint %s --top-k 0", "--top-k"},
        {"chat --checkpoint %s --seed abc", "--seed: 'abc' is not an integer"},
        {"chat --checkpoint %s --temprature 1", "did you mean '--temperature'?"},
        {"chat --checkpoint %s --system", "needs a value"},
        {"chat --checkpoint %s --weights int4", "--weights: unknown weight format 'int4'"},
        {"chat --checkpoint %s", "a classifier (a head of 2 classes)"},
        {"chat --checkpoint %s", "a vocabulary of 4 tokens, not GPT-2's 50257"},
        {"chat --checkpoint %s", "encoder.json"}, // the data folder without the vocabulary
    };
    char words[600];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int last = i + 1 == sizeof cases / sizeof cases[0];
        const size_t n = sizeof cases / sizeof cases[0];
        snprintf(words, sizeof words, cases[i].fmt, i + 3 == n ? classifier : i + 2 == n ? small : gpt2);
        if (last)
            setenv("MYGPT_DATA", dir, 1);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        cr_expect_eq(r.status, 2, "mygpt %s: exit %d (%s)", words, r.status, r.err);
        cr_expect_str_empty(r.out, "mygpt %s: %s", words, r.out);
        cr_expect_eq(count_lines(r.err), 1, "mygpt %s: %s", words, r.err);
        cr_expect(strstr(r.err, cases[i].msg) != NULL, "mygpt %s: '%s' lacks '%s'", words, r.err, cases[i].msg);
        proc_result_free(&r);
    }
    unsetenv("MYGPT_DATA");
    unlink(gpt2);
    unlink(small);
    unlink(classifier);
    rmdir(dir);
}

/* A standard output that takes nothing (/dev/full) stops the chat at its first response,
 * with one line and status 1: the second line's turn, which would say on stderr that the
 * oldest turn was dropped, never comes. */
Test(cli_chat, a_failing_output_stops_the_chat_at_the_first_response, .timeout = 120)
{
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-chat-XXXXXX", ckpt[300], in[300], script[1200];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(ckpt, sizeof ckpt, "%s/m.safetensors", dir);
    snprintf(in, sizeof in, "%s/lines.txt", dir);
    random_model(ckpt, 50257, 64); // one turn and a response fit; two do not
    FILE *f = fopen(in, "wb");
    cr_assert_not_null(f);
    fputs("Name a color.\nSay hello.\nCount to three.\n", f);
    cr_assert_eq(fclose(f), 0);
    proc_result r;
    // into a pipe, the second turn drops the first, saying so
    snprintf(script, sizeof script, "exec '%s' chat --checkpoint '%s' --max-new 6 < '%s'", MYGPT_EXE, ckpt, in);
    run_shell(script, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(count_lines(r.out), 3, "%s", r.out);
    cr_assert(strstr(r.err, "turn 2: ") != NULL, "%s", r.err);
    proc_result_free(&r);
    // onto /dev/full, it stops at the first response
    snprintf(script, sizeof script, "exec '%s' chat --checkpoint '%s' --max-new 6 < '%s' > /dev/full", MYGPT_EXE,
             ckpt, in);
    run_shell(script, &r);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.err, "mygpt chat: error writing output\n");
    proc_result_free(&r);
    unlink(ckpt);
    unlink(in);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* A NUL byte inside a line is text, as tiktoken encodes it (byte 0 is GPT-2's token 188):
 * the prompt the chat reads is the template around the whole line, encoded with its
 * length; its count is in the crop note (a context of 32 tokens) and the response is
 * generate's on those ids. */
Test(cli_chat, a_nul_byte_in_a_line_is_tokenized_with_the_rest_of_it, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-chat-XXXXXX", ckpt[300], script[1200];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(ckpt, sizeof ckpt, "%s/m.safetensors", dir);
    random_model(ckpt, 50257, 32);
    static const char line[] = "Say\0 hello to the sea and the long road home.";
    // format_input's template around the line's bytes, then the response's header
    char *head = NULL, prompt[512];
    cr_assert_eq(mygpt_instruct_prompt(&head, "", NULL, NULL), MYGPT_OK);
    size_t len = strlen(head);
    memcpy(prompt, head, len);
    memcpy(prompt + len, line, sizeof line - 1);
    len += sizeof line - 1;
    memcpy(prompt + len, MYGPT_INSTRUCT_RESPONSE, strlen(MYGPT_INSTRUCT_RESPONSE));
    len += strlen(MYGPT_INSTRUCT_RESPONSE);
    free(head);
    mygpt_tokenizer *tok = NULL;
    cr_assert_eq(mygpt_tokenizer_load_dir(&tok, data, NULL), MYGPT_OK);
    int64_t *ids = NULL, *cut = NULL;
    size_t n = 0, n_cut = 0;
    cr_assert_eq(mygpt_encode(tok, prompt, len, &ids, &n, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_encode(tok, prompt, strlen(prompt), &cut, &n_cut, NULL), MYGPT_OK);
    cr_assert_neq(n, n_cut, "the test's line tells nothing");
    mygpt_tokenizer_free(tok);
    char want_note[128], words[8192];
    snprintf(want_note, sizeof want_note, "mygpt chat: the prompt has %zu tokens, more than the model's context: it "
             "reads the last 32\n", n);
    int at = snprintf(words, sizeof words, "generate --checkpoint %s --max-new 6 --no-stream --ids ", ckpt);
    for (size_t i = 0; i < n; i++)
        at += snprintf(words + at, sizeof words - (size_t)at, i ? ",%lld" : "%lld", (long long)ids[i]);
    free(ids);
    free(cut);
    proc_result r, gen;
    cr_assert_eq(run_words(MYGPT_EXE, words, &gen), 0);
    cr_assert_eq(gen.status, 0, "%s", gen.err);
    snprintf(script, sizeof script, "printf 'Say\\0 hello to the sea and the long road home.\\n' | exec '%s' chat "
             "--checkpoint '%s' --max-new 6 --print-ids", MYGPT_EXE, ckpt);
    run_shell(script, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.err, want_note);
    // the response's ids (the chat's last line) begin generate's new ones (its first line, after n)
    const char *want = gen.out;
    for (size_t i = 0; i < n && want; i++)
        want = strchr(want, ' ') ? strchr(want, ' ') + 1 : NULL;
    cr_assert_not_null(want, "%s", gen.out);
    const size_t lo = strlen(r.out);
    cr_assert(lo > 1 && r.out[lo - 1] == '\n', "%s", r.out);
    r.out[lo - 1] = '\0';
    const char *got = strrchr(r.out, '\n') ? strrchr(r.out, '\n') + 1 : r.out;
    cr_expect(got[0] && strncmp(want, got, strlen(got)) == 0 && strchr(" \n", want[strlen(got)]),
              "chat's ids '%s', generate's '%s'", got, want);
    proc_result_free(&r);
    proc_result_free(&gen);
    unlink(ckpt);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* The whole path of a program on PATH, or NULL */
static const char *on_path(const char *name)
{
    static char path[4096];
    const char *p = getenv("PATH");
    while (p && *p) {
        const char *colon = strchr(p, ':');
        const int n = colon ? (int)(colon - p) : (int)strlen(p);
        snprintf(path, sizeof path, "%.*s/%s", n, p, name);
        if (access(path, X_OK) == 0)
            return path;
        p = colon ? colon + 1 : NULL;
    }
    return NULL;
}

/* In a terminal (a pty that util-linux's `script` makes), as a person uses it: a "> "
 * prompt, the line typed, the response the pipe gives for it, the prompt again, then
 * Ctrl-D ends it with status 0. */
Test(cli_chat, in_a_terminal_it_prompts_answers_and_ends_at_ctrl_d, .timeout = 120)
{
    data_file_or_skip("encoder.json");
    const char *script = on_path("script");
    if (!script)
        skip_or_fail_missing("util-linux's script is not installed: no terminal to test in");
    char dir[] = "/tmp/mygpt-chat-XXXXXX", ckpt[300], command[600];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(ckpt, sizeof ckpt, "%s/m.safetensors", dir);
    random_model(ckpt, 50257, 96);
    // the response in a pipe, for the same line
    char *pipe_argv[] = {MYGPT_EXE, "chat", "--checkpoint", ckpt, "--max-new", "8", NULL};
    proc_result r;
    cr_assert_eq(run_process_input(pipe_argv, "Name a color.\n", &r), 0);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char want[4096] = "> Name a color.\r\n", *w = want + strlen(want);
    for (const char *c = r.out; *c && w < want + sizeof want - 8; c++) // the terminal's \n is \r\n
        w += *c == '\n' ? sprintf(w, "\r\n") : sprintf(w, "%c", *c);
    strcpy(w, "> ");
    proc_result_free(&r);
    snprintf(command, sizeof command, "%s chat --checkpoint %s --max-new 8", MYGPT_EXE, ckpt);
    char *argv[] = {(char *)script, "-qefc", command, "/dev/null", NULL};
    proc_session s;
    cr_assert_eq(session_start(argv, &s), 0);
    cr_expect(session_wait_for(&s, "> ", 1, 30), "no prompt: '%s'", s.text);
    cr_expect(strstr(s.text, "Ctrl-D ends") != NULL, "no word on how to end: '%s'", s.text);
    session_send(&s, "Name a color.\n");
    cr_expect(session_wait_for(&s, "> ", 2, 30), "no second prompt: '%s'", s.text);
    cr_expect(strstr(s.text, want) != NULL, "'%s' lacks '%s'", s.text, want);
    session_send(&s, "\004"); // Ctrl-D
    const int status = session_end(&s, 30);
    cr_expect_eq(status, 0, "exit %d: '%s'", status, s.text);
    const size_t len = strlen(s.text);
    cr_expect(len >= 4 && strcmp(s.text + len - 4, "> \r\n") == 0, "Ctrl-D did not end the line: '%s'", s.text);
    session_free(&s);
    unlink(ckpt);
    rmdir(dir);
}
