/*
 * whole.c - files written whole or not at all (io/whole.h): a temporary beside the path,
 * flushed, synced and renamed over it, the folder synced; and the interrupting signals
 * held meanwhile, in every thread. Checkpoints (checkpoint.c) and figures write this way.
 */
#include "io/whole.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mygpt/checkpoint.h"
#include "base/base.h"

mygpt_status mygpt_checkpoint_check_path(const char *path, mygpt_error *err)
{
    struct stat st;
    if (!path || !*path)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "the path to write is empty");
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode))
            return mygpt_fail(err, MYGPT_EINVAL, "%s is a symbolic link: not replaced (save to its target)", path);
        if (!S_ISREG(st.st_mode))
            return mygpt_fail(err, MYGPT_EINVAL, "%s is %s, not a regular file: not replaced", path,
                              S_ISDIR(st.st_mode) ? "a directory" : "a device, FIFO or socket");
    } else if (errno != ENOENT) {
        return mygpt_fail(err, MYGPT_EIO, "cannot use %s: %s", path, strerror(errno));
    }
    const int exists = lstat(path, &st) == 0;
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if ((size_t)snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
                         slash ? path : ".") >= sizeof dir)
        return mygpt_fail(err, MYGPT_EINVAL, "%s: path too long", path);
    if (access(dir, W_OK | X_OK) != 0)
        return mygpt_fail(err, MYGPT_EIO, "cannot write in %s (for %s): %s", dir, path, strerror(errno));
    // what the save will do, done now: rename a temporary over path, which a sticky folder
    // (as /tmp) forbids for another user's file ...
    struct stat ds;
    if (exists && stat(dir, &ds) == 0 && (ds.st_mode & S_ISVTX) && geteuid() != 0 && st.st_uid != geteuid() &&
        ds.st_uid != geteuid())
        return mygpt_fail(err, MYGPT_EIO,
                          "%s belongs to another user in a sticky folder (%s): it cannot be replaced (save elsewhere)",
                          path, dir);
    // ... and create that temporary (a name of 249 to 255 bytes leaves no room for ".XXXXXX")
    char tmp[4200];
    mygpt_status made = MYGPT_OK;
    FILE *f = mygpt_temp_beside(path, tmp, sizeof tmp, &made, err);
    if (!f)
        return made;
    fclose(f);
    unlink(tmp);
    return MYGPT_OK;
}

/* A temporary file beside path, unique (mkstemp: two runs saving to one path never
 * share one; "<path>.XXXXXX" says whose it is), with the mode a new file would get. */
FILE *mygpt_temp_beside(const char *path, char *tmp, size_t n, mygpt_status *st, mygpt_error *err)
{
    if ((size_t)snprintf(tmp, n, "%s.XXXXXX", path) >= n) {
        *st = mygpt_fail(err, MYGPT_EINVAL, "%s: path too long", path);
        return NULL;
    }
    const int fd = mkstemp(tmp);
    if (fd < 0) {
        if (errno == ENAMETOOLONG) // said first: the path may fill the message
            *st = mygpt_fail(err, MYGPT_EIO, "no room for the temporary's \".XXXXXX\" in the file name (%s): %s",
                             strerror(errno), path);
        else
            *st = mygpt_fail(err, MYGPT_EIO, "cannot create a temporary file beside %s: %s", path, strerror(errno));
        return NULL;
    }
    const mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        /* best effort: the file keeps mkstemp's 0600 */
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        *st = mygpt_fail(err, MYGPT_EIO, "cannot write %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
    }
    return f;
}

/* Puts tmp in path's place: renamed over it, or (keep) linked where no file is, so that a
 * file there is never replaced, even one that appeared after the caller looked. 0 or the
 * errno; *appeared for a file in the way. */
static int put_in_place(const char *tmp, const char *path, int keep, int *appeared)
{
    *appeared = 0;
    if (!keep)
        return rename(tmp, path) == 0 ? 0 : errno;
    if (link(tmp, path) == 0) {
        unlink(tmp);
        return 0;
    }
    *appeared = errno == EEXIST; // (else a file system without hard links, as FAT: tmp stays)
    return errno;
}

/* Finishes a file written at tmp: flushed and synced, put in path's place, the directory
 * synced, so that path holds the old file or the whole new one. ok 0 (a write failed,
 * errno saying why) or any failure here: tmp is removed and path left as it was; but a
 * file kept from being replaced (keep) keeps tmp too. */
static mygpt_status commit(FILE *f, const char *tmp, const char *path, int ok, int keep, mygpt_error *err)
{
    int why = ok ? 0 : errno, appeared = 0;
    if (ok && (fflush(f) != 0 || fsync(fileno(f)) != 0))
        ok = 0, why = errno;
    if (fclose(f) != 0 && ok)
        ok = 0, why = errno;
    const int written = ok; // tmp holds the whole file
    if (ok && (why = put_in_place(tmp, path, keep, &appeared)) != 0)
        ok = 0;
    if (!ok && written && keep) {
        if (appeared)
            return mygpt_fail(err, MYGPT_EIO, "%s is there now (it appeared while this was written): not replaced "
                              "(what was written is kept as %s)", path, tmp);
        return mygpt_fail(err, MYGPT_EIO, "cannot put %s in place: %s (what was written is kept as %s)", path,
                          strerror(why), tmp);
    }
    if (!ok) {
        unlink(tmp);
        return mygpt_fail(err, MYGPT_EIO, "cannot write %s: %s%s", path, strerror(why ? why : EIO),
                          why == EFBIG ? " (the file-size limit)" : "");
    }
    char dir[4096];
    const char *slash = strrchr(path, '/');
    const int fits = (size_t)snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
                                      slash ? path : ".") < sizeof dir; // checked before: see check_path
    const int dfd = fits ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dfd >= 0) { // the rename itself survives a crash
        fsync(dfd);
        close(dfd);
    }
    return MYGPT_OK;
}

mygpt_status mygpt_commit_temp(FILE *f, const char *tmp, const char *path, int ok, mygpt_error *err)
{
    return commit(f, tmp, path, ok, 0, err);
}

mygpt_status mygpt_commit_temp_new(FILE *f, const char *tmp, const char *path, int ok, mygpt_error *err)
{
    return commit(f, tmp, path, ok, 1, err);
}

/* mygpt_write_whole_unheld, or (keep) never over a file at path */
static mygpt_status write_whole_unheld(const char *path, const char *data, size_t len, int keep, mygpt_error *err)
{
    char tmp[4200];
    mygpt_status st = mygpt_checkpoint_check_path(path, err);
    FILE *f = st == MYGPT_OK ? mygpt_temp_beside(path, tmp, sizeof tmp, &st, err) : NULL;
    return f ? commit(f, tmp, path, len == 0 || fwrite(data, 1, len, f) == len, keep, err) : st;
}

mygpt_status mygpt_write_whole_unheld(const char *path, const char *data, size_t len, mygpt_error *err)
{
    return write_whole_unheld(path, data, len, 0, err);
}

/* The signals a save holds. The calling thread blocks them; but the kernel gives a
 * process's signal to any thread that does not block it (an idle OpenMP worker), so
 * while a save runs their handler only notes them, and they are raised again once it is
 * done, with the handlers the program had. Nested or concurrent saves share one holding. */
static const int HELD[3] = {SIGINT, SIGTERM, SIGHUP};
static volatile sig_atomic_t held_arrived[3];
static struct sigaction held_before[3];
static int held_replaced[3], holders;
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;

static void note_signal(int sig)
{
    for (int i = 0; i < 3; i++)
        if (HELD[i] == sig)
            held_arrived[i] = 1;
}

static void hold_signals(void)
{
    pthread_mutex_lock(&hold_lock);
    if (holders++ == 0)
        for (int i = 0; i < 3; i++) {
            held_arrived[i] = 0;
            held_replaced[i] = 0;
            if (sigaction(HELD[i], NULL, &held_before[i]) != 0 ||
                (!(held_before[i].sa_flags & SA_SIGINFO) && held_before[i].sa_handler == SIG_IGN))
                continue; // ignored: stays ignored
            struct sigaction note = {0};
            note.sa_handler = note_signal;
            sigfillset(&note.sa_mask);
            note.sa_flags = SA_RESTART;
            held_replaced[i] = sigaction(HELD[i], &note, NULL) == 0;
        }
    pthread_mutex_unlock(&hold_lock);
}

/* The program's handlers back; into arrived, the signals that came meanwhile */
static void release_signals(int arrived[3])
{
    pthread_mutex_lock(&hold_lock);
    for (int i = 0; i < 3; i++)
        arrived[i] = 0;
    if (--holders == 0)
        for (int i = 0; i < 3; i++) {
            if (held_replaced[i])
                sigaction(HELD[i], &held_before[i], NULL);
            arrived[i] = held_arrived[i];
        }
    pthread_mutex_unlock(&hold_lock);
}

/* Ctrl-C, SIGTERM, SIGHUP wait until the file is whole (or its temporary removed): then
 * they act as they would have, so no interrupt leaves half a file behind */
int mygpt_hold_signals(sigset_t *was)
{
    sigset_t hold;
    sigemptyset(&hold);
    for (int i = 0; i < 3; i++)
        sigaddset(&hold, HELD[i]);
    const int held = pthread_sigmask(SIG_BLOCK, &hold, was) == 0;
    hold_signals();
    return held;
}

void mygpt_release_signals(int held, const sigset_t *was)
{
    int arrived[3];
    release_signals(arrived);
    if (held)
        pthread_sigmask(SIG_SETMASK, was, NULL); // one that came to this thread acts here
    for (int i = 0; i < 3; i++)
        if (arrived[i]) // one that came to another thread: as it would have acted
            raise(HELD[i]);
}

/* write_whole_unheld with the interrupting signals held */
static mygpt_status write_whole_held(const char *path, const char *data, size_t len, int keep, mygpt_error *err)
{
    sigset_t was;
    const int held = mygpt_hold_signals(&was);
    const mygpt_status st = write_whole_unheld(path, data, len, keep, err);
    mygpt_release_signals(held, &was);
    return st;
}

mygpt_status mygpt_write_whole(const char *path, const char *data, size_t len, mygpt_error *err)
{
    return write_whole_held(path, data, len, 0, err);
}

mygpt_status mygpt_write_whole_new(const char *path, const char *data, size_t len, mygpt_error *err)
{
    return write_whole_held(path, data, len, 1, err);
}
