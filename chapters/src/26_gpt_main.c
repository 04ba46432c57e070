/*
 * 26_gpt_main - document 000, section 12.6: `uv run mygpt`. Builds the full GPT
 * (set_seed(0); GPT(4, 4, 2, 2, max_seq_len=64)), runs it on "I love AI !", and
 * prints the shapes and the parameter breakdown.
 */
#include <stdio.h>

#include "gpt_experiment.h"

static const char *const VOCAB[] = {"I", "love", "AI", "!"};
enum { V = 4 };

/* to_ids: the position of each word in VOCAB */
static int64_t to_id(const char *word)
{
    for (int i = 0; i < V; i++) {
        const char *a = VOCAB[i], *b = word;
        while (*a && *a == *b)
            a++, b++;
        if (*a == '\0' && *b == '\0')
            return i;
    }
    return -1;
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "26_gpt_main",
                 "Document 000, 12.6: the complete GPT on the running example. Prints the\n"
                 "vocabulary, the shapes of ids and logits, and the parameter breakdown.",
                 0, CH_SEED | CH_SEED_UNSEEN);
    printf("Vocabulary: (");
    for (int i = 0; i < V; i++)
        printf("%s'%s'", i ? ", " : "", VOCAB[i]);
    printf(")\nVocabulary size V = %d\n", V);

    mygpt_gpt *gpt = build_gpt(&ch, V, 4, 2, 2, 64); // gpt.eval(): dropout is 0 anyway
    const char *words[] = {"I", "love", "AI", "!"};
    int64_t ids[4];
    for (int t = 0; t < 4; t++)
        ids[t] = to_id(words[t]); // to_ids([...]).unsqueeze(0): (1, 4)
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_gpt_forward(gpt, ids, 1, 4, &err), &err);

    const int64_t ids_shape[2] = {1, 4};
    const int64_t logits_shape[3] = {gpt->acts.B, gpt->acts.T, gpt->config.vocab_size};
    printf("\nToken ids shape:  ");
    ch_tuple(2, ids_shape);
    printf("\nLogits shape:     ");
    ch_tuple(3, logits_shape);
    printf("  (B, T, V)\n\n");
    print_param_table(gpt);
    mygpt_gpt_free(gpt);
    return 0;
}
