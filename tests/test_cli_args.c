/*
 * test_cli_args.c - every program's command line (the tool, the chapters, the benchmark):
 * --help, an unknown or misspelt flag, a bad value or file is one line on stderr, nothing
 * on stdout and exit status 2; messages show a path as it is, escaped.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "cli_common.h"
#include "data.h"
#include "mygpt/checkpoint.h"
#include "mygpt/quantize.h"

/* Each: the arguments, and a piece of the expected error message. */
static const char *const BAD[][2] = {
    {"", "usage"},
    {"frobnicate", "unknown command 'frobnicate' (see 'mygpt --help')"},
    {"genrate --seed 0", "unknown command 'genrate' (did you mean 'generate'?"},
    {"rnadn", "did you mean 'randn'?"},
    {"randn --shape 2", "--seed is required"},
    {"randn --seed 0", "--shape is required"},
    {"randn --seed 0 --shape", "'--shape' needs a value"},
    {"randn --seed abc --shape 2", "--seed: 'abc' is not an integer"},
    {"randn --seed 18446744073709551616 --shape 2", "--seed"},
    {"randn --seed -9223372036854775809 --shape 2", "--seed"},
    {"randn --seed 0 --shape 2,,3", "--shape"},
    {"randn --seed 0 --shape -2", "--shape"},
    {"randn --seed 0 --shape 2x3", "--shape"},
    {"randn --seed 0 --shape 3 --shape 2,,3", "--shape"}, // every shape read before one is drawn
    {"rand --seed 0 --shape 3 --shape 100000,100000,100000", "more than"},
    {"randint --seed 0 --high 5 --shape 3 --shape=", "--shape"},
    {"randn --seed 0 --shape 100000,100000,100000", "more than"},
    {"randn --seed 0 --shape 1,1,1,1,1,1,1,1,1", "at most 8 dimensions"},
    {"randn --seed 0 --shape 2 --std -1", "--std must be >= 0"},
    {"randn --seed 0 --shape 2 --mean nan", "--mean"},
    {"randn --seed 0 --shape 2 --bogus 1", "unknown option '--bogus'"},
    {"randn --seed 0 --seed 1 --shape 2", "more than once"},
    {"randn --seed 0 --shape 2 --format yaml", "--format"},
    {"randn --seed 0 --shape 2 --round 3", "--round only applies to --format numpy"},
    {"randn --seed 0 --shape 2 --format numpy --round -1", "--round"},
    {"randn --seed 0 --shape 2 --kernel sse", "--kernel"},
    {"randn --seed 0 --shape 2 extra", "unexpected argument 'extra'"},
    {"rand --seed 0 --shape 2 --low 3 --high 1", "--low must not exceed --high"},
    {"rand --seed 0 --shape 2 --high inf", "--high"},
    {"rand --seed 0 --shape 2 --low -1e308 --high 1e308", "from is out of bounds for float"},
    {"rand --seed 0 --shape 2 --low -3e38 --high 3e38", "uniform_ expects to-from <= std::numeric_limits<Float>::max()"},
    {"randint --seed 0 --low 5 --high 5 --shape 3", "--low must be less than --high"},
    {"randint --seed 0 --shape 3", "--high is required"},
    {"randint --seed 0 --high 9223372036854775808 --shape 3", "out of range"},
    {"randperm --seed 0 --n -1", "--n"},
    {"randperm --seed 0", "--n is required"},
    {"randperm --seed 0 --n 1000000000000", "out of range"},
    {"init", "expected 'linear', 'embedding' or 'gpt'"},
    {"init conv --seed 0", "unknown layer 'conv'"},
    {"init linear --seed 0 --in 3", "--out is required"},
    {"init linear --seed 0 --in -3 --out 2", "--in"},
    {"init linear --seed 0 --in 0 --out 2", "--in: 0 is out of range [1,"},
    {"init embedding --seed 0 --num 0 --dim 2", "--num: 0 is out of range [1,"},
    {"init linear --seed 0 --in 100000 --out 100000", "more than"},
    {"init embedding --seed 0 --num 3 --dim 4 --no-bias", "--no-bias does not apply"},
    {"init linear --seed 0 --no-bias=1 --in 2 --out 2", "takes no value"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids 0,1,4", "token id 4 at (0, 2) is outside [0, 4)"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids 0,-1", "token id -1 at (0, 1)"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --max-seq 3 --ids 0,1,2,3", "input length T=4 exceeds max_seq_len=3"},
    {"forward --seed 0 --vocab 4 --embed 6 --heads 4 --layers 2 --ids 0", "embed_dim=6 is not divisible by num_heads=4"},
    {"forward --seed 0 --vocab 0 --embed 4 --heads 2 --layers 2 --ids 0", "--vocab: 0 is out of range [1, 2147483647]"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers -2 --ids 0", "--layers: -2 is out of range [1, "},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --max-seq 0 --ids 0", "--max-seq: 0 is out of range [1,"},
    {"params --vocab 9223372036854775807 --embed 4 --heads 2 --layers 1", "out of range [1, 2147483647]"}, // not [-2^31, ...]
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids 0,1;2", "row 1 has 1 ids but row 0 has 2"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids 0,,1", "--ids"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids a,b", "--ids"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids 0;", "--ids"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids=", "--ids"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2", "--ids is required"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --ids 0", "--layers is required"},
    {"forward --seed 0 --vocab 99999999999 --embed 4 --heads 2 --layers 2 --ids 0", "out of range"},
    {"forward --seed 0 --vocab 16000000 --embed 16000000 --heads 1 --layers 16000000 --ids 0", "overflow"},
    {"forward --seed 0 --vocab 4 --embed 100000000 --heads 2 --layers 2 --ids 0", "larger than the supported"},
    {"params --vocab 4 --embed 6 --heads 4 --layers 2", "embed_dim=6 is not divisible by num_heads=4"},
    {"params --vocab 4 --embed 4 --heads 2", "--layers is required"},
    {"init gpt --seed 0 --vocab 4 --embed 4 --heads 3 --layers 1", "not divisible"},
    /* a size the model cannot take names the flags that set it; a switch the architecture
     * lacks is refused, not ignored */
    {"forward --seed 0 --vocab 4 --embed 6 --heads 4 --layers 2 --ids 0", "--embed, --heads: embed_dim=6"},
    {"forward --seed 0 --vocab 0 --embed 4 --heads 2 --layers 2 --ids 0", "--vocab: 0 is out of range [1,"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --qkv-bias --ids 0",
     "--qkv-bias: the course model has no bias on its queries, keys and values"},
    {"init gpt --arch nanogpt --seed 0 --vocab 4 --embed 4 --heads 2 --layers 1 --qkv-bias", "--qkv-bias: the nanogpt"},
    /* params counts only a model mygpt can build */
    {"params --arch llama --classes 2 --vocab 10 --embed 8 --heads 2 --layers 1", "llama has no dropout, classification"},
    {"params --arch llama --lora 2 --vocab 10 --embed 8 --heads 2 --layers 1", "llama has no dropout, classification"},
    {"params --vocab 4 --embed 4 --heads 2 --layers 1 --untied-head", "params: --untied-head: the course architecture"},
    {"params --arch llama --vocab 10 --embed 64 --heads 32 --layers 1 --kv-heads 3", "--kv-heads 3 must divide --heads 32"},
    {"generate --seed 1 --vocab 5 --embed 4 --heads 2 --layers 1 --ids 0 --max-new 1 --eos 5",
     "--eos 5: the model's tokens are 0 to 4"},
    {"encode --vocab-dir=", "--vocab-dir: the path is empty"},
    {"generate --seed 1 --vocab 5 --embed 4 --heads 2 --layers 1 --ids 0 --max-new 1 --temperature 1e-400", "too close to 0"},
    {"generate --checkpoint= --ids 1 --max-new 1", "--checkpoint: the path is empty"},
    {"forward --checkpoint m.safetensors --adapters= --ids 1", "--adapters: the path is empty"},
    {"train --preset tiny --text=", "train: --text: the path is empty"},
    {"generate --seed 1 --vocab 5 --embed 4 --heads 2 --layers 1 --chars= --prompt ab --max-new 1",
     "--chars: the path is empty"},
    {"classify --checkpoint m.safetensors --data=", "--data: the path is empty"},
    /* a flag's kind is its program's: init linear's --out is a size, not a path */
    {"init linear --seed 1 --in 3 --out=", "--out: '' is not an integer"},
    {"generate --sampler llama2c --checkpoint m.bin --tokenizer t.bin --layers 7",
     "--layers cannot be used with --checkpoint"},
};

Test(cli_args, bad_arguments_give_one_line_and_status_2)
{
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, BAD[i][0], &r), 0);
        cr_expect_eq(r.status, 2, "mygpt %s: exit %d (stderr: %s)", BAD[i][0], r.status, r.err);
        cr_expect_str_empty(r.out, "mygpt %s printed on stdout: %s", BAD[i][0], r.out);
        if (BAD[i][0][0] != '\0') /* bare `mygpt` prints its usage, several lines */
            cr_expect_eq(count_lines(r.err), 1, "mygpt %s: stderr has %d lines: %s", BAD[i][0],
                         count_lines(r.err), r.err);
        cr_expect(strstr(r.err, BAD[i][1]) != NULL, "mygpt %s: stderr '%s' lacks '%s'", BAD[i][0],
                  r.err, BAD[i][1]);
        proc_result_free(&r);
    }
}

/* The commands `mygpt --help` lists (its table of commands, so a new one is checked here
 * without a list to keep), into words[] as "NAME " (init as its three kinds); returns
 * how many. */
static int listed_commands(char words[][32], int most)
{
    proc_result r;
    cr_assert_eq(run_words(MYGPT_EXE, "--help", &r), 0);
    cr_assert_eq(r.status, 0);
    const char *at = strstr(r.out, "commands:\n");
    cr_assert_not_null(at, "mygpt --help lists no commands: %s", r.out);
    at += strlen("commands:\n");
    int n = 0;
    char name[32];
    for (int used; n < most - 3 && sscanf(at, " %31s%n", name, &used) == 1;) {
        if (strcmp(name, "init") == 0) {
            snprintf(words[n++], 32, "init linear ");
            snprintf(words[n++], 32, "init embedding ");
            snprintf(words[n++], 32, "init gpt ");
        } else {
            snprintf(words[n++], 32, "%.30s ", name);
        }
        const char *eol = strchr(at + used, '\n'); // past the summary
        if (!eol)
            break;
        at = eol + 1;
    }
    proc_result_free(&r);
    return n;
}

Test(cli_args, every_subcommand_has_help)
{
    char cmds[64][48] = {"--help", "init --help"};
    char listed[62][32];
    const int n = 2 + listed_commands(listed, 62);
    for (int i = 2; i < n; i++)
        snprintf(cmds[i], sizeof cmds[i], "%.31s--help", listed[i - 2]);
    for (int i = 0; i < n; i++) {
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, cmds[i], &r), 0);
        cr_expect_eq(r.status, 0, "mygpt %s", cmds[i]);
        cr_expect(strstr(r.out, "usage: mygpt") != NULL, "mygpt %s: %s", cmds[i], r.out);
        proc_result_free(&r);
    }
}

Test(cli_args, every_program_helps_with_exit_0_and_names_an_unknown_flag_with_exit_2)
{
    char subcommands[64][32];
    const int n = listed_commands(subcommands, 64);
    cr_assert_geq(n, 20, "mygpt --help lists %d commands", n);
    for (int i = 0; i < n; i++)
        check_program(MYGPT_EXE, subcommands[i], subcommands[i]);
    check_program(BENCH_EXE, "", "mygpt-bench");
    check_program(BENCH_TOKENIZER_EXE, "", "mygpt-bench-tokenizer");
    FILE *f = fopen(CHAPTER_INDEX, "r");
    cr_assert_not_null(f);
    char line[1024];
    int chapters = 0;
    while (fgets(line, sizeof line, f)) {
        char number[16], program[256];
        if (sscanf(line, "%15s %255s", number, program) != 2 || strcmp(number, "number") == 0)
            continue;
        char exe[4096];
        snprintf(exe, sizeof exe, "%s/%s", CHAPTER_DIR, program);
        check_program(exe, "", program);
        chapters++;
    }
    fclose(f);
    cr_expect_geq(chapters, 26);
}

/* A flag a typo away from one the program knows is named ("did you mean"), by the same
 * parser in the tool, the chapters and the benchmark; a flag far from all is not guessed
 * at. */
Test(cli_args, a_misspelt_flag_says_which_was_meant)
{
    const struct { const char *exe, *words, *msg; } cases[] = {
        {MYGPT_EXE, "generate --seed 0 --temprature 1",
         "mygpt generate: unknown option '--temprature' (did you mean '--temperature'? see 'mygpt generate --help')"},
        {MYGPT_EXE, "randn --sede 0 --shape 2", "unknown option '--sede' (did you mean '--seed'?"},
        {CHAPTER_DIR "/26_gpt_main", "--sed 3", "26_gpt_main: unknown option '--sed' (did you mean '--seed'?"},
        {BENCH_EXE, "--thread 2", "mygpt-bench: unknown option '--thread' (did you mean '--threads'?"},
        {MYGPT_EXE, "generate --seed 0 --frobnicate 1",
         "unknown option '--frobnicate' (see 'mygpt generate --help')"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        proc_result r;
        cr_assert_eq(run_words(cases[i].exe, cases[i].words, &r), 0);
        expect_one_line_refusal(&r, 2, cases[i].msg, cases[i].words);
        proc_result_free(&r);
    }
}

Test(cli_args, seed_as_one_word_and_as_two_give_the_same_output)
{
    proc_result a, b;
    cr_assert_eq(run_words(CHAPTER_DIR "/30_tied_head", "--seed=7", &a), 0);
    cr_assert_eq(run_words(CHAPTER_DIR "/30_tied_head", "--seed 7", &b), 0);
    cr_expect_eq(a.status, 0, "%s", a.err);
    cr_expect_str_eq(a.out, b.out);
    proc_result_free(&a);
    proc_result_free(&b);
    cr_assert_eq(run_words(MYGPT_EXE, "randn --seed --shape 2,3", &a), 0);
    cr_expect_eq(a.status, 2);
    cr_expect(strstr(a.err, "option '--seed' needs a value") != NULL, "%s", a.err);
    proc_result_free(&a);
    cr_assert_eq(run_words(BENCH_EXE, "--threads 0", &a), 0);
    cr_expect_eq(a.status, 2);
    cr_expect(strstr(a.err, "--threads") != NULL, "%s", a.err);
    proc_result_free(&a);
}

Test(cli_args, bad_training_and_generation_arguments)
{
    const char *model = "--seed 0 --vocab 4 --embed 4 --heads 2 --layers 1";
    const struct { const char *fmt, *msg; } cases[] = {
        {"loss %s --ids 0,1,2 --targets 1,2", "same shape"},
        {"loss %s --ids 0,1,2 --targets 1,2,4", "target 4"},
        {"grad %s --ids 0,1 --targets 1,9", "target 9"},
        {"loss %s --ids 0,1,2", "--targets are required"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --optimizer sgd --lr -1", "--lr must be at least 0"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --optimizer rmsprop --lr 1", "not sgd or adamw"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --optimizer sgd --lr 1", "cannot open /nonexistent"},
        {"train %s --text /nonexistent --context 99 --batch 1 --steps 1 --optimizer sgd --lr 1", "--context"},
        {"generate %s --ids 1,2 --max-new 3 --top-k 0", "--top-k"},
        {"generate %s --ids 1,2 --max-new 3 --temperature -1", "--temperature must be at least 0"},
        {"generate %s --ids 1,2 --max-new 3 --top-p 1.5", "--top-p must be in (0, 1]"},
        {"generate %s --ids 1,7 --max-new 3", "token id 7"},
        {"generate --checkpoint /nonexistent.safetensors --ids 1 --max-new 3%.0s", "cannot open"},
        {"generate %s --max-new 3", "exactly one of --prompt"},
        {"generate %s --ids 1,2 --max-new 3 --stream", "--stream: no text to show"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --optimizer sgd --lr 1 --save /nonexistent/d/m.st",
         "--save: cannot write in /nonexistent/d"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --optimizer sgd --lr 1 --save /dev/null",
         "--save: /dev/null is a device, FIFO or socket, not a regular file: not replaced"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --optimizer sgd --lr 1 --save /tmp",
         "--save: /tmp is a directory, not a regular file: not replaced"},
        {"generate %s --ids 1,2 --max-new 3 --sample-seed abc", "--sample-seed: 'abc' is not an integer"},
        {"generate %s --ids 1,2 --max-new 3 --stream --no-stream", "contradict"},
        {"forward %s --ids 1,2 --arch gpt3", "unknown architecture 'gpt3'"},
        {"forward %s --ids 1,2 --weights int4", "--weights: unknown weight format 'int4'"},
        {"quantize%.0s", "give the checkpoint to read and the file to write"},
        {"quantize /nonexistent.st /tmp/q.st%.0s", "--weights bf16|int8|fp32 is required"},
        {"quantize /nonexistent.st /tmp/q.st --weights int8%.0s", "cannot open /nonexistent.st"},
        {"quantize /nonexistent.st /dev/null --weights int8%.0s", "/dev/null is a device"},
        {"loss %s --ids 0,1 --targets 1,2 --dropout 0.1", "the course's model has no dropout"},
        {"loss %s --ids 0,1 --targets 1,2 --arch gpt2 --dropout 1", "dropout must be in [0, 1)"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --epochs 1 --optimizer sgd --lr 1",
         "--epochs (the book's loop) cannot be used with --steps"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --eval-batches 2 --optimizer sgd --lr 1",
         "go with --epochs"},
        {"train --preset tiny --text /nonexistent --epochs 1 --sample-tokens 3%.0s", // it was ignored
         "--sample-tokens goes with --sample-prompt"},
        // a preset's context: the flag as given (it was said as a --max-seq never given), the range it takes
        {"train --preset tiny --text /nonexistent --steps 1 --context 3000000000%.0s",
         "--context: 3000000000 is out of range [1, 16777216]"},
        {"train --preset tiny --text /nonexistent --steps 1 --context 0%.0s", "--context: 0 is out of range [1, 16777216]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, cases[i].fmt, model);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, args, &r), 0);
        expect_one_line_refusal(&r, 2, cases[i].msg, args);
        proc_result_free(&r);
    }
}

/* OMP_NUM_THREADS=100000 would overflow libgomp's stack creating the team (a segfault):
 * the programs cap the team at 4 threads per online CPU. */
Test(cli_args, a_huge_omp_num_threads_is_capped)
{
    setenv("OMP_NUM_THREADS", "100000", 1); // this test's own process: the child inherits it
    proc_result r = {0};
    cr_assert_eq(run_words(MYGPT_EXE,
                           "forward --seed 0 --vocab 50 --embed 64 --heads 4 --layers 2 --max-seq 64 --ids "
                           "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32",
                           &r),
                 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strncmp(r.out, "tensor(", 7) == 0, "%s", r.out);
    proc_result_free(&r);
}

/* The team leaves out a core another process keeps busy (cli_cap_threads), counted from
 * readings of the system's running count (cli_others_of): a process passing by as the
 * program starts (a shell, a terminal) does not count; a neighbour that keeps a core,
 * off it now and then, does. */
Test(cli_args, a_neighbour_counts_a_process_passing_by_does_not)
{
    long r[CLI_READINGS];
    for (int i = 0; i < CLI_READINGS; i++) // a shell and the terminal for the first 10 ms
        r[i] = i < 18 ? 1 + i % 2 : 0;
    cr_expect_eq(cli_others_of(r, CLI_READINGS), 0);
    for (int i = 0; i < CLI_READINGS; i++) // and again for 8 ms (readings seen here)
        r[i] = i < 18 || (i >= 40 && i < 55) ? 1 : 0;
    cr_expect_eq(cli_others_of(r, CLI_READINGS), 0);
    for (int i = 0; i < CLI_READINGS; i++) // a neighbour, off its core one reading in 5
        r[i] = i % 5 ? 1 : 0;
    cr_expect_eq(cli_others_of(r, CLI_READINGS), 1);
    for (int i = 0; i < CLI_READINGS; i++) // two of them, and a compiler for 10 ms
        r[i] = i < 18 ? 3 : 2;
    cr_expect_eq(cli_others_of(r, CLI_READINGS), 2);
    for (int i = 0; i < CLI_READINGS; i++) // there two thirds of the time: not enough
        r[i] = i % 3 ? 1 : 0;
    cr_expect_eq(cli_others_of(r, CLI_READINGS), 0);
    cr_expect_eq(cli_others_of((const long[]){1, 1, 1, 0}, 4), 1); // fewer readings: 3 of 4
    cr_expect_eq(cli_others_of((const long[]){1, 0, 1}, 3), 0);    // (3 of 3)
    cr_expect_eq(cli_others_of(r, 0), -1);
    cr_expect_eq(cli_others_of(r, CLI_READINGS + 1), -1);
}

/* A FIFO where a file is required is refused, not waited on (the test's timeout guards
 * the hang), and so is a device as a checkpoint. */
Test(cli_args, fifos_and_devices_are_refused_not_read, .timeout = 20)
{
    char dir[] = "/tmp/mygpt_fifo_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char fifo[300], words[700];
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    const char *cases[][2] = {{"encode %s", "not a regular file"},
                              {"generate --checkpoint %s --ids 1 --max-new 1", "not a regular file"},
                              {"generate --checkpoint /dev/zero --ids 1 --max-new 1%.0s", "not a regular file"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(words, sizeof words, cases[i][0], fifo);
        proc_result r = {0};
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        cr_expect_eq(r.status, 2, "mygpt %s: exit %d: %s", words, r.status, r.err);
        cr_expect(strstr(r.err, cases[i][1]) != NULL, "mygpt %s: %s", words, r.err);
        proc_result_free(&r);
    }
    unlink(fifo);
    rmdir(dir);
}

/* An unknown command's control bytes (a terminal escape, a newline) are shown escaped on
 * its one line, as every other message's are: none reaches the terminal raw */
Test(cli_args, an_unknown_command_is_shown_escaped)
{
    char *argv[] = {(char *)MYGPT_EXE, "a\nb\x1b[31mc", NULL};
    proc_result r;
    cr_assert_eq(run_process(argv, &r), 0);
    cr_expect_eq(r.status, 2, "exit %d", r.status);
    cr_expect_str_empty(r.out);
    cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
    cr_expect(strchr(r.err, 0x1b) == NULL && strstr(r.err, "mygpt: unknown command 'a\\nb\\x1b[31mc'") != NULL, "%s",
              r.err);
    proc_result_free(&r);
}

/* A number is the flag's whole word: a leading space is refused as a trailing one is (C's
 * strtoll and strtod would skip it), for integers, seeds and real numbers alike. */
Test(cli_args, a_number_with_spaces_around_it_is_refused)
{
    const char *cases[][3] = {{"--seed", " 5", "is not an integer"},         {"--seed", "5 ", "is not an integer"},
                              {"--max-new", " 3", "is not an integer"},      {"--max-new", "3 ", "is not an integer"},
                              {"--temperature", " 1", "is not a finite number"}, {"--seed", " -5", "is not an integer"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int max_new = strcmp(cases[i][0], "--max-new") == 0; // (else given as a good one)
        char *argv[] = {(char *)MYGPT_EXE, "generate", "--vocab", "10", "--embed", "8", "--heads", "2", "--layers", "1",
                        "--ids", "1", (char *)cases[i][0], (char *)cases[i][1], max_new ? NULL : "--max-new", "2", NULL};
        proc_result r;
        cr_assert_eq(run_process(argv, &r), 0);
        cr_expect_eq(r.status, 2, "%s '%s': exit %d", cases[i][0], cases[i][1], r.status);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, cases[i][0]) && strstr(r.err, cases[i][2]), "%s '%s': %s",
                  cases[i][0], cases[i][1], r.err);
        proc_result_free(&r);
    }
}

/* A long path is named whole with the reason after it (messages were cut at 255 bytes,
 * losing both); the top-level --help and --version fail on a full disk as any output does */
Test(cli_args, a_long_path_keeps_its_reason_and_help_output_is_checked)
{
    char dir[1200] = "/tmp/mygpt_long_XXXXXX", file[1300];
    cr_assert_not_null(mkdtemp(dir));
    const size_t base = strlen(dir);
    for (int i = 0; i < 5; i++) { // five folders of 120 letters
        char name[122] = "/";
        memset(name + 1, 'a' + i, 120);
        strcat(dir, name);
        cr_assert_eq(mkdir(dir, 0700), 0);
    }
    snprintf(file, sizeof file, "%s/m.safetensors", dir);
    write_file(file, "text\n");
    char *argv[] = {(char *)MYGPT_EXE, "forward", "--checkpoint", file, "--ids", "1", NULL};
    proc_result r;
    cr_assert_eq(run_process(argv, &r), 0);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, file) && strstr(r.err, "too short for a safetensors file"), "%s", r.err);
    proc_result_free(&r);
    unlink(file);
    for (size_t n = strlen(dir); n > base; n = strlen(dir)) {
        cr_expect_eq(rmdir(dir), 0);
        *strrchr(dir, '/') = '\0';
    }
    rmdir(dir);
    // standard input that cannot be read (closed, open for writing only, a folder) is bad
    // input, as a file is. Under qemu-user a closed fd 0 is taken by the emulator's own
    // files, so the closed case runs natively only (the write-only one reads as closed).
    const char *reads[] = {"encode 0>/dev/null", "decode < /", "encode <&-"};
    const size_t nreads = getenv("MESON_EXE_WRAPPER") ? 2 : 3;
    for (size_t i = 0; i < nreads; i++) {
        char script[600];
        snprintf(script, sizeof script, "exec '%s' %s", MYGPT_EXE, reads[i]);
        run_shell(script, &r);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", script, r.status, r.err);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, "cannot read standard input"), "%s: %s", script, r.err);
        proc_result_free(&r);
    }
    for (int v = 0; v < 2; v++) {
        char script[600];
        snprintf(script, sizeof script, "exec '%s' %s > /dev/full", MYGPT_EXE, v ? "--version" : "--help");
        run_shell(script, &r);
        cr_expect_eq(r.status, 1, "%s: exit %d", script, r.status);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, "mygpt: error writing output"), "%s", r.err);
        proc_result_free(&r);
    }
}

/* An empty path names no file: said so, not "cannot open : No such file or directory";
 * given with a flag, the flag is named */
Test(cli_args, an_empty_path_is_said_to_be_empty)
{
    char *const runs[][6] = {{(char *)MYGPT_EXE, "encode", "", NULL},
                             {(char *)MYGPT_EXE, "quantize", "", "/tmp/mygpt-never-written", "--weights", "int8"},
                             {(char *)CHAPTER_DIR "/61_verdict_dataloader", "--text", "", NULL}};
    const char *said[] = {"cannot open '': the path is empty", "cannot open '': the path is empty",
                          "61_verdict_dataloader: --text: the path is empty"};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char *argv[7] = {0};
        memcpy(argv, runs[i], sizeof runs[i]);
        proc_result r;
        cr_assert_eq(run_process(argv, &r), 0);
        expect_one_line_refusal(&r, 2, said[i], runs[i][1]);
        proc_result_free(&r);
    }
}

/* Every program's output that cannot be written (/dev/full, a closed stdout) ends it with
 * one line and status 1, as the tool's does: a chapter, its --help, and both benchmarks.
 * (Under qemu-user a closed descriptor is taken by the emulator's own files: natively only.) */
Test(cli_args, every_program_reports_output_it_could_not_write)
{
    const char *runs[][2] = {{CHAPTER_DIR "/26_gpt_main", "> /dev/full"},
                             {CHAPTER_DIR "/41_embedding_table", ">&-"},
                             {CHAPTER_DIR "/30_tied_head", "--help > /dev/full"},
                             {BENCH_EXE, "--matmul 8,8,8 --reps 1 --threads 1 > /dev/full"},
                             {BENCH_TOKENIZER_EXE, "--help > /dev/full"}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        if (getenv("MESON_EXE_WRAPPER") && strstr(runs[i][1], ">&-"))
            continue;
        char script[600];
        snprintf(script, sizeof script, "exec '%s' %s", runs[i][0], runs[i][1]);
        proc_result r;
        run_shell(script, &r);
        const char *name = strrchr(runs[i][0], '/') + 1;
        char line[128];
        snprintf(line, sizeof line, "%s: error writing output\n", name);
        cr_expect_eq(r.status, 1, "%s: exit %d: %s", script, r.status, r.err);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, line), "%s: %s", script, r.err);
        proc_result_free(&r);
    }
}

/* A chapter's messages are one line whatever the path holds (a newline shown escaped), and
 * a MYGPT_DATA that is no path (too long) is a wrong setting, status 2, not absent data
 * (77, or 1 under CI=true), which the checks would count as skipped */
Test(cli_args, a_chapter_names_a_bad_data_folder_on_one_line)
{
    char script[6000], longname[5001];
    memset(longname, 'a', 5000);
    longname[5000] = '\0';
    proc_result r;
    snprintf(script, sizeof script, "MYGPT_DATA=/tmp/%s exec '%s'", longname, CHAPTER_DIR "/208_book_bpe");
    run_shell(script, &r);
    expect_one_line_refusal(&r, 2, "MYGPT_DATA is too long", "a long MYGPT_DATA");
    proc_result_free(&r);
    snprintf(script, sizeof script, "MYGPT_DATA=\"$(printf '/nonexistent/a\\nb')\" exec '%s'",
             CHAPTER_DIR "/208_book_bpe");
    run_shell(script, &r);
    cr_expect(r.status == 77 || r.status == 1, "%s: exit %d", script, r.status);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "/nonexistent/a\\nb/"), "%s: %s", script, r.err);
    proc_result_free(&r);
    snprintf(script, sizeof script, "exec '%s' --figures \"$(printf '/nonexistent/x\\ny')\"",
             CHAPTER_DIR "/47_sinusoidal_encoding");
    run_shell(script, &r);
    expect_one_line_refusal(&r, 2, "--figures /nonexistent/x\\ny", script);
    proc_result_free(&r);
}

/* A kernel set that is none (a typo in MYGPT_MATMUL_KERNEL or MYGPT_ATTENTION_KERNEL) is
 * refused by every program, in one line naming the variable, before any work: it would
 * otherwise run the widest set without a word. An empty value is no request. */
Test(cli_args, an_unknown_kernel_set_is_refused)
{
    const char *runs[][3] = {{"MYGPT_MATMUL_KERNEL=avx3", MYGPT_EXE, "mygpt: MYGPT_MATMUL_KERNEL=avx3 is not"},
                             {"MYGPT_ATTENTION_KERNEL=AVX2", CHAPTER_DIR "/26_gpt_main",
                              "26_gpt_main: MYGPT_ATTENTION_KERNEL=AVX2 is not"},
                             {"MYGPT_MATMUL_KERNEL=\"$(printf 'x\\ny')\"", BENCH_EXE,
                              "mygpt-bench: MYGPT_MATMUL_KERNEL=x\\ny is not"}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char script[600];
        snprintf(script, sizeof script, "%s exec '%s' --help", runs[i][0], runs[i][1]);
        proc_result r;
        run_shell(script, &r);
        expect_one_line_refusal(&r, 2, runs[i][2], script);
        proc_result_free(&r);
    }
    proc_result r;
    run_shell("MYGPT_MATMUL_KERNEL= MYGPT_ATTENTION_KERNEL=generic exec '" MYGPT_EXE "' --version", &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
}

/* Messages and flags. A path's newline or terminal escape is shown escaped on one line;
 * "--" ends the options; --init-from refuses contradicting model flags (and accepts
 * agreeing ones) and says how to train a quantized file with the tool; a full disk is a
 * runtime failure (exit 1); a vocabulary file that is a directory says so. */
Test(cli_args, messages_escape_paths_and_init_from_refuses_contradicting_flags, .timeout = 240)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    const char *vocab = vocab_or_skip();
    char dir[] = "/tmp/mygpt_flags_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    proc_result r;
    // a control byte in a path: escaped, one line, no raw ESC reaching the terminal
    char weird[300];
    snprintf(weird, sizeof weird, "%s/a\nb\x1b[31mc.txt", dir);
    char *enc[] = {(char *)MYGPT_EXE, "encode", "--vocab-dir", (char *)vocab, weird, NULL};
    cr_assert_eq(run_process(enc, &r), 0);
    cr_expect_eq(r.status, 2, "exit %d", r.status);
    cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
    cr_expect(strchr(r.err, 0x1b) == NULL && strstr(r.err, "a\\nb\\x1b[31mc.txt") != NULL, "%s", r.err);
    proc_result_free(&r);
    // "--": a file named -x.txt
    cr_assert_eq(chdir(dir), 0);
    FILE *f = fopen("-x.txt", "w");
    fputs("Hello", f);
    fclose(f);
    char *dash[] = {(char *)MYGPT_EXE, "encode", "--vocab-dir", (char *)vocab, "--", "-x.txt", NULL};
    cr_assert_eq(run_process(dash, &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.out, "15496\n");
    proc_result_free(&r);
    unlink("-x.txt");
    // --init-from and the model flags
    char ckpt[300], q8[300], out[300], words[2048];
    snprintf(ckpt, sizeof ckpt, "%s/m.safetensors", dir);
    snprintf(q8, sizeof q8, "%s/q8.safetensors", dir);
    snprintf(out, sizeof out, "%s/out.safetensors", dir);
    const mygpt_config cfg = {50257, 8, 2, 1, 16};
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 1, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, ckpt, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_gpt_quantize(g, MYGPT_WEIGHTS_INT8, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, q8, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    char cls[300]; // a classifier: no language model to train on
    snprintf(cls, sizeof cls, "%s/cls.safetensors", dir);
    mygpt_config ccfg = cfg;
    ccfg.num_classes = 2;
    cr_assert_eq(mygpt_gpt_create(&g, &ccfg, 1, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, cls, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    const char *train = "train --seed 0 --text DATA/the-verdict.txt --context 8 --batch 2 --steps 1 --optimizer sgd "
                        "--lr 0.1 --init-from";
    const struct {
        const char *from, *flags;
        int status;
        const char *msg;
    } runs[] = {
        {ckpt, "--embed 16", 2, "--embed 16 contradicts --init-from's checkpoint (embed_dim 8)"},
        {ckpt, "--vocab 50257 --heads 4", 2, "--heads 4 contradicts"},
        {ckpt, "--arch gpt2", 2, "--arch gpt2 contradicts"},
        {ckpt, "--vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 16 --arch course", 0, NULL},
        // llama's sizes too (they were ignored): heads of keys and values, the hidden size, the head
        {ckpt, "--kv-heads 1", 2, "--kv-heads 1 contradicts --init-from's checkpoint (heads of keys and values 2)"},
        {ckpt, "--ffn-hidden 3", 2, "--ffn-hidden 3 contradicts --init-from's checkpoint (ffn_hidden 32)"},
        {ckpt, "--multiple-of 7", 2, "--multiple-of 7 contradicts --init-from's checkpoint (ffn_hidden 32)"},
        {ckpt, "--untied-head", 2, "--untied-head is llama's switch: --init-from's checkpoint is a course model"},
        {ckpt, "--kv-heads 2 --ffn-hidden 32", 0, NULL},
        {q8, "", 2, "--weights fp32"},
        {cls, "", 2, "a classifier (a head of 2 classes), not a language model"},
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        snprintf(words, sizeof words, "%s %s %s", train, runs[k].from, runs[k].flags);
        cr_assert_eq(run_tool_words(words, data, &r), 0);
        cr_expect_eq(r.status, runs[k].status, "%s: exit %d: %s", runs[k].flags, r.status, r.err);
        if (runs[k].msg)
            cr_expect(strstr(r.err, runs[k].msg) != NULL && strstr(r.err, "mygpt_gpt") == NULL, "%s: %s", runs[k].flags,
                      r.err);
        proc_result_free(&r);
    }
    // a full disk (a file-size limit the tool inherits): exit 1, the reason
    signal(SIGXFSZ, SIG_IGN);
    const struct rlimit limit = {64 << 10, 64 << 10};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);
    snprintf(words, sizeof words, "quantize %s %s --weights bf16", ckpt, out);
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 1, "a full disk: exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "File too large") != NULL, "%s", r.err);
    cr_expect(access(out, F_OK) != 0);
    proc_result_free(&r);
    // a vocabulary file that is a directory
    char vdir[300], sub[330];
    snprintf(vdir, sizeof vdir, "%s/vocab", dir);
    snprintf(sub, sizeof sub, "%s/encoder.json", vdir);
    cr_assert_eq(mkdir(vdir, 0700), 0);
    cr_assert_eq(mkdir(sub, 0700), 0);
    char *dec[] = {(char *)MYGPT_EXE, "decode", "--vocab-dir", vdir, "1", NULL};
    cr_assert_eq(run_process(dec, &r), 0);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "it is a directory") != NULL, "%s", r.err);
    proc_result_free(&r);
    rmdir(sub);
    rmdir(vdir);
    unlink(ckpt);
    unlink(q8);
    unlink(cls);
    run_shell("rm -rf runs", &r); // the folder of the run that trained (every run keeps one)
    proc_result_free(&r);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}
