/*
 * test_cli_chapters.c - the chapter programs and the benchmark: bad arguments, seeds that
 * change nothing, a cache cut short; the figures they write (small, whole or not at all,
 * never through a link, with gaps where a value is not finite) and the benchmark's table.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_common.h"
#include "data.h"

#define SPAM_TRAIN_CSV "sms_spam_train.csv"
#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "mygpt/svg.h"

Test(cli_chapters, bad_chapter_arguments)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, "/tmp/mygpt-latin1-%d.txt", (int)getpid());
    FILE *t = fopen(tmp, "wb");
    fputs("caf\xe9\n", t);
    fclose(t);
    char text_arg[128], short_text[64], short_arg[128];
    snprintf(text_arg, sizeof text_arg, "--text %s", tmp);
    snprintf(short_text, sizeof short_text, "/tmp/mygpt-short-%d.txt", (int)getpid());
    t = fopen(short_text, "wb");
    fputs("I HAD always thought Jack Gisburn rather a cheap genius", t); // 12 tokens
    fclose(t);
    snprintf(short_arg, sizeof short_arg, "--text %s", short_text);
    char text_msg[200]; // the file named, as `mygpt encode` names it
    snprintf(text_msg, sizeof text_msg, "%s: the text is not valid UTF-8 (byte offset 3)", text_arg);
    const struct { const char *program, *args, *msg; int status; } cases[] = {
        {"25_position_breaks_invariance", "--seed abc", "--seed: 'abc' is not an integer", 2},
        {"25_position_breaks_invariance", "--seed", "option '--seed' needs a value", 2},
        {"55_rope_figure", "--figures", "option '--figures' needs a value", 2},
        {"55_rope_figure", "--figures --seed 3", "option '--figures' needs a value", 2},
        {"26_gpt_main", "--bogus", "unknown option '--bogus'", 2},
        {"53_alibi", "--seed 3", "unknown option '--seed'", 2},
        {"55_rope_figure", "--figures /nonexistent/dir", "--figures /nonexistent/dir: No such file or directory", 2},
        {"61_verdict_dataloader", "--text /nonexistent.txt", "cannot open /nonexistent.txt", 2},
        {"61_verdict_dataloader", text_arg, text_msg, 2},
        {"61_verdict_dataloader", short_arg, "tokens hold no batch of 8 windows of 4 tokens", 2},
        {"91_book_llama_story", "--seed 4294967296", "is 0 as run.c reads it (an int)", 2},
        {"91_book_llama_story", "--seed -4294967296", "--seed -4294967296 is 0 as run.c reads it", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char exe[4096];
        snprintf(exe, sizeof exe, "%s/%s", CHAPTER_DIR, cases[i].program);
        proc_result r;
        cr_assert_eq(run_words(exe, cases[i].args, &r), 0);
        if (strcmp(cases[i].program, "61_verdict_dataloader") == 0 && r.status == 77) {
            proc_result_free(&r);
            cr_assert(!running_in_ci(), "chapter 61 found no data under CI=true: %s", r.err);
            cr_skip_test("GPT-2 vocabulary not available for chapter 61");
        }
        cr_expect_eq(r.status, cases[i].status, "%s %s: exit %d (%s)", cases[i].program, cases[i].args,
                     r.status, r.err);
        cr_expect_str_empty(r.out, "%s %s", cases[i].program, cases[i].args);
        cr_expect_eq(count_lines(r.err), 1, "%s %s: %s", cases[i].program, cases[i].args, r.err);
        cr_expect(strstr(r.err, cases[i].msg) != NULL, "%s %s: '%s' lacks '%s'", cases[i].program,
                  cases[i].args, r.err, cases[i].msg);
        proc_result_free(&r);
    }
    unlink(tmp);
    unlink(short_text);
    // the figures' folder named by the environment is checked as --figures is: before anything is printed
    const char *const env_cases[][2] = {{"/nonexistent/figs", "MYGPT_FIGURES=/nonexistent/figs: No such file"},
                                        {"/dev/null", "MYGPT_FIGURES=/dev/null: not a folder"}};
    for (size_t i = 0; i < sizeof env_cases / sizeof env_cases[0]; i++) {
        char exe[4096];
        snprintf(exe, sizeof exe, "%s/47_sinusoidal_encoding", CHAPTER_DIR);
        setenv("MYGPT_FIGURES", env_cases[i][0], 1);
        proc_result r;
        cr_assert_eq(run_words(exe, "", &r), 0);
        unsetenv("MYGPT_FIGURES");
        cr_expect_eq(r.status, 2, "MYGPT_FIGURES=%s: exit %d (%s)", env_cases[i][0], r.status, r.err);
        cr_expect_str_empty(r.out, "MYGPT_FIGURES=%s", env_cases[i][0]);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, env_cases[i][1]), "'%s' lacks '%s'", r.err,
                  env_cases[i][1]);
        proc_result_free(&r);
    }
}

/* A chapter whose output no seed changes says so in its --help (and the map suggests no
 * --seed 7 for it): those of UNSEEN print the same with two other seeds, and every other
 * chapter with a --seed does not claim it. */
Test(cli_chapters, a_seed_that_changes_nothing_says_so_in_help, .timeout = 120)
{
    static const char *const UNSEEN[] = {
        "26_gpt_main",        "27_wider_model",        "28_deeper_model",  "29_short_context",
        "41_embedding_table", "42_embedding_lookup",   "43_onehot_equivalence", "45_gpt_embedding",
        "57_transformer_embedding", "61_verdict_dataloader", "72_smoke_test"};
    const char *note = "every seed prints the same here";
    size_t noted = 0;
    FILE *f = fopen(CHAPTER_INDEX, "r");
    cr_assert_not_null(f);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char number[16], program[256], exe[4096];
        if (sscanf(line, "%15s %255s", number, program) != 2 || strcmp(number, "number") == 0)
            continue;
        snprintf(exe, sizeof exe, "%s/%s", CHAPTER_DIR, program);
        proc_result help, a, b;
        cr_assert_eq(run_words(exe, "--help", &help), 0);
        int listed = 0;
        for (size_t i = 0; i < sizeof UNSEEN / sizeof UNSEEN[0]; i++)
            listed |= strcmp(program, UNSEEN[i]) == 0;
        const int says = strstr(help.out, note) != NULL;
        cr_expect_eq(says, listed, "%s --help %s '%s': %s", program, listed ? "lacks" : "claims", note,
                     help.out);
        proc_result_free(&help);
        if (!listed)
            continue;
        noted++;
        cr_assert_eq(run_words(exe, "--seed 7", &a), 0);
        cr_assert_eq(run_words(exe, "--seed 12345", &b), 0);
        if (a.status == 77) { // 61 without the data folder: the rule of the data
            cr_assert(!running_in_ci(), "%s found no data under CI=true: %s", program, a.err);
        } else {
            cr_expect_eq(a.status, 0, "%s --seed 7: %s", program, a.err);
            cr_expect_str_eq(a.out, b.out, "%s prints other text for seeds 7 and 12345", program);
        }
        proc_result_free(&a);
        proc_result_free(&b);
    }
    fclose(f);
    cr_expect_eq(noted, sizeof UNSEEN / sizeof UNSEEN[0], "a chapter of UNSEEN is not in index.tsv");
}

/* Chapter 34 trains chapter 33's model when the figures folder has none and keeps it for
 * the next run; a file there under that name that is not chapter 33's model (a cut
 * checkpoint, a user's notes) is refused and left as it is: the chapters make the name up. */
Test(cli_chapters, chapter_34_keeps_its_model_and_replaces_no_other_file, .timeout = 300)
{
    (void)data_dir_or_skip(); // the chapter finds the data folder itself
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_cache_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cache[300];
    snprintf(cache, sizeof cache, "%s/verdict_gpt_smoke.safetensors", dir);
    setenv("MYGPT_FIGURES", dir, 1);
    const char *not_ours[] = {"\x10" /* a checkpoint cut after its first byte */, "my notes\n"};
    proc_result r = {0};
    for (size_t i = 0; i < sizeof not_ours / sizeof not_ours[0]; i++) {
        write_file(cache, not_ours[i]);
        cr_assert_eq(run_words(CHAPTER_DIR "/34_generation", "--smoke", &r), 0);
        expect_one_line_refusal(&r, 2, "not replaced", "34_generation over a file that is not its model");
        proc_result_free(&r);
        expect_file_holds(cache, not_ours[i], "34_generation");
    }
    unlink(cache);
    cr_assert_eq(run_words(CHAPTER_DIR "/34_generation", "--smoke", &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "training it") != NULL, "%s", r.err);
    proc_result_free(&r);
    mygpt_gpt *g = NULL;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_checkpoint_load(&g, cache, &err), MYGPT_OK, "the model was not kept: %s", err.message);
    mygpt_gpt_free(g);
    cr_assert_eq(run_words(CHAPTER_DIR "/34_generation", "--smoke", &r), 0);
    cr_expect(strstr(r.err, "the model of") != NULL, "the second run did not use the model: %s", r.err);
    proc_result_free(&r);
    unsetenv("MYGPT_FIGURES");
    unlink(cache);
    rmdir(dir);
}

/* MYGPT_DATA naming a file is a wrong setting, not absent data: status 2, not 77 (which
 * the checks count as skipped) */
Test(cli_chapters, a_data_folder_that_is_a_file_is_bad_input)
{
    char file[] = "/tmp/mygpt-data-XXXXXX";
    const int fd = mkstemp(file);
    cr_assert_geq(fd, 0);
    close(fd);
    setenv("MYGPT_DATA", file, 1);
    proc_result r;
    cr_assert_eq(run_words(CHAPTER_DIR "/61_verdict_dataloader", "", &r), 0);
    unsetenv("MYGPT_DATA");
    expect_one_line_refusal(&r, 2, "is not a folder (MYGPT_DATA?)", "61_verdict_dataloader with MYGPT_DATA a file");
    proc_result_free(&r);
    unlink(file);
}

/* The spam chapters make the book's check before a model meets the data: a training text
 * longer than the --test_mode model's context (120) is refused in one line naming the
 * file, status 2 (it ran into the forward pass, naming neither) */
Test(cli_chapters, a_spam_text_longer_than_the_context_is_refused_naming_the_file)
{
    const char *data = data_dir_or_skip();
    char dir[] = "/tmp/mygpt-spam-XXXXXX", path[4400], from[4400], text[2048] = "Label,Text\n1,\"word";
    cr_assert_not_null(mkdtemp(dir));
    static const char *const vocab[] = {"encoder.json", "vocab.bpe"};
    for (int i = 0; i < 2; i++) {
        snprintf(from, sizeof from, "%s/%s", data, vocab[i]);
        snprintf(path, sizeof path, "%s/%s", dir, vocab[i]);
        cr_assert_eq(symlink(from, path), 0);
    }
    for (int w = 1; w < 200; w++) // "word" and 199 " word": 200 tokens
        strcat(text, " word");
    strcat(text, "\"\n");
    for (int r = 0; r < 9; r++)
        strcat(text, "0,hi\n");
    static const char *const splits[] = {SPAM_TRAIN_CSV, "sms_spam_validation.csv", "sms_spam_test.csv"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, splits[i]);
        write_file(path, i ? "Label,Text\n0,hi\n" : text);
    }
    setenv("MYGPT_DATA", dir, 1);
    proc_result r;
    cr_assert_eq(run_words(CHAPTER_DIR "/81_book_classifier", "--smoke", &r), 0);
    unsetenv("MYGPT_DATA");
    expect_one_line_refusal(&r, 2,
                            SPAM_TRAIN_CSV ": its texts are padded to 200 tokens, more than the --test_mode "
                                           "model's context of 120",
                            "81_book_classifier on a text of 200 tokens");
    proc_result_free(&r);
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, i < 2 ? vocab[i] : splits[i - 2]);
        unlink(path);
    }
    rmdir(dir);
}

/* A chapter's figure replaces the chapter's own (a figure of the library's) and no other
 * file: a user's file under that name is refused before the chapter runs */
Test(cli_chapters, a_figure_replaces_only_a_figure)
{
    char dir[] = "/tmp/mygpt-fig-XXXXXX", words[128], path[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(words, sizeof words, "--figures %s", dir);
    snprintf(path, sizeof path, "%s/rope_figure.svg", dir);
    proc_result r;
    write_file(path, "my notes\n");
    cr_assert_eq(run_words(CHAPTER_DIR "/55_rope_figure", words, &r), 0);
    expect_one_line_refusal(&r, 2, "not replaced", "55_rope_figure over a user's file");
    proc_result_free(&r);
    expect_file_holds(path, "my notes\n", "55_rope_figure");
    unlink(path);
    for (int run = 0; run < 2; run++) { // written, then replaced: its own
        cr_assert_eq(run_words(CHAPTER_DIR "/55_rope_figure", words, &r), 0);
        cr_expect_eq(r.status, 0, "run %d: exit %d: %s", run, r.status, r.err);
        proc_result_free(&r);
    }
    cr_expect(mygpt_svg_replaceable(path), "the chapter's figure is not known as the library's");
    unlink(path);
    cr_assert_eq(mkfifo(path, 0600), 0); // not ours, and asking does not wait for a writer
    cr_expect(!mygpt_svg_replaceable(path), "a FIFO taken for a figure");
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "a file was left");
}

/* Makes the folder dir (a mkdtemp template) for chapter 47's figure: the words that
 * send its figures there, and the figure's path */
static void sinusoid_figure_in(char *dir, char *words, size_t words_cap, char *path, size_t path_cap)
{
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(words, words_cap, "--figures %s", dir);
    snprintf(path, path_cap, "%s/sinusoidal_encoding.svg", dir);
}

/* A chapter says where it wrote its figure, and the sinusoid map is a small SVG (one
 * embedded PNG), not 7.8 MB of rectangles. */
Test(cli_chapters, figures_are_small_and_their_path_is_printed)
{
    char dir[] = "/tmp/mygpt-fig-XXXXXX", words[128], path[128];
    sinusoid_figure_in(dir, words, sizeof words, path, sizeof path);
    proc_result r;
    cr_assert_eq(run_words(CHAPTER_DIR "/47_sinusoidal_encoding", words, &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, path) != NULL, "stderr does not name %s: %s", path, r.err);
    proc_result_free(&r);
    size_t size = 0;
    char *svg = file_text(path, &size);
    cr_assert_not_null(svg);
    cr_expect_lt(size, 1 << 20, "sinusoidal_encoding.svg is %zu bytes", size);
    /* base64 of the PNG signature 89 50 4E 47 0D 0A 1A 0A */
    cr_expect(strstr(svg, "data:image/png;base64,iVBORw0KGgo") != NULL, "no embedded PNG");
    free(svg);
    unlink(path);
    rmdir(dir);
}

/* A chapter's figure under a file-size limit (SIGXFSZ as a shell leaves it): status 1 and
 * one line naming the file and the limit, the old figure kept, no temporary left */
Test(cli_chapters, a_figure_past_the_file_size_limit_is_one_line_and_status_1)
{
    char dir[] = "/tmp/mygpt-fig-XXXXXX", words[128], path[128];
    sinusoid_figure_in(dir, words, sizeof words, path, sizeof path);
    // the old figure: one of the library's (a chapter replaces no other file)
    const char *old = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"1\" height=\"1\" viewBox=\"0 0 1 1\" font-family=\"DejaVu Sans, Arial, "
                      "sans-serif\">\n</svg>\n";
    expect_file_size_limit_keeps_old(CHAPTER_DIR "/47_sinusoidal_encoding", words, 16 << 10, path, old);
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "a temporary was left");
}

/* A figure is written as checkpoints are: a full disk (here a file-size limit) keeps the
 * old figure and leaves no temporary; a symbolic link is refused, its target untouched */
Test(cli_chapters, figures_are_written_whole_or_not_at_all_and_never_through_a_link)
{
    char dir[] = "/tmp/mygpt_fig_XXXXXX", path[128], link[128], target[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/fig.svg", dir);
    snprintf(link, sizeof link, "%s/link.svg", dir);
    snprintf(target, sizeof target, "%s/target.svg", dir);
    mygpt_svg fig;
    mygpt_error err = {0};
    mygpt_svg_begin(&fig, 100, 100);
    cr_assert_eq(mygpt_svg_save(&fig, path, &err), MYGPT_OK, "%s", err.message);
    char *old, *now;
    size_t old_len, now_len;
    cr_assert_eq(mygpt_read_file(path, &old, &old_len, NULL), MYGPT_OK);
    static float cells[200 * 200];
    for (int k = 0; k < 200 * 200; k++)
        cells[k] = (float)(k % 97) / 97.0f;
    mygpt_svg_begin(&fig, 900, 900);
    mygpt_svg_heatmap(&fig, &(mygpt_svg_panel){.x = 50, .y = 50, .w = 800, .h = 800, .title = "big"}, cells, 200, 200,
                      0.0, 1.0, 1);
    signal(SIGXFSZ, SIG_IGN); // the write then fails with EFBIG instead of a signal
    const struct rlimit limit = {64 << 10, 64 << 10};
    struct rlimit was;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0); // this test's own process
    const mygpt_status st = mygpt_svg_save(&fig, path, &err);
    setrlimit(RLIMIT_FSIZE, &was);
    cr_expect_eq(st, MYGPT_EIO, "%s", err.message);
    cr_expect(strstr(err.message, path) != NULL && strstr(err.message, "File too large") != NULL, "%s", err.message);
    cr_assert_eq(mygpt_read_file(path, &now, &now_len, NULL), MYGPT_OK);
    cr_expect(now_len == old_len && memcmp(now, old, old_len) == 0, "the old figure was replaced (%zu bytes)", now_len);
    free(now);
    DIR *d = opendir(dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));)
        files += e->d_name[0] != '.';
    closedir(d);
    cr_expect_eq(files, 1, "a temporary file was left");
    // through a symbolic link: refused, the target kept
    FILE *f = fopen(target, "w");
    fputs("keep", f);
    fclose(f);
    cr_assert_eq(symlink(target, link), 0);
    mygpt_svg_begin(&fig, 100, 100);
    cr_expect_eq(mygpt_svg_save(&fig, link, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "symbolic link") != NULL, "%s", err.message);
    cr_assert_eq(mygpt_read_file(target, &now, &now_len, NULL), MYGPT_OK);
    cr_expect(now_len == 4 && memcmp(now, "keep", 4) == 0, "written through the link");
    free(now);
    free(old);
    unlink(link);
    unlink(target);
    unlink(path);
    rmdir(dir);
}

/* A NaN or an infinity in a line plot's series is a gap: the line ends before it and
 * starts again after it, one polyline a finite run (a series all finite is one polyline,
 * as before), no marker there, never a non-finite coordinate */
Test(cli_chapters, a_line_plot_leaves_a_gap_at_a_point_that_is_not_finite)
{
    char dir[] = "/tmp/mygpt_gap_XXXXXX", path[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/gap.svg", dir);
    const float x[7] = {0, 1, 2, 3, 4, 5, 6}, y[7] = {1, NAN, 2, 3, INFINITY, -INFINITY, 4}, z[3] = {1, 2, 3};
    const mygpt_svg_series s[2] = {{.x = x, .y = y, .n = 7, .label = "gaps", .markers = 1},
                                   {.y = z, .n = 3, .label = "whole"}};
    mygpt_svg fig;
    mygpt_error err = {0};
    mygpt_svg_begin(&fig, 400, 300);
    mygpt_svg_line_plot(&fig, &(mygpt_svg_panel){.x = 50, .y = 30, .w = 300, .h = 200, .title = "t"}, s, 2, 0, 5);
    cr_assert_eq(mygpt_svg_save(&fig, path, &err), MYGPT_OK, "%s", err.message);
    char *text;
    size_t n;
    cr_assert_eq(mygpt_read_file(path, &text, &n, NULL), MYGPT_OK);
    cr_expect(strstr(text, "nan") == NULL && strstr(text, "inf") == NULL, "a non-finite coordinate: %s", text);
    int lines = 0, dots = 0;
    for (const char *p = text; (p = strstr(p, "<polyline")); p++)
        lines++;
    for (const char *p = text; (p = strstr(p, "<circle")); p++)
        dots++;
    cr_expect_eq(lines, 3 + 1, "runs [1], [2, 3], [4] and the whole series: %s", text);
    cr_expect_eq(dots, 4, "a marker on each finite point: %s", text);
    free(text);
    unlink(path);
    rmdir(dir);
}

/* Figures of nothing, or with NULL labels, or a negative stride: drawn and saved, no crash
 * (each crashed or asked for 2^64 bytes) */
Test(cli_chapters, figures_of_odd_sizes_and_null_labels_are_drawn)
{
    char dir[] = "/tmp/mygpt_odd_XXXXXX", path[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/odd.svg", dir);
    const float y[4] = {1, 2, 3, 4}, att[2 * 2] = {1, 0, 0.5f, 0.5f};
    const char *const labels[2] = {"a", NULL};
    mygpt_svg fig;
    mygpt_error err = {0};
    mygpt_svg_begin(&fig, 400, 300);
    const mygpt_svg_series backwards = {.y = y, .n = 4, .stride = -1, .label = NULL};
    mygpt_svg_line_plot(&fig, &(mygpt_svg_panel){.x = 50, .y = 30, .w = 300, .h = 200}, &backwards, 1, 0, 5);
    mygpt_svg_heatmap(&fig, &(mygpt_svg_panel){.x = 50, .y = 30, .w = 300, .h = 200}, y, -1, 4, 0, 1, 1);
    mygpt_svg_heatmap(&fig, &(mygpt_svg_panel){.x = 50, .y = 30, .w = 300, .h = 200, .xticks = labels,
                                              .yticks = labels},
                      att, 2, 2, 0, 1, 1);
    cr_expect_eq(mygpt_svg_save(&fig, path, &err), MYGPT_OK, "%s", err.message);
    mygpt_svg_attention_grid(&fig, att, 1, 1, 2, NULL);
    cr_expect_eq(mygpt_svg_save(&fig, path, &err), MYGPT_OK, "%s", err.message);
    mygpt_svg_attention_grid(&fig, att, 1, 1, 2, labels);
    cr_expect_eq(mygpt_svg_save(&fig, path, &err), MYGPT_OK, "%s", err.message);
    mygpt_svg_attention_grid(&fig, att, 0, 1, 2, labels);
    cr_expect_eq(mygpt_svg_save(&fig, path, &err), MYGPT_OK, "%s", err.message);
    unlink(path);
    rmdir(dir);
}

/* --train's breakdown puts each part's share of the step's FLOPs beside its share of the
 * time: the shares of the six parts that compute (the rest computes no counted FLOP)
 * add up to the whole, whatever the timings. */
Test(cli_chapters, bench_train_parts_share_the_flops)
{
    proc_result r;
    cr_assert_eq(run_words(BENCH_EXE, "--train --config tiny-train --threads 1 --reps 3", &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    int sum = 0, parts = 0;
    for (const char *p = strstr(r.out, "the step's parts"); p && (p = strstr(p, " % | ")); p += 4) {
        int share;
        if (sscanf(p, " %% | %d %%", &share) == 1)
            sum += share, parts++;
    }
    cr_expect_eq(parts, 7, "not the six parts and the rest: %s", r.out);
    cr_expect(sum >= 97 && sum <= 103, "FLOP shares add up to %d %%: %s", sum, r.out);
    const char *rest = strstr(r.out, "the rest "), *bar = rest ? strchr(rest, '|') : NULL;
    cr_expect(bar && strncmp(bar, "| 0 %)", 6) == 0, "the rest has FLOPs: %s", r.out);
    proc_result_free(&r);
}

/* --attention times the forward alone (and keeping the probabilities) and --attention-backward
 * the backward, each one line; a shape that is not B,T,C,NH is named with the flag (exit 2). */
Test(cli_chapters, bench_times_the_attention_alone)
{
    proc_result r;
    cr_assert_eq(run_words(BENCH_EXE, "--attention 2,9,8,2 --threads 1 --reps 3", &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "attention=2,9,8,2 threads=1 kernel=") != NULL && strstr(r.out, " with_probs_ms=") &&
                  strstr(r.out, " pct_peak="),
              "%s", r.out);
    proc_result_free(&r);
    cr_assert_eq(run_words(BENCH_EXE, "--attention-backward 1,5,8,2 --threads 1 --reps 3", &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "attention_backward=1,5,8,2 threads=1 kernel=") != NULL, "%s", r.out);
    proc_result_free(&r);
    cr_assert_eq(run_words(BENCH_EXE, "--attention 1,5,9,2", &r), 0);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "--attention: '1,5,9,2' is not B,T,C,NH") != NULL, "%s", r.err);
    proc_result_free(&r);
}

/* The benchmarks' refusals follow the one rule: a file given that cannot be read is bad
 * input (status 2, one line naming it), and a path's newline is shown escaped on that line */
Test(cli_chapters, the_benchmarks_refuse_bad_files_with_status_2_on_one_line)
{
    char dir[] = "/tmp/mygpt-bench-bad-XXXXXX", empty[64], latin1[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(empty, sizeof empty, "%s/empty", dir);
    write_file(empty, "");
    snprintf(latin1, sizeof latin1, "%s/latin1", dir);
    write_file(latin1, "caf\xe9\n");
    char script[600];
    proc_result r;
    const struct {
        const char *exe, *words, *msg;
    } runs[] = {{BENCH_EXE, "--generate --checkpoint %s/empty --reps 1", "too short for a safetensors file"},
                {BENCH_EXE, "--generate --checkpoint %s --reps 1", "not a regular file"},
                {BENCH_TOKENIZER_EXE, "--reps 1 --text %s", "--text: cannot read"},
                {BENCH_TOKENIZER_EXE, "--reps 1 --text %s/latin1", "/latin1: the text is not valid UTF-8"},
                {BENCH_EXE, "--config tiny --reps 1 --threads 1 --csv \"%s/a\nb/t.csv\"", "/a\\nb"}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char words[300];
        snprintf(words, sizeof words, runs[i].words, dir);
        snprintf(script, sizeof script, "exec '%s' %s > /dev/null", runs[i].exe, words);
        run_shell(script, &r);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", script, r.status, r.err);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, runs[i].msg), "%s: %s", script, r.err);
        proc_result_free(&r);
    }
    unlink(empty);
    unlink(latin1);
    cr_expect_eq(rmdir(dir), 0, "files were left");
}

/* A figure's path that would pass the 4096 bytes of a path is refused naming --figures and
 * the file: it was cut silently, and the error named a file never involved
 * ("DIR/sinusoidal_enc") */
Test(cli_chapters, a_figure_path_too_long_is_refused_not_cut)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "/tmp/mygpt-deep-%d", (int)getpid());
    cr_assert_eq(mkdir(dir, 0700), 0);
    const size_t base = strlen(dir);
    size_t n = base;
    while (n + 51 < 4030) { // folders of 50 letters, then one that ends the path at 4080 bytes
        snprintf(dir + n, sizeof dir - n, "/%050d", 0);
        n += 51;
        cr_assert_eq(mkdir(dir, 0700), 0, "%s", strerror(errno));
    }
    dir[n] = '/';
    memset(dir + n + 1, 'b', 4080 - n - 1);
    dir[4080] = '\0';
    cr_assert_eq(mkdir(dir, 0700), 0, "%s", strerror(errno));
    char exe[4096], words[4300];
    snprintf(exe, sizeof exe, "%s/47_sinusoidal_encoding", CHAPTER_DIR);
    for (int by_env = 0; by_env < 2; by_env++) { // the folder named as it was: the flag, or the environment
        snprintf(words, sizeof words, "%s%s", by_env ? "" : "--figures ", by_env ? "" : dir);
        if (by_env)
            setenv("MYGPT_FIGURES", dir, 1); // (this test's process: the child inherits it)
        proc_result r;
        cr_assert_eq(run_words(exe, words, &r), 0);
        unsetenv("MYGPT_FIGURES");
        cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
        const char *start = by_env ? "47_sinusoidal_encoding: MYGPT_FIGURES=/tmp/mygpt-deep-"
                                   : "47_sinusoidal_encoding: --figures /tmp/mygpt-deep-";
        cr_expect(count_lines(r.err) == 1 && strncmp(r.err, start, strlen(start)) == 0 &&
                      strstr(r.err, "...: the path of its sinusoidal_encoding.svg would be 4104 bytes, more than 4095"),
                  "%s", r.err);
        proc_result_free(&r);
    }
    for (;;) { // the folders removed, deepest first: each must be empty
        cr_expect_eq(rmdir(dir), 0, "%s: %s", dir, strerror(errno));
        if (strlen(dir) == base)
            break;
        *strrchr(dir, '/') = '\0';
    }
}

/* One benchmark a run: two modes, --csv beside a mode that writes no table, or a flag the
 * benchmark does not read, are refused (one ran and the other was dropped without a word) */
Test(cli_chapters, bench_runs_one_benchmark_a_run)
{
    const char *runs[][2] = {{"--matmul 8,8,8 --train", "--train and --matmul"},
                             {"--peak --bandwidth", "--bandwidth and --peak"},
                             {"--loss 4,4 --matmul 8,8,8", "--loss and --matmul"},
                             {"--matmul 8,8,8 --csv /tmp/mygpt-never.csv", "--csv and --svg"},
                             // a flag its benchmark does not read (the forward was timed for --backward)
                             {"--attention 1,4,4,1 --backward", "--backward does not go with --attention"},
                             {"--loss 2,2 --naive", "--naive does not go with --loss"},
                             {"--config tiny --backward", "--backward does not go with the forward pass's sweep"},
                             {"--latency --threads 2", "--threads does not go with --latency (it reads no other"}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        proc_result r;
        cr_assert_eq(run_words(BENCH_EXE, runs[i][0], &r), 0);
        expect_one_line_refusal(&r, 2, runs[i][1], runs[i][0]);
        proc_result_free(&r);
    }
    cr_expect_neq(access("/tmp/mygpt-never.csv", F_OK), 0, "a CSV was written");
}

/* The benchmark's --svg is checked before the sweep, as --csv is: a folder or a link is
 * refused at once (status 2, the flag named), not after the whole sweep has run (status 1),
 * and so is a file no sweep wrote; so is a sweep without a 1-thread time
 * (bench_reports_no_invented_speedups) */
Test(cli_chapters, bench_checks_svg_before_the_sweep, .timeout = 60)
{
    char dir[] = "/tmp/mygpt-bench-svg-XXXXXX", words[300];
    cr_assert_not_null(mkdtemp(dir));
    const char *runs[][2] = {{"--svg %s", "is a directory"}, {"--svg %s/link.svg", "symbolic link"}};
    char link_path[128];
    snprintf(link_path, sizeof link_path, "%s/link.svg", dir);
    cr_assert_eq(symlink("nowhere.svg", link_path), 0);
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char flags[200];
        snprintf(flags, sizeof flags, runs[i][0], dir);
        snprintf(words, sizeof words, "--config char --reps 1000 %s", flags); // a sweep of minutes, were it run
        proc_result r;
        cr_assert_eq(run_words(BENCH_EXE, words, &r), 0);
        expect_one_line_refusal(&r, 2, runs[i][1], words);
        cr_expect(strstr(r.err, "--svg: ") != NULL, "%s: %s", words, r.err);
        proc_result_free(&r);
    }
    unlink(link_path);
    // a file there that no sweep wrote is not replaced, by the table or the plot
    char notes[128];
    snprintf(notes, sizeof notes, "%s/notes.txt", dir);
    write_file(notes, "my notes\n");
    for (int k = 0; k < 2; k++) {
        snprintf(words, sizeof words, "--config char --reps 1000 --%s %s", k ? "svg" : "csv", notes);
        proc_result r;
        cr_assert_eq(run_words(BENCH_EXE, words, &r), 0);
        expect_one_line_refusal(&r, 2, k ? "--svg: " : "--csv: ", words);
        cr_expect(strstr(r.err, "is there and is not a sweep's") != NULL, "%s: %s", words, r.err);
        proc_result_free(&r);
    }
    expect_file_holds(notes, "my notes\n", "--csv or --svg over a file no sweep wrote");
    unlink(notes);
    cr_expect_eq(rmdir(dir), 0, "the benchmark left a file in %s", dir);
}

/* The benchmark's sizes are whole numbers from 1 to INT_MAX, digits only: one past int is
 * refused (it was read as 1 and timed), and so are a sign and a size too few; so is an
 * unknown --train config, with nothing on stdout */
Test(cli_chapters, bench_refuses_a_size_past_int_instead_of_timing_another)
{
    const char *runs[][2] = {{"--matmul 4294967297,1,1", "--matmul"}, {"--matmul +8,8,8", "--matmul"},
                             {"--matmul 8,8", "--matmul"}, {"--loss 4294967297,2", "--loss"},
                             {"--attention 1,-4294967295,4,1", "--attention"},
                             {"--attention-backward 4294967297,4,4,2", "--attention-backward"},
                             {"--train --config foo", "unknown config 'foo'"}}; // (its table's head came first)
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char words[128];
        snprintf(words, sizeof words, "%s --reps 1 --threads 1", runs[i][0]);
        proc_result r;
        cr_assert_eq(run_words(BENCH_EXE, words, &r), 0);
        expect_one_line_refusal(&r, 2, runs[i][1], words);
        proc_result_free(&r);
    }
}

/* Sizes whose buffers no machine holds are refused before anything is allocated, naming
 * the flag (bad input, 2): a system that overcommits handed out 16 GiB buffers one by one
 * and killed the benchmark when it touched them (--matmul 65536,65536,65536 on 24 GiB) */
Test(cli_chapters, bench_refuses_buffers_past_the_machines_memory, .timeout = 60)
{
    const char *runs[][2] = {{"--matmul 2147483647,2147483647,2147483647", "--matmul 2147483647,"},
                             {"--matmul 1,2147483647,2147483647 --backward", "--matmul 1,"},
                             {"--loss 2147483647,2147483647", "--loss 2147483647,"},
                             {"--attention 65536,65536,65536,1", "--attention 65536,"},
                             {"--attention-backward 65536,65536,65536,1", "--attention-backward 65536,"}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char words[128];
        snprintf(words, sizeof words, "%s --reps 1 --threads 1", runs[i][0]);
        proc_result r;
        cr_assert_eq(run_words(BENCH_EXE, words, &r), 0);
        expect_one_line_refusal(&r, 2, "of memory", words);
        cr_expect(strstr(r.err, runs[i][1]) && strstr(r.err, "its buffers need"), "%s: %s", words, r.err);
        proc_result_free(&r);
    }
}

/* --generate's --save-model never replaces the model it reads, however the path is
 * spelt, nor any file there: refused before any work (status 2, one line naming both
 * flags), the file as it was. */
Test(cli_chapters, bench_save_model_never_replaces_the_model_it_reads)
{
    char dir[64], model[96], words[512];
    snprintf(dir, sizeof dir, "/tmp/mygpt-bench-save-%d", (int)getpid());
    cr_assert_eq(mkdir(dir, 0700), 0);
    snprintf(model, sizeof model, "%s/m.safetensors", dir);
    const mygpt_config cfg = {.vocab_size = 11, .embed_dim = 8, .num_heads = 2, .num_layers = 1, .max_seq_len = 8};
    save_new_model(model, &cfg, 3);
    size_t n0, n1;
    char *before = file_bytes(model, &n0);
    const char *spelt[] = {"%s/m.safetensors", "%s/./m.safetensors", "%s/../%s/m.safetensors"};
    for (int i = 0; i < 3; i++) {
        char out[256];
        snprintf(out, sizeof out, spelt[i], dir, strrchr(dir, '/') + 1);
        snprintf(words, sizeof words, "--generate --config stories15M --checkpoint %s --save-model %s --reps 1",
                 model, out);
        proc_result r;
        cr_assert_eq(run_words(BENCH_EXE, words, &r), 0);
        expect_one_line_refusal(&r, 2, "--save-model", words);
        cr_expect(strstr(r.err, "is the file --checkpoint reads") != NULL, "%s: %s", words, r.err);
        proc_result_free(&r);
    }
    char *after = file_bytes(model, &n1);
    cr_expect(before && after && n0 == n1 && memcmp(before, after, n0) == 0, "the model was replaced");
    free(before);
    free(after);
    // nor a file there that is not llama2.c's model file
    char notes[128];
    snprintf(notes, sizeof notes, "%s/notes.bin", dir);
    write_file(notes, "my notes\n");
    snprintf(words, sizeof words, "--generate --config stories15M --checkpoint %s --save-model %s --reps 1 "
             "--prompt 2 --new 2", model, notes);
    proc_result r;
    cr_assert_eq(run_words(BENCH_EXE, words, &r), 0);
    expect_one_line_refusal(&r, 2, "--save-model: ", words);
    cr_expect(strstr(r.err, "is there and is not llama2.c's model file: not replaced") != NULL, "%s: %s", words, r.err);
    proc_result_free(&r);
    expect_file_holds(notes, "my notes\n", words);
    const char *names[] = {"m.safetensors", "notes.bin"};
    remove_test_dir(dir, names, 2);
}

/* Without a 1-thread time the table has no speedup to show ("-", not 0.00) and --svg
 * refuses; with a sweep the plot has the ideal line. */
Test(cli_chapters, bench_reports_no_invented_speedups)
{
    proc_result r;
    cr_assert_eq(run_words(BENCH_EXE, "--config tiny --threads 2 --reps 3", &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "       -      -\n") != NULL, "speedup and efficiency are not '-': %s", r.out);
    proc_result_free(&r);
    cr_assert_eq(run_words(BENCH_EXE, "--config tiny --threads 2 --reps 3 --svg /tmp/mygpt-no.svg", &r), 0);
    expect_one_line_refusal(&r, 2, "--svg: the speedup plot needs a 1-thread time", "--svg without one");
    proc_result_free(&r);
    char words[128], path[64];
    snprintf(path, sizeof path, "/tmp/mygpt-scaling-%d.svg", (int)getpid());
    snprintf(words, sizeof words, "--config tiny --threads 1 --reps 3 --svg %s", path);
    cr_assert_eq(run_words(BENCH_EXE, words, &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    proc_result_free(&r);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char buf[65536];
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    cr_expect(strstr(buf, ">ideal<") != NULL, "no ideal line in the plot");
    cr_expect(strstr(buf, ">0.5<") == NULL && strstr(buf, ">1.5<") == NULL, "half-thread ticks");
}

/* The benchmark's --csv past a file-size limit (SIGXFSZ as a shell leaves it): status 1,
 * one line naming the file and the limit, the old CSV kept (the table is written whole,
 * at the end), no temporary left */
Test(cli_chapters, a_bench_csv_past_the_file_size_limit_keeps_the_old_file)
{
    char dir[] = "/tmp/mygpt-bench-XXXXXX", path[128], words[192];
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/scaling.csv", dir);
    snprintf(words, sizeof words, "--config tiny --threads 1 --reps 3 --csv %s", path);
    // a table of an earlier sweep (a file of another kind is not replaced at all); 16 bytes: less than its header
    expect_file_size_limit_keeps_old(BENCH_EXE, words, 16, path,
                                     "config,threads,median_ms,tokens_per_s,gflops,speedup,efficiency\n");
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "a temporary was left");
}

/* The benchmark's --csv and --svg are never one file, however spelt: one line naming both,
 * status 2, before any timing, the file as it was */
Test(cli_chapters, bench_csv_and_svg_are_never_one_file)
{
    char dir[] = "/tmp/mygpt-bench-XXXXXX", path[128], words[320];
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/scaling.csv", dir);
    snprintf(words, sizeof words, "--config tiny --threads 1 --reps 3 --csv %s --svg %s/./scaling.csv", path, dir);
    write_file(path, "old");
    proc_result r;
    cr_assert_eq(run_words(BENCH_EXE, words, &r), 0);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "--csv") && strstr(r.err, "--svg") &&
                  strstr(r.err, "are one file"), "%s", r.err);
    cr_expect_str_empty(r.out, "%s", r.out);
    proc_result_free(&r);
    expect_file_holds(path, "old", words);
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "a temporary was left");
}
