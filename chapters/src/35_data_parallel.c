/*
 * 35_data_parallel - the course's chapter 16, past one machine: chapter 14's AdamW run
 * (chapter 33) trained by one process, then by two that each take half of every batch
 * and average their gradients over MPI before each step (data parallelism, as llm.c
 * scales out). Prints both runs' losses side by side: the global batch, the data order
 * and so the losses do not depend on the number of processes, up to the grouping of
 * the sums (the P = 2 column may differ in the last printed digit). Then the time per
 * step of each run (a timing: its line is only checked to be a bounded number).
 *
 * The program is its own MPI worker: it launches `mpirun -np P THIS --worker`, one
 * OpenMP thread per process, and reads rank 0's lines. Built without MPI (or without
 * mpirun on the PATH) it says so and is skipped (exit 77; 1 under CI=true).
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "verdict.h"

extern char **environ; // the environment mpirun is started with (POSIX: declared by no header)

#define STEPS 60
#define LR 0.01 /* chapter 33's AdamW: torch.optim.AdamW(lr=0.01) */
#define EVERY 10
#define MAX_EVALS 16

/* ---- the worker: one rank of the team ------------------------------------------------ */

static dp_team worker_team;

static void worker_fail(const chapter *ch, const char *message)
{
    dp_abort(&worker_team, ch->name, EXIT_RUNTIME, message); // the whole job ends, no rank waits
}

static void worker_eval(void *ctx, long step, int epoch, float train_loss, double val_loss,
                        long long tokens)
{
    (void)ctx, (void)epoch, (void)tokens;
    if (worker_team.rank == 0)
        printf("eval %ld %.9g %.17g\n", step, (double)train_loss, val_loss);
}

static int worker(int argc, char **argv, int smoke)
{
    if (dp_start(&worker_team, &argc, &argv)) {
        fprintf(stderr, "35_data_parallel: MPI_Init failed\n");
        return 1;
    }
    chapter ch = {.name = "35_data_parallel", .smoke = smoke, .fail = worker_fail};
    verdict v;
    verdict_load(&ch, &v);
    const mygpt_config cfg = verdict_config(&v);
    mygpt_rng rng = {0};
    mygpt_error err = {0};
    mygpt_gpt *g;
    mygpt_rng_seed(&rng, VERDICT_SEED); // torch.manual_seed(123); model = GPT(...)
    chapter_check(&ch, mygpt_gpt_create_from(&g, &cfg, &rng, &err), &err);
    mygpt_optimizer opt;
    mygpt_adamw_init(&opt, LR);
    const long steps = smoke ? 3 : STEPS;
    const double t0 = chapter_now_s();
    verdict_train_team(&ch, &v, g, &rng, &opt, steps, smoke ? 1 : EVERY, &worker_team, worker_eval, NULL);
    const double secs = chapter_now_s() - t0;
    if (worker_team.rank == 0)
        printf("seconds %.6f steps %ld\n", secs, steps);
    mygpt_optimizer_free(&opt);
    mygpt_gpt_free(g);
    verdict_free(&v);
    dp_stop(&worker_team);
    return 0;
}

/* ---- the driver: two runs side by side ------------------------------------------------ */

typedef struct run {
    long step[MAX_EVALS];
    double train[MAX_EVALS], val[MAX_EVALS];
    int n;
    double ms_per_step;
} run;

/* Runs `mpirun -np P THIS --worker` and reads rank 0's lines into r. mpirun is started
 * with its words as they are, no shell between: a folder named with a quote or a space
 * is one word, never a command. */
static void run_team(const chapter *ch, const char *self, int P, run *r, int absent)
{
    char np[16];
    snprintf(np, sizeof np, "%d", P);
    const char *words[9] = {"mpirun"};
    int n = 1;
    if (geteuid() == 0)
        words[n++] = "--allow-run-as-root";
    words[n++] = "--oversubscribe", words[n++] = "-np", words[n++] = np, words[n++] = self, words[n++] = "--worker";
    if (ch->smoke)
        words[n++] = "--smoke";
    // stdin from /dev/null: mpirun forwards its stdin to rank 0, and a caller reading a
    // file line by line (scripts/chapters.sh, test.sh) would lose the rest of it
    int out[2];
    posix_spawn_file_actions_t fa;
    pid_t pid;
    FILE *p = NULL;
    if (pipe(out) == 0) {
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_addclose(&fa, out[0]);
        posix_spawn_file_actions_addclose(&fa, out[1]);
        const int spawned = posix_spawnp(&pid, "mpirun", &fa, NULL, (char *const *)words, environ);
        posix_spawn_file_actions_destroy(&fa);
        close(out[1]);
        if (spawned == 0)
            p = fdopen(out[0], "r");
        else
            close(out[0]);
    }
    if (!p) {
        cli_error(ch->name, "cannot run mpirun: %s", strerror(errno));
        exit(absent);
    }
    memset(r, 0, sizeof *r);
    char line[512];
    double secs = 0;
    long steps = 0;
    while (fgets(line, sizeof line, p)) {
        long step;
        double tl, vl;
        if (sscanf(line, "eval %ld %lf %lf", &step, &tl, &vl) == 3 && r->n < MAX_EVALS) {
            r->step[r->n] = step, r->train[r->n] = tl, r->val[r->n] = vl;
            r->n++;
        } else if (sscanf(line, "seconds %lf steps %ld", &secs, &steps) != 2) {
            fputs(line, stderr); // anything else from the job goes to stderr
        }
    }
    fclose(p);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (status != 0 || steps == 0) {
        cli_error(ch->name, "the %d-process run failed (mpirun exit status %d)", P,
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        exit(1);
    }
    r->ms_per_step = secs * 1e3 / (double)steps;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--worker") == 0) { // the words run_team gives mpirun, no others
        const int smoke = argc > 2 && strcmp(argv[2], "--smoke") == 0;
        if (argc > 2 + smoke) {
            fprintf(stderr, "35_data_parallel: --worker [--smoke] is how the program starts its own ranks "
                            "under mpirun: it takes no other flag (%s)\n", argv[2 + smoke]);
            return EXIT_USAGE;
        }
        cli_check_output_at_exit("35_data_parallel"); // rank 0's lines are the driver's to read
        return worker(argc, argv, smoke);
    }
    chapter ch;
    chapter_init(&ch, argc, argv, "35_data_parallel",
                 "The course's chapter 16: chapter 14's AdamW run (chapter 33) by 1 process and by 2 over\n"
                 "MPI (mpirun is launched by the program, 1 OpenMP thread per process), losses side by side\n"
                 "and the time per step of each. Needs a build with MPI and data/.",
                 0, CH_SMOKE);
    const char *ci = getenv("CI");
    const int absent = ci && strcmp(ci, "true") == 0 ? 1 : 77;
    if (!dp_available()) {
        fprintf(stderr, "%s: skipped: this build has no MPI (install libopenmpi-dev and openmpi-bin, then "
                        "rebuild)\n", ch.name);
        return absent;
    }
    if (system("mpirun --version > /dev/null 2>&1") != 0) {
        fprintf(stderr, "%s: skipped: mpirun is not on the PATH (Debian: openmpi-bin)\n", ch.name);
        return absent;
    }
    verdict v; // the data must be there (else skipped, as chapters 32-34)
    verdict_load(&ch, &v);
    const mygpt_config cfg = verdict_config(&v);
    verdict_free(&v);
    char self[4096]; // this program, for mpirun to start: Linux names it in /proc, elsewhere argv[0]
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0)
        self[len] = '\0';
    else
        snprintf(self, sizeof self, "%s", argv[0]);
    setenv("OMP_NUM_THREADS", "1", 1); // two processes on two cores: one thread each

    run one, two;
    run_team(&ch, self, 1, &one, absent);
    run_team(&ch, self, 2, &two, absent);
    int first0, rows0, first1, rows1;
    const dp_team r0 = {0, 2, 0}, r1 = {1, 2, 0};
    dp_share(&r0, VERDICT_BATCH, &first0, &rows0);
    dp_share(&r1, VERDICT_BATCH, &first1, &rows1);
    const long steps = ch.smoke ? 3 : STEPS;
    printf("Chapter 14's AdamW run: GPT(%d, %d, %d, %d, %d), torch.manual_seed(%d), batches of %d x %d,\n"
           "lr %g, %ld steps; by 1 process, then by 2 (rows %d-%d and %d-%d of every batch), the\n"
           "gradients averaged over MPI before each step, 1 OpenMP thread per process\n\n",
           cfg.vocab_size, cfg.embed_dim, cfg.num_heads, cfg.num_layers, cfg.max_seq_len, VERDICT_SEED,
           VERDICT_BATCH, VERDICT_CONTEXT, LR, steps, first0, first0 + rows0 - 1, first1, first1 + rows1 - 1);
    printf("%6s %11s %11s %11s %11s\n", "step", "train P=1", "train P=2", "val P=1", "val P=2");
    const int n = one.n < two.n ? one.n : two.n;
    for (int i = 0; i < n; i++)
        printf("%6ld %11.3f %11.3f %11.3f %11.3f\n", one.step[i], one.train[i], two.train[i], one.val[i], two.val[i]);
    printf("\nthe 2 ranks' parameters were compared after every step: identical\n");
    printf("time per step: 1 process %.1f ms, 2 processes %.1f ms\n", one.ms_per_step, two.ms_per_step);
    fprintf(stderr, "%s: 2 processes take a step in %.2f of the time of 1\n", ch.name,
            two.ms_per_step / one.ms_per_step);
    return 0;
}
