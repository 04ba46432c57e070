/*
 * 41_embedding_table - document 001, "nn.Embedding is a lookup, not a linear
 * layer": the layer IS its (vocab_size, n_embd) weight matrix.
 */
#include <stdio.h>

#include "doc001_session.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "41_embedding_table",
                 "Document 001: torch.manual_seed(42); tok_emb = nn.Embedding(50, 8);\n"
                 "print(tok_emb.weight.shape).", 42, CH_SEED | CH_SEED_UNSEEN);
    doc001 s = {0};
    doc001_run(&ch, &s, 1);
    ch_print_size(&s.tok_emb_w); // the weight's shape, as nn.Embedding(50, 8) made it
    printf("\n");
    doc001_free(&s);
    return 0;
}
