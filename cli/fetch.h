/*
 * fetch.h - one file over HTTP(S) into a partial file that a second run resumes (HTTP
 * Range), and the SHA-256 of a file: what `mygpt download` is made of. The tool's own
 * (libcurl and OpenSSL's libcrypto): the library never touches the network.
 */
#ifndef MYGPT_CLI_FETCH_H
#define MYGPT_CLI_FETCH_H

#include <stdint.h>

/* How a fetch ended */
typedef enum fetch_status {
    FETCH_DONE,        /* the partial file holds `size` bytes */
    FETCH_UNREACHABLE, /* no connection: no network, a wrong host, a refused port */
    FETCH_HTTP_ERROR,  /* the server answered with an HTTP error (404, 500, ...) */
    FETCH_CUT,         /* the transfer stopped early: the partial file keeps what came */
    FETCH_TOO_LONG,    /* the server sent more than `size` bytes */
    FETCH_IN_THE_WAY,  /* the partial file's name holds what is not ours to write: not a
                          regular file, or a file with another name (a hard link) */
    FETCH_LOCAL_ERROR  /* the partial file could not be opened or written */
} fetch_status;

/* One file to fetch: url into partial, which is to end at size bytes */
typedef struct fetch_job {
    const char *url, *partial, *user_agent;
    int64_t size;
    int progress; /* 1: a progress line on stderr (a terminal) */
} fetch_job;

/* What a fetch did: the bytes the partial file holds after it, the HTTP status of the
 * last answer (0: none), where it started, and why it failed, one line */
typedef struct fetch_result {
    int64_t have, resumed_at;
    long http;
    char message[600];
} fetch_result;

/* Fetches job->url into job->partial, appending from the partial file's end with an HTTP
 * Range request when it holds some bytes already (a server that ignores the range sends
 * the whole file, which then replaces them). Redirects are followed (http and https
 * only). Never writes past job->size bytes. A partial file that is empty when the fetch
 * fails is removed. Call curl_global_init once before. */
fetch_status fetch_resumable(const fetch_job *job, fetch_result *res);

/* The SHA-256 of the file at path as 64 lowercase hex digits into hex[65]; 0, or -1
 * with errno set (a file that cannot be read). */
int sha256_file(const char *path, char hex[65]);

#endif
