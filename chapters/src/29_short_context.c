/*
 * 29_short_context - document 000, section 12.7, experiment 3. max_seq_len = 8
 * shrinks the position embedding from 256 to 32 parameters (total 512), and the
 * model now refuses sequences longer than 8 tokens.
 */
#include <stdio.h>

#include "gpt_experiment.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "29_short_context",
                 "Document 000, 12.7 experiment 3: GPT(4, 4, 2, 2, max_seq_len=8). Predicted vs\n"
                 "counted parameters, then a forward pass at T = 8 and the error at T = 9.",
                 0, CH_SEED | CH_SEED_UNSEEN);
    printf("Experiment 3. Position-embedding hyperparameter\n");
    mygpt_gpt *gpt = build_gpt(&ch, 4, 4, 2, 2, 8);
    print_predicted_vs_counted(&ch, gpt);

    int64_t ids[9];
    for (int t = 0; t < 9; t++)
        ids[t] = t % 4;
    mygpt_error err = {0};
    for (int T = 8; T <= 9; T++) {
        printf("\ngpt(ids) with ids of shape (1, %d): ", T);
        mygpt_status st = mygpt_gpt_forward(gpt, ids, 1, T, &err);
        if (st == MYGPT_OK) {
            const int64_t shape[3] = {1, T, gpt->config.vocab_size};
            printf("logits of shape ");
            ch_tuple(3, shape);
        } else if (st == MYGPT_ERANGE) {
            printf("ValueError: %s", err.message); // what the document's forward raises
        } else {
            chapter_check(&ch, st, &err);
        }
    }
    printf("\n");
    mygpt_gpt_free(gpt);
    return 0;
}
