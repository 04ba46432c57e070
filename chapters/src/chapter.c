/* chapter.c - shared command line and printing of the chapter programs. */
#include "chapter.h"

#include "args.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void chapter_init(chapter *ch, int argc, char **argv, const char *name, const char *about,
                  uint64_t default_seed, unsigned flags)
{
    cli_cap_threads();
    if (cli_check_kernel_env(name))
        exit(EXIT_USAGE);
    cli_ignore_file_size_signal();
    cli_check_output_at_exit(name);
    *ch = (chapter){0}; // every field a chapter does not set is zero (fail: NULL)
    ch->name = name;
    ch->seed = default_seed;
    const char *env_figures = getenv("MYGPT_FIGURES"); // set by scripts/chapters.sh
    ch->figures = env_figures && *env_figures ? env_figures : ".";
    /* the tool's parser (args/args.c): --seed 7 or --seed=7, unknown flags named, exit 2 */
    arg_spec specs[8] = {{NULL, 0, 0}};
    int n = 0;
    if (flags & CH_SEED)
        specs[n++] = (arg_spec){"seed", 1, 0};
    if (flags & CH_FIGURES)
        specs[n++] = (arg_spec){"figures", ARG_PATH, 0};
    if (flags & CH_TEXT)
        specs[n++] = (arg_spec){"text", ARG_PATH, 0};
    if (flags & CH_SMOKE)
        specs[n++] = (arg_spec){"smoke", 0, 0};
    if (flags & CH_WEIGHTS)
        specs[n++] = (arg_spec){"weights", 1, 0};
    if (flags & CH_BOOK)
        specs[n++] = (arg_spec){"book", 0, 0};
    if (flags & CH_GPT2)
        specs[n++] = (arg_spec){"gpt2", ARG_PATH, 0};
    args_set_prefix("");
    parsed_args a;
    const int rc = args_parse(name, argc - 1, argv + 1, specs, 0, &a);
    if (rc < 0) {
        printf("usage: %s%s%s%s%s%s%s%s\n\n%s\n", name, flags & CH_SEED ? " [--seed N]" : "",
               flags & CH_FIGURES ? " [--figures DIR]" : "", flags & CH_TEXT ? " [--text PATH]" : "",
               flags & CH_SMOKE ? " [--smoke]" : "", flags & CH_WEIGHTS ? " [--weights fp32|bf16|int8]" : "",
               flags & CH_BOOK ? " [--book]" : "", flags & CH_GPT2 ? " [--gpt2 DIR]" : "", about);
        if (flags & CH_SEED)
            printf(flags & CH_SEED_RUNC ? "\n  --seed N         run.c's -s N, its sampler's seed, instead of the default %llu\n"
                                        : "\n  --seed N         torch.manual_seed(N) instead of the default %llu\n",
                   (unsigned long long)default_seed);
        if (flags & CH_SEED_UNSEEN)
            printf("                   (accepted, but every seed prints the same here: no value it\n"
                   "                   draws is printed, only shapes, counts or checks that hold\n"
                   "                   for any values)\n");
        if (flags & CH_FIGURES)
            printf("  --figures DIR    where to write the SVG figures (default: $MYGPT_FIGURES, else .)\n");
        if (flags & CH_TEXT)
            printf("  --text PATH      the text to read\n");
        if (flags & CH_SMOKE)
            printf("  --smoke          a few steps only, not the chapter's text (the checks run this\n"
                   "                   where the whole chapter would take too long)\n");
        if (flags & CH_WEIGHTS)
            printf("  --weights W      the model's weights stored as bf16 or int8 (chapter 39): the\n"
                   "                   text then differs from the expected one\n");
        if (flags & CH_BOOK)
            printf("  --book           the printed book's code where it differs from the repository's\n"
                   "                   notebook (ERRATA.md says how); the text then differs\n");
        if (flags & CH_GPT2)
            printf("  --gpt2 DIR       a Hugging Face GPT-2 folder (model.safetensors, config.json): the\n"
                   "                   book's own run with OpenAI's weights (mygpt download gpt2 fetches\n"
                   "                   them into gpt2/124M); the text then differs from the expected\n"
                   "                   one (the header comment says what the book prints)\n");
        exit(0);
    }
    if (rc)
        exit(EXIT_USAGE);
    ch->seed_text = args_get(&a, "seed");
    if (args_has(&a, "seed") && parse_seed(name, "seed", args_get(&a, "seed"), &ch->seed))
        exit(EXIT_USAGE);
    if (flags & CH_FIGURES) { // checked now, not after the run has printed everything
        // where the folder was named: --figures, MYGPT_FIGURES, or neither (the current one)
        const char *named = args_has(&a, "figures") ? "--figures " : env_figures && *env_figures ? "MYGPT_FIGURES=" : "";
        ch->figures_from = named;
        if (args_has(&a, "figures"))
            ch->figures = args_get(&a, "figures");
        struct stat sb;
        const int found = stat(ch->figures, &sb) == 0;
        const int writable = found && S_ISDIR(sb.st_mode) && access(ch->figures, W_OK | X_OK) == 0;
        if (!writable) {
            const int absent = !found && errno == ENOENT;
            cli_error(name, "%s%s: %s%s", *named ? named : "the figures' folder ", ch->figures,
                    !found                  ? strerror(errno)
                    : !S_ISDIR(sb.st_mode) ? "not a folder"
                                            : "cannot write in it",
                    absent ? " (make it first: mkdir -p, or run bash scripts/chapters.sh, which makes build/figures)"
                           : "");
            exit(EXIT_USAGE);
        }
    }
    if (args_has(&a, "text"))
        ch->text = args_get(&a, "text");
    ch->smoke = args_has(&a, "smoke");
    ch->book = args_has(&a, "book");
    ch->gpt2 = args_get(&a, "gpt2");
    ch->weights = MYGPT_WEIGHTS_FP32;
    mygpt_error err = {0};
    if (args_has(&a, "weights") && mygpt_weights_parse(args_get(&a, "weights"), &ch->weights, &err) != MYGPT_OK) {
        cli_error(name, "--weights: %s", err.message);
        exit(EXIT_USAGE);
    }
}

void chapter_apply_weights(const chapter *ch, mygpt_gpt *g)
{
    mygpt_error err = {0};
    chapter_check(ch, mygpt_gpt_quantize(g, ch->weights, &err), &err);
}

/* DIR/file into path; a --smoke run's figure is FILE_smoke.svg, beside the full run's */
static void figure_path(const chapter *ch, const char *file, char *path, size_t cap)
{
    const size_t n = strlen(file);
    const int svg = n > 4 && strcmp(file + n - 4, ".svg") == 0;
    const int len = ch->smoke && svg ? snprintf(path, cap, "%s/%.*s_smoke.svg", ch->figures, (int)(n - 4), file)
                                     : snprintf(path, cap, "%s/%s", ch->figures, file);
    if (len < 0 || (size_t)len >= cap) // (cut, it would name another file)
        chapter_refuse(ch, "%s%.200s...: the path of its %s would be %d bytes, more than %zu",
                       ch->figures_from && *ch->figures_from ? ch->figures_from : "the figures' folder ", ch->figures,
                       file, len, cap - 1);
}

void chapter_check_figure(const chapter *ch, const char *file)
{
    char path[4096];
    mygpt_error err = {0};
    figure_path(ch, file, path, sizeof path);
    chapter_check(ch, mygpt_checkpoint_check_path(path, &err), &err); // a folder not there: bad input
    if (!mygpt_svg_replaceable(path))
        chapter_refuse(ch, "%s is there and is not a figure of mygpt's: not replaced (move it, or pass --figures "
                       "another folder)", path);
}

void chapter_save_figure(const chapter *ch, mygpt_svg *fig, const char *file)
{
    char path[4096];
    mygpt_error err = {0};
    figure_path(ch, file, path, sizeof path);
    chapter_check_figure(ch, file);
    chapter_check_write(ch, mygpt_svg_save(fig, path, &err), &err);
    char dir[PATH_MAX];
    if (realpath(ch->figures, dir)) /* say it as an absolute path: "." means little */
        cli_error(ch->name, "figure written to %s%s", dir, path + strlen(ch->figures));
    else
        cli_error(ch->name, "figure written to %s", path);
}

/* The one line, then the exit with status code (or ch->fail's end) */
static _Noreturn void chapter_exit(const chapter *ch, mygpt_status st, const mygpt_error *err, int code)
{
    const char *message = err && err->message[0] ? err->message : mygpt_strerror(st);
    if (ch->fail)
        ch->fail(ch, message);
    cli_error(ch->name, "%s", message);
    exit(code);
}

void chapter_refuse(const chapter *ch, const char *fmt, ...)
{
    mygpt_error err = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err.message, sizeof err.message, fmt, ap);
    va_end(ap);
    chapter_exit(ch, MYGPT_EINVAL, &err, EXIT_USAGE);
}

void chapter_check(const chapter *ch, mygpt_status st, const mygpt_error *err)
{
    if (st != MYGPT_OK)
        chapter_exit(ch, st, err, cli_exit_code(st));
}

void chapter_check_flag(const chapter *ch, const char *flag, mygpt_status st, const mygpt_error *err)
{
    if (st == MYGPT_OK)
        return;
    mygpt_error said = {0};
    snprintf(said.message, sizeof said.message, "%.64s: %.8000s", flag,
             err && err->message[0] ? err->message : mygpt_strerror(st));
    chapter_exit(ch, st, &said, cli_exit_code(st));
}

void chapter_check_write(const chapter *ch, mygpt_status st, const mygpt_error *err)
{
    if (st != MYGPT_OK) // a failed write (a full disk, the file-size limit) is a runtime failure
        chapter_exit(ch, st, err, st == MYGPT_EIO ? EXIT_RUNTIME : cli_exit_code(st));
}

void chapter_data_dir(const chapter *ch, char *dir, size_t len, const char *const *files, int n)
{
    const char *ci = getenv("CI");
    const int absent = ci && strcmp(ci, "true") == 0 ? 1 : 77;
    mygpt_error err = {0};
    const mygpt_status st = mygpt_data_dir(dir, len, &err);
    if (st == MYGPT_EIO) { // no data folder found: absent data
        cli_error(ch->name, "%s", err.message);
        exit(absent);
    }
    chapter_check(ch, st, &err); // a MYGPT_DATA that is no path (too long): a wrong setting
    struct stat sb; // MYGPT_DATA naming a file: a wrong setting, not absent data
    if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
        chapter_refuse(ch, "the data folder %s is not a folder (MYGPT_DATA?)", dir);
    for (int i = 0; i < n; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if (access(path, F_OK) != 0) {
            cli_error(ch->name, "%s is absent (run 'bash scripts/fetch-data.sh')", path);
            exit(absent);
        }
    }
}

void *chapter_alloc(const chapter *ch, size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size);
    if (!p) {
        cli_error(ch->name, "%s", "out of memory");
        exit(1);
    }
    return p;
}

double chapter_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void emit(mygpt_strbuf *sb)
{
    fputs(mygpt_sb_str(sb), stdout);
    mygpt_sb_free(sb);
}

static void print_view(mygpt_dtype dt, const void *data, int ndim, const int64_t *shape,
                       const char *grad_fn, int numpy, int round_decimals)
{
    mygpt_tview v;
    mygpt_strbuf sb = {0};
    if (mygpt_tview_make(&v, dt, data, ndim, shape, NULL) != MYGPT_OK)
        return;
    if (numpy) {
        mygpt_tview rv = v;
        float *tmp = NULL;
        if (round_decimals >= 0 && dt == MYGPT_F32) {
            int64_t n = mygpt_tview_numel(&v);
            tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
            if (!tmp)
                return;
            for (int64_t i = 0; i < n; i++)
                tmp[i] = mygpt_numpy_round_f32(((const float *)data)[i], round_decimals);
            rv.data = tmp;
        }
        mygpt_numpy_str(&sb, &rv);
        free(tmp);
    } else {
        mygpt_torch_opts o = {0};
        o.grad_fn = grad_fn;
        mygpt_torch_repr(&sb, &v, &o);
    }
    emit(&sb);
}

void ch_torch(const float *data, int ndim, const int64_t *shape, const char *grad_fn)
{
    print_view(MYGPT_F32, data, ndim, shape, grad_fn, 0, -1);
}

void ch_torch_i64(const int64_t *data, int ndim, const int64_t *shape)
{
    print_view(MYGPT_I64, data, ndim, shape, NULL, 0, -1);
}

void ch_torch_bool(const unsigned char *data, int ndim, const int64_t *shape)
{
    print_view(MYGPT_BOOL, data, ndim, shape, NULL, 0, -1);
}

void ch_numpy(const float *data, int ndim, const int64_t *shape, int round_decimals)
{
    print_view(MYGPT_F32, data, ndim, shape, NULL, 1, round_decimals);
}

void ch_size(int ndim, const int64_t *shape)
{
    mygpt_strbuf sb = {0};
    mygpt_torch_size(&sb, ndim, shape);
    emit(&sb);
}

void ch_tuple(int ndim, const int64_t *shape)
{
    mygpt_strbuf sb = {0};
    mygpt_py_tuple(&sb, ndim, shape);
    emit(&sb);
}

void ch_commas(long long n)
{
    mygpt_strbuf sb = {0};
    mygpt_py_int_commas(&sb, n);
    emit(&sb);
}

void ch_pyfloat(double x)
{
    mygpt_strbuf sb = {0};
    mygpt_py_float_repr(&sb, x);
    emit(&sb);
}

const char *ch_bool(int b)
{
    return b ? "True" : "False";
}
