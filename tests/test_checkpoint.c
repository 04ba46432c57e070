/*
 * test_checkpoint.c - safetensors: a round trip keeps every bit, a checkpoint the
 * PyTorch reference wrote (tools/gen_train_goldens.py) loads and gives its logits, and
 * broken files get an error, never a crash or a read out of bounds (the sanitizer stage
 * runs this too).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <omp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "golden.h"
#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "mygpt/tokenizer.h"

static char *tmp_path(const char *tag)
{
    static char path[128];
    snprintf(path, sizeof path, "/tmp/mygpt-ckpt-%s-%d.safetensors", tag, (int)getpid());
    return path;
}

Test(checkpoint, round_trip_keeps_every_bit)
{
    const mygpt_config cfg = {.vocab_size = 33, .embed_dim = 12, .num_heads = 3, .num_layers = 3,
                              .max_seq_len = 9};
    mygpt_gpt *a, *b;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&a, &cfg, 77, &err), MYGPT_OK);
    for (size_t i = 0; i < a->num_parameters; i++) // LayerNorms too, not only 1 and 0
        a->params_memory[i] += 0.01f * (float)(i % 13);
    const char *path = tmp_path("rt");
    cr_assert_eq(mygpt_checkpoint_save(a, path, &err), MYGPT_OK, "%s", err.message);
    cr_assert_eq(mygpt_checkpoint_load(&b, path, &err), MYGPT_OK, "%s", err.message);
    cr_expect(a->config.vocab_size == b->config.vocab_size && a->config.embed_dim == b->config.embed_dim &&
              a->config.num_heads == b->config.num_heads && a->config.num_layers == b->config.num_layers &&
              a->config.max_seq_len == b->config.max_seq_len && a->config.arch == b->config.arch,
              "the configuration, field by field (the struct has padding)");
    cr_assert_eq(a->num_parameters, b->num_parameters);
    cr_expect(memcmp(a->params_memory, b->params_memory, a->num_parameters * sizeof(float)) == 0);
    unlink(path);
    mygpt_gpt_free(a);
    mygpt_gpt_free(b);
}

Test(checkpoint, a_checkpoint_written_by_pytorch_gives_its_logits)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/reference.safetensors", golden_dir());
    mygpt_gpt *g;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK, "%s", err.message);
    FILE *f = golden_open("checkpoint.txt");
    cr_assert_not_null(f);
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int64_t ids[24];
    float *want = malloc(24 * 50 * sizeof *want);
    int seen = 0;
    while (golden_next_line(f, &line, &cap, &lineno) >= 0) {
        if (strncmp(line, "ids ", 4) == 0)
            seen += golden_parse_i64(line + 4, ids, 24) == 24;
        else if (strncmp(line, "logits ", 7) == 0)
            seen += golden_parse_f32(line + 7, want, 24 * 50) == 24 * 50;
    }
    free(line);
    fclose(f);
    cr_assert_eq(seen, 2);
    cr_assert_eq(mygpt_gpt_forward(g, ids, 2, 12, &err), MYGPT_OK, "%s", err.message);
    double worst = 0;
    for (int i = 0; i < 24 * 50; i++)
        worst = fmax(worst, fabs((double)g->acts.logits[i] - want[i]) / fmax(1, fabs(want[i])));
    cr_expect_leq(worst, 1e-5, "logits differ from PyTorch's by %.3g", worst);
    free(want);
    mygpt_gpt_free(g);
}

/* Writes bytes to a file and expects the loader to refuse it with `msg` in the error. */
static void expect_refused(const char *bytes, size_t n, const char *msg)
{
    const char *path = tmp_path("bad");
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
    mygpt_gpt *g = (mygpt_gpt *)1;
    mygpt_error err = {0};
    const mygpt_status st = mygpt_checkpoint_load(&g, path, &err);
    cr_expect_neq(st, MYGPT_OK, "accepted: %s", msg);
    cr_expect_null(g);
    cr_expect(strstr(err.message, msg) != NULL, "'%s' lacks '%s'", err.message, msg);
    if (st == MYGPT_OK)
        mygpt_gpt_free(g);
    unlink(path);
}

Test(checkpoint, broken_files_are_refused_with_a_reason)
{
    // a good file to break
    const mygpt_config cfg = {.vocab_size = 5, .embed_dim = 4, .num_heads = 2, .num_layers = 1,
                              .max_seq_len = 3};
    mygpt_gpt *a;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&a, &cfg, 1, &err), MYGPT_OK);
    const char *path = tmp_path("good");
    cr_assert_eq(mygpt_checkpoint_save(a, path, &err), MYGPT_OK);
    char *good;
    size_t n;
    cr_assert_eq(mygpt_read_file(path, &good, &n, &err), MYGPT_OK);
    unlink(path);
    mygpt_gpt_free(a);
    uint64_t hlen = 0;
    memcpy(&hlen, good, 8);
    char *b = malloc(n + 64);

    expect_refused(good, 5, "too short");
    expect_refused(good, n - 3, "offsets");                            // truncated data
    expect_refused(good, 8 + hlen - 10, "larger than the file");      // truncated header
    memcpy(b, good, n);
    memset(b, 0xff, 8);                                                // a huge header length
    expect_refused(b, n, "larger than the file");
    memcpy(b, good, n);
    char *dt = strstr(b + 8, "\"F32\"");
    memcpy(dt, "\"F16\"", 5);                                          // another dtype
    expect_refused(b, n, "dtype F16");
    memcpy(b, good, n);
    char *sh = strstr(b + 8, "\"shape\":[5,4]");
    memcpy(sh, "\"shape\":[4,5]", 13);                                 // another shape
    expect_refused(b, n, "shape");
    memcpy(b, good, n);
    char *off = strstr(b + 8, "\"data_offsets\":[0,80]");
    cr_assert_not_null(off);
    memcpy(off, "\"data_offsets\":[9,89]", 21);                        // offsets that lie
    expect_refused(b, n, "offsets");
    memcpy(b, good, n);
    char *nm = strstr(b + 8, "ln_f.gamma");
    nm[0] = 'X';                                                       // a missing tensor
    expect_refused(b, n, "missing");
    memcpy(b, good, n);
    char *meta = strstr(b + 8, "\"num_heads\":\"2\"");
    memcpy(meta, "\"num_heads\":\"3\"", 15);                           // C not divisible by heads
    expect_refused(b, n, "divisible");
    memcpy(b, good, n);
    b[8] = '[';                                                        // not JSON
    expect_refused(b, n, "malformed JSON");
    mygpt_gpt *g;
    cr_expect_eq(mygpt_checkpoint_load(&g, "/nonexistent/x.safetensors", &err), MYGPT_EIO);
    free(b);
    free(good);
}

/* Issue 37, item 1: a checkpoint cut and rewritten by another process (as `cp new old`
 * does) while it is loaded gives a model or an error naming the file, never a SIGBUS
 * (which would crash this test). A child truncates and restores the file in a loop while
 * this process loads it again and again. */
Test(checkpoint, a_file_truncated_while_it_is_loaded_is_an_error_not_a_signal, .timeout = 120)
{
    const mygpt_config cfg = {.vocab_size = 4096, .embed_dim = 256, .num_heads = 4, .num_layers = 4,
                              .max_seq_len = 64};
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, NULL), MYGPT_OK);
    const char *path = tmp_path("race");
    cr_assert_eq(mygpt_checkpoint_save(g, path, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    const long len = ftell(f);
    rewind(f);
    char *content = malloc((size_t)len);
    cr_assert_eq(fread(content, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    const pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) { // cut the data short, put it back, forever (until killed, or this test dies)
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1)
            _exit(0);
        const int fd = open(path, O_WRONLY);
        for (unsigned k = 0;; k++) {
            if (ftruncate(fd, 4096 + (off_t)(k * 7919u % 1000000u)) != 0)
                _exit(1);
            usleep(1000);
            if (pwrite(fd, content, (size_t)len, 0) != (ssize_t)len)
                _exit(1);
            usleep(1000 + k % 7 * 4000); // sometimes whole for long enough to load
        }
    }
    int loaded = 0, refused = 0;
    for (int k = 0; k < 100; k++) {
        usleep((useconds_t)(k % 4) * 1000);
        mygpt_gpt *h = NULL;
        mygpt_error err = {0};
        if (mygpt_checkpoint_load(&h, path, &err) == MYGPT_OK) {
            loaded++;
            mygpt_gpt_free(h);
        } else {
            refused++;
            cr_expect(strstr(err.message, path) != NULL, "%s", err.message);
        }
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    cr_log_info("%d loaded, %d refused", loaded, refused);
    cr_expect_eq(loaded + refused, 100);
    free(content);
    unlink(path);
}

/* Issue 37, item 4: with 2 or 3 OpenMP threads, SIGTERM or SIGINT during a save waits for
 * the file to be whole, then acts; the kernel may hand it to an idle worker thread, which
 * must not end the process halfway (no file, a partial temporary left) */
Test(checkpoint, a_signal_during_a_save_with_2_or_3_threads_waits_for_the_whole_file, .timeout = 240)
{
    char dir[] = "/tmp/mygpt_signal_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    for (int threads = 2; threads <= 3; threads++)
        for (int round = 0; round < 4; round++) {
            const int sig = round % 2 ? SIGINT : SIGTERM;
            int ready[2];
            cr_assert_eq(pipe(ready), 0);
            const pid_t kid = fork();
            if (kid == 0) {
                omp_set_num_threads(threads);
                int team = 0;
#pragma omp parallel // the workers exist, signals not blocked in them
#pragma omp atomic
                team++;
                const mygpt_config cfg = {50257, 256, 4, 4, 256}; // 16 M parameters: 64 MB to write
                mygpt_gpt *g;
                if (team != threads || mygpt_gpt_create(&g, &cfg, 1, NULL) != MYGPT_OK)
                    _exit(3);
                if (write(ready[1], "x", 1) != 1)
                    _exit(4);
                _exit(mygpt_checkpoint_save(g, path, NULL) == MYGPT_OK ? 0 : 1);
            }
            char c;
            cr_assert_eq(read(ready[0], &c, 1), 1);
            usleep(1000 * (unsigned)(2 + 10 * round)); // into the save, at different points
            kill(kid, sig);
            int status;
            cr_assert_eq(waitpid(kid, &status, 0), kid);
            close(ready[0]);
            close(ready[1]);
            cr_expect((WIFSIGNALED(status) && WTERMSIG(status) == sig) || (WIFEXITED(status) && WEXITSTATUS(status) == 0),
                      "%d threads, round %d: status %#x", threads, round, status);
            DIR *d = opendir(dir);
            cr_assert_not_null(d);
            int others = 0;
            for (struct dirent *e; (e = readdir(d));)
                others += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "m.safetensors");
            closedir(d);
            cr_expect_eq(others, 0, "%d threads, round %d: a temporary file was left", threads, round);
            mygpt_gpt *back = NULL;
            mygpt_error err = {0};
            cr_expect_eq(mygpt_checkpoint_load(&back, path, &err), MYGPT_OK, "%d threads, round %d: %s", threads,
                         round, err.message);
            mygpt_gpt_free(back);
            unlink(path);
            // what a kill left behind, so the next round starts clean
            char cmd[300];
            snprintf(cmd, sizeof cmd, "rm -f %s/m.safetensors.*", dir);
            cr_assert_eq(system(cmd), 0);
        }
    rmdir(dir);
}
