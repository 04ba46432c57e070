/*
 * 202_book_regex_split - the book's chapter 2 (2.2): re.split on a short text, first on
 * whitespace, then on commas, periods and whitespace, then without the empty and blank
 * pieces, and last with the chapter's full pattern (punctuation and "--").
 */
#include <stdio.h>
#include <string.h>

#include "book_text.h"

/* print(re.split(pattern, text)), stripped and filtered when strip is 1 */
static void print_split(const chapter *ch, const char *pattern, const char *text, int strip)
{
    mygpt_words w;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_regex_split(pattern, text, strlen(text), strip, &w, &err), &err);
    py_words((const char *const *)w.items, w.n);
    printf("\n");
    mygpt_words_free(&w);
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "202_book_regex_split",
                 "The book's chapter 2, section 2.2: re.split with the whitespace pattern, with\n"
                 "commas and periods, without the blank pieces, then the chapter's full pattern.",
                 0, 0);
    const char *text = "Hello, world. This, is a test.";
    print_split(&ch, "(\\s)", text, 0);        // re.split(r'(\s)', text)
    print_split(&ch, "([,.]|\\s)", text, 0);   // re.split(r'([,.]|\s)', text)
    print_split(&ch, "([,.]|\\s)", text, 1);   // [item for item in result if item.strip()]
    // the pieces are already stripped here: " " pieces are dropped, none has spaces inside
    print_split(&ch, MYGPT_SIMPLE_PATTERN, "Hello, world. Is this-- a test?", 1);
    return 0;
}
