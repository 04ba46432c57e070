/*
 * 30_tied_head - document 000, section 12.7, experiment 4: the tied head really is
 * tied. Set token_embedding.embedding.weight.data[0, 0] = 999.0 and run the model
 * again: column 0 of the logits changes at every position, because column 0 of
 * the head is row 0 of the token embedding.
 */
#include <stdio.h>
#include <string.h>

#include "gpt_experiment.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "30_tied_head",
                 "Document 000, 12.7 experiment 4: logits before and after changing the token\n"
                 "embedding's [0, 0] entry, and which of them changed.",
                 0, CH_SEED);
    enum { V = 4, T = 4 };
    printf("Experiment 4. The tied head really is tied\n");
    mygpt_gpt *gpt = build_gpt(&ch, V, 4, 2, 2, 64);
    const int64_t ids[T] = {0, 1, 2, 3};
    const int64_t shape[3] = {1, T, V};
    float before[T * V], after[T * V];
    mygpt_error err = {0};

    chapter_check(&ch, mygpt_gpt_forward(gpt, ids, 1, T, &err), &err);
    memcpy(before, gpt->acts.logits, sizeof before);
    printf("with torch.no_grad(): logits = gpt(ids)\n");
    ch_torch(before, 3, shape, NULL);

    gpt->params.wte[0] = 999.0f; // gpt.token_embedding.embedding.weight.data[0, 0] = 999.0
    chapter_check(&ch, mygpt_gpt_forward(gpt, ids, 1, T, &err), &err);
    memcpy(after, gpt->acts.logits, sizeof after);
    printf("\n\ngpt.token_embedding.embedding.weight.data[0, 0] = 999.0\n");
    printf("with torch.no_grad(): logits = gpt(ids)\n");
    ch_torch(after, 3, shape, NULL);

    unsigned char changed[T * V];
    int col0_everywhere = 1;
    for (int i = 0; i < T * V; i++)
        changed[i] = after[i] != before[i];
    for (int t = 0; t < T; t++)
        col0_everywhere &= changed[t * V + 0];
    printf("\n\nlogits != logits_before:\n");
    ch_torch_bool(changed, 3, shape);
    printf("\ncolumn 0 changed at every position: %s\n", ch_bool(col0_everywhere));
    mygpt_gpt_free(gpt);
    return 0;
}
