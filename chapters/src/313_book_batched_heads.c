/*
 * 313_book_batched_heads - the book's chapter 3 (3.6.2): a (1, 2, 3, 4) tensor as two
 * heads of three positions, a @ a.transpose(2, 3) (every head's products at once), then
 * each head's product on its own: the same numbers.
 */
#include <stdio.h>

#include "book_attention.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "313_book_batched_heads",
                 "The book's chapter 3, section 3.6.2: the batched matrix product of a\n"
                 "(b, num_heads, num_tokens, head_dim) = (1, 2, 3, 4) tensor with its transpose,\n"
                 "and of each head alone.",
                 0, 0);
    enum { HEADS = 2, T = 3, D = 4 };
    static const float a[HEADS * T * D] = {
        0.2745f, 0.6584f, 0.2775f, 0.8573f, 0.8993f, 0.0390f, 0.9268f, 0.7388f, 0.7179f, 0.7058f, 0.9156f, 0.4340f,
        0.0772f, 0.3565f, 0.1479f, 0.5331f, 0.4066f, 0.2318f, 0.4545f, 0.9737f, 0.4606f, 0.5159f, 0.4220f, 0.5786f};
    float res[HEADS * T * T]; // (1, 2, 3, 3)
    // lesson: batched_heads
    for (int h = 0; h < HEADS; h++) // a @ a.transpose(2, 3), head by head (torch.bmm: rounded products)
        mygpt_matmul_naive(res + h * T * T, a + h * T * D, a + h * T * D, NULL, T, D, T);
    // end lesson: batched_heads
    book_print(NULL, res, 4, (int64_t[]){1, HEADS, T, T}, NULL);
    const char *titles[HEADS] = {"First head:\n", "\nSecond head:\n"};
    mygpt_error err = {0};
    for (int h = 0; h < HEADS; h++) { // a[0, h, :, :] @ a[0, h, :, :].T: torch.mm (fused multiply-adds)
        float head_res[T * T];
        chapter_check(&ch, mygpt_matmul(head_res, a + h * T * D, a + h * T * D, NULL, T, D, T, &err), &err);
        book_print(titles[h], head_res, 2, (int64_t[]){T, T}, NULL);
    }
    return 0;
}
