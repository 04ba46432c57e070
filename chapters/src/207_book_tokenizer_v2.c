/*
 * 207_book_tokenizer_v2 - the book's chapter 2 (2.4): the vocabulary with <|endoftext|>
 * and <|unk|>, its last five entries, and SimpleTokenizerV2 on two texts joined by
 * <|endoftext|> (its unknown words become <|unk|>).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book_text.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "207_book_tokenizer_v2",
                 "The book's chapter 2, section 2.4: SimpleTokenizerV2's vocabulary (with\n"
                 "<|endoftext|> and <|unk|>), and its encode and decode of two joined texts.",
                 0, 0);
    size_t len;
    char *raw_text = book_verdict(&ch, &len);
    mygpt_simple_tokenizer tok;
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_simple_tokenizer_init(&tok, raw_text, len, 1, &err), &err);
    printf("%zu\n", tok.vocab.n); // len(vocab.items())
    for (size_t i = tok.vocab.n - 5; i < tok.vocab.n; i++) {
        printf("(");
        py_str(tok.vocab.items[i]);
        printf(", %zu)\n", i);
    }
    // text = " <|endoftext|> ".join((text1, text2))
    const char *text1 = "Hello, do you like tea?", *text2 = "In the sunlit terraces of the palace.";
    char text[128];
    snprintf(text, sizeof text, "%s " MYGPT_ENDOFTEXT " %s", text1, text2);
    printf("%s\n", text);
    int64_t *ids;
    size_t n;
    chapter_check(&ch, mygpt_simple_encode(&tok, text, strlen(text), &ids, &n, &err), &err);
    py_ints(ids, n);
    printf("\n");
    char *back;
    chapter_check(&ch, mygpt_simple_decode(&tok, ids, n, &back, &err), &err);
    py_str(back);
    printf("\n");
    free(back);
    free(ids);
    mygpt_simple_tokenizer_free(&tok);
    free(raw_text);
    return 0;
}
