/*
 * runproc.h - run a program with arguments, capture stdout, stderr and the exit
 * status (for tests of the mygpt tool and the chapter programs).
 */
#ifndef MYGPT_TEST_RUNPROC_H
#define MYGPT_TEST_RUNPROC_H

#include <stddef.h>

typedef struct proc_result {
    int status;       /* exit status, or 128 + signal number */
    char *out, *err;  /* NUL-terminated, malloc'd */
} proc_result;

/* Runs argv[0] with argv (NULL-terminated), stdin from /dev/null. Returns 0, or
 * -1 if the program could not be started. */
int run_process(char *const argv[], proc_result *r);

/* The same with input (NUL-terminated) on its stdin, then end of file. Writing to a
 * program that has stopped reading is not an error (SIGPIPE is ignored from then on). */
int run_process_input(char *const argv[], const char *input, proc_result *r);

/* A program driven as a person drives it: the test writes to its stdin as it goes and
 * reads its stdout and stderr together, as a terminal shows them. */
typedef struct proc_session {
    int pid;
    int in, out;   /* the program's stdin (to write) and its stdout + stderr (to read) */
    char *text;    /* everything read so far, NUL-terminated (malloc'd) */
    size_t len;
} proc_session;

/* Starts argv[0] (SIGPIPE ignored from then on); 0, or -1 if it could not be started. */
int session_start(char *const argv[], proc_session *s);

/* Writes bytes to the program's stdin; 0, or -1. */
int session_send(proc_session *s, const char *bytes);

/* Reads until s->text holds `count` occurrences of needle (1: found), the program
 * closes its output or timeout_s seconds pass (0: not found). */
int session_wait_for(proc_session *s, const char *needle, int count, double timeout_s);

/* Closes the program's stdin, reads what is left (timeout_s at most, then kills it)
 * and returns its exit status (128 + signal number); s->text stays until session_free. */
int session_end(proc_session *s, double timeout_s);
void session_free(proc_session *s);

/* Splits a space-separated command line (no quoting) and runs `exe` with it. */
int run_words(const char *exe, const char *words, proc_result *r);

void proc_result_free(proc_result *r);

/* Number of lines in s (a final line without newline counts). */
int count_lines(const char *s);

#endif
