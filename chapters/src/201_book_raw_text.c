/*
 * 201_book_raw_text - the book's chapter 2 (2.2 Tokenizing text): the-verdict read whole,
 * its length in characters and its first 99 characters.
 */
#include <stdio.h>
#include <stdlib.h>

#include "book_text.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "201_book_raw_text",
                 "The book's chapter 2, section 2.2: the-verdict's length in characters and its first\n"
                 "99 characters.",
                 0, 0);
    size_t len;
    char *raw_text = book_verdict(&ch, &len);
    // print("Total number of character:", len(raw_text)); print(raw_text[:99])
    printf("Total number of character: %zu\n", mygpt_utf8_length(raw_text, len));
    const size_t head = mygpt_utf8_offset(raw_text, len, 99);
    printf("%.*s\n", (int)head, raw_text);
    free(raw_text);
    return 0;
}
