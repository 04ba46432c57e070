/*
 * 205_book_tokenizer_v1 - the book's chapter 2 (2.3): SimpleTokenizerV1 on a passage of
 * the-verdict, its ids, then the ids decoded, then the text encoded and decoded again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book_text.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "205_book_tokenizer_v1",
                 "The book's chapter 2, section 2.3: SimpleTokenizerV1's encode and decode of a\n"
                 "passage of the-verdict.",
                 0, 0);
    size_t len;
    char *raw_text = book_verdict(&ch, &len);
    mygpt_simple_tokenizer tok;
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_simple_tokenizer_init(&tok, raw_text, len, 0, &err), &err);
    const char *text = "\"It's the last he painted, you know,\" \n"
                       "           Mrs. Gisburn said with pardonable pride.";
    int64_t *ids;
    size_t n;
    chapter_check(&ch, mygpt_simple_encode(&tok, text, strlen(text), &ids, &n, &err), &err);
    py_ints(ids, n); // print(ids)
    printf("\n");
    // tokenizer.decode(ids), then tokenizer.decode(tokenizer.encode(text)): shown by repr
    for (int k = 0; k < 2; k++) {
        char *back;
        chapter_check(&ch, mygpt_simple_decode(&tok, ids, n, &back, &err), &err);
        py_str(back);
        printf("\n");
        if (k == 0) {
            free(ids);
            chapter_check(&ch, mygpt_simple_encode(&tok, text, strlen(text), &ids, &n, &err), &err);
        }
        free(back);
    }
    free(ids);
    mygpt_simple_tokenizer_free(&tok);
    free(raw_text);
    return 0;
}
