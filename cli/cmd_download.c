/*
 * cmd_download.c - `mygpt download gpt2 [--size S] [--dir DIR]`: OpenAI's GPT-2 as Hugging
 * Face publishes it (model.safetensors and config.json), each file checked against the
 * size and sha256 pinned below, into the folder the book's chapters read with --gpt2 DIR.
 * A download cut short resumes; nothing already in the folder is replaced.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "fetch.h"
#include "output.h"

static const char USAGE[] =
    "usage: mygpt download gpt2 [--size 124M|355M|774M|1558M] [--dir DIR]\n"
    "\n"
    "OpenAI's GPT-2 as Hugging Face publishes it: model.safetensors and config.json of\n"
    "openai-community/gpt2 (124M, the default: the book's chapters 5 and 6), gpt2-medium\n"
    "(355M: chapter 7), gpt2-large (774M) or gpt2-xl (1558M), into DIR (default gpt2/SIZE,\n"
    "the book's own folder): the folder the book's chapters read with --gpt2 DIR, and\n"
    "generate and chat with --checkpoint DIR/model.safetensors. Each file must have the\n"
    "size and sha256 pinned in mygpt (the hub's); one that differs is refused and\n"
    "removed, and a size whose files are not pinned is not downloaded. A file comes into\n"
    "DIR/FILE.incomplete and is renamed only when whole and verified: a download cut\n"
    "short resumes where it stopped when the same command runs again (a FILE.incomplete\n"
    "that is no regular file of its own, a link or a second name of another, stops it).\n"
    "A file already in DIR is never replaced: the pinned one is kept, any other stops\n"
    "the command.\n"
    "HF_ENDPOINT changes the host (default https://huggingface.co), as huggingface_hub\n"
    "reads it.\n";

/* One file of a GPT-2 repository as the hub publishes it: its bytes and sha256 (for
 * model.safetensors, the `size` and `oid sha256:` of the hub's Git LFS pointer; config.json
 * is a plain file there, its sha256 that of its bytes). A file not listed is not pinned,
 * and its size is not downloaded: a pin is one line here. */
typedef struct pinned_file {
    const char *size, *repo, *name;
    int64_t bytes;
    const char *sha256;
} pinned_file;

static const pinned_file PINNED[] = {
    {"124M", "openai-community/gpt2", "config.json", 665,
     "0daed7749b4f02b8f76240d5444551d7b08712dab4d0adb8239c56ba823bb7b4"},
    {"124M", "openai-community/gpt2", "model.safetensors", 548105171,
     "248dfc3911869ec493c76e65bf2fcf7f615828b0254c12b473182f0f81d3a707"},
    // 355M (openai-community/gpt2-medium), 774M (gpt2-large), 1558M (gpt2-xl): not pinned yet
};

/* The sizes and their repositories */
static const char *const SIZES[][2] = {{"124M", "openai-community/gpt2"},
                                       {"355M", "openai-community/gpt2-medium"},
                                       {"774M", "openai-community/gpt2-large"},
                                       {"1558M", "openai-community/gpt2-xl"}};

/* The files of a folder, in the order they are fetched (the small one first) */
static const char *const FILES[2] = {"config.json", "model.safetensors"};

/* The tests' pins (MYGPT_DOWNLOAD_TEST_PINS: "FILE BYTES SHA256" lines), which replace the
 * table above for a host on this machine only: the real host is always checked against
 * the table. */
#define TEST_PINS_ENV "MYGPT_DOWNLOAD_TEST_PINS"

/* One download: the flags, the host, the two files' pins */
typedef struct download {
    const char *size, *repo, *dir;
    char endpoint[2048], user_agent[64];
    pinned_file pins[2];
    char test_sha[2][65];
} download;

/* localhost, [::1] or an IPv4 address of 127.0.0.0/8, as written in a URL */
static int is_loopback(const char *host)
{
    struct in_addr a;
    if (strcmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0)
        return 1;
    return inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

static int is_sha256(const char *s)
{
    return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

/* HF_ENDPOINT (huggingface_hub's default when unset or empty, trailing slashes dropped),
 * checked as an http(s) URL; *loopback: its host is this machine. 0, or EXIT_USAGE. */
static int read_endpoint(const char *cmd, download *d, int *loopback)
{
    const char *env = getenv("HF_ENDPOINT");
    const char *e = env && env[0] ? env : "https://huggingface.co";
    if (snprintf(d->endpoint, sizeof d->endpoint, "%s", e) >= (int)sizeof d->endpoint) {
        cli_error(cmd, "HF_ENDPOINT: too long");
        return EXIT_USAGE;
    }
    for (size_t n = strlen(d->endpoint); n > 0 && d->endpoint[n - 1] == '/'; n--)
        d->endpoint[n - 1] = '\0';
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL;
    const int ok = u && curl_url_set(u, CURLUPART_URL, d->endpoint, 0) == CURLUE_OK &&
                   curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
                   curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
                   (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0);
    *loopback = ok && is_loopback(host);
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    if (!ok) {
        cli_error(cmd, "HF_ENDPOINT: '%s' is not an http or https URL", e);
        return EXIT_USAGE;
    }
    return 0;
}

/* The tests' pins from the file named by MYGPT_DOWNLOAD_TEST_PINS into d->pins; 0, or
 * EXIT_USAGE. */
static int read_test_pins(const char *cmd, const char *path, download *d)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error(cmd, "%s: %s: %s", TEST_PINS_ENV, path, strerror(errno));
        return EXIT_USAGE;
    }
    char line[256], name[64], sha[80], extra;
    int64_t bytes;
    int rc = 0, lines = 0;
    while (!rc && fgets(line, sizeof line, f)) { // every line "FILE BYTES SHA256", or the file is refused
        lines++;
        int known = 0;
        if (sscanf(line, "%63s %" SCNd64 " %79s %c", name, &bytes, sha, &extra) == 3 && bytes >= 0 && is_sha256(sha))
            for (int i = 0; i < 2; i++)
                if (strcmp(name, FILES[i]) == 0) {
                    snprintf(d->test_sha[i], sizeof d->test_sha[i], "%s", sha);
                    d->pins[i].bytes = bytes;
                    d->pins[i].sha256 = d->test_sha[i];
                    known = 1;
                }
        if (!known) {
            cli_error(cmd, "%s: %s, line %d: not \"FILE BYTES SHA256\" for %s or %s", TEST_PINS_ENV, path, lines,
                      FILES[0], FILES[1]);
            rc = EXIT_USAGE;
        }
    }
    if (!rc && (ferror(f) || lines == 0)) {
        cli_error(cmd, "%s: %s: %s", TEST_PINS_ENV, path, ferror(f) ? strerror(errno) : "no pins in it");
        rc = EXIT_USAGE;
    }
    fclose(f);
    return rc;
}

/* The pins of d's two files, from the table, or from the tests' file for a host on this
 * machine; 0, or the exit status after saying why not (a size that is not pinned). */
static int find_pins(const char *cmd, download *d)
{
    int loopback, rc;
    if ((rc = read_endpoint(cmd, d, &loopback)))
        return rc;
    for (int i = 0; i < 2; i++) {
        d->pins[i] = (pinned_file){d->size, d->repo, FILES[i], 0, NULL};
        for (size_t p = 0; p < sizeof PINNED / sizeof PINNED[0]; p++)
            if (strcmp(PINNED[p].size, d->size) == 0 && strcmp(PINNED[p].name, FILES[i]) == 0)
                d->pins[i] = PINNED[p];
    }
    const char *test = getenv(TEST_PINS_ENV);
    if (test && test[0] && !loopback) {
        cli_error(cmd, "%s is for the tests alone: it applies only to an HF_ENDPOINT on this machine "
                  "(127.0.0.1, localhost, [::1]), never to %s", TEST_PINS_ENV, d->endpoint);
        return EXIT_USAGE;
    }
    if (test && test[0] && (rc = read_test_pins(cmd, test, d)))
        return rc;
    for (int i = 1; i >= 0; i--)
        if (!d->pins[i].sha256) {
            cli_error(cmd, "--size %s: no sha256 of %s's %s is pinned in this mygpt: not downloaded (nothing "
                      "is taken unchecked; a pin is one line of cli/cmd_download.c)", d->size, d->repo, FILES[i]);
            return EXIT_USAGE;
        }
    return 0;
}

/* mkdir -p path; 0, or -1 with errno. *made: the length of the first folder it made
 * (0: none), for remove_made. */
static int make_dirs(const char *path, size_t *made)
{
    char p[4096];
    *made = 0;
    if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = p + 1;; s++)
        if (*s == '/' || *s == '\0') {
            const char c = *s;
            *s = '\0';
            if (mkdir(p, 0755) == 0 && !*made)
                *made = (size_t)(s - p);
            else if (errno != EEXIST && !*made)
                return -1;
            *s = c;
            if (!c)
                break;
        }
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* The folders make_dirs made, when they are empty again (rmdir leaves any other) */
static void remove_made(const char *path, size_t made)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (size_t n = strlen(p); made && n >= made; n--)
        if (p[n] == '/' || p[n] == '\0') {
            p[n] = '\0';
            if (rmdir(p) != 0 && errno != ENOENT) // "a/b/" names "a/b" twice
                break;
        }
}

/* A file already at path: 1 when it is the pinned one (kept, nothing to fetch), 0 when
 * there is none; else the exit status after saying it is kept and the command stops. */
static int existing_file(const char *cmd, const char *path, const pinned_file *pin)
{
    struct stat sb;
    if (lstat(path, &sb) != 0 && errno == ENOENT)
        return 0;
    if (lstat(path, &sb) != 0) {
        cli_error(cmd, "%s: %s", path, strerror(errno));
        return -EXIT_RUNTIME;
    }
    char sha[65] = "";
    const char *why = NULL;
    char detail[200] = "";
    if (!S_ISREG(sb.st_mode))
        why = "not a regular file";
    else if (sb.st_size != pin->bytes)
        snprintf(detail, sizeof detail, "%" PRId64 " bytes, not the pinned %" PRId64, (int64_t)sb.st_size, pin->bytes);
    else if (sha256_file(path, sha) != 0)
        snprintf(detail, sizeof detail, "unreadable: %s", strerror(errno));
    else if (strcmp(sha, pin->sha256) != 0)
        snprintf(detail, sizeof detail, "sha256 %s, not the pinned %s", sha, pin->sha256);
    else {
        cli_say(stdout, "%s: there already, sha256 verified", path);
        return 1;
    }
    cli_error(cmd, "%s is there already and is not %s's %s (%s): not replaced", path, pin->repo, pin->name,
              why ? why : detail);
    return -EXIT_USAGE;
}

/* What a fetch that did not end whole says, one line; the exit status */
static int fetch_failed(const char *cmd, const download *d, const char *url, const char *part, fetch_status st,
                        const fetch_result *r)
{
    if (st == FETCH_IN_THE_WAY) { // a file of the user's, not a failed download
        cli_error(cmd, "%s (remove it, or download into another --dir)", r->message);
        return EXIT_USAGE;
    }
    if (st == FETCH_UNREACHABLE)
        cli_error(cmd, "cannot reach %s: %s (no network? HF_ENDPOINT sets the host)", d->endpoint, r->message);
    else if (st == FETCH_TOO_LONG) {
        unlink(part);
        cli_error(cmd, "%s: %s: refused and removed", url, r->message);
    } else if (r->have > 0)
        cli_error(cmd, "%s: %s; %s keeps the %" PRId64 " bytes that came: run the same command again to resume",
                  url, r->message, part, r->have);
    else
        cli_error(cmd, "%s: %s", url, r->message);
    return EXIT_RUNTIME;
}

/* The partial file, whole: kept as path when its sha256 is the pinned one (a link, which
 * never replaces a file that appeared meanwhile), else removed. 0, or the exit status. */
static int verify_and_keep(const char *cmd, const char *part, const char *path, const pinned_file *pin)
{
    char sha[65];
    if (sha256_file(part, sha) != 0) {
        cli_error(cmd, "%s: %s", part, strerror(errno));
        return EXIT_RUNTIME;
    }
    if (strcmp(sha, pin->sha256) != 0) {
        unlink(part);
        cli_error(cmd, "%s: sha256 %s is not the pinned %s (%s's %s): refused and removed", path, sha, pin->sha256,
                  pin->repo, pin->name);
        return EXIT_RUNTIME;
    }
    if (link(part, path) != 0) {
        cli_error(cmd, "%s: %s: not replaced; the verified file stays in %s", path,
                  errno == EEXIST ? "a file appeared there meanwhile" : strerror(errno), part);
        return EXIT_RUNTIME;
    }
    unlink(part);
    return 0;
}

/* One file of the folder, not there yet: fetched (or resumed), verified and kept; 0, or
 * the exit status */
static int get_file(const char *cmd, const download *d, const pinned_file *pin)
{
    char path[4200], part[4300], url[4400];
    snprintf(path, sizeof path, "%s/%s", d->dir, pin->name);
    snprintf(part, sizeof part, "%s.incomplete", path);
    snprintf(url, sizeof url, "%s/%s/resolve/main/%s", d->endpoint, d->repo, pin->name);
    const fetch_job job = {.url = url, .partial = part, .user_agent = d->user_agent, .size = pin->bytes,
                           .progress = isatty(STDERR_FILENO)};
    fetch_result r;
    const fetch_status st = fetch_resumable(&job, &r);
    if (st != FETCH_DONE)
        return fetch_failed(cmd, d, url, part, st, &r);
    int rc = verify_and_keep(cmd, part, path, pin);
    if (rc == 0 && r.resumed_at > 0)
        cli_say(stdout, "%s: %" PRId64 " bytes (resumed at %" PRId64 "), sha256 verified", path, pin->bytes, r.resumed_at);
    else if (rc == 0)
        cli_say(stdout, "%s: %" PRId64 " bytes, sha256 verified", path, pin->bytes);
    return rc;
}

/* Both files: those already there checked first (a file in the way stops everything
 * before any download), then the others fetched; 0, or the exit status */
static int get_files(const char *cmd, const download *d)
{
    int there[2], rc = 0;
    for (int i = 0; i < 2; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", d->dir, d->pins[i].name);
        if ((there[i] = existing_file(cmd, path, &d->pins[i])) < 0)
            return -there[i];
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        cli_error(cmd, "libcurl could not start");
        return EXIT_RUNTIME;
    }
    for (int i = 0; i < 2 && rc == 0; i++)
        if (!there[i])
            rc = get_file(cmd, d, &d->pins[i]);
    curl_global_cleanup();
    return rc;
}

/* The flags: what (gpt2), --size and --dir; 0, or EXIT_USAGE */
static int read_flags(const char *cmd, const parsed_args *a, download *d, char *dir, size_t dir_cap)
{
    if (a->npositional == 0) {
        cli_error(cmd, "say what to download: mygpt download gpt2 (OpenAI's GPT-2, the one model it fetches)");
        return EXIT_USAGE;
    }
    if (strcmp(a->positional[0], "gpt2") != 0) {
        cli_error(cmd, "'%s': the one model it fetches is gpt2 (OpenAI's GPT-2; --size picks which)", a->positional[0]);
        return EXIT_USAGE;
    }
    if (a->npositional > 1) {
        cli_error(cmd, "'%s': one model at a time (mygpt download gpt2 [--size S] [--dir D])", a->positional[1]);
        return EXIT_USAGE;
    }
    d->size = args_has(a, "size") ? args_get(a, "size") : "124M";
    for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++)
        if (strcmp(SIZES[i][0], d->size) == 0)
            d->repo = SIZES[i][1];
    if (!d->repo) {
        cli_error(cmd, "--size: '%s' is not one of 124M, 355M, 774M, 1558M", d->size);
        return EXIT_USAGE;
    }
    if (args_has(a, "dir"))
        d->dir = args_get(a, "dir");
    else {
        snprintf(dir, dir_cap, "gpt2/%s", d->size); // the book's download_and_load_gpt2(models_dir="gpt2")
        d->dir = dir;
    }
    if (!d->dir[0] || strlen(d->dir) > 4000) {
        cli_error(cmd, "--dir: give a folder (at most 4000 bytes)");
        return EXIT_USAGE;
    }
    snprintf(d->user_agent, sizeof d->user_agent, "mygpt/%s", MYGPT_VERSION);
    return 0;
}

/* `mygpt download gpt2 [--size S] [--dir DIR]`: GPT-2's two files, verified; returns the
 * exit status. */
int cmd_download(int argc, char **argv)
{
    const char *cmd = "download";
    static const arg_spec ARGS[] = {{"size", 1, 0}, {"dir", ARG_PATH, 0}, {NULL, 0, 0}};
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, ARGS, 1, USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    download d = {0};
    char dir[64];
    if ((rc = read_flags(cmd, &a, &d, dir, sizeof dir)) || (rc = find_pins(cmd, &d)))
        return rc;
    size_t made;
    if (make_dirs(d.dir, &made) != 0) {
        cli_error(cmd, "--dir: %s: %s", d.dir, strerror(errno));
        return EXIT_USAGE;
    }
    if ((rc = get_files(cmd, &d)))
        remove_made(d.dir, made); // folders this run made and left empty go too
    if (rc == 0)
        cli_say(stdout, "%s: GPT-2 %s (%s): --gpt2 %s, --checkpoint %s/model.safetensors", d.dir, d.size, d.repo, d.dir,
               d.dir);
    return rc;
}
