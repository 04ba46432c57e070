/* runproc.c - run a child process and capture its output (see runproc.h). */
#include "runproc.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
    int po[2], pe[2];
    memset(r, 0, sizeof *r);
    if (pipe(po) || pipe(pe))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(pe[0]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    size_t lo = 0, le = 0;
    r->out = calloc(1, 1);
    r->err = calloc(1, 1);
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2;
    char buf[65536];
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0)
            break;
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
    int st;
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
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
