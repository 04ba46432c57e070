/* fuzz_tokenizer.c - arbitrary bytes through GPT-2 encode: valid UTF-8 must encode
 * and decode back to the same bytes; anything else must be a clean error. Needs the
 * vocabulary (MYGPT_DATA, default data/). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt.h"

static mygpt_tokenizer *tok;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *dir = getenv("MYGPT_DATA") ? getenv("MYGPT_DATA") : "data";
    mygpt_error err = {0};
    if (mygpt_tokenizer_load_dir(&tok, dir, &err) != MYGPT_OK) {
        fprintf(stderr, "fuzz_tokenizer: %s\n", err.message);
        exit(1);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    int64_t *ids;
    size_t n;
    mygpt_error err = {0};
    if (mygpt_encode(tok, (const char *)data, size, &ids, &n, &err) != MYGPT_OK) {
        if (err.code != MYGPT_EFORMAT) /* only invalid UTF-8 may be refused */
            __builtin_trap();
        return 0;
    }
    char *text;
    size_t len;
    if (mygpt_decode(tok, ids, n, &text, &len, &err) != MYGPT_OK)
        __builtin_trap();
    if (len != size || memcmp(text, data, size) != 0) /* round trip */
        __builtin_trap();
    free(text);
    free(ids);
    return 0;
}
