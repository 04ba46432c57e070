/*
 * run_folder.c - the folder a run of `mygpt train` writes into (see run_folder.h).
 */
#include "run_folder.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "data_parallel.h"

int run_folder_holds(const char *dir, const char *path)
{
    const size_t nd = strlen(dir);
    return path && strncmp(path, dir, nd) == 0 && path[nd] == '/';
}

void run_folder_announce(const char *cmd, const char *dir, const char *save, const char *state, const char *log)
{
    const char *parts[4];
    int n = 0;
    if (run_folder_holds(dir, save))
        parts[n++] = "its model";
    if (run_folder_holds(dir, state))
        parts[n++] = "training state";
    if (run_folder_holds(dir, log))
        parts[n++] = "log", parts[n++] = "plot";
    char what[64] = ""; // "a, b, c and d"
    for (int i = 0; i < n; i++)
        snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s", !i ? "" : i == n - 1 ? " and " : ", ",
                 parts[i]);
    if (n)
        cli_say(stderr, "mygpt %s: the run goes to %s/ (%s)", cmd, dir, what);
}

void run_folder_say(const char *cmd, const char *dir, const char *const *files, int n)
{
    const size_t nd = strlen(dir);
    char in[5 * 4200] = "", out[5 * 4200] = ""; // the files inside dir, by name; the others by path
    size_t in_len = 0, out_len = 0;
    for (int i = 0; i < n; i++)
        if (files[i]) {
            const int inside = run_folder_holds(dir, files[i]);
            char *list = inside ? in : out;
            size_t *len = inside ? &in_len : &out_len;
            if (*len < sizeof in)
                *len += (size_t)snprintf(list + *len, sizeof in - *len, "%s %s", *len ? "," : "",
                                         files[i] + (inside ? nd + 1 : 0));
        }
    cli_say(stderr, "mygpt %s: the run is in %s/:%s%s%s%s", cmd, dir, in_len ? in : " nothing", out_len ? " (and"
            " outside it:" : "", out, out_len ? ")" : "");
}

void run_folder_path(const run_folder *rf, const char *name, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", rf->dir, name);
}

/* Files in dir, '.' and '..' aside: 0 for an empty folder, -1 when it cannot be read */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* Whether dir holds only what a run writes there (a run's folder, which a run continuing
 * its state may write again) */
static int only_run_files(const char *dir)
{
    static const char *const ours[] = {"model.safetensors", "state.safetensors", "log.csv", "log.svg",
                                       "best.safetensors",  "config.json"};
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int only = 1;
    for (struct dirent *e; only && (e = readdir(d));) {
        int known = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
        for (size_t i = 0; !known && i < sizeof ours / sizeof ours[0]; i++)
            known = strcmp(e->d_name, ours[i]) == 0;
        only = known;
    }
    closedir(d);
    return only;
}

/* Whether resume is a run folder's training state: ".../state.safetensors" in a folder of
 * a run's files alone (its folder into dir, cap bytes) */
static int resume_folder(const char *resume, char *dir, size_t cap)
{
    const char *slash = resume ? strrchr(resume, '/') : NULL;
    if (!resume || strcmp(slash ? slash + 1 : resume, "state.safetensors") != 0)
        return 0;
    snprintf(dir, cap, "%.*s", slash ? (int)(slash - resume) : 1, slash ? resume : ".");
    return only_run_files(dir);
}

/* Holds rf->dir for this run: an exclusive lock on the folder itself (flock), so that two
 * runs started at once with one folder do not both take it. 0, or -1 when another run
 * holds it (a folder that cannot be locked is taken: nothing else would say more). */
static int hold(run_folder *rf)
{
    const int fd = open(rf->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int busy = errno == EWOULDBLOCK;
        close(fd);
        return busy ? -1 : 0;
    }
    rf->locked = 1;
    rf->lock_fd = fd;
    return 0;
}

/* The line for a folder another run holds */
static int held_elsewhere(const char *cmd, run_folder *rf, const char *flag)
{
    rf->made = 0; // (the other run may use it yet: never removed by this one)
    cli_error(cmd, "%s%s: another run is writing in that folder now: not shared (name another)", flag, rf->dir);
    return EXIT_USAGE;
}

/* --out DIR: made, or one there that is empty or holds the state resume continues; held
 * before it is looked at, so that what is seen stays so */
static int open_out(const char *cmd, run_folder *rf, const char *out, const char *resume)
{
    if (strlen(out) >= sizeof rf->dir - 32) {
        cli_error(cmd, "--out: the path is too long");
        return EXIT_USAGE;
    }
    snprintf(rf->dir, sizeof rf->dir, "%s", out);
    if (mkdir(out, 0777) == 0) {
        rf->made = 1;
        return hold(rf) ? held_elsewhere(cmd, rf, "--out ") : 0;
    }
    struct stat sb;
    if (errno != EEXIST || stat(out, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        cli_error(cmd, "--out %s: cannot make the run's folder: %s", out,
                  errno == EEXIST ? "a file is there, not a folder" : strerror(errno));
        return EXIT_USAGE;
    }
    if (hold(rf))
        return held_elsewhere(cmd, rf, "--out ");
    char state[4200];
    run_folder_path(rf, "state.safetensors", state, sizeof state);
    if (entries(out) == 0 || (resume && cli_same_file(resume, state) && only_run_files(out)))
        return 0;
    cli_error(cmd, "--out %s: the folder holds files already: not reused (name a new folder, or continue its run "
                   "with --resume %s)", out, state);
    run_folder_close(rf);
    return EXIT_USAGE;
}

int run_folder_open(const char *cmd, run_folder *rf, const char *out, const char *resume, const char *preset)
{
    *rf = (run_folder){0};
    if (out)
        return open_out(cmd, rf, out, resume);
    if (resume_folder(resume, rf->dir, sizeof rf->dir)) // a run continued where it was
        return hold(rf) ? held_elsewhere(cmd, rf, "--resume: ") : 0;
    if (mkdir("runs", 0777) == 0)
        rf->made_parent = 1;
    else if (errno != EEXIST) {
        cli_error(cmd, "cannot make the folder runs/ for the run: %s (name one with --out DIR)", strerror(errno));
        return EXIT_USAGE;
    }
    char stamp[32];
    const time_t now = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
    for (int k = 1; k < 1000; k++) {
        char tail[16] = "";
        if (k > 1)
            snprintf(tail, sizeof tail, "-%d", k);
        snprintf(rf->dir, sizeof rf->dir, "runs/%.64s-%s%s", preset ? preset : "verdict", stamp, tail);
        if (mkdir(rf->dir, 0777) == 0) {
            rf->made = 1;
            hold(rf); // (a folder of its own: no other run takes it)
            return 0;
        }
        if (errno != EEXIST)
            break;
    }
    cli_error(cmd, "cannot make the run's folder %s: %s (name one with --out DIR)", rf->dir, strerror(errno));
    run_folder_close(rf);
    return EXIT_USAGE;
}

void run_folder_close(run_folder *rf)
{
    if (rf->made || rf->made_parent)
        dp_on_abort(NULL); // the end is here now
    if (rf->made && entries(rf->dir) == 0)
        rmdir(rf->dir);
    if (rf->locked)
        close(rf->lock_fd);
    rf->locked = 0;
    if (rf->made_parent && entries("runs") == 0)
        rmdir("runs");
    rf->made = rf->made_parent = 0;
}

/* What run_folder_close_on_abort leaves to an early end: the folder this run made ("" if
 * none) and whether runs/ is its too; rmdir removes each only when it is empty */
static char made_dir[sizeof ((run_folder *)0)->dir];
static int made_runs;

static void remove_made_if_empty(void)
{
    if (made_dir[0])
        rmdir(made_dir);
    if (made_runs)
        rmdir("runs");
}

void run_folder_close_on_abort(const run_folder *rf)
{
    if (!rf->made && !rf->made_parent)
        return;
    memcpy(made_dir, rf->made ? rf->dir : "", rf->made ? sizeof made_dir : 1);
    made_runs = rf->made_parent;
    dp_on_abort(remove_made_if_empty);
}
