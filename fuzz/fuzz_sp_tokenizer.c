/* fuzz_sp_tokenizer.c - arbitrary llama2.c tokenizer.bin contents: the loader must load
 * them or refuse them with an error, never crash or leak; a loaded tokenizer encodes a
 * text with accents, an emoji (byte fallback) and bytes that are not UTF-8, and decodes
 * the ids, or refuses them with an error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mygpt.h"

static char path[64];

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/mygpt-fuzz-%d-tokenizer.bin", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    mygpt_sp_tokenizer *tok = (mygpt_sp_tokenizer *)1;
    mygpt_error err = {0};
    if (mygpt_sp_load(&tok, path, 0, &err) != MYGPT_OK) {
        if (tok != NULL || err.message[0] == '\0')
            __builtin_trap(); /* a failure leaves no tokenizer and says why */
        return 0;
    }
    static const char text[] = "fuzz me, caf\xc3\xa9 \xf0\x9f\x99\x82 \x80\xff";
    int *ids;
    size_t n;
    if (mygpt_sp_encode(tok, text, sizeof text - 1, 1, 1, &ids, &n, &err) == MYGPT_OK) {
        char *out;
        size_t len;
        if (mygpt_sp_decode(tok, ids, n, &out, &len, &err) == MYGPT_OK)
            free(out);
        else
            __builtin_trap(); /* the ids encode gave are in the vocabulary */
        free(ids);
    } else if (err.message[0] == '\0') {
        __builtin_trap();
    }
    mygpt_sp_free(tok);
    return 0;
}
