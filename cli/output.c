/* output.c - tensor output formats of the mygpt tool (see output.h). */
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
