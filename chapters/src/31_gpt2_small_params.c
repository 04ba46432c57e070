/*
 * 31_gpt2_small_params - document 000, section 12.8, exercise 3: parameter
 * accounting of GPT-2 small (V = 50,257, C = 768, h = 12, N = 12, max_seq_len = 1024,
 * tied head). Counted from the formula, nothing allocated. The document's own sum
 * has a slip (see chapters/ERRATA.md); this prints what the formula gives.
 */
#include <stdio.h>

#include "chapter.h"

static void row(const char *label, unsigned long long n)
{
    mygpt_strbuf sb = {0};
    mygpt_py_int_commas(&sb, (long long)n);
    printf("%-26s %13s\n", label, mygpt_sb_str(&sb));
    mygpt_sb_free(&sb);
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "31_gpt2_small_params",
                 "Document 000, 12.8 exercise 3: the parameter count of GPT-2 small with a tied\n"
                 "head, module by module.",
                 0, 0);
    const mygpt_config cfg = {50257, 768, 12, 12, 1024};
    mygpt_param_counts pc;
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_param_count(&cfg, &pc, &err), &err);
    printf("GPT-2 small: V=");
    ch_commas(cfg.vocab_size);
    printf(", C=%d, h=%d, N=%d, max_seq_len=%d, tied head\n\n", cfg.embed_dim, cfg.num_heads,
           cfg.num_layers, cfg.max_seq_len);
    row("V * C", pc.token_embedding);
    row("max_seq_len * C", pc.position_embedding);
    row("N * (12 C^2 + 9 C)", pc.blocks);
    row("2 * C", pc.final_layernorm);
    row("tied head", pc.head);
    row("total", pc.total);
    printf("\n= %.1f M parameters (the published GPT-2 small figure is 124 M)\n", pc.total / 1e6);
    return 0;
}
