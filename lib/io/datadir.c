/*
 * datadir.c - where mygpt's programs look for their data (GPT-2's vocabulary and
 * the-verdict): one rule for the tool, the chapters, the benchmarks and the tests.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <mach-o/dyld.h> /* _NSGetExecutablePath */
#include <stdint.h>
#endif

#include "mygpt/data.h"
#include "base/base.h"

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The folder of the running program (Linux's /proc/self/exe, macOS's
 * _NSGetExecutablePath), or "" if unknown (elsewhere: MYGPT_DATA names the folder). */
static void exe_dir(char *out, size_t n)
{
    char exe[PATH_MAX];
    out[0] = '\0';
#if defined(__APPLE__)
    uint32_t size = sizeof exe;
    if (_NSGetExecutablePath(exe, &size) != 0)
        return;
#else
    const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return;
    exe[len] = '\0';
#endif
    char *slash = strrchr(exe, '/');
    if (slash && (size_t)(slash - exe) < n) {
        *slash = '\0';
        snprintf(out, n, "%s", exe);
    }
}

mygpt_status mygpt_data_dir(char *out, size_t n, mygpt_error *err)
{
    const char *env = getenv("MYGPT_DATA");
    if (env && *env) {
        if ((size_t)snprintf(out, n, "%s", env) >= n)
            return mygpt_fail(err, MYGPT_EINVAL, "%s", "MYGPT_DATA is too long");
        return MYGPT_OK;
    }
    char dir[PATH_MAX], build[PATH_MAX + 8], installed[PATH_MAX + 16];
    exe_dir(dir, sizeof dir);
    if (dir[0]) {
        const int fits = (size_t)snprintf(build, sizeof build, "%s/../data", dir) < sizeof build &&
                         (size_t)snprintf(installed, sizeof installed, "%s/../share/mygpt", dir) < sizeof installed;
        const char *found = !fits ? NULL : is_dir(build) ? build : is_dir(installed) ? installed : NULL;
        if (found) {
            /* tidy "x/chapters/../data" into an absolute path for messages */
            char real[PATH_MAX];
            const char *use = realpath(found, real) ? real : found;
            if ((size_t)snprintf(out, n, "%s", use) >= n)
                return mygpt_fail(err, MYGPT_EINVAL, "data folder path %s is too long", use);
            return MYGPT_OK;
        }
    }
    if (n)
        out[0] = '\0';
    return mygpt_fail(err, MYGPT_EIO, "%s",
                      "no data folder: set MYGPT_DATA, or run 'bash scripts/fetch-data.sh' in the "
                      "source tree (the build links build/data to it)");
}
