/* args.c - strict argument parsing for the mygpt tool, the chapters and the
 * benchmarks (see args.h). */
#include "args.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mygpt/data.h"
#include "mygpt/kernels.h"
#include "mygpt/print.h"

static const char *program_prefix = "mygpt "; /* the tool's subcommands: "mygpt randn: ..." */

void args_set_prefix(const char *prefix)
{
    program_prefix = prefix;
}

/* fmt's text on f as one line, whatever it holds: a path's newline or terminal escape
 * (ESC, any control byte) is shown escaped (\n, \x1b), never acted on by the terminal */
static void put_line(FILE *f, const char *fmt, va_list ap)
{
    char small[512], *text = small;
    va_list again;
    va_copy(again, ap);
    const int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0)
        small[0] = '\0';
    else if (n >= (int)sizeof small && (text = malloc((size_t)n + 1)) != NULL)
        vsnprintf(text, (size_t)n + 1, fmt, again);
    va_end(again);
    if (!text)
        text = small; // out of memory: the message cut
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '\n')
            fputs("\\n", f);
        else if (*c == '\t')
            fputs("\\t", f);
        else if (*c == '\r')
            fputs("\\r", f);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(f, "\\x%02x", *c);
        else
            fputc(*c, f);
    }
    fputc('\n', f);
    if (text != small)
        free(text);
}

void cli_error(const char *cmd, const char *fmt, ...)
{
    fprintf(stderr, "%s%s: ", program_prefix, cmd);
    va_list ap;
    va_start(ap, fmt);
    put_line(stderr, fmt, ap);
    va_end(ap);
}

void cli_say(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_line(f, fmt, ap);
    va_end(ap);
}

int args_distance(const char *a, size_t la, const char *b)
{
    const size_t lb = strlen(b);
    if (la > 32 || lb > 32)
        return 3;
    int row[33];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            const int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] < 3 ? row[lb] : 3;
}

/* the flag of specs nearest to name[0..len) when a typo (at most two edits) away, else NULL */
static const char *nearest_flag(const arg_spec *specs, const char *name, size_t len)
{
    const char *near = NULL;
    int best = 3;
    for (const arg_spec *s = specs; s->name; s++) {
        const int d = args_distance(name, len, s->name);
        if (d < best)
            best = d, near = s->name;
    }
    return near;
}

static const arg_spec *find_spec(const arg_spec *specs, const char *name, size_t len)
{
    for (const arg_spec *s = specs; s->name; s++)
        if (strlen(s->name) == len && strncmp(s->name, name, len) == 0)
            return s;
    return NULL;
}

int args_parse(const char *cmd, int argc, char **argv, const arg_spec *specs,
               int allow_positional, parsed_args *out)
{
    memset(out, 0, sizeof *out);
    out->positional = argv;
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (strcmp(w, "--") == 0) { // the end of the options: what follows is positional, "-x" too
            for (i++; i < argc; i++) {
                if (!allow_positional) {
                    cli_error(cmd, "unexpected argument '%s' (see '%s%s --help')", argv[i], program_prefix, cmd);
                    return EXIT_USAGE;
                }
                out->positional[out->npositional++] = argv[i];
            }
            break;
        }
        if (strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0)
            return -1;
        if (strncmp(w, "--", 2) != 0 || w[2] == '\0') {
            if (!allow_positional || (w[0] == '-' && w[1] != '\0')) {
                if (allow_positional) // a file named -x, an id -1: after "--", as other tools take them
                    cli_error(cmd, "unexpected argument '%s' (see '%s%s --help'; an argument that begins with '-' "
                              "goes after --: %s%s -- %s)", w, program_prefix, cmd, program_prefix, cmd, w);
                else
                    cli_error(cmd, "unexpected argument '%s' (see '%s%s --help')", w, program_prefix, cmd);
                return EXIT_USAGE;
            }
            /* argv[npositional] (npositional <= i) was read already: reuse its slot */
            out->positional[out->npositional++] = argv[i];
            continue;
        }
        const char *name = w + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const arg_spec *s = find_spec(specs, name, len);
        if (!s) {
            const char *near = nearest_flag(specs, name, len);
            if (near)
                cli_error(cmd, "unknown option '--%.*s' (did you mean '--%s'? see '%s%s --help')", (int)len,
                          name, near, program_prefix, cmd);
            else
                cli_error(cmd, "unknown option '--%.*s' (see '%s%s --help')", (int)len, name, program_prefix, cmd);
            return EXIT_USAGE;
        }
        const char *value = NULL;
        if (s->takes_value) {
            /* "--seed --shape 2,3": the next word is a flag, not --seed's value (a negative
             * number such as -5 starts with one dash and is a value) */
            if (eq) {
                value = eq + 1;
            } else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
                value = argv[++i];
            } else {
                cli_error(cmd, "option '--%s' needs a value", s->name);
                return EXIT_USAGE;
            }
        } else if (eq) {
            cli_error(cmd, "option '--%s' takes no value", s->name);
            return EXIT_USAGE;
        }
        if (value && !*value && s->takes_value == ARG_PATH) {
            cli_error(cmd, "--%s: the path is empty", s->name);
            return EXIT_USAGE;
        }
        if (!s->repeatable && args_has(out, s->name)) {
            cli_error(cmd, "option '--%s' given more than once", s->name);
            return EXIT_USAGE;
        }
        if (out->nhits == (int)(sizeof out->hits / sizeof out->hits[0])) {
            cli_error(cmd, "too many options");
            return EXIT_USAGE;
        }
        out->hits[out->nhits].spec = s;
        out->hits[out->nhits].value = value;
        out->nhits++;
    }
    return 0;
}

const char *args_get(const parsed_args *a, const char *name)
{
    const char *v = NULL;
    for (int i = 0; i < a->nhits; i++)
        if (strcmp(a->hits[i].spec->name, name) == 0)
            v = a->hits[i].value;
    return v;
}

int args_has(const parsed_args *a, const char *name)
{
    for (int i = 0; i < a->nhits; i++)
        if (strcmp(a->hits[i].spec->name, name) == 0)
            return 1;
    return 0;
}

int parse_i64(const char *cmd, const char *name, const char *s, int64_t min, int64_t max,
              int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*s == '\0' || isspace((unsigned char)*s) || *end != '\0') { // (strtoll skips leading spaces)
        cli_error(cmd, "--%s: '%s' is not an integer", name, s);
        return EXIT_USAGE;
    }
    if (errno == ERANGE || v < min || v > max) {
        cli_error(cmd, "--%s: %s is out of range [%lld, %lld]", name, s, (long long)min,
                  (long long)max);
        return EXIT_USAGE;
    }
    *out = (int64_t)v;
    return 0;
}

int parse_seed(const char *cmd, const char *name, const char *s, uint64_t *out)
{
    /* torch.manual_seed accepts [-2^63, 2^64); negatives wrap to two's complement */
    char *end;
    errno = 0;
    if (*s == '-') {
        long long v = strtoll(s, &end, 10);
        if (s[1] == '\0' || *end != '\0' || errno == ERANGE) {
            cli_error(cmd, "--%s: '%s' is not an integer in [-2^63, 2^64)", name, s);
            return EXIT_USAGE;
        }
        *out = (uint64_t)v;
        return 0;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (*s == '\0' || *s == '+' || isspace((unsigned char)*s) || *end != '\0' || errno == ERANGE) {
        cli_error(cmd, "--%s: '%s' is not an integer in [-2^63, 2^64)", name, s);
        return EXIT_USAGE;
    }
    *out = (uint64_t)v;
    return 0;
}

int parse_double(const char *cmd, const char *name, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || isspace((unsigned char)*s) || *end != '\0' || !isfinite(v)) {
        cli_error(cmd, "--%s: '%s' is not a finite number", name, s);
        return EXIT_USAGE;
    }
    if (errno == ERANGE && v == 0.0) { // (a number too small for a double is not 0: "1e-400")
        cli_error(cmd, "--%s: '%s' is too close to 0 for a double (it would be read as 0)", name, s);
        return EXIT_USAGE;
    }
    *out = v;
    return 0;
}

int args_size_list(const char *s, int64_t *out, int most)
{
    int n = 0;
    for (const char *p = s;; n++) {
        if (*p < '0' || *p > '9') // (strtoll would skip a space and take a sign)
            return -1;
        char *end;
        errno = 0;
        const long long v = strtoll(p, &end, 10);
        if (errno == ERANGE || (*end != ',' && *end != '\0'))
            return -1;
        if (n < most)
            out[n] = v;
        if (*end == '\0')
            return n + 1;
        p = end + 1;
    }
}

int parse_shape(const char *cmd, const char *s, int *ndim, int64_t *shape, int64_t max_numel)
{
    if (*s == '\0') {
        cli_error(cmd, "--shape: empty shape (write e.g. --shape 2,3)");
        return EXIT_USAGE;
    }
    const int n = args_size_list(s, shape, MYGPT_MAX_DIMS);
    if (n < 0) {
        cli_error(cmd, "--shape: '%s' is not a list of sizes like 2,3,4", s);
        return EXIT_USAGE;
    }
    if (n > MYGPT_MAX_DIMS) {
        cli_error(cmd, "--shape: at most %d dimensions", MYGPT_MAX_DIMS);
        return EXIT_USAGE;
    }
    int64_t numel = 1;
    for (int i = 0; i < n; i++) {
        const int64_t v = shape[i];
        if (v != 0 && numel > max_numel / v)
            numel = max_numel + 1;
        else
            numel *= v;
    }
    if (numel > max_numel) {
        cli_error(cmd, "--shape: %s has more than %lld elements", s, (long long)max_numel);
        return EXIT_USAGE;
    }
    *ndim = n;
    return 0;
}

int cli_others_of(const long *readings, int n)
{
    long sorted[CLI_READINGS];
    if (n < 1 || n > CLI_READINGS)
        return -1;
    memcpy(sorted, readings, (size_t)n * sizeof *sorted);
    for (int i = 1; i < n; i++) // insertion sort: at most CLI_READINGS values
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            const long t = sorted[j];
            sorted[j] = sorted[j - 1], sorted[j - 1] = t;
        }
    const long most = sorted[n - (3 * n + 3) / 4]; // the readings from here up: ceil(3n / 4)
    return most < 0 ? -1 : most < INT_MAX ? (int)most : INT_MAX;
}

/* Other threads the system keeps running over the readings, or -1 where it does not say: Linux's
 * /proc/loadavg counts the runnable threads (its fourth field, before the slash; this
 * one included, the team's not made yet), read every half millisecond. A quiet system
 * is told by its first QUIET_READINGS readings, all 0 (about 2 ms); else the readings go
 * on, CLI_READINGS of them (about 35 ms, which a program started beside others waits),
 * for cli_others_of. */
#define QUIET_READINGS 4
static int others_running(void)
{
    long seen[CLI_READINGS];
    int busy = 0;
    for (int i = 0; i < CLI_READINGS; i++) {
        if (i == QUIET_READINGS && !busy)
            return 0;
        if (i)
            nanosleep(&(struct timespec){0, 500000}, NULL);
        FILE *f = fopen("/proc/loadavg", "r");
        if (!f)
            return -1;
        long n = -1;
        if (fscanf(f, "%*f %*f %*f %ld/", &n) != 1)
            n = -1;
        fclose(f);
        if (n < 1)
            return -1;
        seen[i] = n - 1;
        busy |= seen[i] > 0;
    }
    return cli_others_of(seen, CLI_READINGS);
}

/* A team, at most `max`, of threads with a core each: one fewer for each thread another
 * process keeps running. The count is the whole system's: a process allowed fewer CPUs
 * than are online (taskset, a container's cpuset) cannot tell whether those threads run
 * on its own, and keeps its team. A team with a thread on a core another process keeps busy makes
 * every region wait for that thread's turn: the chapters' small models enter tens of
 * thousands of regions, and each would cost a slice of milliseconds instead of
 * microseconds (bench/results/busy_machine.txt). Empty regions timed at start-up do
 * not tell: a thread woken for a short region runs at once, ahead of a process that
 * never sleeps, and loses its turns only once it works. */
static int free_team(int max)
{
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1 || omp_get_num_procs() < cpus)
        return max;
    const int others = others_running();
    if (others <= 0)
        return max;
    const long free_cpus = cpus - others;
    return free_cpus < 1 ? 1 : free_cpus < max ? (int)free_cpus : max;
}

int cli_cap_threads(void)
{
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const int cap = cpus > 0 && cpus < (1 << 20) ? 4 * (int)cpus : 64;
    if (omp_get_max_threads() > cap) {
        omp_set_num_threads(cap);
        return cap;
    }
    /* a user who set the team or the waiting (passive threads take longer to start a
     * region even on free cores) gets what they asked for */
    const char *team = getenv("OMP_NUM_THREADS"), *wait = getenv("OMP_WAIT_POLICY");
    if (!(team && *team) && !(wait && *wait) && omp_get_max_threads() > 1)
        omp_set_num_threads(free_team(omp_get_max_threads()));
    return 0;
}

int cli_check_kernel_env(const char *name)
{
    mygpt_error err;
    const mygpt_status st = mygpt_kernel_env_check(&err);
    if (st == MYGPT_OK)
        return 0;
    const char *prefix = program_prefix; // the program's own name, whatever its commands' prefix
    program_prefix = "";
    cli_error(name, "%s", err.message);
    program_prefix = prefix;
    return cli_exit_code(st);
}

void cli_ignore_file_size_signal(void)
{
    signal(SIGXFSZ, SIG_IGN);
}

int cli_output_written(void)
{
    return fflush(stdout) == 0 && !ferror(stdout);
}

static const char *output_owner;
static void check_output(void)
{
    if (cli_output_written())
        return;
    cli_error(output_owner, "error writing output");
    _exit(EXIT_RUNTIME);
}

void cli_check_output_at_exit(const char *name)
{
    output_owner = name;
    atexit(check_output);
}

int cli_exit_code(mygpt_status st)
{
    return st == MYGPT_OK ? 0 : st == MYGPT_ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
}

int cli_fail(const char *cmd, mygpt_status st, const mygpt_error *err)
{
    cli_error(cmd, "%s", err && err->message[0] ? err->message : mygpt_strerror(st));
    return cli_exit_code(st);
}

int cli_write_exit_code(mygpt_status st)
{
    return st == MYGPT_EIO ? EXIT_RUNTIME : cli_exit_code(st);
}

int cli_write_fail(const char *cmd, mygpt_status st, const mygpt_error *err)
{
    cli_fail(cmd, st, err);
    return cli_write_exit_code(st);
}

/* A double flag (>= min) into *out when given. */
int args_double_min(const char *cmd, const parsed_args *a, const char *name, double min, double *out)
{
    if (!args_has(a, name))
        return 0;
    double v;
    if (parse_double(cmd, name, args_get(a, name), &v))
        return EXIT_USAGE;
    if (v < min) {
        cli_error(cmd, "--%s must be at least %g, got %s", name, min, args_get(a, name));
        return EXIT_USAGE;
    }
    *out = v;
    return 0;
}

/* An integer flag in [min, max] into *out when given; required says whether it must be. */
int args_i64_in(const char *cmd, const parsed_args *a, const char *name, int64_t min, int64_t max, int required,
                int64_t *out)
{
    if (!args_has(a, name)) {
        if (required)
            cli_error(cmd, "--%s is required", name);
        return required ? EXIT_USAGE : 0;
    }
    return parse_i64(cmd, name, args_get(a, name), min, max, out) ? EXIT_USAGE : 0;
}

double cli_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- files a program reads and writes -------------------------------------------- */

/* Where a path leads: a file that exists by its device and inode; one that does not by
 * its folder's and its final name. 0, or -1 when that cannot be told (then paths are
 * compared as they are written). */
typedef struct file_key {
    int exists;
    dev_t dev;
    ino_t ino;
    char name[PATH_MAX];
} file_key;

static int file_key_of(const char *path, file_key *k)
{
    char cur[PATH_MAX], dir[PATH_MAX], to[PATH_MAX];
    if ((size_t)snprintf(cur, sizeof cur, "%s", path) >= sizeof cur)
        return -1;
    for (int hops = 0; hops < 40; hops++) { // as many links as the system follows
        struct stat st;
        if (stat(cur, &st) == 0) {
            *k = (file_key){.exists = 1, .dev = st.st_dev, .ino = st.st_ino};
            return 0;
        }
        const char *slash = strrchr(cur, '/');
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - cur) + (slash == cur) : 1, slash ? cur : ".");
        const ssize_t n = readlink(cur, to, sizeof to - 1);
        if (n >= 0) { // a dangling link: the file it would create
            to[n] = '\0';
            if (to[0] != '/' && slash && (size_t)snprintf(cur, sizeof cur, "%s/%s", dir, to) >= sizeof cur)
                return -1;
            if (to[0] == '/' || !slash)
                memcpy(cur, to, (size_t)n + 1);
            continue;
        }
        if (stat(dir, &st) != 0)
            return -1;
        *k = (file_key){.exists = 0, .dev = st.st_dev, .ino = st.st_ino};
        snprintf(k->name, sizeof k->name, "%s", slash ? slash + 1 : cur);
        return 0;
    }
    return -1;
}

int cli_same_file(const char *a, const char *b)
{
    file_key ka, kb;
    if (file_key_of(a, &ka) != 0 || file_key_of(b, &kb) != 0)
        return strcmp(a, b) == 0;
    return ka.exists == kb.exists && ka.dev == kb.dev && ka.ino == kb.ino &&
           (ka.exists || strcmp(ka.name, kb.name) == 0);
}

int cli_distinct_files(const char *cmd, const cli_file *files, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const cli_file *w = &files[i], *o = &files[j];
            if (!w->written || !w->path || !o->path || j == i || (o->written && j < i) ||
                (w->shared && w->shared == o->shared) || !cli_same_file(w->path, o->path))
                continue;
            if (o->written)
                cli_error(cmd, "%s %s and %s %s are one file: one would replace the other (write each to a file of "
                               "its own)", w->flag, w->path, o->flag, o->path);
            else
                cli_error(cmd, "%s %s is the file %s reads: it is never replaced (write elsewhere)", w->flag, w->path,
                          o->flag);
            return EXIT_USAGE;
        }
    return 0;
}

int cli_replaceable_text(const char *path, const char *head)
{
    char got[256]; // the heads are a table's or a log's header line (args.h)
    assert(strlen(head) < sizeof got);
    const long n = mygpt_file_head(path, got, sizeof got);
    return n == MYGPT_HEAD_ABSENT || (n >= (long)strlen(head) && memcmp(got, head, strlen(head)) == 0);
}
