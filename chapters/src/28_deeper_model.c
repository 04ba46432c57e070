/*
 * 28_deeper_model - document 000, section 12.7, experiment 2. Deeper model.
 * Construct GPT(4, 4, 2, 4, 64) and verify the predicted parameter count (num_layers=4: 16 + 256 + 4 * 228 + 8 = 1192)
 * by counting the parameters of the built model.
 */
#include <stdio.h>

#include "gpt_experiment.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "28_deeper_model",
                 "Document 000, 12.7 experiment 2. Deeper model: predicted vs counted parameters\n"
                 "of GPT(4, 4, 2, 4, 64).",
                 0, CH_SEED | CH_SEED_UNSEEN);
    printf("Experiment 2. Deeper model\n");
    mygpt_gpt *gpt = build_gpt(&ch, 4, 4, 2, 4, 64);
    print_predicted_vs_counted(&ch, gpt);
    mygpt_gpt_free(gpt);
    return 0;
}
