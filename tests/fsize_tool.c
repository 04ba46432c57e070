/*
 * fsize_tool.c - an OpenMP tool (OMP_TOOL_LIBRARIES, OpenMP 5's OMPT) that sets the
 * program's file-size limit to $MYGPT_TEST_FSIZE bytes once its OpenMP runtime has
 * started. LLVM's runtime, libomp, sizes a 1 KiB file in /dev/shm as it starts, so a
 * program started under a smaller limit dies there; the tests that hold a program's
 * output to a limit smaller than that (tests/cli_common.c) set it through this tool when
 * the runtime has the tool interface (gcc's libgomp has none: there the program is
 * started under the limit).
 */
#include <omp-tools.h>
#include <stdlib.h>
#include <sys/resource.h>

/* Called once the runtime has started: sets the limit; 0: no callback is asked for. */
static int start(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
    (void)lookup, (void)device, (void)data;
    const char *bytes = getenv("MYGPT_TEST_FSIZE");
    if (bytes) {
        const rlim_t n = (rlim_t)strtoull(bytes, NULL, 10);
        const struct rlimit limit = {n, n};
        setrlimit(RLIMIT_FSIZE, &limit);
    }
    return 0;
}

static void finish(ompt_data_t *data)
{
    (void)data;
}

/* The entry point the runtime looks for in each OMP_TOOL_LIBRARIES library. */
ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version);
ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
    (void)omp_version, (void)runtime_version;
    static ompt_start_tool_result_t result = {start, finish, {0}};
    return &result;
}
