/* fuzz_instruct.c - arbitrary bytes as instruction-data.json: mygpt_instruct_data_parse reads
 * them or refuses them with "fuzz.json ..." (never a crash, a read past the input or a leak,
 * and nothing left in the data on a refusal). When GPT-2's vocabulary is in the data folder,
 * what it reads becomes the book's InstructionDataset, collated in batches of 3 with and
 * without the prompt masked, cut to 5 tokens or not: every input is a token id, every target
 * one or -100. */
#include <stdlib.h>
#include <string.h>

#include "mygpt.h"

static mygpt_tokenizer *tok;
static int tried;

/* Collates ds in batches of 3 and checks every value. */
static void collate_all(const mygpt_instruct_dataset *ds)
{
    enum { BATCH = 3 };
    for (size_t first = 0; first < ds->n; first += BATCH) {
        int64_t rows[BATCH];
        const size_t B = ds->n - first < BATCH ? ds->n - first : BATCH;
        for (size_t b = 0; b < B; b++)
            rows[b] = (int64_t)(first + b);
        for (int mask = 0; mask < 2; mask++)
            for (size_t allowed = 0; allowed < 6; allowed += 5) {
                const size_t T = mygpt_instruct_batch_length(ds, rows, B, allowed);
                int64_t *x = malloc((B * T + 1) * sizeof *x), *y = malloc((B * T + 1) * sizeof *y);
                size_t got;
                mygpt_error err = {0};
                if (!x || !y ||
                    mygpt_instruct_batch(ds, rows, B, &(mygpt_instruct_collation){allowed, mask}, x, y, &got, &err) !=
                        MYGPT_OK ||
                    got != T)
                    abort();
                for (size_t i = 0; i < B * T; i++)
                    if (x[i] < 0 || x[i] > MYGPT_ENDOFTEXT_ID ||
                        ((y[i] < 0 || y[i] > MYGPT_ENDOFTEXT_ID) && y[i] != MYGPT_IGNORE_INDEX))
                        abort();
                free(x);
                free(y);
            }
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (!tried) {
        tried = 1;
        char dir[4096];
        mygpt_error e = {0};
        if (mygpt_data_dir(dir, sizeof dir, &e) != MYGPT_OK || mygpt_tokenizer_load_dir(&tok, dir, &e) != MYGPT_OK)
            tok = NULL;
    }
    mygpt_instruct_data d;
    mygpt_error err = {0};
    if (mygpt_instruct_data_parse(&d, "fuzz.json", (const char *)data, size, &err) != MYGPT_OK) {
        if (strncmp(err.message, "fuzz.json", 9) != 0 || d.n || d.entry)
            abort();
        return 0;
    }
    for (size_t i = 0; i < d.n; i++)
        if (!d.entry[i].instruction || !d.entry[i].input || !d.entry[i].output)
            abort();
    if (tok) {
        mygpt_instruct_dataset ds;
        if (mygpt_instruct_dataset_init(&ds, d.entry, d.n, tok, &err) == MYGPT_OK) {
            collate_all(&ds);
            mygpt_instruct_dataset_free(&ds);
        } else if (ds.ids || ds.start) {
            abort();
        }
    }
    mygpt_instruct_data_free(&d);
    return 0;
}
