/* output.c - tensor output formats of the mygpt tool, and its files checked apart (see output.h). */
#include "output.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "mygpt/checkpoint.h"

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
    if (cli_output_written())
        return 0;
    if (!said)
        cli_error(cmd, "error writing output");
    said = 1;
    return EXIT_RUNTIME;
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

int cli_parse_or_help(const char *cmd, int argc, char **argv, const arg_spec *spec, int positional,
                      const char *usage, parsed_args *a)
{
    const int rc = args_parse(cmd, argc, argv, spec, positional, a);
    if (rc < 0) {
        fputs(usage, stdout);
        return -1;
    }
    return rc;
}

int cli_check_output(const char *cmd, const char *label, const char *path, int force)
{
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) && !force) { // (others: check_path says what they are)
        cli_error(cmd, "%s: %s is there already: not replaced (--force replaces it)", label, path);
        return EXIT_USAGE;
    }
    mygpt_error err = {0};
    if (mygpt_checkpoint_check_path(path, &err) != MYGPT_OK) {
        cli_error(cmd, "%s: %s", label, err.message);
        return EXIT_USAGE;
    }
    return 0;
}
