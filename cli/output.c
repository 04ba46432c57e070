/* output.c - tensor output formats of the mygpt tool, and its files checked apart (see output.h). */
#include "output.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"

int out_options_parse(const char *cmd, const char *format, const char *round, out_options *o)
{
    o->format = OUT_TORCH;
    o->round = -1;
    if (format) {
        if (strcmp(format, "torch") == 0)
            o->format = OUT_TORCH;
        else if (strcmp(format, "numpy") == 0)
            o->format = OUT_NUMPY;
        else if (strcmp(format, "exact") == 0)
            o->format = OUT_EXACT;
        else {
            cli_error(cmd, "--format: '%s' is not one of torch, numpy, exact", format);
            return EXIT_USAGE;
        }
    }
    if (round) {
        int64_t k;
        if (parse_i64(cmd, "round", round, 0, 30, &k))
            return EXIT_USAGE;
        if (o->format != OUT_NUMPY) {
            cli_error(cmd, "--round only applies to --format numpy");
            return EXIT_USAGE;
        }
        o->round = (int)k;
    }
    return 0;
}

int out_print(const char *cmd, const out_options *o, const mygpt_tview *t,
              const mygpt_torch_opts *opts)
{
    const int64_t n = mygpt_tview_numel(t);
    if (o->format == OUT_EXACT) {
        for (int64_t i = 0; i < n; i++) {
            if (t->dtype == MYGPT_F32) {
                uint32_t bits;
                memcpy(&bits, (const float *)t->data + i, sizeof bits);
                printf("%08x\n", bits);
            } else if (t->dtype == MYGPT_I64) {
                printf("%lld\n", (long long)((const int64_t *)t->data)[i]);
            } else {
                printf("%d\n", ((const unsigned char *)t->data)[i] ? 1 : 0);
            }
        }
        return 0;
    }
    mygpt_strbuf sb = {0};
    mygpt_status st;
    if (o->format == OUT_TORCH) {
        st = mygpt_torch_repr(&sb, t, opts);
    } else if (o->round >= 0 && t->dtype == MYGPT_F32) {
        float *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
        if (!r) {
            cli_error(cmd, "out of memory");
            return EXIT_RUNTIME;
        }
        for (int64_t i = 0; i < n; i++)
            r[i] = mygpt_numpy_round_f32(((const float *)t->data)[i], o->round);
        mygpt_tview rv = *t;
        rv.data = r;
        st = mygpt_numpy_str(&sb, &rv);
        free(r);
    } else {
        st = mygpt_numpy_str(&sb, t);
    }
    if (st != MYGPT_OK) {
        mygpt_sb_free(&sb);
        cli_error(cmd, "%s", mygpt_strerror(st));
        return EXIT_RUNTIME;
    }
    fputs(mygpt_sb_str(&sb), stdout);
    fputc('\n', stdout);
    mygpt_sb_free(&sb);
    return 0;
}

int out_flush(const char *cmd)
{
    static int said; // a command that stopped for it, then the tool's own check at its end: one line
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    if (!said)
        cli_error(cmd, "error writing output");
    said = 1;
    return EXIT_RUNTIME;
}

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

/* The config.json beside file, into conf (4200 bytes) */
static void config_beside(char *conf, const char *file)
{
    const char *slash = strrchr(file, '/');
    snprintf(conf, 4200, "%.*sconfig.json", slash ? (int)(slash - file) + 1 : 0, file);
}

void cli_checkpoint_files(const char *flag, const char *path, cli_file f[2], char paths[2][4200])
{
    struct stat st;
    const int folder = path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    char file[4200];
    snprintf(file, sizeof file, folder ? "%s/model.safetensors" : "%s", path ? path : "");
    snprintf(paths[0], 4200, "%s", file);
    config_beside(paths[1], file);
    f[0] = (cli_file){flag, path ? paths[0] : NULL, 0, 0};
    f[1] = (cli_file){flag, path && access(paths[1], F_OK) == 0 ? paths[1] : NULL, 0, 0};
}

cli_file cli_save_config_file(const char *save, int gpt2, char conf[4200])
{
    if (save)
        config_beside(conf, save);
    return (cli_file){"a GPT-2 save's config.json", save && gpt2 && access(conf, F_OK) != 0 ? conf : NULL, 1, 0};
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
