/* fuzz_checkpoint.c - arbitrary bytes as a safetensors checkpoint: the header parser,
 * the layout's recognition (course, the book's, Hugging Face's) and the tensor table
 * must load a model or return an error, never read out of bounds, leak or crash. A
 * model that loads runs one forward pass. Seeds: small valid files of all three
 * architectures, and int8 and bf16 ones (mygpt quantize; fuzz/corpus/fuzz_checkpoint). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mygpt.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char path[] = "/tmp/fuzz_checkpoint_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    size_t done = 0;
    while (done < size) {
        const ssize_t n = write(fd, data + done, size - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    close(fd);
    mygpt_gpt *g = NULL;
    mygpt_error err = {0};
    if (done == size && mygpt_checkpoint_load(&g, path, &err) == MYGPT_OK) {
        const int64_t ids[2] = {0, g->config.vocab_size - 1};
        const int T = g->config.max_seq_len < 2 ? 1 : 2;
        if (mygpt_gpt_forward(g, ids + 2 - T, 1, T, &err) != MYGPT_OK && err.message[0] == '\0')
            abort(); /* an error must say why */
        mygpt_gpt_free(g);
    }
    unlink(path);
    return 0;
}
