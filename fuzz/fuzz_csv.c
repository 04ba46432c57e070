/* fuzz_csv.c - arbitrary bytes as a CSV file: mygpt_csv_parse reads them or refuses them
 * with "fuzz.csv ..." (never a crash, a read past the input or a leak); what it reads has
 * the header's number of fields in every record, on increasing lines. When GPT-2's
 * vocabulary is in the data folder, the same bytes as a file go through the book's
 * SpamDataset too (mygpt_spam_dataset_load, max_length 0 and 7). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mygpt.h"

static mygpt_tokenizer *tok;
static int tried;
static char path[64];

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (!tried) {
        tried = 1;
        char dir[4096];
        mygpt_error e = {0};
        if (mygpt_data_dir(dir, sizeof dir, &e) == MYGPT_OK && mygpt_tokenizer_load_dir(&tok, dir, &e) != MYGPT_OK)
            tok = NULL;
        snprintf(path, sizeof path, "/tmp/mygpt-fuzz-%d.csv", (int)getpid());
    }
    mygpt_csv csv;
    mygpt_error err = {0};
    if (mygpt_csv_parse(&csv, "fuzz.csv", (const char *)data, size, &err) == MYGPT_OK) {
        for (size_t r = 0; r <= csv.rows; r++) {
            if (r > 0 && csv.line[r] <= csv.line[r - 1])
                abort();
            for (size_t c = 0; c < csv.cols; c++) {
                size_t len;
                const char *f = mygpt_csv_field(&csv, r, c, &len);
                if (!f || strlen(f) != len || len > size)
                    abort();
            }
        }
        mygpt_csv_free(&csv);
    } else if (strncmp(err.message, "fuzz.csv", 8) != 0 || csv.field || csv.text) {
        abort();
    }
    if (!tok)
        return 0;
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    for (size_t max_length = 0; max_length < 8; max_length += 7) {
        mygpt_spam_dataset ds;
        if (mygpt_spam_dataset_load(&ds, path, tok, max_length, 50256, 2, &err) == MYGPT_OK) {
            int64_t row[8];
            for (size_t r = 0; max_length && r < ds.n; r++) {
                mygpt_spam_dataset_row(&ds, r, row);
                for (size_t j = 0; j < ds.max_length; j++)
                    if (row[j] < 0 || row[j] > 50256)
                        abort();
            }
            for (size_t i = 0; i < ds.start[ds.n]; i++)
                if (ds.ids[i] < 0 || ds.ids[i] > 50256)
                    abort();
            mygpt_spam_dataset_free(&ds);
        } else if (ds.ids || strncmp(err.message, path, strlen(path)) != 0) {
            abort();
        }
    }
    return 0;
}
