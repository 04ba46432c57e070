/*
 * test_cli_download.c - `mygpt download gpt2` against a small HTTP server of this test on
 * the loopback (a child process: GET with Range, a connection cut after a chosen byte, a
 * log of the requests), serving a real Hugging Face GPT-2 checkpoint made tiny
 * (tests/fixtures/fake_gpt2, its README says whence) under the hub's resolve/main/FILE
 * paths. The real host is never reached: HF_ENDPOINT points at the server, and the
 * fixture's sha256 is pinned through MYGPT_DOWNLOAD_TEST_PINS, which the tool honours
 * only for a host on this machine (tested too).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_common.h"

#define FIXTURE TESTS_SOURCE_DIR "/fixtures/fake_gpt2"
#define FIXTURE_SHA "808aa78bb0c1a5e5cba726717daf852887274ab2d86b2ad7ca166ae5bb28ec93"
#define FIXTURE_BYTES 411960
#define CONFIG_SHA "32bb5058b09daac90c586adbb9588823103e318a0489556f48457b4b31458877"
#define CONFIG_BYTES 908
#define REPO_PATH "/openai-community/gpt2/resolve/main/"

/* What the server does: files from FIXTURE under PREFIX/openai-community/gpt2/resolve/
 * main/, model.safetensors cut after `cut_at` bytes (-1: whole), a Range ignored (200)
 * when ignore_range */
typedef struct serve_opts {
    const char *prefix;
    int64_t cut_at;
    int ignore_range;
} serve_opts;

typedef struct server {
    pid_t pid;
    int port;
    char log[300]; /* one line a request: "PATH RANGE" (RANGE "-" when none) */
} server;

/* The request's path and the first byte of its Range (-1: none) from the head */
static void parse_request(const char *head, char path[1024], int64_t *from)
{
    path[0] = '\0';
    *from = -1;
    sscanf(head, "GET %1023s", path);
    for (const char *l = strstr(head, "\r\n"); l; l = strstr(l + 2, "\r\n"))
        if (strncasecmp(l + 2, "Range: bytes=", 13) == 0)
            *from = strtoll(l + 15, NULL, 10);
}

static void send_all(int fd, const char *b, size_t n)
{
    while (n > 0) {
        const ssize_t w = write(fd, b, n);
        if (w <= 0)
            return;
        b += w, n -= (size_t)w;
    }
}

/* One connection: one request read, answered, closed */
static void serve_one(int c, const serve_opts *o, const char *log)
{
    char head[4096] = "", path[1024];
    size_t got = 0;
    while (got < sizeof head - 1 && !strstr(head, "\r\n\r\n")) {
        const ssize_t r = read(c, head + got, sizeof head - 1 - got);
        if (r <= 0)
            return;
        got += (size_t)r;
        head[got] = '\0';
    }
    int64_t from;
    parse_request(head, path, &from);
    FILE *lf = fopen(log, "a");
    if (lf) {
        fprintf(lf, "%s %" PRId64 "\n", path, from);
        fclose(lf);
    }
    char file[2200], reply[512];
    const size_t pl = strlen(o->prefix), rl = strlen(REPO_PATH);
    size_t n = 0;
    char *body = NULL;
    if (strncmp(path, o->prefix, pl) == 0 && strncmp(path + pl, REPO_PATH, rl) == 0 &&
        !strchr(path + pl + rl, '/')) {
        snprintf(file, sizeof file, "%s/%s", FIXTURE, path + pl + rl);
        body = file_bytes(file, &n);
    }
    if (!body) {
        snprintf(reply, sizeof reply, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        send_all(c, reply, strlen(reply));
        return;
    }
    int64_t start = from >= 0 && !o->ignore_range ? from : 0, end = (int64_t)n;
    if (start >= end) {
        snprintf(reply, sizeof reply, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Length: 0\r\n\r\n");
        send_all(c, reply, strlen(reply));
        free(body);
        return;
    }
    if (start > 0)
        snprintf(reply, sizeof reply, "HTTP/1.1 206 Partial Content\r\nContent-Length: %" PRId64 "\r\n"
                 "Content-Range: bytes %" PRId64 "-%" PRId64 "/%zu\r\nConnection: close\r\n\r\n",
                 end - start, start, end - 1, n);
    else
        snprintf(reply, sizeof reply, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", n);
    send_all(c, reply, strlen(reply));
    if (o->cut_at >= 0 && strstr(path, "model.safetensors") && o->cut_at < end)
        end = o->cut_at > start ? o->cut_at : start;
    send_all(c, body + start, (size_t)(end - start));
    free(body);
}

/* Starts the server on 127.0.0.1 (a port the system picks); it serves until killed, or
 * 60 s at most */
static void server_start(server *s, const serve_opts *o, const char *dir)
{
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(fd, 8), 0);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    s->port = ntohs(a.sin_port);
    snprintf(s->log, sizeof s->log, "%s.log", dir);
    unlink(s->log);
    s->pid = fork();
    cr_assert_geq(s->pid, 0);
    if (s->pid == 0) {
        alarm(60);
        signal(SIGPIPE, SIG_IGN);
        for (;;) {
            const int c = accept(fd, NULL, NULL);
            if (c < 0)
                _exit(errno == EINTR ? 0 : 1);
            serve_one(c, o, s->log);
            close(c);
        }
    }
    close(fd);
}

static void server_stop(server *s)
{
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    unlink(s->log);
}

/* The pins of the fixture (sha256 of model.safetensors as given) in dir's pins file,
 * and the environment that points the tool at the server */
static void point_at(const server *s, const char *dir, const char *prefix, const char *model_sha)
{
    char pins[300], endpoint[200];
    snprintf(pins, sizeof pins, "%s.pins", dir);
    FILE *f = fopen(pins, "w");
    cr_assert_not_null(f);
    fprintf(f, "config.json %d %s\nmodel.safetensors %d %s\n", CONFIG_BYTES, CONFIG_SHA, FIXTURE_BYTES, model_sha);
    cr_assert_eq(fclose(f), 0);
    setenv("MYGPT_DOWNLOAD_TEST_PINS", pins, 1);
    snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d%s/", s->port, prefix);
    setenv("HF_ENDPOINT", endpoint, 1);
}

static void unpin(const char *dir)
{
    char pins[300];
    snprintf(pins, sizeof pins, "%s.pins", dir);
    unlink(pins);
    unsetenv("MYGPT_DOWNLOAD_TEST_PINS");
    unsetenv("HF_ENDPOINT");
}

/* A run that failed after its work began: `status`, one line on stderr holding msg
 * (stdout may hold the files done before) */
static void expect_failure_line(const proc_result *r, int status, const char *msg)
{
    cr_expect_eq(r->status, status, "exit %d, not %d: %s", r->status, status, r->err);
    cr_expect_eq(count_lines(r->err), 1, "one line: %s", r->err);
    cr_expect(strstr(r->err, msg) != NULL, "'%s' not in: %s", msg, r->err);
}

/* dir/name holds the fixture's file of that name, byte for byte */
static void expect_fixture(const char *dir, const char *name)
{
    char got[400], want[400];
    snprintf(got, sizeof got, "%s/gpt2/%s", dir, name);
    snprintf(want, sizeof want, "%s/%s", FIXTURE, name);
    cr_expect(same_files(got, want), "%s is not the fixture's %s", got, name);
}

/* The number of requests in the server's log whose line holds text */
static int logged(const server *s, const char *text)
{
    size_t n;
    char *log = file_text(s->log, &n);
    int count = 0;
    for (char *l = log ? strtok(log, "\n") : NULL; l; l = strtok(NULL, "\n"))
        count += strstr(l, text) != NULL;
    free(log);
    return count;
}

static const char *const FILES[] = {"gpt2/config.json", "gpt2/model.safetensors", "gpt2"};

/* The server started with o, the tool pointed at it (model.safetensors pinned to
 * model_sha), and `mygpt download gpt2 --dir DIR/gpt2` run */
static void serve_and_download(server *s, const serve_opts *o, const char *dir, const char *model_sha,
                               proc_result *r)
{
    server_start(s, o, dir);
    point_at(s, dir, o->prefix, model_sha);
    run_in_dir("download gpt2 --dir DIR/gpt2", dir, NULL, r);
}

/* The server stopped, the environment and the test's folder cleared */
static void finish(server *s, const char *dir)
{
    server_stop(s);
    unpin(dir);
    remove_test_dir(dir, FILES, 3);
}

/* dir/gpt2/name holding text, before the tool runs */
static void put_in_folder(const char *dir, const char *name, const char *text)
{
    char path[300];
    snprintf(path, sizeof path, "%s/gpt2", dir);
    cr_assert_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/gpt2/%s", dir, name);
    write_file(path, text);
}

/* The whole download, into a folder it makes, from HF_ENDPOINT as huggingface_hub reads
 * it (a base URL whose own path is kept, a trailing slash dropped: every request goes
 * there); then the folder is a model the tool reads */
Test(cli_download, fetches_both_files_verified_into_the_folder_from_hf_endpoint)
{
    char dir[] = "/tmp/mygpt-download-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    server s;
    proc_result r;
    serve_and_download(&s, &(serve_opts){.prefix = "/mirror", .cut_at = -1}, dir, FIXTURE_SHA, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, "model.safetensors: 411960 bytes, sha256 verified") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "config.json: 908 bytes, sha256 verified") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "--gpt2 ") != NULL, "the last line names the flag that reads it: %s", r.out);
    proc_result_free(&r);
    expect_fixture(dir, "model.safetensors");
    expect_fixture(dir, "config.json");
    cr_expect_eq(logged(&s, "/mirror" REPO_PATH "config.json -1"), 1);
    cr_expect_eq(logged(&s, "/mirror" REPO_PATH "model.safetensors -1"), 1, "one whole request");
    cr_expect_eq(logged(&s, "/"), 2, "two requests, both under the endpoint's path");
    run_in_dir("generate --checkpoint DIR/gpt2/model.safetensors --ids 1,2,3 --max-new 2 --no-stream", dir, NULL, &r);
    cr_expect_eq(r.status, 0, "the downloaded file is a model generate reads: %s", r.err);
    proc_result_free(&r);
    finish(&s, dir);
}

/* Cut after 100,000 bytes: the partial file keeps them and says so; the same command
 * then asks for the rest with a Range and ends with the whole file */
Test(cli_download, an_interrupted_download_resumes_where_it_stopped)
{
    char dir[] = "/tmp/mygpt-download-XXXXXX", part[300], model[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(part, sizeof part, "%s/gpt2/model.safetensors.incomplete", dir);
    snprintf(model, sizeof model, "%s/gpt2/model.safetensors", dir);
    server s;
    proc_result r;
    serve_and_download(&s, &(serve_opts){.prefix = "", .cut_at = 100000}, dir, FIXTURE_SHA, &r);
    expect_failure_line(&r, 1, "run the same command again to resume");
    cr_expect(strstr(r.err, "100000 bytes") != NULL, "%s", r.err);
    proc_result_free(&r);
    struct stat sb;
    cr_expect(stat(part, &sb) == 0 && sb.st_size == 100000, "the partial file keeps the 100000 bytes");
    cr_expect(access(model, F_OK) != 0, "no model.safetensors before it is whole");
    server_stop(&s);

    serve_and_download(&s, &(serve_opts){.prefix = "", .cut_at = -1}, dir, FIXTURE_SHA, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, "(resumed at 100000), sha256 verified") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "config.json: there already, sha256 verified") != NULL, "%s", r.out);
    proc_result_free(&r);
    cr_expect_eq(logged(&s, REPO_PATH "model.safetensors 100000"), 1, "the rest asked from byte 100000");
    cr_expect_eq(logged(&s, "config.json"), 0, "a verified file is not fetched again");
    expect_fixture(dir, "model.safetensors");
    cr_expect(access(part, F_OK) != 0, "the partial file is gone");
    finish(&s, dir);
}

/* A server that ignores the Range sends the whole file: what the partial file held is
 * replaced, and the result is still the pinned file */
Test(cli_download, a_server_ignoring_the_range_still_gives_the_pinned_file)
{
    char dir[] = "/tmp/mygpt-download-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    put_in_folder(dir, "model.safetensors.incomplete", "not the start of the file at all");
    server s;
    proc_result r;
    serve_and_download(&s, &(serve_opts){.prefix = "", .cut_at = -1, .ignore_range = 1}, dir, FIXTURE_SHA, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    cr_expect_eq(logged(&s, REPO_PATH "model.safetensors 32"), 1, "a Range was asked for");
    expect_fixture(dir, "model.safetensors");
    finish(&s, dir);
}

/* A file whose sha256 is not the pinned one: refused, removed, one line naming both */
Test(cli_download, a_wrong_sha256_is_refused_and_removed)
{
    char dir[] = "/tmp/mygpt-download-XXXXXX", path[300];
    cr_assert_not_null(mkdtemp(dir));
    server s;
    proc_result r;
    const char *wrong = "0000000000000000000000000000000000000000000000000000000000000000";
    serve_and_download(&s, &(serve_opts){.prefix = "", .cut_at = -1}, dir, wrong, &r);
    expect_failure_line(&r, 1, "refused and removed");
    cr_expect(strstr(r.err, FIXTURE_SHA) && strstr(r.err, wrong), "names both sha256: %s", r.err);
    proc_result_free(&r);
    snprintf(path, sizeof path, "%s/gpt2/model.safetensors", dir);
    cr_expect(access(path, F_OK) != 0, "no model.safetensors");
    snprintf(path, sizeof path, "%s/gpt2/model.safetensors.incomplete", dir);
    cr_expect(access(path, F_OK) != 0, "no partial file either");
    expect_fixture(dir, "config.json"); // the file before it was right, and stays
    finish(&s, dir);
}

/* No server at the port (connection refused): one clear line, nothing left behind */
Test(cli_download, no_network_says_so_in_one_line)
{
    char dir[] = "/tmp/mygpt-download-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    server s = {0};
    const int fd = socket(AF_INET, SOCK_STREAM, 0); // a port that was free a moment ago
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    s.port = ntohs(a.sin_port);
    close(fd);
    point_at(&s, dir, "", FIXTURE_SHA);
    proc_result r;
    run_in_dir("download gpt2 --dir DIR/gpt2", dir, NULL, &r);
    expect_one_line_refusal(&r, 1, "cannot reach http://127.0.0.1:", "no network");
    cr_expect(strstr(r.err, "no network?") != NULL, "%s", r.err);
    proc_result_free(&r);
    cr_expect_eq(entries_in(dir), 0, "the folder it made is gone again");
    unpin(dir);
    remove_test_dir(dir, NULL, 0);
}

/* A file already in the folder is never replaced: another one stops the command before
 * any download; the pinned one is kept and not fetched again */
Test(cli_download, a_file_already_in_the_folder_is_not_replaced)
{
    char dir[] = "/tmp/mygpt-download-XXXXXX", path[300];
    cr_assert_not_null(mkdtemp(dir));
    put_in_folder(dir, "model.safetensors", "my own model");
    snprintf(path, sizeof path, "%s/gpt2/model.safetensors", dir);
    server s;
    proc_result r;
    serve_and_download(&s, &(serve_opts){.prefix = "", .cut_at = -1}, dir, FIXTURE_SHA, &r);
    expect_one_line_refusal(&r, 2, "is there already and is not openai-community/gpt2's model.safetensors",
                            "a file in the way");
    cr_expect(strstr(r.err, "not replaced") != NULL, "%s", r.err);
    proc_result_free(&r);
    expect_file_holds(path, "my own model", "download");
    cr_expect_eq(logged(&s, "model.safetensors"), 0, "nothing fetched for it");
    finish(&s, dir);
}

/* A partial file's name that holds what is not the download's own (a second name of a
 * user's file, a FIFO, a link, a folder) is refused before any request, status 2, and
 * nothing is cut, followed or waited for: a hard link's file would have been emptied
 * (it is longer than the file pinned), and the open of a FIFO would have blocked. */
Test(cli_download, a_partial_file_that_is_not_its_own_is_refused_untouched, .timeout = 60)
{
    char mine[400] = "a user's essay, longer than the pinned config.json: ";
    for (size_t n = strlen(mine); n < sizeof mine - 1; n++)
        mine[n] = 'x';
    mine[sizeof mine - 1] = '\0';
    const char *cases[][2] = {{"ln ESSAY", "it has another name (a hard link)"},
                              {"mkfifo", "not a regular file (a FIFO)"},
                              {"ln -s ESSAY", "a symbolic link, not followed"},
                              {"mkdir", "a directory"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[] = "/tmp/mygpt-download-XXXXXX", essay[64], folder[64], part[128], make[400];
        cr_assert_not_null(mkdtemp(dir));
        snprintf(essay, sizeof essay, "%s/essay.txt", dir);
        write_file(essay, mine);
        snprintf(folder, sizeof folder, "%s/gpt2", dir);
        cr_assert_eq(mkdir(folder, 0755), 0);
        snprintf(part, sizeof part, "%s/config.json.incomplete", folder);
        const char *essay_at = strstr(cases[i][0], "ESSAY");
        if (essay_at)
            snprintf(make, sizeof make, "%.*s'%s' '%s'", (int)(essay_at - cases[i][0]), cases[i][0], essay, part);
        else
            snprintf(make, sizeof make, "%s '%s'", cases[i][0], part);
        cr_assert_eq(system(make), 0, "%s", make);
        server s;
        proc_result r;
        serve_and_download(&s, &(serve_opts){.prefix = "", .cut_at = -1}, dir, FIXTURE_SHA, &r);
        expect_one_line_refusal(&r, 2, cases[i][1], cases[i][0]);
        cr_expect(strstr(r.err, "config.json.incomplete") != NULL, "%s: %s", cases[i][0], r.err);
        proc_result_free(&r);
        expect_file_holds(essay, mine, cases[i][0]);
        cr_expect_eq(logged(&s, "/"), 0, "%s: nothing fetched", cases[i][0]);
        server_stop(&s);
        unpin(dir);
        (strcmp(cases[i][0], "mkdir") == 0 ? rmdir : unlink)(part);
        unlink(essay);
        remove_test_dir(dir, FILES + 2, 1);
    }
}

/* The tests' pins never apply to another host, and a size without pinned files is not
 * downloaded: both refused before any connection */
Test(cli_download, the_pinned_table_is_not_bypassed)
{
    char dir[] = "/tmp/mygpt-download-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    setenv("MYGPT_DOWNLOAD_TEST_PINS", "/dev/null", 1);
    setenv("HF_ENDPOINT", "http://mirror.invalid", 1); // refused before any look-up
    proc_result r;
    run_in_dir("download gpt2 --dir DIR/gpt2", dir, NULL, &r);
    expect_one_line_refusal(&r, 2, "is for the tests alone", "test pins on another host");
    proc_result_free(&r);
    unsetenv("HF_ENDPOINT"); // the real host's default: refused just the same
    run_in_dir("download gpt2 --dir DIR/gpt2", dir, NULL, &r);
    expect_one_line_refusal(&r, 2, "is for the tests alone", "test pins on the real host");
    proc_result_free(&r);
    unsetenv("MYGPT_DOWNLOAD_TEST_PINS");
    run_in_dir("download gpt2 --size 355M --dir DIR/gpt2", dir, NULL, &r);
    expect_one_line_refusal(&r, 2, "no sha256 of openai-community/gpt2-medium's model.safetensors is pinned",
                            "an unpinned size");
    proc_result_free(&r);
    // the tests' pins file itself is checked: a line that is not a pin, or no pin at all
    char pins[300];
    snprintf(pins, sizeof pins, "%s.pins", dir);
    setenv("MYGPT_DOWNLOAD_TEST_PINS", pins, 1);
    setenv("HF_ENDPOINT", "http://127.0.0.1:9", 1);
    const char *bad[] = {"model.safetensors 10 zz\n", ""};
    for (int i = 0; i < 2; i++) {
        write_file(pins, bad[i]);
        run_in_dir("download gpt2 --dir DIR/gpt2", dir, NULL, &r);
        expect_one_line_refusal(&r, 2, i ? "no pins in it" : "not \"FILE BYTES SHA256\"", "a bad pins file");
        proc_result_free(&r);
    }
    unlink(pins);
    unsetenv("MYGPT_DOWNLOAD_TEST_PINS");
    unsetenv("HF_ENDPOINT");
    cr_expect_eq(entries_in(dir), 0, "nothing made");
    remove_test_dir(dir, NULL, 0);
}

Test(cli_download, its_command_line)
{
    check_program(MYGPT_EXE, "download ", "download");
    static const char *const BAD[][2] = {{"download", "say what to download"},
                                         {"download gpt3", "'gpt3': the one model it fetches is gpt2"},
                                         {"download gpt2 gpt2-xl", "'gpt2-xl': one model at a time"},
                                         {"download gpt2 --size 1G", "--size: '1G' is not one of"}};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, BAD[i][0], &r), 0);
        expect_one_line_refusal(&r, 2, BAD[i][1], BAD[i][0]);
        proc_result_free(&r);
    }
}
