/*
 * 36_attention_maps - where the trained model looks. Chapter 33's AdamW model (its
 * checkpoint in the figures folder, or trained again) reads a sentence of the-verdict's
 * validation part; one forward pass hands out every head's attention probabilities
 * (mygpt_gpt_forward_attention). For two heads the program prints, at every position,
 * the three tokens it attends to most (itself included: a causal head sees positions
 * 0..t), and it draws every head as a heatmap, layers down and heads across, tokens on
 * both axes (36_attention_maps.svg).
 *
 * tools/gen_chapter_expected.py prints the same from PyTorch (the probabilities are
 * the softmax outputs of the reference model's heads, taken with forward hooks); the
 * probabilities are compared to their last printed digit, the tokens exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict.h"

#define TOP 3

/* The token's text, quoted as Python's repr would for plain text: '...' with \n, \\
 * and \' escaped (bytes of split UTF-8 characters print as they are). */
static void token_text(const chapter *ch, const mygpt_tokenizer *tok, int64_t id, char *out, size_t cap)
{
    char *bytes;
    size_t n;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_decode(tok, &id, 1, &bytes, &n, &err), &err);
    size_t o = 0;
    out[o++] = '\'';
    for (size_t i = 0; i < n && o + 4 < cap; i++) {
        const char c = bytes[i];
        if (c == '\n' || c == '\\' || c == '\'') {
            out[o++] = '\\';
            out[o++] = c == '\n' ? 'n' : c;
        } else {
            out[o++] = c;
        }
    }
    out[o++] = '\'';
    out[o] = '\0';
    free(bytes);
}

/* Prints, for head h of layer l, each position's TOP most attended positions. p is
 * that head's (T, T) probabilities. Ties go to the earlier position. */
static void print_head(const float *p, int T, char (*text)[64], int l, int h)
{
    printf("\nLayer %d, head %d: the %d tokens each position attends to most\n", l, h, TOP);
    for (int t = 0; t < T; t++) {
        int best[TOP];
        const int nb = mygpt_attention_top(p + (size_t)t * T, t, TOP, best);
        printf("%4d %-14s", t, text[t]);
        for (int j = 0; j < nb; j++)
            printf("%s %s %.3f", j ? "," : "", text[best[j]], (double)p[(size_t)t * T + best[j]]);
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "36_attention_maps",
                 "Where chapter 33's AdamW model (FIGURES/verdict_gpt.safetensors, or trained again) looks\n"
                 "when it reads a sentence of the-verdict's validation part: the top-3 attended tokens of\n"
                 "two heads, and every head's attention as a heatmap (FIGURES/36_attention_maps.svg).",
                 0, CH_FIGURES | CH_SMOKE | CH_WEIGHTS);
    verdict v;
    chapter_check_figure(&ch, "36_attention_maps.svg"); // asked before a model is trained
    mygpt_gpt *g = verdict_load_model(&ch, &v);
    mygpt_error err = {0};
    size_t len, n;
    const char *sentence = verdict_val_sentence(&v, &len);
    int64_t *ids;
    chapter_check(&ch, mygpt_encode(v.tok, sentence, len, &ids, &n, &err), &err);
    const int T = n < (size_t)g->config.max_seq_len ? (int)n : g->config.max_seq_len; // the context
    const int L = g->config.num_layers, NH = g->config.num_heads;
    const size_t att_len = mygpt_gpt_attention_len(g, 1, T);
    float *att = chapter_alloc(&ch, att_len, sizeof *att); // (L, 1, NH, T, T)
    chapter_check(&ch, mygpt_gpt_forward_attention(g, ids, 1, T, att, att_len, &err), &err);

    char(*text)[64] = chapter_alloc(&ch, (size_t)T, sizeof *text);
    for (int t = 0; t < T; t++)
        token_text(&ch, v.tok, ids[t], text[t], sizeof text[t]);
    printf("Chapter 33's model reads the first sentence of the-verdict's validation part\n"
           "(the first after a blank line), %d GPT-2 tokens:\n", T);
    for (int t = 0; t < T; t++)
        printf("%s%s", t ? " " : "", text[t]);
    printf("\none forward pass with the attention probabilities of its %d layers x %d heads kept\n", L, NH);
    const int heads[2][2] = {{0, 0}, {L - 1, NH - 1}}; // the first head and the last
    for (int k = 0; k < 2; k++) {
        const int l = heads[k][0], h = heads[k][1];
        print_head(att + ((size_t)l * NH + h) * T * T, T, text, l, h);
    }

    // the figure: layers down, heads across, each head's (T, T) map with tokens on both axes
    const char **labels = chapter_alloc(&ch, (size_t)T, sizeof *labels);
    for (int t = 0; t < T; t++)
        labels[t] = text[t];
    mygpt_svg fig;
    mygpt_svg_attention_grid(&fig, att, L, NH, T, labels);
    chapter_save_figure(&ch, &fig, "36_attention_maps.svg");
    printf("\nfigure: every head's attention, layers down and heads across (36_attention_maps.svg)\n");
    free(labels);
    free(text);
    free(att);
    free(ids);
    mygpt_gpt_free(g);
    verdict_free(&v);
    return 0;
}
