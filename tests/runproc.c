/* runproc.c - run a child process and capture its output (see runproc.h). */
#include "runproc.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void append(char **buf, size_t *len, const char *data, size_t n)
{
    *buf = realloc(*buf, *len + n + 1);
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
}

int run_process(char *const argv[], proc_result *r)
{
    return run_process_input(argv, NULL, r);
}

int run_process_input(char *const argv[], const char *input, proc_result *r)
{
    int po[2], pe[2], pi[2] = {-1, -1};
    memset(r, 0, sizeof *r);
    if (input)
        signal(SIGPIPE, SIG_IGN);
    if (pipe(po) || pipe(pe) || (input && pipe(pi)))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (input) {
            dup2(pi[0], 0);
            close(pi[1]);
        } else {
            int devnull = open("/dev/null", O_RDONLY);
            dup2(devnull, 0);
        }
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(pe[0]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    size_t lo = 0, le = 0, sent = 0, to_send = input ? strlen(input) : 0;
    r->out = calloc(1, 1);
    r->err = calloc(1, 1);
    // the input goes in as the program takes it, while its output is read (no deadlock)
    if (input) {
        close(pi[0]);
        fcntl(pi[1], F_SETFL, O_NONBLOCK);
        if (to_send == 0) {
            close(pi[1]);
            pi[1] = -1;
        }
    }
    struct pollfd fds[3] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}, {pi[1], POLLOUT, 0}};
    int open_fds = 2;
    char buf[65536];
    while (open_fds > 0) {
        if (poll(fds, 3, -1) < 0)
            break;
        if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
            const ssize_t n = write(fds[2].fd, input + sent, to_send - sent);
            if (n > 0)
                sent += (size_t)n;
            if (n < 0 || sent == to_send) { // all written, or the program stopped reading
                close(fds[2].fd);
                fds[2].fd = -1;
            }
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
                continue;
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            } else if (i == 0) {
                append(&r->out, &lo, buf, (size_t)n);
            } else {
                append(&r->err, &le, buf, (size_t)n);
            }
        }
    }
    if (fds[2].fd >= 0)
        close(fds[2].fd);
    int st;
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

int session_start(char *const argv[], proc_session *s)
{
    int pi[2], po[2];
    memset(s, 0, sizeof *s);
    signal(SIGPIPE, SIG_IGN);
    if (pipe(pi))
        return -1;
    if (pipe(po)) {
        close(pi[0]);
        close(pi[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(pi[0], 0);
        dup2(po[1], 1);
        dup2(po[1], 2);
        close(pi[1]);
        close(po[0]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(pi[0]);
    close(po[1]);
    s->pid = pid;
    s->in = pi[1];
    s->out = po[0];
    s->text = calloc(1, 1);
    return s->text ? 0 : -1;
}

int session_send(proc_session *s, const char *bytes)
{
    for (size_t n = strlen(bytes), done = 0; done < n;) {
        const ssize_t w = write(s->in, bytes + done, n - done);
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

static int occurrences(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + strlen(needle), needle))
        n++;
    return n;
}

/* Reads what the program wrote within ms milliseconds; 0 at its end of output */
static int session_read(proc_session *s, int ms)
{
    struct pollfd fd = {s->out, POLLIN, 0};
    if (s->out < 0 || poll(&fd, 1, ms) <= 0)
        return s->out >= 0;
    char buf[4096];
    const ssize_t n = read(s->out, buf, sizeof buf);
    if (n <= 0) {
        close(s->out);
        s->out = -1;
        return 0;
    }
    append(&s->text, &s->len, buf, (size_t)n);
    return 1;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int session_wait_for(proc_session *s, const char *needle, int count, double timeout_s)
{
    const double end = now_s() + timeout_s;
    while (occurrences(s->text, needle) < count)
        if (now_s() > end || !session_read(s, 100))
            return occurrences(s->text, needle) >= count;
    return 1;
}

int session_end(proc_session *s, double timeout_s)
{
    if (s->in >= 0)
        close(s->in);
    s->in = -1;
    const double end = now_s() + timeout_s;
    while (s->out >= 0 && now_s() < end)
        session_read(s, 100);
    if (s->out >= 0) { // still running: ended, so the test goes on
        kill(s->pid, SIGKILL);
        close(s->out);
        s->out = -1;
    }
    int st;
    waitpid(s->pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void session_free(proc_session *s)
{
    free(s->text);
    s->text = NULL;
}

int run_words(const char *exe, const char *words, proc_result *r)
{
    char *copy = strdup(words);
    char *argv[128];
    int n = 0;
    argv[n++] = (char *)exe;
    for (char *tok = strtok(copy, " "); tok && n < 127; tok = strtok(NULL, " "))
        argv[n++] = tok;
    argv[n] = NULL;
    int rc = run_process(argv, r);
    free(copy);
    return rc;
}

void proc_result_free(proc_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

int count_lines(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        if (*p == '\n')
            n++;
    if (*s && s[strlen(s) - 1] != '\n')
        n++;
    return n;
}
