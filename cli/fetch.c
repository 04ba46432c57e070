/*
 * fetch.c - one file over HTTP(S) into a partial file, resumed with a Range request
 * (libcurl), and a file's SHA-256 (OpenSSL's libcrypto). See fetch.h.
 */
#include "fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where the bytes of one answer go */
typedef struct sink {
    CURL *curl;
    int fd;
    int64_t have, size;
    int64_t range_start; /* the first byte of a 206 answer (Content-Range), -1 before one */
    int64_t shown;       /* the bytes the progress line last showed */
    int started, too_long, bad_range, write_errno, progress;
    const char *name;
} sink;

/* "Content-Range: bytes START-END/TOTAL": START, kept for the first write's check */
static size_t on_header(char *line, size_t size, size_t n, void *user)
{
    sink *s = user;
    const size_t len = size * n;
    static const char KEY[] = "content-range: bytes ";
    if (len > sizeof KEY - 1 && strncasecmp(line, KEY, sizeof KEY - 1) == 0)
        s->range_start = strtoll(line + sizeof KEY - 1, NULL, 10);
    else if (len > 5 && strncmp(line, "HTTP/", 5) == 0)
        s->range_start = -1; // a new answer (after a redirect) starts afresh
    return len;
}

/* The first bytes of the answer: a server that ignored the range (200) sends the whole
 * file, which replaces what the partial file held; a 206 must start where it ends. */
static int start_answer(sink *s)
{
    long code = 0;
    curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code);
    s->started = 1;
    if (code == 206 && s->range_start != s->have) {
        s->bad_range = 1;
        return -1;
    }
    if (code != 206 && s->have > 0) {
        if (ftruncate(s->fd, 0) != 0) {
            s->write_errno = errno;
            return -1;
        }
        s->have = 0;
    }
    return 0;
}

static size_t on_data(char *bytes, size_t size, size_t n, void *user)
{
    sink *s = user;
    const size_t len = size * n;
    if (!s->started && start_answer(s) != 0)
        return 0;
    if (s->have + (int64_t)len > s->size) {
        s->too_long = 1;
        return 0;
    }
    for (size_t done = 0; done < len;) {
        const ssize_t w = write(s->fd, bytes + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            s->write_errno = w < 0 ? errno : EIO;
            return 0;
        }
        done += (size_t)w;
    }
    s->have += (int64_t)len;
    return len;
}

static int on_progress(void *user, curl_off_t total, curl_off_t now, curl_off_t up_total, curl_off_t up_now)
{
    (void)total, (void)now, (void)up_total, (void)up_now;
    sink *s = user;
    if (s->have - s->shown >= s->size / 1000 + 1) { // at most a thousand lines a file
        s->shown = s->have;
        fprintf(stderr, "\r%s: %.1f of %.1f MB", s->name, s->have / 1e6, s->size / 1e6);
    }
    return 0;
}

/* The easy handle for job, its answer going to s */
static void setup(CURL *c, const fetch_job *job, sink *s, char *errbuf, char range[32])
{
    curl_easy_setopt(c, CURLOPT_URL, job->url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, job->user_agent);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    // a stalled transfer ends (below 1 byte/s for a minute) rather than hang forever
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, s);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
    if (s->have > 0) {
        snprintf(range, 32, "%" PRId64 "-", s->have);
        curl_easy_setopt(c, CURLOPT_RANGE, range);
    }
    if (job->progress) {
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, s);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    }
}

/* The status of a finished transfer (curl's code rc), its reason in res->message */
static fetch_status outcome(CURLcode rc, const sink *s, const char *errbuf, fetch_result *res)
{
    const char *why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    char *m = res->message;
    const size_t cap = sizeof res->message;
    if (rc == CURLE_OK && s->have == s->size)
        return FETCH_DONE;
    if (rc == CURLE_OK) {
        snprintf(m, cap, "the answer ended after %" PRId64 " of %" PRId64 " bytes", s->have, s->size);
        return FETCH_CUT;
    }
    if (s->too_long) {
        snprintf(m, cap, "the server sent more than the %" PRId64 " bytes the file has", s->size);
        return FETCH_TOO_LONG;
    }
    if (s->bad_range) {
        snprintf(m, cap, "asked for the bytes from %" PRId64 ", the server sent them from %" PRId64, s->have,
                 s->range_start);
        return FETCH_HTTP_ERROR;
    }
    if (s->write_errno) {
        snprintf(m, cap, "cannot write %s: %s", s->name, strerror(s->write_errno));
        return FETCH_LOCAL_ERROR;
    }
    if (rc == CURLE_HTTP_RETURNED_ERROR) {
        snprintf(m, cap, "the server answered HTTP %ld", res->http);
        return FETCH_HTTP_ERROR;
    }
    snprintf(m, cap, "%s", why);
    if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY ||
        (rc == CURLE_OPERATION_TIMEDOUT && res->http == 0))
        return FETCH_UNREACHABLE;
    return FETCH_CUT;
}

fetch_status fetch_resumable(const fetch_job *job, fetch_result *res)
{
    *res = (fetch_result){0};
    /* Only a regular file of its own is written: O_NONBLOCK, as a FIFO would block the open
     * until something reads it; a link is not followed, and a second name (a hard link)
     * would see its file cut or appended to. */
    const int fd = open(job->partial, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    struct stat sb;
    const int opened = fd >= 0 && fstat(fd, &sb) == 0;
    const char *in_the_way = !opened && errno == ENXIO    ? "not a regular file (a FIFO)"
                             : !opened && errno == ELOOP  ? "a symbolic link, not followed"
                             : !opened && errno == EISDIR ? "a directory"
                             : !opened                    ? NULL
                             : !S_ISREG(sb.st_mode)       ? "not a regular file (a device, FIFO or socket)"
                             : sb.st_nlink > 1            ? "it has another name (a hard link), whose file would change"
                                                          : NULL;
    const char *why = in_the_way                          ? in_the_way
                      : !opened                           ? strerror(errno)
                      : flock(fd, LOCK_EX | LOCK_NB) != 0 ? "another download is writing it"
                                                          : NULL;
    if (why) {
        snprintf(res->message, sizeof res->message, "cannot write %s: %s", job->partial, why);
        if (fd >= 0)
            close(fd);
        return in_the_way ? FETCH_IN_THE_WAY : FETCH_LOCAL_ERROR;
    }
    sink s = {.fd = fd, .have = sb.st_size, .size = job->size, .range_start = -1, .name = job->partial};
    if (s.have > s.size && ftruncate(fd, 0) == 0) // not a start of this file: begin again
        s.have = 0;
    res->resumed_at = s.have;
    fetch_status st = FETCH_DONE;
    if (s.have < s.size) {
        CURL *c = curl_easy_init();
        char errbuf[CURL_ERROR_SIZE] = "", range[32];
        if (!c) {
            close(fd);
            snprintf(res->message, sizeof res->message, "libcurl could not start");
            return FETCH_LOCAL_ERROR;
        }
        s.curl = c;
        setup(c, job, &s, errbuf, range);
        const CURLcode rc = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res->http);
        if (job->progress)
            fputc('\n', stderr);
        st = outcome(rc, &s, errbuf, res);
        curl_easy_cleanup(c);
    }
    if (fsync(fd) != 0 && st == FETCH_DONE) {
        snprintf(res->message, sizeof res->message, "cannot write %s: %s", job->partial, strerror(errno));
        st = FETCH_LOCAL_ERROR;
    }
    close(fd);
    res->have = s.have;
    if (st != FETCH_DONE && s.have == 0)
        unlink(job->partial); // nothing came: leave nothing behind
    return st;
}

int sha256_file(const char *path, char hex[65])
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char *buf = malloc(1 << 20), md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int ok = ctx && buf && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1, saved = ok ? 0 : ENOMEM;
    for (ssize_t n; ok && (n = read(fd, buf, 1 << 20)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || EVP_DigestUpdate(ctx, buf, (size_t)n) != 1) {
            saved = n < 0 ? errno : EIO;
            ok = 0;
        }
    }
    ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 32;
    for (unsigned int i = 0; ok && i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    EVP_MD_CTX_free(ctx);
    free(buf);
    close(fd);
    if (!ok)
        errno = saved ? saved : EIO;
    return ok ? 0 : -1;
}
