/*
 * 203_book_preprocess - the book's chapter 2 (2.2): the-verdict split by the chapter's
 * pattern, its first 30 words and how many there are.
 */
#include <stdio.h>
#include <stdlib.h>

#include "book_text.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "203_book_preprocess",
                 "The book's chapter 2, section 2.2: the-verdict preprocessed (split and stripped),\n"
                 "its first 30 words and their count.",
                 0, 0);
    size_t len;
    char *raw_text = book_verdict(&ch, &len);
    mygpt_words preprocessed;
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_regex_split(MYGPT_SIMPLE_PATTERN, raw_text, len, 1, &preprocessed, &err), &err);
    py_words((const char *const *)preprocessed.items, preprocessed.n < 30 ? preprocessed.n : 30);
    printf("\n%zu\n", preprocessed.n); // print(len(preprocessed))
    mygpt_words_free(&preprocessed);
    free(raw_text);
    return 0;
}
