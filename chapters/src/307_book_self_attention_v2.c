/*
 * 307_book_self_attention_v2 - the book's chapter 3 (3.4.2): SelfAttention_v2(3, 2)
 * after torch.manual_seed(789), its projections nn.Linear(3, 2, bias=False), and its
 * context vectors for the six words.
 */
#include <stdio.h>

#include "book_attention.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "307_book_self_attention_v2",
                 "The book's chapter 3, section 3.4.2: SelfAttention_v2(d_in=3, d_out=2), nn.Linear\n"
                 "projections, after torch.manual_seed(789) on the six words.",
                 789, CH_SEED);
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    book_module sa_v2;
    book_module_init(&ch, &rng, &sa_v2, BOOK_D_OUT, 1, 0);
    sa_v2.m.causal = 0;    // SelfAttention_v2 has no mask,
    sa_v2.m.unbatched = 1; // and takes one (T, d_in) matrix: its products are torch.mm's
    mygpt_mha_steps s; // queries = sa_v2.W_query(inputs), keys, values, weights
    book_module_run(&ch, &sa_v2, BOOK_INPUTS, 1, BOOK_TOKENS, NULL, &s);
    book_print(NULL, s.out, 2, (int64_t[]){BOOK_TOKENS, BOOK_D_OUT}, "MmBackward0");
    mygpt_mha_steps_free(&s);
    return 0;
}
