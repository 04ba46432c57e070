/*
 * test_checkpoint.c - safetensors: a round trip keeps every bit, a checkpoint the
 * PyTorch reference wrote (tools/gen_train_goldens.py) loads and gives its logits, and
 * broken files get an error, never a crash or a read out of bounds (the sanitizer stage
 * runs this too).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "golden.h"
#include "io/json.h"
#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "mygpt/tokenizer.h"
#include "mygpt/train_state.h"

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
    golden_reader gold = golden_reader_must_open("checkpoint.txt");
    char *line;
    int64_t ids[24];
    float *want = malloc(24 * 50 * sizeof *want);
    int seen = 0;
    while ((line = golden_read(&gold))) {
        if (strncmp(line, "ids ", 4) == 0)
            seen += golden_parse_i64(line + 4, ids, 24) == 24;
        else if (strncmp(line, "logits ", 7) == 0)
            seen += golden_parse_f32(line + 7, want, 24 * 50) == 24 * 50;
    }
    golden_reader_close(&gold);
    cr_assert_eq(seen, 2);
    cr_assert_eq(mygpt_gpt_forward(g, ids, 2, 12, &err), MYGPT_OK, "%s", err.message);
    double worst = 0;
    for (int i = 0; i < 24 * 50; i++) { /* not fmax: gcc 12 for aarch64 fails vectorising it */
        const double d = fabs((double)g->acts.logits[i] - want[i]) / fmax(1, fabs(want[i]));
        worst = d > worst ? d : worst;
    }
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
    expect_refused(good, n - 3, "cut short");                          // truncated data
    memcpy(b, good, n);
    memset(b + n, 0, 4);
    expect_refused(b, n + 4, "appended");                              // bytes after the data
    expect_refused(good, 8 + hlen - 10, "larger than the file");      // truncated header
    memcpy(b, good, n);
    memset(b, 0xff, 8);                                                // a huge header length
    expect_refused(b, n, "larger than the file");
    memcpy(b, good, n);
    char *dt = strstr(b + 8, "\"F32\"");
    memcpy(dt, "\"F16\"", 5);                                          // another dtype
    expect_refused(b, n, "dtype F16");
    memcpy(b, good, n);
    dt = strstr(b + 8, "\"dtype\":\"F32\",");
    memset(dt, ' ', 14);                                               // no dtype
    expect_refused(b, n, "has no dtype (F32 here)");
    memcpy(b, good, n);
    char *sh = strstr(b + 8, "\"shape\":[5,4]");
    memcpy(sh, "\"shape\":[4,5]", 13);                                 // another shape
    expect_refused(b, n, "shape");
    memcpy(b, good, n);
    char *off = strstr(b + 8, "\"data_offsets\":[0,80]");
    cr_assert_not_null(off);
    memcpy(off, "\"data_offsets\":[9,89]", 21);                        // offsets that lie
    expect_refused(b, n, "do not tile the data (a hole or an overlap");
    memcpy(off, "\"data_offsets\":[0]   ", 21);                        // one number
    expect_refused(b, n, "data_offsets are not two numbers");
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
    b[8] = 7;                                                          // another format's bytes
    expect_refused(b, n, "no safetensors header (JSON) after its first 8 bytes");
    mygpt_gpt *g;
    cr_expect_eq(mygpt_checkpoint_load(&g, "/nonexistent/x.safetensors", &err), MYGPT_EIO);
    free(b);
    free(good);
}

/* A NaN or an infinity is never written, as a model or as a training state (its weights
 * or its optimizer's moments): the save refuses it naming the tensor, and the file that
 * was there stays byte for byte */
Test(checkpoint, a_nan_or_an_infinity_is_never_saved)
{
    const mygpt_config cfg = {.vocab_size = 33, .embed_dim = 12, .num_heads = 3, .num_layers = 2,
                              .max_seq_len = 9};
    mygpt_gpt *g;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 77, &err), MYGPT_OK);
    char path[160], state[160];
    snprintf(path, sizeof path, "%s", tmp_path("finite"));
    snprintf(state, sizeof state, "%s", tmp_path("state"));
    cr_assert_eq(mygpt_checkpoint_save(g, path, &err), MYGPT_OK, "%s", err.message);
    char *good, *now;
    size_t good_len, now_len;
    cr_assert_eq(mygpt_read_file(path, &good, &good_len, NULL), MYGPT_OK);
    // the model: a NaN, then an infinity, in the last block
    const float bad[2] = {NAN, -INFINITY};
    for (int i = 0; i < 2; i++) {
        g->params_memory[g->num_parameters - 5] = bad[i];
        cr_expect_eq(mygpt_checkpoint_save(g, path, &err), MYGPT_ERANGE, "%s", err.message);
        cr_expect(strstr(err.message, "holds a non-finite value") && strstr(err.message, "not saved"), "%s",
                  err.message);
        cr_assert_eq(mygpt_read_file(path, &now, &now_len, NULL), MYGPT_OK);
        cr_expect(now_len == good_len && memcmp(now, good, good_len) == 0, "the good checkpoint was replaced");
        free(now);
    }
    // the training state: the weights, then (finite weights) AdamW's exp_avg_sq
    int64_t ids[64];
    for (int i = 0; i < 64; i++)
        ids[i] = i % 33;
    mygpt_dataloader train = {0};
    cr_assert_eq(mygpt_dataloader_init(&train, ids, 64, 2, 8, 8, &err), MYGPT_OK, "%s", err.message);
    mygpt_optimizer opt;
    mygpt_adamw_init(&opt, 1e-3);
    float *grads = calloc(g->num_parameters, sizeof *grads);
    cr_assert_not_null(grads);
    mygpt_rng rng;
    mygpt_rng_init(&rng, 3);
    cr_assert_eq(mygpt_dataloader_epoch(&train, &rng, 1, NULL), MYGPT_OK);
    mygpt_train_position start = {0, 0, 0}, pos = {1, 0, 1}; // before the first step, after it
    cr_expect_eq(mygpt_train_state_save(state, g, &(mygpt_train_run){&opt, NULL, 0, &train, &start, NULL, 0}, &err),
                 MYGPT_ERANGE);
    cr_expect(strstr(err.message, "model.params holds a non-finite value"), "%s", err.message);
    g->params_memory[g->num_parameters - 5] = 0.5f;
    cr_assert_eq(mygpt_optimizer_step(&opt, g->params_memory, grads, g->num_parameters, &err), MYGPT_OK);
    opt.buf2[3] = INFINITY;
    cr_expect_eq(mygpt_train_state_save(state, g, &(mygpt_train_run){&opt, NULL, 0, &train, &pos, NULL, 0}, &err),
                 MYGPT_ERANGE);
    cr_expect(strstr(err.message, "optimizer.exp_avg_sq holds a non-finite value (inf at 3)"), "%s", err.message);
    cr_expect(access(state, F_OK) != 0, "a state was written");
    opt.buf2[3] = 0.0f;
    // a run the state could not be read back from: refused, nothing written
    const mygpt_train_setting latin1 = {"lr", "\xff"}, empty_key = {"", "1"};
    const mygpt_train_run unreadable[] = {{&opt, NULL, 0, NULL, &pos, NULL, 0},  // no loader (it crashed)
                                          {&opt, NULL, -1, &train, &pos, NULL, 0}, // n_rng -1
                                          {&opt, NULL, 0, &train, &pos, &latin1, 1},
                                          {&opt, NULL, 0, &train, &pos, &empty_key, 1}};
    for (size_t i = 0; i < sizeof unreadable / sizeof unreadable[0]; i++) {
        cr_expect_eq(mygpt_train_state_save(state, g, &unreadable[i], &err), MYGPT_EINVAL, "run %zu", i);
        cr_expect(access(state, F_OK) != 0, "run %zu: a state was written", i);
    }
    cr_expect_eq(mygpt_train_state_save(state, g, &(mygpt_train_run){&opt, NULL, 0, &train, &pos, NULL, 0}, &err),
                 MYGPT_OK, "%s", err.message);
    unlink(state);
    unlink(path);
    free(good);
    free(grads);
    mygpt_optimizer_free(&opt);
    mygpt_dataloader_free(&train);
    mygpt_gpt_free(g);
}

/* A PyTorch checkpoint (torch.save's .pt, nanoGPT's ckpt.pt) is named as one by its first
 * bytes, a zip archive (PyTorch 1.6 and later) or the older raw pickle, instead of their
 * being read as a safetensors header length ("header length N is larger than the file
 * allows"). */
Test(checkpoint, a_pytorch_checkpoint_is_named_by_its_magic)
{
    // a zip's local file header (stored, no sizes: they follow the data) of the pickle torch.save
    // writes first, "archive/data.pkl", then that pickle's first bytes
    char zip[256] = {'P', 'K', 3, 4, 20, 0, 8, 0, [26] = 16, [30] = 'a', 'r', 'c', 'h', 'i', 'v', 'e', '/',
                     'd', 'a', 't', 'a', '.', 'p', 'k', 'l', (char)0x80, 2, '}', 'q', 0, '.'};
    expect_refused(zip, sizeof zip, "not a safetensors file (it looks like a PyTorch checkpoint, a zip archive");
    // torch.save(_use_new_zipfile_serialization=False): protocol 2, the magic number 0x1950a86a20f9469cfc6c, ...
    static const unsigned char pickle[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a,
                                           0xa8, 0x50, 0x19, '.',  0x80, 0x02, 'M',  0xe9, 0x03, '.'};
    expect_refused((const char *)pickle, sizeof pickle,
                   "not a safetensors file (it looks like a PyTorch checkpoint, a pickle");
    expect_refused((const char *)pickle, sizeof pickle, "safetensors.torch.save_file, see cli/README.md");
    // a safetensors file whose header length happens to start with those bytes is still read as one
    char st[64] = "\x80\x02\0\0\0\0\0\0{";
    expect_refused(st, sizeof st, "larger than the file");
    memcpy(st, "PK\3\4\0\0\0\0{", 9);
    expect_refused(st, sizeof st, "larger than the file");
}

/* A checkpoint cut and rewritten by another process (as `cp new old` does) while it is
 * loaded gives a model or an error naming the file, never a SIGBUS (which would crash
 * this test). A child truncates and restores the file in a loop while this process loads
 * it again and again. */
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
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        const pid_t parent = getppid();
        if (parent == 1)
            _exit(0);
        const int fd = open(path, O_WRONLY);
        for (unsigned k = 0;; k++) {
            if (ftruncate(fd, 4096 + (off_t)(k * 7919u % 1000000u)) != 0)
                _exit(1);
            usleep(1000);
            if (pwrite(fd, content, (size_t)len, 0) != (ssize_t)len)
                _exit(1);
            usleep(1000 + k % 7 * 4000); // sometimes whole for long enough to load
            if (getppid() != parent) // the test died (where no PR_SET_PDEATHSIG says so)
                _exit(0);
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

/* With 1, 2 or 3 OpenMP threads, SIGTERM or SIGINT during a save (tests/save_tool.c) waits
 * for the file to be whole, then acts: no temporary is left, and the file loads. With
 * workers the kernel may hand the signal to an idle one, which must not end the process
 * halfway. (A signal before the save starts ends the child with nothing written: also
 * whole.) */
/* No Criterion .timeout: meson's (300 s, times its multiplier under qemu) bounds it,
 * since twelve saves of 64 MB take a while where the CPU is emulated. */
Test(checkpoint, a_signal_during_a_save_with_1_2_or_3_threads_waits_for_the_whole_file)
{
    char dir[] = "/tmp/mygpt_signal_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    for (int threads = 1; threads <= 3; threads++)
        for (int round = 0; round < 4; round++) {
            const int sig = round % 2 ? SIGINT : SIGTERM;
            int ready[2];
            cr_assert_eq(pipe(ready), 0);
            char team[16], fd[16];
            snprintf(team, sizeof team, "%d", threads);
            snprintf(fd, sizeof fd, "%d", ready[1]);
            const pid_t kid = fork();
            if (kid == 0) { // the save in a program of its own (tests/save_tool.c), ready[1] open
                // the signals as a user's shell would deliver them (an ignored or blocked
                // one would survive the exec, and the test would test nothing)
                sigset_t none;
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                signal(SIGINT, SIG_DFL);
                signal(SIGTERM, SIG_DFL);
                close(ready[0]);
                execl(SAVE_TOOL, SAVE_TOOL, team, path, fd, (char *)NULL);
                _exit(5);
            }
            close(ready[1]); // the child's end alone: if it ends before writing, the read ends too
            char c;
            int status;
            if (read(ready[0], &c, 1) != 1) {
                cr_assert_eq(waitpid(kid, &status, 0), kid);
                cr_assert_fail("%d threads, round %d: the child ended before its save (status %#x)", threads, round,
                               status);
            }
            usleep(1000 * (unsigned)(2 + 10 * round)); // into the save, at different points
            kill(kid, sig);
            cr_assert_eq(waitpid(kid, &status, 0), kid);
            close(ready[0]);
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
            // no file only when the signal came before the save began (a loaded machine)
            cr_expect(access(path, F_OK) == 0 || WIFSIGNALED(status), "%d threads, round %d: no file", threads,
                      round);
            if (access(path, F_OK) == 0)
                cr_expect_eq(mygpt_checkpoint_load(&back, path, &err), MYGPT_OK, "%d threads, round %d: %s",
                             threads, round, err.message);
            mygpt_gpt_free(back);
            unlink(path);
            // what a kill left behind, so the next round starts clean
            char cmd[300];
            snprintf(cmd, sizeof cmd, "rm -f %s/m.safetensors.*", dir);
            cr_assert_eq(system(cmd), 0);
        }
    rmdir(dir);
}

/* ---- the header through the one JSON reader ---------------------------------------------- */

/* A course model's file, with its header's JSON text (without the padding) and its data */
typedef struct parts {
    char *header, *data;
    size_t hlen, dlen;
} parts;

static parts good_parts(void)
{
    const mygpt_config cfg = {.vocab_size = 5, .embed_dim = 4, .num_heads = 2, .num_layers = 1, .max_seq_len = 3};
    mygpt_gpt *a;
    cr_assert_eq(mygpt_gpt_create(&a, &cfg, 1, NULL), MYGPT_OK);
    const char *path = tmp_path("parts");
    cr_assert_eq(mygpt_checkpoint_save(a, path, NULL), MYGPT_OK);
    mygpt_gpt_free(a);
    char *file;
    size_t n;
    cr_assert_eq(mygpt_read_file(path, &file, &n, NULL), MYGPT_OK);
    unlink(path);
    uint64_t hlen;
    memcpy(&hlen, file, 8);
    parts p = {malloc(hlen + 1), malloc(n - 8 - hlen + 1), hlen, n - 8 - hlen};
    memcpy(p.header, file + 8, hlen);
    while (p.hlen && p.header[p.hlen - 1] == ' ')
        p.hlen--;
    p.header[p.hlen] = '\0';
    memcpy(p.data, file + 8 + hlen, p.dlen);
    free(file);
    return p;
}

/* Writes header (padded to 8) and data as a safetensors file at path */
static void write_parts(const char *path, const char *header, size_t hlen, const char *data, size_t dlen)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    const uint64_t padded = (hlen + 7) / 8 * 8;
    fwrite(&padded, 8, 1, f);
    fwrite(header, 1, hlen, f);
    for (size_t k = hlen; k < padded; k++)
        fputc(' ', f);
    fwrite(data, 1, dlen, f);
    cr_assert_eq(fclose(f), 0);
}

/* The good header with text put right after "__metadata__":{ */
static char *with_metadata(const parts *p, const char *text)
{
    const char *at = strstr(p->header, "\"__metadata__\":{");
    cr_assert_not_null(at);
    const size_t cut = (size_t)(at - p->header) + 16;
    char *h = malloc(p->hlen + strlen(text) + 1);
    memcpy(h, p->header, cut);
    strcpy(h + cut, text);
    strcat(h, p->header + cut);
    return h;
}

Test(checkpoint_header, metadata_any_json_strings_load_and_other_values_are_refused_with_the_reason)
{
    parts p = good_parts();
    const char *path = tmp_path("meta");
    char long_key[300], long_value[3000];
    memset(long_key, 'k', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = '\0';
    memset(long_value, 'v', sizeof long_value - 1);
    long_value[sizeof long_value - 1] = '\0';
    char *good = malloc(8000);
    // what Python's json.dumps and serde write: \n \t \" \\ \/ \uXXXX, surrogate pairs, long
    // keys and values, unknown keys; a known value spelled with an escape ("cour\u0073e")
    snprintf(good, 8000,
             "\"note\":\"line\\nnext\\ttab \\\"q\\\" \\\\ \\/ \\u00e9 \\ud83d\\ude00 \\u0000 raw \xc3\xa9\","
             "\"%s\":\"%s\",\"\\u00e9t\\u00e9\":\"\",\"arch\":\"cour\\u0073e\",",
             long_key, long_value);
    char *h = with_metadata(&p, good);
    write_parts(path, h, strlen(h), p.data, p.dlen);
    free(h);
    mygpt_gpt *g = NULL;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK, "%s", err.message);
    cr_expect(g && g->config.vocab_size == 5 && g->config.arch == MYGPT_ARCH_COURSE);
    mygpt_gpt_free(g);
    // refused, each with its reason
    const char *bad[][2] = {
        {"\"note\":5,", "is not a string"},
        {"\"note\":[\"a\"],", "is not a string"},
        {"\"note\":\"\\x41\",", "escape JSON does not have"},
        {"\"note\":\"\\ud83d\",", "surrogate"},
        {"\"note\":\"\\ude00x\",", "surrogate"},
        {"\"note\":\"\\u12\",", "four hex digits"},
        {"\"note\":\"\xc3\",", "invalid UTF-8"},
        {"\"note\":\"\xc0\xaf\",", "invalid UTF-8"},
        {"\"note\":\"a\",,", "expected a string (a key)"},
        {"\"num_heads\":\"x\",", "__metadata__'s num_heads is not a whole number from 1 to 16777216"},
        {"\"max_seq_len\":\" 16\",", "__metadata__'s max_seq_len is not a whole number"},
        {"\"max_seq_len\":\"+16\",", "__metadata__'s max_seq_len is not a whole number"},
        {"\"num_kv_heads\":\" 1\",", "__metadata__'s num_kv_heads is not a whole number from 0 to 16777216"},
        {"\"rope\":\"2\",", "__metadata__'s rope is not 0 or 1"},
        {"\"lora_alpha\":\" 2\",", "__metadata__'s lora_alpha is not a number"},
        {"\"lora_alpha\":\"0x10\",", "__metadata__'s lora_alpha is not a number"},
        {"\"lora_alpha\":\"+2\",", "__metadata__'s lora_alpha is not a number"},
        {"\"lora_rank\":\"+2\",", "__metadata__'s lora_rank is not a whole number"},
        {"\"lora_base\":\"0000000000000000\",", "lora_base is not a checksum (16 lowercase hex digits, not all 0)"},
        {"\"lora_merged\":\"00000000000000AB\",", "lora_merged is not a checksum"},
        {"\"arch\":\"course\\u0000\",", "unknown architecture"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        h = with_metadata(&p, bad[k][0]);
        write_parts(path, h, strlen(h), p.data, p.dlen);
        free(h);
        g = NULL;
        cr_expect_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_EFORMAT, "case %zu loaded", k);
        cr_expect_null(g);
        cr_expect(strstr(err.message, bad[k][1]) != NULL, "case %zu: '%s' lacks '%s'", k, err.message, bad[k][1]);
    }
    unlink(path);
    free(good);
    free(p.header);
    free(p.data);
}

/* Sizes that each read but do not make a model together (C 4 in 3 heads): refused naming
 * the file and why, as any other fault of a file's header */
/* A safetensors header that is JSON but no object ([1,2,3]) is named as such, not read as
 * a llama2.c header (its length's high bytes are 0, where llama2.c has its hidden_dim) */
Test(checkpoint_header, a_header_that_is_a_json_array_is_named_as_one)
{
    const char *path = tmp_path("array");
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    const unsigned char len[8] = {7, 0, 0, 0, 0, 0, 0, 0};
    fwrite(len, 1, 8, f);
    fputs("[1,2,3]", f);
    cr_assert_eq(fclose(f), 0);
    mygpt_gpt *g = NULL;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_model_load(&g, path, &err), MYGPT_EFORMAT, "%s", err.message); // (any model file)
    cr_expect(strstr(err.message, "the JSON header is not an object") && !strstr(err.message, "llama2.c"), "%s",
              err.message);
    unlink(path);
}

Test(checkpoint_header, sizes_that_make_no_model_are_refused_naming_the_file)
{
    parts p = good_parts();
    const char *path = tmp_path("heads");
    char *at = strstr(p.header, "\"num_heads\":\"2\"");
    cr_assert_not_null(at);
    at[13] = '3';
    write_parts(path, p.header, p.hlen, p.data, p.dlen);
    mygpt_gpt *g = NULL;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_EINVAL);
    cr_expect_null(g);
    cr_expect(strstr(err.message, path) == err.message, "'%s' does not name %s first", err.message, path);
    cr_expect(strstr(err.message, "embed_dim=4 is not divisible by num_heads=3") != NULL, "%s", err.message);
    unlink(path);
    free(p.header);
    free(p.data);
}

/* The good file with `extra` more F32 [1] tensors "extra.N" after its own (the last one
 * named "extra.0" again when dup), loaded in a child whose CPU time is bounded: the child
 * ends with 0 when the load was refused with `want` in the message */
static void load_many_under_cpu_limit(size_t extra, int dup, const char *want)
{
    const pid_t kid = fork();
    cr_assert_geq(kid, 0);
    if (kid == 0) {
        const struct rlimit cpu = {10, 12}; // seconds; a quadratic reader needs minutes
        if (setrlimit(RLIMIT_CPU, &cpu) != 0)
            _exit(10);
        parts p = good_parts();
        const size_t cap = p.hlen + extra * 96 + 64;
        char *h = malloc(cap), *data = calloc(p.dlen + extra * 4, 1);
        if (!h || !data)
            _exit(11);
        memcpy(h, p.header, p.hlen - 1); // without its closing '}'
        memcpy(data, p.data, p.dlen);
        size_t at = p.hlen - 1;
        for (size_t k = 0; k < extra; k++) {
            const size_t b = p.dlen + 4 * k;
            at += (size_t)snprintf(h + at, cap - at, ",\"extra.%zu\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[%zu,%zu]}",
                                   dup && k == extra - 1 ? (size_t)0 : k, b, b + 4);
        }
        h[at++] = '}';
        const char *path = tmp_path("many");
        write_parts(path, h, at, data, p.dlen + extra * 4);
        mygpt_gpt *g = NULL;
        mygpt_error err = {0};
        const mygpt_status st = mygpt_checkpoint_load(&g, path, &err);
        unlink(path);
        if (st == MYGPT_OK)
            _exit(12);
        if (!strstr(err.message, want)) {
            fprintf(stderr, "%s\n", err.message);
            _exit(13);
        }
        _exit(0);
    }
    int status;
    cr_assert_eq(waitpid(kid, &status, 0), kid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%zu entries: %s %d", extra,
              WIFSIGNALED(status) ? "killed by signal" : "exit", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

Test(checkpoint_header, two_hundred_thousand_entries_are_refused_in_bounded_cpu_time, .timeout = 120)
{
    load_many_under_cpu_limit(200000, 0, "unexpected tensor extra.0");
    load_many_under_cpu_limit(200000, 1, "tensor extra.0 is named twice");
}

/* The reader itself (io/json.h): RFC 8259 and nothing more, bounded depth and values */
Test(json, strict_bounded_and_decoding)
{
    const char *valid[] = {"{}", "[]", " {\"a\":[1,-0.5e+3,true,false,null,\"x\",{}]} ", "\"\\u00e9\"", "0", "-0",
                           "1E9", "[[[]]]", "\"\\ud83d\\ude00\"", "{\"\":\"\"}"};
    for (size_t k = 0; k < sizeof valid / sizeof valid[0]; k++) {
        mygpt_json j;
        mygpt_error err = {0};
        cr_expect_eq(mygpt_json_parse(&j, valid[k], strlen(valid[k]), 8, 100, "t", &err), MYGPT_OK, "%s: %s",
                     valid[k], err.message);
        mygpt_json_free(&j);
    }
    const char *invalid[] = {"",        " ",     "{",       "[1,]",     "{\"a\":1,}", "01",      "1.",
                             ".5",      "+1",    "NaN",     "{\"a\" 1}", "{1:2}",     "[1] x",   "'a'",
                             "\"\\u00\"", "tru",   "[1 2]",   "\"a",      "[\"\t\"]",   "-",       "1e",
                             "/*c*/1",  "\"\\a\"", "[1,,2]", "\"\xff\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\""};
    for (size_t k = 0; k < sizeof invalid / sizeof invalid[0]; k++) {
        mygpt_json j;
        mygpt_error err = {0};
        cr_expect_eq(mygpt_json_parse(&j, invalid[k], strlen(invalid[k]), 8, 100, "t", &err), MYGPT_EFORMAT,
                     "accepted: %s", invalid[k]);
        cr_expect(strstr(err.message, "t: malformed JSON: ") == err.message, "%s", err.message);
        cr_expect_null(j.v);
    }
    // depth and count bounded: no recursion to overflow, no memory beyond the bound
    static char deep[200001];
    memset(deep, '[', 100000);
    memset(deep + 100000, ']', 100000);
    mygpt_json j;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_json_parse(&j, deep, 200000, 64, 1000000, "t", &err), MYGPT_EFORMAT);
    cr_expect(strstr(err.message, "nested too deep") != NULL, "%s", err.message);
    cr_expect_eq(mygpt_json_parse(&j, "[1,2,3]", 7, 8, 3, "t", &err), MYGPT_EFORMAT);
    cr_expect(strstr(err.message, "more values") != NULL, "%s", err.message);
    // members, duplicates, decoding
    const char *doc = "{\"a\":{\"n_head\":1},\"n_\\u0068ead\":12,\"b\":[1,2],\"n_head\":-3,\"s\":\"\\u00e9\\ud83d\\ude00\\n\"}";
    cr_assert_eq(mygpt_json_parse(&j, doc, strlen(doc), 8, 100, "t", &err), MYGPT_OK, "%s", err.message);
    size_t count;
    const size_t v = mygpt_json_get(&j, 0, "n_head", &count);
    cr_expect_eq(count, 2);
    long long x;
    cr_expect(mygpt_json_integer(&j, v, 1, 100, &x) && x == 12);
    cr_expect(!mygpt_json_integer(&j, mygpt_json_get(&j, 0, "b", NULL), 0, 9, &x));
    char out[16];
    cr_expect_eq(mygpt_json_string(&j, mygpt_json_get(&j, 0, "s", NULL), out, sizeof out), 7);
    cr_expect_str_eq(out, "\xc3\xa9\xf0\x9f\x98\x80\n");
    cr_expect_eq(mygpt_json_string(&j, mygpt_json_get(&j, 0, "s", NULL), out, 7), (size_t)-1);
    cr_expect_eq(mygpt_json_get(&j, 0, "missing", &count), 0);
    cr_expect_eq(count, 0);
    mygpt_json_free(&j);
}

/* A gpt2 file without __metadata__'s num_heads takes its heads from the top-level
 * "n_head" of the config.json beside it, as Hugging Face writes one (indented, extra
 * keys, a nested n_head first); an unusable config.json, or one whose sizes (where given)
 * are not the tensors', is an error saying why; a missing one gives heads of 64 */
Test(checkpoint_header, the_heads_come_from_config_json_top_level_n_head)
{
    char dir[] = "/tmp/mygpt_hfconf_XXXXXX", path[128], conf[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    snprintf(conf, sizeof conf, "%s/config.json", dir);
    const mygpt_config cfg = {.vocab_size = 10, .embed_dim = 128, .num_heads = 4, .num_layers = 1,
                              .max_seq_len = 4, .arch = MYGPT_ARCH_GPT2, .qkv_bias = 1};
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 1, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, path, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    // __metadata__ without num_heads (blanked: the header keeps its length)
    char *file;
    size_t len;
    cr_assert_eq(mygpt_read_file(path, &file, &len, NULL), MYGPT_OK);
    char *nh = strstr(file + 8, "\"num_heads\":\"4\",");
    cr_assert_not_null(nh);
    memset(nh, ' ', strlen("\"num_heads\":\"4\","));
    FILE *f = fopen(path, "wb");
    fwrite(file, 1, len, f);
    fclose(f);
    free(file);
    const char *hf = "{\n  \"activation_function\": \"gelu_new\",\n  \"architectures\": [\"GPT2LMHeadModel\"],\n"
                     "  \"task_specific_params\": {\n    \"text-generation\": {\"do_sample\": true, \"n_head\": 16}\n  },\n"
                     "  \"n_embd\": 128,\n  \"n_head\": 4,\n  \"layer_norm_epsilon\": 1e-05,\n  \"n_inner\": null,\n"
                     "  \"transformers_version\": \"4.26.0.dev0\"\n}\n";
    f = fopen(conf, "w");
    fputs(hf, f);
    fclose(f);
    mygpt_error err = {0};
    cr_assert_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(g->config.num_heads, 4, "the nested n_head won: %d", g->config.num_heads);
    mygpt_gpt_free(g);
    const char *bad[][2] = {
        {"{\"n_head\": \"4\"}", "not a whole number"},
        {"{\"n_head\": 0}", "not a whole number"},
        {"{\"n_head\": -4}", "not a whole number"},
        {"{\"n_head\": 4.0}", "not a whole number"},
        {"{\"n_embd\": 128}", "no top-level \"n_head\""},
        {"{\"x\": {\"n_head\": 4}}", "no top-level \"n_head\""},
        {"{\"n_head\": 4, \"n_head\": 4}", "more than once"},
        {"{\"n_head\": 4,}", "malformed JSON"},
        {"[4]", "not a JSON object"},
        // another model's (GPT-2 medium's beside small's tensors): its heads would be wrong
        {"{\"n_embd\": 1024, \"n_head\": 16}", "another model (n_embd 1024, "},
        {"{\"n_head\": 4, \"n_layer\": 2}", "another model (n_layer 2, "},
        {"{\"n_head\": 4, \"vocab_size\": 50257}", "another model (vocab_size 50257, "},
        {"{\"n_head\": 4, \"n_positions\": \"4\"}", "another model (n_positions \"4\", "},
        {"{\"n_head\": 4, \"n_embd\": 128, \"n_embd\": 128}", "another model (n_embd 128 and more, "},
        {"{\"n_head\": 3}", "config.json: \"n_head\" 3 does not divide"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        f = fopen(conf, "w");
        fputs(bad[k][0], f);
        fclose(f);
        g = NULL;
        cr_expect_neq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK, "case %zu loaded", k);
        cr_expect_null(g);
        cr_expect(strstr(err.message, bad[k][1]) != NULL, "case %zu: '%s' lacks '%s'", k, err.message, bad[k][1]);
        cr_expect(strstr(err.message, "config.json") != NULL, "case %zu: %s", k, err.message);
    }
    // over 1 MB, and a directory: errors, not heads of 64
    f = fopen(conf, "w");
    fputs("{\"n_head\": 4", f);
    for (int k = 0; k < 1100000; k++)
        fputc(' ', f);
    fputs("}", f);
    fclose(f);
    cr_expect_neq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK, "over 1 MB loaded");
    cr_expect(strstr(err.message, "config.json") != NULL && strstr(err.message, "bytes") != NULL, "%s", err.message);
    unlink(conf);
    cr_assert_eq(mkdir(conf, 0700), 0);
    cr_expect_neq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK, "a directory loaded");
    cr_expect(strstr(err.message, "directory") != NULL, "%s", err.message);
    rmdir(conf);
    // none: heads of 64, as documented
    cr_assert_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(g->config.num_heads, 2);
    mygpt_gpt_free(g);
    unlink(path);
    rmdir(dir);
}

/* The config.json beside a gpt2 save is read as JSON: one describing the same model with
 * Hugging Face's formatting and extra keys is kept as it is; another model, a directory,
 * a link, one over 1 MB are refused before the model is written */
Test(checkpoint_header, a_hugging_face_config_json_of_the_same_model_is_kept_others_refused_first)
{
    char dir[] = "/tmp/mygpt_hfsave_XXXXXX", path[128], conf[128], other[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    snprintf(conf, sizeof conf, "%s/config.json", dir);
    snprintf(other, sizeof other, "%s/other.json", dir);
    const mygpt_config cfg = {.vocab_size = 10, .embed_dim = 128, .num_heads = 4, .num_layers = 1,
                              .max_seq_len = 4, .arch = MYGPT_ARCH_GPT2, .qkv_bias = 1};
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 1, NULL), MYGPT_OK);
    // as transformers writes it: indented, sorted, extra keys, a nested n_head first
    const char *hf =
        "{\n  \"activation_function\": \"gelu_new\",\n  \"architectures\": [\n    \"GPT2LMHeadModel\"\n  ],\n"
        "  \"attn_pdrop\": 0.1,\n  \"bos_token_id\": 50256,\n  \"embd_pdrop\": 0.1,\n  \"eos_token_id\": 50256,\n"
        "  \"initializer_range\": 0.02,\n  \"layer_norm_epsilon\": 1e-05,\n  \"model_type\": \"gpt2\",\n"
        "  \"task_specific_params\": {\n    \"text-generation\": {\n      \"do_sample\": true,\n"
        "      \"max_length\": 50,\n      \"n_head\": 16\n    }\n  },\n"
        "  \"n_ctx\": 4,\n  \"n_embd\": 128,\n  \"n_head\": 4,\n  \"n_inner\": null,\n  \"n_layer\": 1,\n"
        "  \"n_positions\": 4,\n  \"resid_pdrop\": 0.1,\n  \"transformers_version\": \"4.26.0.dev0\",\n"
        "  \"use_cache\": true,\n  \"vocab_size\": 10\n}\n";
    FILE *f = fopen(conf, "w");
    fputs(hf, f);
    fclose(f);
    mygpt_error err = {0};
    cr_expect_eq(mygpt_checkpoint_check_save(g, path, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(mygpt_checkpoint_save(g, path, &err), MYGPT_OK, "%s", err.message);
    char *text;
    size_t len;
    cr_assert_eq(mygpt_read_file(conf, &text, &len, NULL), MYGPT_OK);
    cr_expect(len == strlen(hf) && memcmp(text, hf, len) == 0, "the config.json was replaced");
    free(text);
    unlink(path);
    // another model: refused first, naming the field; nothing written
    const char *bad[][2] = {
        {"{\"vocab_size\": 10, \"n_positions\": 4, \"n_embd\": 768, \"n_layer\": 1, \"n_head\": 4}", "n_embd 768"},
        {"{\"vocab_size\": 10, \"n_positions\": 4, \"n_embd\": 128, \"n_layer\": 1}", "n_head missing"},
        {"{\"vocab_size\": 10, \"n_positions\": 4, \"n_embd\": 128, \"n_layer\": 1, \"n_head\": \"4\"}", "n_head \"4\""},
        {"{\"vocab_size\": 10,", "malformed JSON"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        f = fopen(conf, "w");
        fputs(bad[k][0], f);
        fclose(f);
        cr_expect_eq(mygpt_checkpoint_check_save(g, path, &err), MYGPT_EINVAL, "case %zu", k);
        cr_expect(strstr(err.message, bad[k][1]) != NULL && strstr(err.message, "not replaced") != NULL,
                  "case %zu: %s", k, err.message);
        cr_expect_eq(mygpt_checkpoint_save(g, path, &err), MYGPT_EINVAL, "case %zu", k);
        cr_expect(access(path, F_OK) != 0, "case %zu: the model was written", k);
    }
    // over 1 MB: not silently replaced
    f = fopen(conf, "w");
    for (int k = 0; k < 1100000; k++)
        fputc(' ', f);
    fclose(f);
    cr_expect_eq(mygpt_checkpoint_save(g, path, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "not replaced") != NULL, "%s", err.message);
    cr_expect(access(path, F_OK) != 0, "the model was written");
    unlink(conf);
    // a directory and a link: refused before the model is written
    cr_assert_eq(mkdir(conf, 0700), 0);
    cr_expect_eq(mygpt_checkpoint_save(g, path, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "a directory") != NULL, "%s", err.message);
    cr_expect(access(path, F_OK) != 0, "the model was written");
    rmdir(conf);
    f = fopen(other, "w");
    fputs(hf, f);
    fclose(f);
    cr_assert_eq(symlink(other, conf), 0);
    cr_expect_eq(mygpt_checkpoint_check_save(g, path, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "symbolic link") != NULL, "%s", err.message);
    cr_expect_eq(mygpt_checkpoint_save(g, path, &err), MYGPT_EINVAL);
    cr_expect(access(path, F_OK) != 0, "the model was written");
    unlink(conf);
    unlink(other);
    // none: mygpt writes its own
    cr_expect_eq(mygpt_checkpoint_save(g, path, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(access(conf, F_OK), 0);
    unlink(conf);
    unlink(path);
    rmdir(dir);
    mygpt_gpt_free(g);
}

/* What passes the check before a training is what the save can do: a file name of 249 to
 * 255 bytes (no room for the temporary's ".XXXXXX"), and another user's file in a sticky
 * folder (rename gets EPERM), are refused by the check */
Test(checkpoint, the_check_before_training_refuses_what_the_save_would_fail_on)
{
    char dir[] = "/tmp/mygpt_names_XXXXXX", path[512], m[256];
    cr_assert_not_null(mkdtemp(dir));
    memset(m, 'm', sizeof m);
    for (int len = 249; len <= 255; len += 3) {
        snprintf(path, sizeof path, "%s/%.*s", dir, len, m);
        mygpt_error err = {0};
        cr_expect_eq(mygpt_checkpoint_check_path(path, &err), MYGPT_EIO, "a name of %d bytes passed", len);
        cr_expect(strstr(err.message, "no room") != NULL, "%s", err.message);
    }
    snprintf(path, sizeof path, "%s/%.*s", dir, 248, m);
    cr_expect_eq(mygpt_checkpoint_check_path(path, NULL), MYGPT_OK, "248 bytes leave room");
    DIR *d = opendir(dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));)
        files += e->d_name[0] != '.';
    closedir(d);
    cr_expect_eq(files, 0, "the check left a file");
    // another user's file in a sticky folder: this test (root) owns it, `nobody` checks
    if (geteuid() != 0) {
        rmdir(dir);
        cr_skip_test("the sticky-folder case needs root to act as a second user (nobody)");
    }
    cr_assert_eq(chmod(dir, 01777), 0);
    snprintf(path, sizeof path, "%s/theirs.safetensors", dir);
    FILE *f = fopen(path, "w");
    fputs("x", f);
    fclose(f);
    const pid_t kid = fork();
    if (kid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(10);
        mygpt_error err = {0};
        if (mygpt_checkpoint_check_path(path, &err) != MYGPT_EIO)
            _exit(11);
        _exit(strstr(err.message, "another user") ? 0 : 12);
    }
    int status;
    cr_assert_eq(waitpid(kid, &status, 0), kid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "as nobody: exit %d", WEXITSTATUS(status));
    unlink(path);
    rmdir(dir);
}

/* ---- training states (mygpt/train_state.h) ------------------------------------------ */

/* What a state is saved from and loaded into: a small model, AdamW, the loader over 200
 * tokens (24 batches of 2 windows of 4), one generator */
typedef struct state_run {
    mygpt_gpt *g;
    mygpt_optimizer opt;
    mygpt_rng rng;
    mygpt_dataloader train;
} state_run;

static int64_t state_tokens[200];

static void state_run_start(state_run *r, int steps)
{
    const mygpt_config cfg = {.vocab_size = 11, .embed_dim = 4, .num_heads = 2, .num_layers = 1, .max_seq_len = 4};
    for (int i = 0; i < 200; i++)
        state_tokens[i] = (i * 7) % 11;
    cr_assert_eq(mygpt_gpt_create(&r->g, &cfg, 3, NULL), MYGPT_OK);
    mygpt_adamw_init(&r->opt, 0.01);
    mygpt_rng_init(&r->rng, 3);
    memset(&r->train, 0, sizeof r->train);
    cr_assert_eq(mygpt_dataloader_init(&r->train, state_tokens, 200, 2, 4, 4, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_dataloader_epoch(&r->train, &r->rng, 1, NULL), MYGPT_OK);
    float *grads = calloc(r->g->num_parameters, sizeof *grads);
    for (int s = 0; s < steps; s++) // the buffers made, the step counted
        cr_assert_eq(mygpt_optimizer_step(&r->opt, r->g->params_memory, grads, r->g->num_parameters, NULL), MYGPT_OK);
    free(grads);
}

static void state_run_free(state_run *r)
{
    mygpt_gpt_free(r->g);
    mygpt_optimizer_free(&r->opt);
    mygpt_dataloader_free(&r->train);
}

/* A state of a run 3 steps in (epoch 0, batch 3), its generator gen (NULL: the run's) */
static void save_state(const char *path, const mygpt_rng *gen)
{
    state_run r;
    state_run_start(&r, 3);
    mygpt_rng saved = gen ? *gen : r.rng; // the run's own, or the one given
    mygpt_rng *rngs[1] = {&saved};
    mygpt_train_position pos = {3, 0, 3};
    const mygpt_train_setting set[1] = {{"--seed", "3"}};
    mygpt_error err = {0};
    cr_assert_eq(mygpt_train_state_save(path, r.g, &(mygpt_train_run){&r.opt, rngs, 1, &r.train, &pos, set, 1}, &err),
                 MYGPT_OK, "%s", err.message);
    state_run_free(&r);
}

/* Loads path into a fresh run: the status, the message in err */
static mygpt_status load_state(const char *path, mygpt_error *err)
{
    state_run r;
    state_run_start(&r, 0);
    mygpt_rng *rngs[1] = {&r.rng};
    mygpt_train_position pos;
    const mygpt_train_setting set[1] = {{"--seed", "3"}};
    const mygpt_status st =
        mygpt_train_state_load(path, r.g, &(mygpt_train_run){&r.opt, rngs, 1, &r.train, &pos, set, 1}, err);
    if (st == MYGPT_OK) // what it loads, a draw goes on from
        for (int k = 0; k < 2000; k++)
            mygpt_rng_random(&r.rng);
    state_run_free(&r);
    return st;
}

/* path's header with its first `old` made `to` (its length and padding made again) */
static void state_header_replace(const char *path, const char *old, const char *to)
{
    char *b;
    size_t n;
    cr_assert_eq(mygpt_read_file(path, &b, &n, NULL), MYGPT_OK);
    uint64_t hlen = 0;
    for (int i = 0; i < 8; i++)
        hlen |= (uint64_t)(unsigned char)b[i] << (8 * i);
    char *h = strndup(b + 8, hlen), *out = malloc(hlen + strlen(to) + 16);
    size_t hl = strlen(h);
    while (hl > 0 && h[hl - 1] == ' ') // the padding
        h[--hl] = '\0';
    const char *at = strstr(h, old);
    cr_assert_not_null(at, "no %s", old);
    size_t o = 8 + (size_t)sprintf(out + 8, "%.*s%s%s", (int)(at - h), h, to, at + strlen(old));
    while ((o - 8) % 8)
        out[o++] = ' ';
    for (int i = 0; i < 8; i++)
        out[i] = (char)((uint64_t)(o - 8) >> (8 * i));
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(out, 1, o, f) == o && fwrite(b + 8 + hlen, 1, n - 8 - hlen, f) == n - 8 - hlen &&
              fclose(f) == 0);
    free(h);
    free(out);
    free(b);
}

static void state_meta_get(const char *path, const char *key, char *out, size_t len);

/* path's header with "key":"value" made "key":"to" */
static void state_meta_set(const char *path, const char *key, const char *to)
{
    static char value[8192], old[8300], new[17100];
    state_meta_get(path, key, value, sizeof value);
    snprintf(old, sizeof old, "\"%s\":\"%s\"", key, value);
    snprintf(new, sizeof new, "\"%s\":\"%s\"", key, to);
    state_header_replace(path, old, new);
}

/* A generator whose left and next disagree (each in its range) is refused: its first draw
 * would read past the 624 words */
Test(train_state, a_generator_whose_words_disagree_is_refused)
{
    const char *path = tmp_path("gen");
    mygpt_error err = {0};
    save_state(path, NULL);
    cr_expect_eq(load_state(path, &err), MYGPT_OK, "the state as saved: %s", err.message);
    const struct {
        int left, next, cached;
        double normal;
    } bad[] = {{625, 624, 0, 0}, {624, 624, 0, 0}, {1, 623, 0, 0}, {300, 300, 0, 0}, {1, 1, 0, 0},
               {300, 325, 1, NAN}, {300, 325, 1, INFINITY}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mygpt_rng g = {0};
        mygpt_rng_seed(&g, 3);
        g.left = bad[i].left;
        g.next = bad[i].next;
        g.has_cached_normal = bad[i].cached;
        g.cached_normal = bad[i].normal;
        save_state(path, &g);
        cr_expect_eq(load_state(path, &err), MYGPT_EFORMAT, "left %d next %d: accepted", g.left, g.next);
        cr_expect(strstr(err.message, "generator.0: the generator's") != NULL, "%s", err.message);
    }
    unlink(path);
}

/* path's header's "key":"VALUE", VALUE into out */
static void state_meta_get(const char *path, const char *key, char *out, size_t len)
{
    char *b;
    size_t n;
    cr_assert_eq(mygpt_read_file(path, &b, &n, NULL), MYGPT_OK);
    char want[96];
    snprintf(want, sizeof want, "\"%s\":\"", key);
    const char *at = strstr(b + 8, want); // (the JSON header comes first, with no NUL in it)
    cr_assert_not_null(at, "no %s", key);
    at += strlen(want);
    const char *end = memchr(at, '"', n - (size_t)(at - b));
    cr_assert(end && (size_t)(end - at) < len);
    memcpy(out, at, (size_t)(end - at));
    out[end - at] = '\0';
    free(b);
}

/* A generator's field written past its type is refused, not wrapped into range: left
 * plus 2^32 (which an int read as %d wrapped back to left), a seed of 20 hex digits, and
 * a sign or a space rng_string never writes */
Test(train_state, a_generator_field_past_its_type_is_refused)
{
    const char *path = tmp_path("genwide");
    mygpt_error err = {0};
    save_state(path, NULL);
    char value[8192], bad[8300];
    state_meta_get(path, "generator.0", value, sizeof value);
    const char *c1 = strchr(value, ':'), *c2 = strchr(c1 + 1, ':');
    const long long left = strtoll(c1 + 1, NULL, 10);
    for (int v = 0; v < 4; v++) {
        if (v == 0)
            snprintf(bad, sizeof bad, "%.*s:%lld%s", (int)(c1 - value), value, left + 4294967296LL, c2);
        else if (v == 1)
            snprintf(bad, sizeof bad, "ffffffffffffffffffff%s", c1);
        else
            snprintf(bad, sizeof bad, "%.*s:%s%lld%s", (int)(c1 - value), value, v == 2 ? "+" : " ", left, c2);
        save_state(path, NULL);
        state_meta_set(path, "generator.0", bad);
        cr_expect_eq(load_state(path, &err), MYGPT_EFORMAT, "case %d accepted", v);
        cr_expect(strstr(err.message, "generator.0 is missing or not a generator's state") != NULL, "%d: %s", v,
                  err.message);
    }
    unlink(path);
}

/* A metadata key given twice with two values is refused (which would count?); the same
 * value twice is the same state */
Test(train_state, a_metadata_key_given_two_values_is_refused)
{
    const char *path = tmp_path("dupkey");
    mygpt_error err = {0};
    save_state(path, NULL);
    static char value[8192], twice[17000];
    state_meta_get(path, "generator.0", value, sizeof value);
    for (int differ = 0; differ < 2; differ++) {
        snprintf(twice, sizeof twice, "%s\",\"generator.0\":\"%s%s", value,
                 differ ? (value[0] == '1' ? "2" : "1") : "", value + differ); // another seed's digit
        save_state(path, NULL);
        state_meta_set(path, "generator.0", twice);
        if (differ) {
            cr_expect_eq(load_state(path, &err), MYGPT_EFORMAT, "two values accepted");
            cr_expect(strstr(err.message, "given two values") != NULL, "%s", err.message);
        } else {
            cr_expect_eq(load_state(path, &err), MYGPT_OK, "the same value twice: %s", err.message);
        }
    }
    unlink(path);
}

/* path's tensor `name`: its element `index` (of `size` bytes) made `value`, found by the
 * header's data_offsets */
static void state_tensor_set(const char *path, const char *name, size_t index, const void *value, size_t size)
{
    char *b;
    size_t n;
    cr_assert_eq(mygpt_read_file(path, &b, &n, NULL), MYGPT_OK);
    uint64_t hlen = 0;
    for (int i = 0; i < 8; i++)
        hlen |= (uint64_t)(unsigned char)b[i] << (8 * i);
    char want[96];
    snprintf(want, sizeof want, "\"%s\":{", name);
    const char *at = strstr(b + 8, want), *offsets = at ? strstr(at, "\"data_offsets\":[") : NULL;
    cr_assert(offsets && offsets < b + 8 + hlen, "no %s", name);
    unsigned long long from = 0;
    cr_assert_eq(sscanf(offsets, "\"data_offsets\":[%llu", &from), 1);
    cr_assert_leq(8 + hlen + from + (index + 1) * size, n);
    memcpy(b + 8 + hlen + from + index * size, value, size);
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(b, 1, n, f) == n && fclose(f) == 0);
    free(b);
}

/* A state is checked as a whole: values no run leaves (a NaN or an infinity in the weights
 * or AdamW's moments, a negative exp_avg_sq) and a loader's order that repeats a window are
 * refused when it is read, naming the file and the tensor, not met steps later */
Test(train_state, values_no_run_leaves_are_refused_when_read)
{
    const char *path = tmp_path("values");
    mygpt_error err = {0};
    const float nan = NAN, inf = INFINITY, negative = -1.0f;
    const struct {
        const char *name;
        size_t index;
        const float *value;
        const char *msg;
    } bad[] = {
        {"model.params", 5, &nan, "model.params holds nan at 5"},
        {"optimizer.exp_avg", 2, &inf, "optimizer.exp_avg holds inf at 2"},
        {"optimizer.exp_avg_sq", 0, &negative, "optimizer.exp_avg_sq holds -1 at 0"},
        {"optimizer.exp_avg_sq", 7, &nan, "optimizer.exp_avg_sq holds nan at 7"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        save_state(path, NULL);
        state_tensor_set(path, bad[i].name, bad[i].index, bad[i].value, sizeof(float));
        cr_expect_eq(load_state(path, &err), MYGPT_EFORMAT, "%s: accepted", bad[i].msg);
        cr_expect(strstr(err.message, bad[i].msg) != NULL, "'%s' lacks '%s'", err.message, bad[i].msg);
    }
    save_state(path, NULL);
    const int64_t first = 0; // window 0 twice (or once more than it is)
    state_tensor_set(path, "loader.order", 1, &first, sizeof first);
    state_tensor_set(path, "loader.order", 2, &first, sizeof first);
    cr_expect_eq(load_state(path, &err), MYGPT_EFORMAT, "an order that repeats a window: accepted");
    cr_expect(strstr(err.message, "the loader's order is not a permutation") != NULL, "%s", err.message);
    unlink(path);
}

/* path's tensor `name`: its header entry ({"dtype":...,"data_offsets":[from,to]}) into
 * entry, its offsets into from and to */
static void state_tensor_entry(const char *path, const char *name, char *entry, size_t cap, unsigned long long *from,
                               unsigned long long *to)
{
    char *b;
    size_t n;
    cr_assert_eq(mygpt_read_file(path, &b, &n, NULL), MYGPT_OK);
    char want[96];
    snprintf(want, sizeof want, "\"%s\":{", name);
    const char *at = strstr(b + 8, want), *end = at ? strchr(at, '}') : NULL;
    cr_assert(end && (size_t)(end + 1 - at) < cap, "no %s", name);
    snprintf(entry, cap, "%.*s", (int)(end + 1 - at), at);
    cr_assert_eq(sscanf(strstr(entry, "\"data_offsets\":["), "\"data_offsets\":[%llu,%llu]", from, to), 2);
    free(b);
}

/* A state's tensors must lie end to end over its data, each name once, as a save lays them:
 * the weights read 4 bytes off (into the next tensor, or leaving a gap), or a second
 * model.params in front that is the optimizer's moment, were read as the model's weights
 * and trained from; and a small file whose metadata claim a huge model is refused before
 * the model is made (it was "out of memory" for 69 billion parameters) */
Test(train_state, tensors_that_do_not_tile_the_data_or_share_a_name_are_refused)
{
    const char *path = tmp_path("tiles");
    char entry[512], moved[512], twice[1100];
    unsigned long long from, to, mfrom, mto;
    const struct {
        const char *name;
        long long by; // bytes its offsets move
    } shift[] = {{"model.params", 4}, {"optimizer.exp_avg", -4}, {"optimizer.exp_avg_sq", 4}};
    for (size_t i = 0; i < sizeof shift / sizeof shift[0]; i++) {
        save_state(path, NULL);
        state_tensor_entry(path, shift[i].name, entry, sizeof entry, &from, &to);
        snprintf(moved, sizeof moved, "%.*s\"data_offsets\":[%llu,%llu]}",
                 (int)(strstr(entry, "\"data_offsets\"") - entry), entry, from + shift[i].by, to + shift[i].by);
        state_header_replace(path, entry, moved);
        for (int as_model = 0; as_model < 2; as_model++) {
            mygpt_error err = {0};
            mygpt_gpt *g = NULL;
            const mygpt_status st = as_model ? mygpt_train_state_model(&g, path, &err) : load_state(path, &err);
            cr_expect_eq(st, MYGPT_EFORMAT, "%s moved by %lld: accepted (%s)", shift[i].name, shift[i].by,
                         as_model ? "as a model" : "resumed");
            cr_expect(strstr(err.message, "data offsets do not tile") && strstr(err.message, path), "%s", err.message);
            mygpt_gpt_free(g);
        }
    }
    save_state(path, NULL); // a second model.params in front: the first moment's bytes
    state_tensor_entry(path, "model.params", entry, sizeof entry, &from, &to);
    char moment[512];
    state_tensor_entry(path, "optimizer.exp_avg", moment, sizeof moment, &mfrom, &mto);
    snprintf(twice, sizeof twice, "\"model.params\":{%s,%s", strchr(moment, '{') + 1, entry);
    state_header_replace(path, entry, twice);
    for (int as_model = 0; as_model < 2; as_model++) {
        mygpt_error err = {0};
        mygpt_gpt *g = NULL;
        const mygpt_status st = as_model ? mygpt_train_state_model(&g, path, &err) : load_state(path, &err);
        cr_expect_eq(st, MYGPT_EFORMAT, "model.params twice: accepted (%s)", as_model ? "as a model" : "resumed");
        cr_expect(strstr(err.message, "named twice"), "%s", err.message);
        mygpt_gpt_free(g);
    }
    save_state(path, NULL); // a configuration of 2^24 x 4096 over a model of 11 x 4
    state_meta_set(path, "vocab_size", "16777216");
    state_meta_set(path, "embed_dim", "4096");
    mygpt_error err = {0};
    mygpt_gpt *g = NULL;
    cr_expect_eq(mygpt_train_state_model(&g, path, &err), MYGPT_EFORMAT, "a claim of a huge model: %s", err.message);
    cr_expect(strstr(err.message, "model.params is not of the size the state's configuration gives"), "%s",
              err.message);
    mygpt_gpt_free(g);
    // a size past int is said as it is (cut to an int, 2^32 + 11 would read as 11)
    save_state(path, NULL);
    state_meta_set(path, "vocab_size", "4294967307");
    cr_expect_eq(mygpt_train_state_model(&g, path, &err), MYGPT_EFORMAT, "%s", err.message);
    cr_expect(strstr(err.message, "vocab_size is 4294967307, out of range"), "%s", err.message);
    mygpt_gpt_free(g);
    unlink(path);
}

/* A training state given as a model is named as one, not refused by its tensor count */
Test(train_state, a_training_state_is_named_as_one_where_a_model_is_expected)
{
    const char *path = tmp_path("notmodel");
    save_state(path, NULL);
    mygpt_gpt *g = NULL;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_EINVAL, "a training state loads as a model");
    cr_expect_null(g);
    cr_expect(strstr(err.message, "is a training state (for mygpt train --resume), not a model: give the model train "
                                  "saves with --save") != NULL, "%s", err.message);
    unlink(path);
}

/* optimizer.step is the run's step, which is epoch * batches + batch, at most
 * MYGPT_TRAIN_MAX_STEP (LLONG_MAX would overflow at the next AdamW step) */
Test(train_state, an_optimizer_step_or_position_that_disagrees_is_refused)
{
    const char *path = tmp_path("step");
    mygpt_error err = {0};
    const struct {
        const char *key[3], *value[3], *msg;
    } bad[] = {
        {{"optimizer.step"}, {"9223372036854775807"}, "optimizer step 9223372036854775807 is not its step 3"},
        {{"optimizer.step"}, {"9223372036854775806"}, "optimizer step 9223372036854775806 is not its step 3"},
        {{"optimizer.step"}, {"4"}, "optimizer step 4 is not its step 3"},
        {{"optimizer.step", "step", "epoch"}, {"9223372036854775807", "9223372036854775807", "384307168202282325"},
         "step 9223372036854775807 is past the last a run takes (9007199254740992)"},
        {{"optimizer.step", "step", "epoch"}, {"9007199254740993", "9007199254740993", "375299968947541"},
         "past the last a run takes"},
        {{"epoch"}, {"9223372036854775807"}, "step 3 is not epoch 9223372036854775807 of 24 batches and batch 3"},
        {{"step", "optimizer.step"}, {"27", "27"}, "step 27 is not epoch 0 of 24 batches and batch 3"},
        {{"optimizer.buffers"}, {"0"}, "optimizer lacks buffers at step 3"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        save_state(path, NULL);
        for (int k = 0; k < 3 && bad[i].key[k]; k++)
            state_meta_set(path, bad[i].key[k], bad[i].value[k]);
        cr_expect_eq(load_state(path, &err), MYGPT_EFORMAT, "%s: accepted", bad[i].msg);
        cr_expect(strstr(err.message, bad[i].msg) != NULL, "'%s' lacks '%s'", err.message, bad[i].msg);
    }
    // the step and the position moved together, within the bound: taken
    save_state(path, NULL);
    state_meta_set(path, "step", "51");
    state_meta_set(path, "optimizer.step", "51");
    state_meta_set(path, "epoch", "2");
    cr_expect_eq(load_state(path, &err), MYGPT_OK, "%s", err.message);
    unlink(path);
}

/* The number of entries of dir whose name starts with prefix */
static int entries_starting(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* The _new savers (finetune --save and merge OUT without --force) never replace a file at
 * the path, even one that appeared after the caller looked: what they wrote stays whole
 * beside it, named in the message; where nothing is, they write the file and leave no
 * temporary. */
Test(checkpoint, the_new_savers_never_replace_a_file_that_is_there)
{
    char dir[] = "/tmp/mygpt-savenew-XXXXXX", path[300], kept[8600];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs("the user's file", f);
    fclose(f);
    const mygpt_config cfg = {.vocab_size = 7, .embed_dim = 4, .num_heads = 2, .num_layers = 1, .max_seq_len = 4};
    mygpt_gpt *g = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, &err), MYGPT_OK);
    const mygpt_status st = mygpt_checkpoint_save_new(g, path, &err);
    cr_expect_eq(st, MYGPT_EIO, "%s", err.message);
    cr_expect(strstr(err.message, "is there now") && strstr(err.message, "kept as"), "%s", err.message);
    char buf[64] = {0};
    f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_expect(fread(buf, 1, sizeof buf - 1, f) == 15 && strcmp(buf, "the user's file") == 0, "replaced: %s", buf);
    fclose(f);
    cr_expect_eq(entries_starting(dir, "m.safetensors."), 1, "what was written is kept beside it");
    const char *at = strstr(err.message, "kept as ");
    cr_assert_not_null(at);
    snprintf(kept, sizeof kept, "%.*s", (int)strcspn(at + 8, ")"), at + 8);
    mygpt_gpt *back = NULL;
    cr_expect_eq(mygpt_checkpoint_load(&back, kept, &err), MYGPT_OK, "the kept file is the whole model: %s",
                 err.message);
    mygpt_gpt_free(back);
    cr_assert_eq(unlink(kept), 0);
    // the same for a file's bytes
    cr_expect_eq(mygpt_write_file_new(path, "new", 3, &err), MYGPT_EIO);
    cr_expect_eq(entries_starting(dir, "m.safetensors."), 1);
    at = strstr(err.message, "kept as ");
    cr_assert_not_null(at);
    snprintf(kept, sizeof kept, "%.*s", (int)strcspn(at + 8, ")"), at + 8);
    cr_assert_eq(unlink(kept), 0);
    // where nothing is: written, no temporary left
    cr_assert_eq(unlink(path), 0);
    cr_expect_eq(mygpt_checkpoint_save_new(g, path, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(mygpt_checkpoint_load(&back, path, &err), MYGPT_OK, "%s", err.message);
    mygpt_gpt_free(back);
    cr_expect_eq(entries_starting(dir, "m.safetensors"), 1, "a temporary was left");
    cr_assert_eq(unlink(path), 0);
    mygpt_gpt_free(g);
    cr_expect_eq(rmdir(dir), 0);
}

/* What a program looks at before it replaces a file with one of its own kind: nothing
 * there, the first bytes of a regular file (at most cap - 1 of them, NULs kept, a NUL
 * after), and never a link, a FIFO or a folder, none of them followed or opened. */
Test(checkpoint, a_files_head_is_read_only_from_a_regular_file)
{
    char dir[] = "/tmp/mygpt-head-XXXXXX", path[300], link_path[320], head[8];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f", dir);
    snprintf(link_path, sizeof link_path, "%s/l", dir);
    cr_expect_eq(mygpt_file_head(path, head, sizeof head), MYGPT_HEAD_ABSENT);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fwrite("ab\0cdefghij", 1, 11, f);
    fclose(f);
    memset(head, 'x', sizeof head);
    cr_expect_eq(mygpt_file_head(path, head, sizeof head), 7);
    cr_expect(memcmp(head, "ab\0cdef", 8) == 0, "the first 7 bytes and a NUL");
    cr_expect_eq(mygpt_file_head(path, head, 1), 0);
    cr_expect_eq(head[0], '\0');
    snprintf(link_path, sizeof link_path, "%s/x", path); // under a file: not absent, not readable
    cr_expect_eq(mygpt_file_head(link_path, head, sizeof head), MYGPT_HEAD_OTHER, "a path through a file");
    snprintf(link_path, sizeof link_path, "%s/l", dir);
    cr_assert_eq(truncate(path, 0), 0);
    cr_expect_eq(mygpt_file_head(path, head, sizeof head), 0, "an empty file");
    cr_assert_eq(symlink(path, link_path), 0);
    cr_expect_eq(mygpt_file_head(link_path, head, sizeof head), MYGPT_HEAD_OTHER, "a link followed");
    cr_assert_eq(unlink(link_path), 0);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkfifo(path, 0600), 0);
    cr_expect_eq(mygpt_file_head(path, head, sizeof head), MYGPT_HEAD_OTHER, "a FIFO opened");
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkdir(path, 0700), 0);
    cr_expect_eq(mygpt_file_head(path, head, sizeof head), MYGPT_HEAD_OTHER, "a folder read");
    cr_assert_eq(rmdir(path), 0);
    cr_expect_eq(rmdir(dir), 0);
}
