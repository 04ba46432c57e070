/* gpt_experiment.c - shared by document 000's GPT chapters (see gpt_experiment.h). */
#include "gpt_experiment.h"

#include <stdio.h>

mygpt_gpt *build_gpt(const chapter *ch, int V, int C, int h, int N, int max_seq)
{
    mygpt_config cfg = {V, C, h, N, max_seq};
    mygpt_gpt *gpt = NULL;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_gpt_create(&gpt, &cfg, ch->seed, &err), &err);
    return gpt;
}

void print_param_table(const mygpt_gpt *gpt)
{
    mygpt_param_counts counted;
    mygpt_gpt_counts(gpt, &counted);
    mygpt_strbuf sb = {0};
    mygpt_param_table(&sb, &gpt->config, &counted);
    fputs(mygpt_sb_str(&sb), stdout);
    mygpt_sb_free(&sb);
}

void print_predicted_vs_counted(const chapter *ch, const mygpt_gpt *gpt)
{
    const mygpt_config *c = &gpt->config;
    mygpt_param_counts predicted, counted;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_param_count(c, &predicted, &err), &err);
    mygpt_gpt_counts(gpt, &counted);
    printf("gpt = GPT(vocab_size=%d, embed_dim=%d, num_heads=%d, num_layers=%d, max_seq_len=%d)\n",
           c->vocab_size, c->embed_dim, c->num_heads, c->num_layers, c->max_seq_len);
    printf("Predicted: V*C + max_seq_len*C + N*(12*C^2 + 9*C) + 2*C = %llu + %llu + %llu + %llu = %llu\n",
           (unsigned long long)predicted.token_embedding,
           (unsigned long long)predicted.position_embedding, (unsigned long long)predicted.blocks,
           (unsigned long long)predicted.final_layernorm, (unsigned long long)predicted.total);
    printf("Counted:   sum(p.numel() for p in gpt.parameters()) = %llu\n",
           (unsigned long long)counted.total);
    printf("Prediction verified: %s\n\n", ch_bool(predicted.total == counted.total));
    print_param_table(gpt);
}
