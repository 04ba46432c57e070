/* fuzz_vocab.c - arbitrary encoder.json / vocab.bpe contents: the loader must load
 * them or refuse them with an error, never crash or leak. The input is split at its
 * first NUL byte: before it encoder.json, after it vocab.bpe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mygpt.h"

static char enc_path[64], bpe_path[64];

static void write_file(const char *path, const unsigned char *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(d, 1, n, f);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (!enc_path[0]) {
        snprintf(enc_path, sizeof enc_path, "/tmp/mygpt-fuzz-%d-encoder.json", (int)getpid());
        snprintf(bpe_path, sizeof bpe_path, "/tmp/mygpt-fuzz-%d-vocab.bpe", (int)getpid());
    }
    const unsigned char *nul = memchr(data, 0, size);
    const size_t n1 = nul ? (size_t)(nul - data) : size;
    write_file(enc_path, data, n1);
    write_file(bpe_path, nul ? nul + 1 : data + size, nul ? size - n1 - 1 : 0);
    mygpt_tokenizer *tok = (mygpt_tokenizer *)1;
    mygpt_error err = {0};
    if (mygpt_tokenizer_load(&tok, enc_path, bpe_path, &err) == MYGPT_OK) {
        int64_t *ids;
        size_t n;
        if (mygpt_encode(tok, "fuzz me", 7, &ids, &n, &err) == MYGPT_OK)
            free(ids);
        mygpt_tokenizer_free(tok);
    } else if (tok != NULL || err.message[0] == '\0') {
        __builtin_trap(); /* a failure leaves no tokenizer and says why */
    }
    return 0;
}
