/* fuzz_forward.c - random small GPT configurations of every architecture (valid and
 * invalid) and random ids (in range and not): create + forward must succeed or return an
 * error. */
#include <stdint.h>
#include <string.h>

#include "mygpt.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 11)
        return 0;
    mygpt_config cfg = {0};
    cfg.arch = (mygpt_arch)(data[9] % 4);           /* the three, and one that is refused */
    cfg.qkv_bias = data[9] >> 7;
    cfg.vocab_size = (int)(data[0] % 20) - 1;       /* -1 .. 18 */
    cfg.num_heads = (int)(data[1] % 5);             /* 0 .. 4 */
    cfg.embed_dim = (int)(data[2] % 17) - 1;        /* -1 .. 15, often not divisible */
    cfg.num_layers = (int)(data[3] % 4);            /* 0 .. 3 */
    cfg.max_seq_len = (int)(data[4] % 10);          /* 0 .. 9 */
    const int B = (int)(data[5] % 4) - 1, T = (int)(data[6] % 12) - 1;
    uint64_t seed = (uint64_t)data[7] << 8 | data[8];
    data += 10, size -= 10;
    int64_t ids[3 * 10];
    for (int i = 0; i < 30; i++)
        ids[i] = i < (int)size ? (int64_t)(int8_t)data[i] : 0; /* -128 .. 127 */
    mygpt_gpt *g;
    mygpt_error err = {0};
    if (mygpt_gpt_create(&g, &cfg, seed, &err) != MYGPT_OK)
        return 0;
    if (B >= 1 && T >= 1 && (size_t)B * T > 30) {
        mygpt_gpt_free(g);
        return 0;
    }
    mygpt_gpt_forward(g, ids, B, T, &err);
    mygpt_gpt_forward(g, ids, B, T, &err); /* again: reused activations */
    mygpt_gpt_free(g);
    return 0;
}
