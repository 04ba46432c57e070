/*
 * 304_book_all_context_vectors - the book's chapter 3 (3.3.2 Computing attention weights
 * for all input tokens): the 6 x 6 scores by loops and as inputs @ inputs.T, their
 * softmax by rows, the rows' sums, every context vector at once, and the second one
 * of 3.3.1 again.
 */
#include <stdio.h>

#include "book_attention.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "304_book_all_context_vectors",
                 "The book's chapter 3, section 3.3.2: all attention scores (loops, then a matrix\n"
                 "product), their weights, the row sums, and all context vectors.",
                 0, 0);
    enum { T = BOOK_TOKENS, D = BOOK_D_IN };
    const int64_t tt[2] = {T, T}, td[2] = {T, D};
    float attn_scores[T * T], attn_weights[T * T], all_context_vecs[T * D];
    for (int i = 0; i < T; i++) // attn_scores[i, j] = torch.dot(x_i, x_j)
        for (int j = 0; j < T; j++) {
            float s = 0.0f;
            for (int k = 0; k < D; k++)
                s += BOOK_INPUTS[i * D + k] * BOOK_INPUTS[j * D + k];
            attn_scores[i * T + j] = s;
        }
    book_print(NULL, attn_scores, 2, tt, NULL);
    mygpt_error err = {0}; // inputs @ inputs.T: torch.mm, fused multiply-adds
    chapter_check(&ch, mygpt_matmul(attn_scores, BOOK_INPUTS, BOOK_INPUTS, NULL, T, D, T, &err), &err);
    book_print(NULL, attn_scores, 2, tt, NULL);
    mygpt_softmax_lastdim(attn_weights, attn_scores, T, T); // torch.softmax(attn_scores, dim=-1)
    book_print(NULL, attn_weights, 2, tt, NULL);
    // row_2_sum = sum([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581]): Python floats
    const double row_2[T] = {0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581};
    double row_2_sum = 0;
    for (int j = 0; j < T; j++)
        row_2_sum += row_2[j];
    printf("Row 2 sum: ");
    ch_pyfloat(row_2_sum);
    printf("\n");
    float row_sums[T]; // attn_weights.sum(dim=-1)
    for (int i = 0; i < T; i++)
        row_sums[i] = mygpt_sum_torch(attn_weights + i * T, T);
    book_print("All row sums:", row_sums, 1, (int64_t[]){T}, NULL);
    mygpt_mm(all_context_vecs, attn_weights, BOOK_INPUTS, T, T, D); // attn_weights @ inputs
    book_print(NULL, all_context_vecs, 2, td, NULL);
    // the second row is 3.3.1's context_vec_2
    float context_vec_2[D] = {0};
    for (int i = 0; i < T; i++)
        for (int k = 0; k < D; k++)
            context_vec_2[k] += attn_weights[T + i] * BOOK_INPUTS[i * D + k];
    book_print("Previous 2nd context vector:", context_vec_2, 1, (int64_t[]){D}, NULL);
    return 0;
}
