/* fuzz_json.c - the library's one JSON reader (lib/io/json.h): any bytes are parsed or
 * refused with an error, never a crash, a read past the text or a leak; a parsed
 * document's subtrees nest properly and every string decodes to valid UTF-8 that
 * mygpt_json_equals agrees with. */
#include <stdlib.h>
#include <string.h>

#include "io/json.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *text = malloc(size ? size : 1); // exactly size bytes: ASan sees any read past them
    if (!text)
        return 0;
    memcpy(text, data, size);
    mygpt_json j;
    mygpt_error err = {0};
    if (mygpt_json_parse(&j, text, size, 16, 4096, "fuzz", &err) == MYGPT_OK) {
        if (j.n == 0 || j.v[0].next != j.n)
            abort();
        for (size_t i = 0; i < j.n; i++) {
            if (j.v[i].next <= i || j.v[i].next > j.n || j.v[i].end > size)
                abort();
            if (j.v[i].type != MYGPT_JSON_STRING)
                continue;
            char *out = malloc(4 * size + 2);
            const size_t l = mygpt_json_string(&j, i, out, 4 * size + 2);
            if (l == (size_t)-1)
                abort();
            if (strlen(out) == l && !mygpt_json_equals(&j, i, out))
                abort();
            free(out);
        }
        mygpt_json_free(&j);
    } else if (strncmp(err.message, "fuzz: ", 6) != 0) {
        abort();
    }
    free(text);
    return 0;
}
