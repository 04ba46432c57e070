/*
 * test_cli_model.c - the tool's commands that compute: the invocations of
 * tests/golden/cli.txt (randn, rand, randint, randperm, init, params, forward) print exactly what the same Python
 * prints; attention and generate on a model (a prompt longer than its context, weights
 * that overflow, figures of any text, streamed text); quantize.
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
#include "mygpt/print.h"

Test(cli_model, invocations_print_what_pytorch_prints)
{
    golden_reader g = golden_reader_must_open("cli.txt");
    int cases = 0;
    for (char *line; (line = golden_read(&g));) {
        char *w[2];
        cr_assert_eq(golden_split(line, '\t', w, 2), 2);
        golden_unescape(w[1]);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, w[0], &r), 0);
        cr_expect_eq(r.status, 0, "mygpt %s: exit %d, stderr: %s", w[0], r.status, r.err);
        cr_expect_str_eq(r.out, w[1], "mygpt %s", w[0]);
        cr_expect_str_empty(r.err, "mygpt %s", w[0]);
        proc_result_free(&r);
        cases++;
    }
    cr_expect_gt(cases, 25);
    golden_reader_close(&g);
}

/* One rule for an input longer than the model's context, in generate and in attention:
 * the last max_seq_len tokens are read (the tutorial's idx[:, -block_size:]), and one
 * line on stderr says so; the output is that of the last tokens alone. */
Test(cli_model, a_too_long_input_is_cropped_with_a_note_in_generate_and_attention)
{
    const char *model = "--seed 0 --vocab 10 --embed 4 --heads 2 --layers 1 --max-seq 4";
    const char *note = "more than the model's context: it reads the last 4\n";
    char words[512];
    proc_result r, last;
    snprintf(words, sizeof words, "generate %s --ids 1,2,3,4,5,6 --max-new 2", model);
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 0, "%s: %s", words, r.err);
    cr_expect(strstr(r.err, "mygpt generate: the prompt has 6 tokens, ") != NULL && strstr(r.err, note) != NULL,
              "no note: %s", r.err);
    cr_expect(strncmp(r.out, "1 2 3 4 5 6 ", 12) == 0, "the ids line lost the prompt: %s", r.out);
    proc_result_free(&r);
    snprintf(words, sizeof words, "attention %s --ids 1,2,3,4,5,6", model);
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 0, "%s: %s", words, r.err);
    cr_expect(strstr(r.err, "mygpt attention: the input has 6 tokens, ") != NULL && strstr(r.err, note) != NULL,
              "no note: %s", r.err);
    cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
    snprintf(words, sizeof words, "attention %s --ids 3,4,5,6", model);
    cr_assert_eq(run_words(MYGPT_EXE, words, &last), 0);
    cr_expect_str_eq(r.out, last.out, "attention of 1..6 is not that of its last 4 tokens");
    cr_expect_str_empty(last.err, "an input that fits got a note: %s", last.err);
    proc_result_free(&r);
    proc_result_free(&last);
}

/* Every head's map says which axis is which: the rows are the queries (the token
 * attending, its title written upwards beside them), the columns the keys (the token
 * attended to, under them). */
Test(cli_model, attention_maps_title_the_query_and_the_key_axes)
{
    char dir[] = "/tmp/mygpt_axes_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char svg[300], words[600];
    snprintf(svg, sizeof svg, "%s/att.svg", dir);
    snprintf(words, sizeof words,
             "attention --seed 0 --vocab 10 --embed 4 --heads 2 --layers 3 --ids 1,2,3 --svg %s", svg);
    proc_result r;
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    char *text;
    size_t len;
    cr_assert_eq(mygpt_read_file(svg, &text, &len, NULL), MYGPT_OK);
    int queries = 0, keys = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, ">query: the token attending</text>")) {
            queries++;
            cr_expect(strstr(line, "rotate(-90") != NULL, "the query title is not upright beside the rows: %s", line);
        }
        if (strstr(line, ">key: the token attended to</text>")) {
            keys++;
            cr_expect(strstr(line, "rotate(") == NULL, "the key title is not under the columns: %s", line);
        }
    }
    cr_expect_eq(queries, 6, "%d query titles for 3 layers x 2 heads", queries);
    cr_expect_eq(keys, 6, "%d key titles for 3 layers x 2 heads", keys);
    free(text);
    unlink(svg);
    rmdir(dir);
}

/* An --svg path that cannot take the figure (a missing folder, a folder, a link, empty) or
 * holds a file that is no figure of mygpt's is refused naming --svg before any work:
 * nothing printed, status 2, the link's target and the file kept */
Test(cli_model, an_svg_path_that_cannot_be_written_is_refused_before_the_heads_are_printed)
{
    char dir[] = "/tmp/mygpt_svgpath_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char target[100], link[100], paths[5][100], words[600];
    snprintf(target, sizeof target, "%s/mine.txt", dir);
    write_file(target, "mine");
    snprintf(link, sizeof link, "%s/link.svg", dir);
    cr_assert_eq(symlink(target, link), 0);
    snprintf(paths[0], sizeof paths[0], "%s/missing/att.svg", dir);
    snprintf(paths[1], sizeof paths[1], "%s", dir);
    snprintf(paths[2], sizeof paths[2], "%s", link);
    snprintf(paths[3], sizeof paths[3], "--svg=");
    snprintf(paths[4], sizeof paths[4], "%s", target);
    for (int k = 0; k < 5; k++) {
        snprintf(words, sizeof words, "attention --seed 0 --vocab 10 --embed 4 --heads 2 --layers 1 --ids 1,2,3 %s%s",
                 k == 3 ? "" : "--svg ", paths[k]);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        expect_one_line_refusal(&r, 2, "--svg: ", words);
        proc_result_free(&r);
    }
    expect_file_holds(target, "mine", "attention --svg LINK");
    unlink(link);
    unlink(target);
    cr_expect_eq(rmdir(dir), 0);
}

/* A --temperature so small that the finite logits over it are not (1e-45, a float32
 * subnormal; 1e-300, 0 in float32) leaves softmax no distribution: PyTorch's error, in one
 * line that names --temperature as the cause, status 2 */
Test(cli_model, a_temperature_that_leaves_no_distribution_is_named)
{
    static const char *const temps[] = {"1e-45", "1e-300"};
    for (int k = 0; k < 2; k++) {
        char words[300], want[100];
        snprintf(words, sizeof words, "generate --seed 0 --vocab 10 --embed 4 --heads 2 --layers 1 --ids 1,2 "
                 "--max-new 2 --no-stream --temperature %s", temps[k]);
        snprintf(want, sizeof want, "--temperature %s: the logits divided by it", temps[k]);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        expect_one_line_refusal(&r, 2, want, words);
        cr_expect(strstr(r.err, "probability tensor contains either `inf`, `nan` or element < 0") != NULL, "%s",
                  r.err);
        proc_result_free(&r);
    }
}

/* A model of finite but huge weights (1e30: scores that overflow) has NaN attention rows:
 * mygpt attention prints them as Python prints them, "nan", never printf's "-nan"; its
 * logits are no distribution, and generate says so instead of printing token 0 */
Test(cli_model, a_model_of_huge_weights_prints_nan_attention_and_generates_nothing)
{
    char dir[] = "/tmp/mygpt_attnan_XXXXXX", path[300], words[600];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/huge.safetensors", dir);
    const mygpt_config cfg = {.vocab_size = 10, .embed_dim = 4, .num_heads = 2, .num_layers = 1, .max_seq_len = 8};
    mygpt_gpt *g = NULL;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, NULL), MYGPT_OK);
    for (size_t i = 0; i < g->num_parameters; i++)
        g->params_memory[i] = i % 2 ? 1e30f : -1e30f;
    cr_assert_eq(mygpt_checkpoint_save(g, path, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    snprintf(words, sizeof words, "attention --checkpoint %s --ids 1,2,3", path);
    proc_result r;
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, " nan") != NULL && strstr(r.out, "-nan") == NULL, "%s", r.out);
    proc_result_free(&r);
    // and generate samples from no such logits, greedy or not: one line, nothing printed
    for (int greedy = 0; greedy < 2; greedy++) {
        snprintf(words, sizeof words, "generate --checkpoint %s --ids 1,2,3 --max-new 2%s", path,
                 greedy ? " --temperature 0" : "");
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, "weights compute no distribution to sample from"), "%s",
                  r.err);
        cr_expect_str_empty(r.out, "%s", r.out);
        proc_result_free(&r);
    }
    unlink(path);
    rmdir(dir);
}

/* An attention figure of a prompt with an emoji, CJK (tokens that split a character),
 * control bytes and markup is text an XML parser accepts: valid UTF-8, no control
 * character but the newlines, no raw & (which xml.dom.minidom refuses). */
Test(cli_model, attention_figures_of_any_prompt_are_valid_xml_text, .timeout = 60)
{
    (void)data_dir_or_skip(); // the program finds the data folder itself
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_svg_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char svg[300];
    snprintf(svg, sizeof svg, "%s/att.svg", dir);
    char *argv[] = {(char *)MYGPT_EXE, "attention", "--seed", "1", "--vocab", "50257", "--embed", "16", "--heads", "2",
                    "--layers", "1", "--max-seq", "32", "--prompt",
                    "Hi \xf0\x9f\x98\x80 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \x01\x1b & <b>", "--svg", svg, NULL};
    proc_result r = {0};
    cr_assert_eq(run_process(argv, &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    for (const char *c = r.out; *c; c++)
        cr_expect((unsigned char)*c >= 0x20 || *c == '\n', "a control byte 0x%02x reached the terminal", *c);
    proc_result_free(&r);
    char *text;
    size_t len;
    cr_assert_eq(mygpt_read_file(svg, &text, &len, NULL), MYGPT_OK);
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        const int l = mygpt_utf8_decode(text + i, len - i, &cp);
        cr_assert_gt(l, 0, "invalid UTF-8 at byte %zu of the figure", i);
        cr_assert(cp >= 0x20 || cp == '\n', "control U+%04X at byte %zu of the figure", cp, i);
        if (cp == '&')
            cr_assert(strncmp(text + i, "&lt;", 4) == 0 || strncmp(text + i, "&gt;", 4) == 0 ||
                          strncmp(text + i, "&amp;", 5) == 0,
                      "a raw & at byte %zu", i);
        i += (size_t)l;
    }
    free(text);
    unlink(svg);
    rmdir(dir);
}

/* Streaming shows the same tokens as the ids line: the text streamed is the decoded
 * ids, and --print-ids gives the line --no-stream prints first. */
Test(cli_model, streamed_text_is_the_generated_ids, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    const char *model = "generate --seed 3 --vocab 50257 --embed 16 --heads 2 --layers 2 --max-seq 32 "
                        "--prompt Every_effort_moves_you --max-new 12 --temperature 0.8 --sample-seed 5";
    char words[512];
    proc_result plain = {0}, streamed = {0}, dec = {0};
    snprintf(words, sizeof words, "%s --no-stream", model);
    cr_assert_eq(run_tool_words(words, data, &plain), 0);
    snprintf(words, sizeof words, "%s --stream --print-ids", model);
    cr_assert_eq(run_tool_words(words, data, &streamed), 0);
    cr_assert_eq(plain.status, 0, "%s", plain.err);
    cr_assert_eq(streamed.status, 0, "%s", streamed.err);
    // plain: ids, then the text; streamed: the text, then the ids
    char *ids_end = strchr(plain.out, '\n');
    cr_assert_not_null(ids_end);
    const size_t ids_len = (size_t)(ids_end - plain.out) + 1;
    const size_t text_len = strlen(plain.out) - ids_len;
    cr_assert_eq(strlen(streamed.out), text_len + ids_len, "streamed: '%s'", streamed.out);
    cr_expect(memcmp(streamed.out, plain.out + ids_len, text_len) == 0, "the streamed text differs: '%s' vs '%s'",
              streamed.out, plain.out + ids_len);
    cr_expect(memcmp(streamed.out + text_len, plain.out, ids_len) == 0, "the ids line differs");
    // and the ids decode to that text
    char ids[8192];
    snprintf(ids, sizeof ids, "decode --vocab-dir %.4000s %.*s", data, (int)(ids_len - 1), plain.out);
    cr_assert_eq(run_words(MYGPT_EXE, ids, &dec), 0);
    cr_expect_eq(strncmp(dec.out, streamed.out, strlen(dec.out)), 0, "decoded '%s' vs streamed '%s'", dec.out,
                 streamed.out);
    proc_result_free(&plain);
    proc_result_free(&streamed);
    proc_result_free(&dec);
}

/* A streamed generation onto a standard output that takes nothing (/dev/full) stops at
 * its first token: one line and status 1, no count of the tokens of a whole generation
 * after it. */
Test(cli_model, a_stream_onto_a_failing_output_stops_at_the_first_token, .timeout = 120)
{
    data_file_or_skip("encoder.json");
    char script[1200];
    snprintf(script, sizeof script, "exec '%s' generate --seed 3 --vocab 50257 --embed 16 --heads 2 --layers 2 "
             "--max-seq 32 --prompt 'Every effort moves you' --max-new 40 --eos -1 --stream > /dev/full", MYGPT_EXE);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    proc_result r = {0};
    cr_assert_eq(run_process(argv, &r), 0);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.err, "mygpt generate: error writing output\n");
    proc_result_free(&r);
    // not streamed: the same one line, and no rate of tokens after it
    snprintf(script, sizeof script, "exec '%s' generate --seed 3 --vocab 5 --embed 4 --heads 2 --layers 1 --ids 0 "
             "--max-new 3 > /dev/full", MYGPT_EXE);
    cr_assert_eq(run_process(argv, &r), 0);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.err, "mygpt generate: error writing output\n");
    proc_result_free(&r);
}

/* mygpt quantize writes a file that generates the tokens of --weights on the float32
 * one (the quantized model is the float32 model of its dequantized weights), never
 * writes over the file it reads, and over another file only with --force */
Test(cli_model, quantize_writes_a_checkpoint_that_generates_as_weights_does, .timeout = 120)
{
    char dir[] = "/tmp/mygpt_cliq_XXXXXX", path[128], words[2400], src[1024];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(src, sizeof src, "%s/gpt2_hf.safetensors", golden_dir());
    for (int k = 0; k < 2; k++) {
        const char *w = k ? "int8" : "bf16";
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, w);
        proc_result q, a, b;
        snprintf(words, sizeof words, "quantize %s %s --weights %s", src, path, w);
        cr_assert_eq(run_words(MYGPT_EXE, words, &q), 0);
        cr_expect_eq(q.status, 0, "%s: %s", words, q.err);
        cr_expect(strstr(q.out, "MB of weights read per token") != NULL, "%s", q.out);
        snprintf(words, sizeof words, "generate --checkpoint %s --ids 1,2,3 --max-new 6 --no-stream", path);
        cr_assert_eq(run_words(MYGPT_EXE, words, &a), 0);
        snprintf(words, sizeof words, "generate --checkpoint %s --ids 1,2,3 --max-new 6 --no-stream --weights %s", src, w);
        cr_assert_eq(run_words(MYGPT_EXE, words, &b), 0);
        cr_expect_eq(a.status, 0, "%s", a.err);
        cr_expect_eq(b.status, 0, "%s", b.err);
        cr_expect(strncmp(a.out, "1 2 3 ", 6) == 0, "the ids line, prompt first: %s", a.out);
        cr_expect_str_eq(a.out, b.out);
        snprintf(words, sizeof words, "generate --checkpoint %s --ids 1,2,3 --max-new 6 --no-stream --weights fp32", path);
        proc_result c;
        cr_assert_eq(run_words(MYGPT_EXE, words, &c), 0);
        cr_expect_str_eq(c.out, a.out, "the dequantized weights in float32 give the same tokens");
        proc_result_free(&q), proc_result_free(&a), proc_result_free(&b), proc_result_free(&c);
        snprintf(words, sizeof words, "quantize %s %s --weights int8", path, path);
        cr_assert_eq(run_words(MYGPT_EXE, words, &q), 0);
        cr_expect_eq(q.status, 2);
        cr_expect(strstr(q.err, "is the file IN reads") != NULL, "%s", q.err);
        proc_result_free(&q);
        // a file there already is replaced only with --force
        snprintf(words, sizeof words, "quantize %s %s --weights %s", src, path, w);
        cr_assert_eq(run_words(MYGPT_EXE, words, &q), 0);
        cr_expect_eq(q.status, 2, "%s", q.err);
        cr_expect(strstr(q.err, "is there already: not replaced (--force replaces it)") != NULL, "%s", q.err);
        proc_result_free(&q);
        snprintf(words, sizeof words, "quantize %s %s --weights %s --force", src, path, w);
        cr_assert_eq(run_words(MYGPT_EXE, words, &q), 0);
        cr_expect_eq(q.status, 0, "%s", q.err);
        proc_result_free(&q);
        unlink(path);
    }
    char conf[160];
    snprintf(conf, sizeof conf, "%s/config.json", dir);
    unlink(conf);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* A line that names a file the user gave shows its control bytes escaped, as an error
 * does: a name holding a terminal escape and a newline is not acted on by the terminal,
 * and the line stays one line */
Test(cli_model, a_written_path_is_shown_with_its_control_bytes_escaped, .timeout = 60)
{
    char dir[] = "/tmp/mygpt_clie_XXXXXX", path[160], src[1024];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(src, sizeof src, "%s/gpt2_hf.safetensors", golden_dir());
    snprintf(path, sizeof path, "%s/a\x1b[2Jb\nc.safetensors", dir);
    char *argv[] = {MYGPT_EXE, "quantize", src, path, "--weights", "int8", NULL};
    proc_result r = {0};
    cr_assert_eq(run_process(argv, &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "/a\\x1b[2Jb\\nc.safetensors: int8 weights") != NULL, "%s", r.out);
    cr_expect(strchr(r.out, '\x1b') == NULL && strchr(r.out, '\n') == r.out + strlen(r.out) - 1, "%s", r.out);
    proc_result_free(&r);
    cr_expect_eq(unlink(path), 0);
    snprintf(path, sizeof path, "%s/config.json", dir);
    unlink(path); // (written beside a GPT-2 model's file)
    cr_expect_eq(rmdir(dir), 0);
}
