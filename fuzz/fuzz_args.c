/* fuzz_args.c - arbitrary command lines for the mygpt tool: the input is split into
 * words at newlines and handed to the tool's own main(). Every command line must end
 * in an exit status, never a crash. forward / init gpt / encode / decode are left out
 * (they build models or read files; fuzz_forward covers the model). fuzz/run.sh gives it
 * an empty data folder and a dictionary of every command and flag: train (--resume too),
 * finetune, chat and merge get past their flags to their first file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mygpt_cli_main(int argc, char **argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    if (!freopen("/dev/null", "w", stdout)) /* the tool prints; we only care that it ends */
        abort();
    if (!freopen("/dev/null", "r", stdin)) /* chat reads its lines: none, never a terminal's */
        abort();
    /* download reaches no host: a port of this machine where nothing listens refuses it */
    setenv("HF_ENDPOINT", "http://127.0.0.1:9", 1);
    unsetenv("MYGPT_DOWNLOAD_TEST_PINS");
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[34];
    int argc = 0;
    argv[argc++] = "mygpt";
    for (char *w = strtok(buf, "\n"); w && argc < 33; w = strtok(NULL, "\n"))
        argv[argc++] = w;
    argv[argc] = NULL;
    if (argc >= 2 && (strcmp(argv[1], "forward") == 0 || strcmp(argv[1], "encode") == 0 ||
                      strcmp(argv[1], "decode") == 0 ||
                      (strcmp(argv[1], "init") == 0 && argc >= 3 && strcmp(argv[2], "gpt") == 0))) {
        free(buf);
        return 0;
    }
    mygpt_cli_main(argc, argv);
    free(buf);
    return 0;
}
