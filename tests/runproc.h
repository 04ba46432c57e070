/*
 * runproc.h - run a program with arguments, capture stdout, stderr and the exit
 * status (for tests of the mygpt tool and the chapter programs).
 */
#ifndef MYGPT_TEST_RUNPROC_H
#define MYGPT_TEST_RUNPROC_H

typedef struct proc_result {
    int status;       /* exit status, or 128 + signal number */
    char *out, *err;  /* NUL-terminated, malloc'd */
} proc_result;

/* Runs argv[0] with argv (NULL-terminated), stdin from /dev/null. Returns 0, or
 * -1 if the program could not be started. */
int run_process(char *const argv[], proc_result *r);

/* Splits a space-separated command line (no quoting) and runs `exe` with it. */
int run_words(const char *exe, const char *words, proc_result *r);

void proc_result_free(proc_result *r);

/* Number of lines in s (a final line without newline counts). */
int count_lines(const char *s);

#endif
