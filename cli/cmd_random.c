/*
 * cmd_random.c - `mygpt randn | rand | randint | randperm | init`: PyTorch's random
 * tensors and default initialisers, printed so a learner can compare them with
 * their own notebook.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "mygpt/rng.h"
#include "output.h"

/* The largest tensor the tool will create: 2^28 elements (1 GiB of float32). */
#ifndef TOOL_MAX_NUMEL /* the fuzzing build lowers it to keep each run fast */
#define TOOL_MAX_NUMEL ((int64_t)1 << 28)
#endif

static const char *KERNEL_HELP =
    "  --kernel avx2|scalar   which PyTorch CPU kernel to imitate (default avx2, the\n"
    "                         reference; scalar = ATEN_CPU_CAPABILITY=default)\n";

static const char *FORMAT_HELP =
    "  --format torch|numpy|exact\n"
    "                         torch: what print(t) shows (default)\n"
    "                         numpy: what print(t.numpy()) shows\n"
    "                         exact: one value per line, float32 as 8 hex digits of its bits\n"
    "  --round K              with --format numpy: print(t.numpy().round(K))\n";

/* Shared set-up: seed + kernel + output options. */
typedef struct common {
    mygpt_rng rng;
    out_options out;
} common;

static int common_setup(const char *cmd, const parsed_args *a, common *c)
{
    memset(c, 0, sizeof *c);
    const char *seed = args_get(a, "seed");
    if (!seed) {
        cli_error(cmd, "--seed is required (torch.manual_seed)");
        return EXIT_USAGE;
    }
    uint64_t s;
    if (parse_seed(cmd, "seed", seed, &s))
        return EXIT_USAGE;
    const char *k = args_get(a, "kernel");
    if (k && strcmp(k, "avx2") == 0)
        c->rng.torch_cpu = MYGPT_TORCH_AVX2;
    else if (k && strcmp(k, "scalar") == 0)
        c->rng.torch_cpu = MYGPT_TORCH_SCALAR;
    else if (k) {
        cli_error(cmd, "--kernel: '%s' is not avx2 or scalar", k);
        return EXIT_USAGE;
    }
    mygpt_rng_seed(&c->rng, s);
    return out_options_parse(cmd, args_get(a, "format"), args_get(a, "round"), &c->out);
}

/* For each --shape in order: allocate, fill with `fill`, print (every shape read first, so
 * that a bad one prints nothing). */
typedef mygpt_status (*fill_fn)(mygpt_rng *rng, void *data, size_t n, const void *params,
                                mygpt_error *err);

static int for_each_shape(const char *cmd, const parsed_args *a, common *c, mygpt_dtype dtype,
                          fill_fn fill, const void *params)
{
    int shapes = 0;
    for (int h = 0; h < a->nhits; h++) {
        int ndim;
        int64_t shape[MYGPT_MAX_DIMS];
        if (strcmp(a->hits[h].spec->name, "shape") == 0 &&
            parse_shape(cmd, a->hits[h].value, &ndim, shape, TOOL_MAX_NUMEL))
            return EXIT_USAGE;
    }
    for (int h = 0; h < a->nhits; h++) {
        if (strcmp(a->hits[h].spec->name, "shape") != 0)
            continue;
        shapes++;
        int ndim;
        int64_t shape[MYGPT_MAX_DIMS];
        if (parse_shape(cmd, a->hits[h].value, &ndim, shape, TOOL_MAX_NUMEL))
            return EXIT_USAGE;
        int64_t n = 1; /* parse_shape bounded it, unless a size is 0: then it is 0 */
        for (int d = 0; d < ndim; d++)
            n = shape[d] == 0 ? 0 : n;
        for (int d = 0; d < ndim && n; d++)
            n *= shape[d];
        size_t elem = dtype == MYGPT_I64 ? sizeof(int64_t) : sizeof(float);
        void *data = malloc((size_t)(n > 0 ? n : 1) * elem);
        if (!data) {
            cli_error(cmd, "out of memory for %lld elements", (long long)n);
            return EXIT_RUNTIME;
        }
        mygpt_error err = {0};
        if (fill(&c->rng, data, (size_t)n, params, &err) != MYGPT_OK) {
            cli_error(cmd, "%s", err.message);
            free(data);
            return EXIT_USAGE;
        }
        mygpt_tview v;
        mygpt_tview_make(&v, dtype, data, ndim, shape, NULL);
        int rc = out_print(cmd, &c->out, &v, NULL);
        free(data);
        if (rc)
            return rc;
    }
    if (shapes == 0) {
        cli_error(cmd, "--shape is required (e.g. --shape 2,3)");
        return EXIT_USAGE;
    }
    return 0;
}

/* ---- randn ------------------------------------------------------------------ */

typedef struct normal_params { double mean, std; } normal_params;

static mygpt_status fill_normal(mygpt_rng *rng, void *d, size_t n, const void *p, mygpt_error *e)
{
    const normal_params *np = p;
    return mygpt_normal_(rng, d, n, np->mean, np->std, e);
}

static const arg_spec RANDN_ARGS[] = {
    {"seed", 1, 0}, {"shape", 1, 1}, {"mean", 1, 0}, {"std", 1, 0},
    {"format", 1, 0}, {"round", 1, 0}, {"kernel", 1, 0}, {NULL, 0, 0}};

int cmd_randn(int argc, char **argv)
{
    parsed_args a;
    int rc = args_parse("randn", argc, argv, RANDN_ARGS, 0, &a);
    if (rc < 0) {
        printf("usage: mygpt randn --seed S --shape D0,D1,... [--shape ...] [--mean M] [--std SD]\n"
               "\n"
               "torch.manual_seed(S); then for each --shape, a fresh float32 tensor filled by\n"
               "normal_(M, SD) (torch.randn when M = 0, SD = 1), printed. Repeated --shape\n"
               "options are further calls on the same generator.\n\n"
               "  --mean M               mean (default 0)\n"
               "  --std SD               standard deviation >= 0 (default 1)\n%s%s",
               FORMAT_HELP, KERNEL_HELP);
        return 0;
    }
    if (rc)
        return rc;
    common c;
    if ((rc = common_setup("randn", &a, &c)))
        return rc;
    normal_params p = {0.0, 1.0};
    if (args_has(&a, "mean") && parse_double("randn", "mean", args_get(&a, "mean"), &p.mean))
        return EXIT_USAGE;
    if (args_has(&a, "std") && parse_double("randn", "std", args_get(&a, "std"), &p.std))
        return EXIT_USAGE;
    if (p.std < 0) {
        cli_error("randn", "--std must be >= 0, got %s", args_get(&a, "std"));
        return EXIT_USAGE;
    }
    return for_each_shape("randn", &a, &c, MYGPT_F32, fill_normal, &p);
}

/* ---- rand ------------------------------------------------------------------- */

typedef struct uniform_params { double low, high; } uniform_params;

static mygpt_status fill_uniform(mygpt_rng *rng, void *d, size_t n, const void *p, mygpt_error *e)
{
    const uniform_params *up = p;
    return mygpt_uniform_(rng, d, n, up->low, up->high, e);
}

static const arg_spec RAND_ARGS[] = {
    {"seed", 1, 0}, {"shape", 1, 1}, {"low", 1, 0}, {"high", 1, 0},
    {"format", 1, 0}, {"round", 1, 0}, {"kernel", 1, 0}, {NULL, 0, 0}};

int cmd_rand(int argc, char **argv)
{
    parsed_args a;
    int rc = args_parse("rand", argc, argv, RAND_ARGS, 0, &a);
    if (rc < 0) {
        printf("usage: mygpt rand --seed S --shape D0,D1,... [--shape ...] [--low A] [--high B]\n"
               "\n"
               "torch.manual_seed(S); then for each --shape, a fresh float32 tensor filled by\n"
               "uniform_(A, B) (torch.rand when A = 0, B = 1), printed.\n\n"
               "  --low A                lower bound (default 0)\n"
               "  --high B               upper bound (default 1), B >= A\n%s%s",
               FORMAT_HELP, KERNEL_HELP);
        return 0;
    }
    if (rc)
        return rc;
    common c;
    if ((rc = common_setup("rand", &a, &c)))
        return rc;
    uniform_params p = {0.0, 1.0};
    if (args_has(&a, "low") && parse_double("rand", "low", args_get(&a, "low"), &p.low))
        return EXIT_USAGE;
    if (args_has(&a, "high") && parse_double("rand", "high", args_get(&a, "high"), &p.high))
        return EXIT_USAGE;
    if (p.low > p.high) {
        cli_error("rand", "--low must not exceed --high (got %g > %g)", p.low, p.high);
        return EXIT_USAGE;
    }
    return for_each_shape("rand", &a, &c, MYGPT_F32, fill_uniform, &p);
}

/* ---- randint ---------------------------------------------------------------- */

typedef struct int_params { int64_t low, high; } int_params;

static mygpt_status fill_randint(mygpt_rng *rng, void *d, size_t n, const void *p, mygpt_error *e)
{
    const int_params *ip = p;
    return mygpt_randint(rng, d, n, ip->low, ip->high, e);
}

static const arg_spec RANDINT_ARGS[] = {
    {"seed", 1, 0}, {"shape", 1, 1}, {"low", 1, 0}, {"high", 1, 0},
    {"format", 1, 0}, {"round", 1, 0}, {NULL, 0, 0}};

int cmd_randint(int argc, char **argv)
{
    parsed_args a;
    int rc = args_parse("randint", argc, argv, RANDINT_ARGS, 0, &a);
    if (rc < 0) {
        printf("usage: mygpt randint --seed S [--low L] --high H --shape D0,D1,... [--shape ...]\n"
               "\n"
               "torch.manual_seed(S); then for each --shape, torch.randint(L, H, shape): int64\n"
               "values in [L, H). L defaults to 0; L < H.\n\n%s",
               FORMAT_HELP);
        return 0;
    }
    if (rc)
        return rc;
    common c;
    if ((rc = common_setup("randint", &a, &c)))
        return rc;
    int_params p = {0, 0};
    if (!args_has(&a, "high")) {
        cli_error("randint", "--high is required");
        return EXIT_USAGE;
    }
    if (args_has(&a, "low") &&
        parse_i64("randint", "low", args_get(&a, "low"), INT64_MIN, INT64_MAX, &p.low))
        return EXIT_USAGE;
    if (parse_i64("randint", "high", args_get(&a, "high"), INT64_MIN, INT64_MAX, &p.high))
        return EXIT_USAGE;
    if (p.low >= p.high) {
        cli_error("randint", "--low must be less than --high (got low=%lld, high=%lld)",
                  (long long)p.low, (long long)p.high);
        return EXIT_USAGE;
    }
    return for_each_shape("randint", &a, &c, MYGPT_I64, fill_randint, &p);
}

/* ---- randperm --------------------------------------------------------------- */

static const arg_spec RANDPERM_ARGS[] = {
    {"seed", 1, 0}, {"n", 1, 0}, {"format", 1, 0}, {"round", 1, 0}, {NULL, 0, 0}};

int cmd_randperm(int argc, char **argv)
{
    parsed_args a;
    int rc = args_parse("randperm", argc, argv, RANDPERM_ARGS, 0, &a);
    if (rc < 0) {
        printf("usage: mygpt randperm --seed S --n N\n"
               "\n"
               "torch.manual_seed(S); torch.randperm(N) as torch 1.13 computes it: a random\n"
               "permutation of 0..N-1 (int64).\n\n%s",
               FORMAT_HELP);
        return 0;
    }
    if (rc)
        return rc;
    common c;
    if ((rc = common_setup("randperm", &a, &c)))
        return rc;
    int64_t n;
    if (!args_has(&a, "n")) {
        cli_error("randperm", "--n is required");
        return EXIT_USAGE;
    }
    if (parse_i64("randperm", "n", args_get(&a, "n"), 0, TOOL_MAX_NUMEL, &n))
        return EXIT_USAGE;
    int64_t *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (!p) {
        cli_error("randperm", "out of memory for %lld elements", (long long)n);
        return EXIT_RUNTIME;
    }
    mygpt_randperm(&c.rng, p, (size_t)n);
    mygpt_tview v;
    mygpt_tview_make(&v, MYGPT_I64, p, 1, &n, NULL);
    rc = out_print("randperm", &c.out, &v, NULL);
    free(p);
    return rc;
}

/* ---- init linear | embedding ------------------------------------------------ */

static const arg_spec INIT_ARGS[] = {
    {"seed", 1, 0}, {"in", 1, 0}, {"out", 1, 0}, {"no-bias", 0, 0}, {"num", 1, 0},
    {"dim", 1, 0}, {"format", 1, 0}, {"round", 1, 0}, {"kernel", 1, 0}, {NULL, 0, 0}};

static int init_help(void)
{
    printf("usage: mygpt init linear --seed S --in I --out O [--no-bias]\n"
           "       mygpt init embedding --seed S --num N --dim D\n"
           "       mygpt init gpt --seed S --vocab V --embed C --heads H --layers N [--max-seq M]\n"
           "\n"
           "torch.manual_seed(S); then builds nn.Linear(I, O, bias) or nn.Embedding(N, D)\n"
           "with PyTorch's default initialisation and prints its parameters as\n"
           "print(layer.weight) (then print(layer.bias)) shows them.\n\n%s%s",
           FORMAT_HELP, KERNEL_HELP);
    return 0;
}

static int print_param(const char *cmd, const out_options *o, const float *data, int ndim,
                       const int64_t *shape)
{
    mygpt_tview v;
    mygpt_tview_make(&v, MYGPT_F32, data, ndim, shape, NULL);
    mygpt_torch_opts opts = {0};
    opts.parameter = 1;
    return out_print(cmd, o, &v, &opts);
}

static int need_size(const char *cmd, const parsed_args *a, const char *name, int64_t min,
                     int64_t *out)
{
    if (!args_has(a, name)) {
        cli_error(cmd, "--%s is required", name);
        return EXIT_USAGE;
    }
    return parse_i64(cmd, name, args_get(a, name), min, TOOL_MAX_NUMEL, out);
}

int cmd_init(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        if (argc < 1) {
            cli_error("init", "expected 'linear', 'embedding' or 'gpt' (see 'mygpt init --help')");
            return EXIT_USAGE;
        }
        return init_help();
    }
    const char *what = argv[0];
    const int linear = strcmp(what, "linear") == 0;
    if (!linear && strcmp(what, "embedding") != 0) {
        cli_error("init", "unknown layer '%s' (expected linear, embedding or gpt)", what);
        return EXIT_USAGE;
    }
    const char *cmd = linear ? "init linear" : "init embedding";
    parsed_args a;
    int rc = args_parse(cmd, argc - 1, argv + 1, INIT_ARGS, 0, &a);
    if (rc < 0)
        return init_help();
    if (rc)
        return rc;
    static const char *linear_only[] = {"in", "out", "no-bias"};
    static const char *embedding_only[] = {"num", "dim"};
    const char **bad = linear ? embedding_only : linear_only;
    for (int i = 0; i < (linear ? 2 : 3); i++)
        if (args_has(&a, bad[i])) {
            cli_error(cmd, "--%s does not apply to %s", bad[i], what);
            return EXIT_USAGE;
        }
    common c;
    if ((rc = common_setup(cmd, &a, &c)))
        return rc;

    int64_t r, k; /* rows, columns of the weight */
    if (linear) {
        /* nn.Linear(0, out) is legal in PyTorch but has nothing to learn and only warns;
         * the tool says so instead of printing an empty weight */
        if (need_size(cmd, &a, "in", 1, &k) || need_size(cmd, &a, "out", 1, &r))
            return EXIT_USAGE;
    } else {
        if (need_size(cmd, &a, "num", 1, &r) || need_size(cmd, &a, "dim", 1, &k))
            return EXIT_USAGE;
    }
    if (k != 0 && r > TOOL_MAX_NUMEL / k) {
        cli_error(cmd, "a %lld x %lld weight has more than %lld elements", (long long)r,
                  (long long)k, (long long)TOOL_MAX_NUMEL);
        return EXIT_USAGE;
    }
    const int with_bias = linear && !args_has(&a, "no-bias");
    float *w = malloc((size_t)(r * k > 0 ? r * k : 1) * sizeof *w);
    float *b = with_bias ? malloc((size_t)(r > 0 ? r : 1) * sizeof *b) : NULL;
    if (!w || (with_bias && !b)) {
        free(w);
        free(b);
        cli_error(cmd, "out of memory");
        return EXIT_RUNTIME;
    }
    mygpt_error err = {0};
    mygpt_status st = linear ? mygpt_init_linear(&c.rng, w, b, (size_t)k, (size_t)r, &err)
                             : mygpt_init_embedding(&c.rng, w, (size_t)r, (size_t)k, &err);
    if (st != MYGPT_OK) {
        cli_error(cmd, "%s", err.message);
        rc = EXIT_RUNTIME;
    } else {
        const int64_t wshape[2] = {r, k};
        rc = print_param(cmd, &c.out, w, 2, wshape);
        if (!rc && with_bias)
            rc = print_param(cmd, &c.out, b, 1, &r);
    }
    free(w);
    free(b);
    return rc;
}
