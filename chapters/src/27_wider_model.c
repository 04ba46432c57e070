/*
 * 27_wider_model - document 000, section 12.7, experiment 1. Wider model.
 * Construct GPT(4, 8, 2, 2, 64) and verify the predicted parameter count (embed_dim=8: 32 + 512 + 1680 + 16 = 2240)
 * by counting the parameters of the built model.
 */
#include <stdio.h>

#include "gpt_experiment.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "27_wider_model",
                 "Document 000, 12.7 experiment 1. Wider model: predicted vs counted parameters\n"
                 "of GPT(4, 8, 2, 2, 64).",
                 0, CH_SEED | CH_SEED_UNSEEN);
    printf("Experiment 1. Wider model\n");
    mygpt_gpt *gpt = build_gpt(&ch, 4, 8, 2, 2, 64);
    print_predicted_vs_counted(&ch, gpt);
    mygpt_gpt_free(gpt);
    return 0;
}
