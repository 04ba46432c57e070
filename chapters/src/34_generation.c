/*
 * 34_generation - the course's chapter 15: "we sample tokens one at a time,
 * autoregressively, until we hit a stop condition". Chapter 33's AdamW model (its
 * checkpoint in the figures folder, or trained again the same way when it is absent)
 * continues "Every effort moves you" greedily, then with temperature 1.4 and top-k 25
 * after torch.manual_seed(123) as LLMs-from-scratch chapter 5 does; then the effect of
 * temperature on that chapter's 9-word vocabulary: 1,000 draws each, as PyTorch counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict.h"

/* token_ids_to_text(ids).replace("\n", " "), as generate_and_print_sample prints it */
static void print_text(const chapter *ch, const mygpt_tokenizer *tok, const int64_t *ids, int n)
{
    char *text;
    size_t len;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_decode(tok, ids, (size_t)n, &text, &len, &err), &err);
    mygpt_strbuf shown = {0}; // tiktoken's decode: a cut character is U+FFFD
    chapter_check(ch, mygpt_sb_append_replaced(&shown, text, len), &err);
    for (size_t i = 0; i < shown.len; i++)
        putchar(shown.data[i] == '\n' ? ' ' : shown.data[i]);
    putchar('\n');
    mygpt_sb_free(&shown);
    free(text);
}

static void continue_prompt(const chapter *ch, mygpt_gpt *g, const verdict *v, mygpt_rng *rng,
                            const mygpt_sampling *s)
{
    const char *prompt = "Every effort moves you";
    int64_t *ids, out[64];
    size_t n;
    int nout;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_encode(v->tok, prompt, strlen(prompt), &ids, &n, &err), &err);
    const mygpt_generation gen = {.max_new = ch->smoke ? 3 : 20, .sampling = *s, .eos = 50256, .use_cache = 1};
    chapter_check(ch, mygpt_generate(g, rng, ids, (int)n, &gen, out, &nout, &err), &err);
    printf("ids: ");
    const int64_t shape[2] = {1, nout};
    ch_torch_i64(out, 2, shape);
    printf("\ntext: ");
    print_text(ch, v->tok, out, nout);
    free(ids);
}

/* LLMs-from-scratch's print_sampled_tokens: torch.manual_seed(123); 1,000 multinomial
 * draws; then for i, freq in enumerate(torch.bincount(samples)): f"{freq} x {word}" */
static void print_sampled_tokens(const chapter *ch, const float *probs)
{
    static const char *const words[9] = {"closer", "every", "effort", "forward", "inches",
                                         "moves",  "pizza", "toward", "you"};
    int counts[9] = {0}, last = 0;
    mygpt_rng rng = {0};
    mygpt_error err = {0};
    mygpt_rng_seed(&rng, 123);
    for (int i = 0; i < 1000; i++) {
        int64_t t;
        chapter_check(ch, mygpt_multinomial(&rng, probs, 9, 0, &t, &err), &err);
        counts[t]++;
        last = (int)t > last ? (int)t : last;
    }
    for (int i = 0; i <= last; i++) // bincount stops at the largest id drawn
        printf("%d x %s\n", counts[i], words[i]);
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "34_generation",
                 "The course's chapter 15: chapter 33's AdamW model (FIGURES/verdict_gpt.safetensors,\n"
                 "or trained again) continues \"Every effort moves you\": greedy, then temperature 1.4\n"
                 "and top-k 25 after torch.manual_seed(123); then temperature on a 9-word vocabulary.",
                 0, CH_FIGURES | CH_SMOKE | CH_WEIGHTS);
    verdict v;
    mygpt_gpt *g = verdict_load_model(&ch, &v);
    printf("Chapter 33's model (AdamW, 60 steps) continues \"Every effort moves you\", 20 new tokens.\n");
    printf("\nGreedy (argmax):\n");
    mygpt_rng rng = {0};
    const mygpt_sampling greedy = {.temperature = 0};
    continue_prompt(&ch, g, &v, &rng, &greedy);
    printf("\nTemperature 1.4, top-k 25, torch.manual_seed(123):\n");
    mygpt_rng_seed(&rng, 123);
    const mygpt_sampling sampled = {.temperature = 1.4, .top_k = 25};
    continue_prompt(&ch, g, &v, &rng, &sampled);

    // LLMs-from-scratch chapter 5's toy vocabulary and next-token logits
    const float logits[9] = {4.51f, 0.89f, -1.90f, 6.75f, 1.63f, -1.62f, -1.89f, 6.28f, 1.79f};
    const double temps[3] = {1.0, 0.1, 5.0};
    printf("\nTemperature on a 9-word vocabulary (torch.multinomial(softmax(logits / T), 1), 1,000 draws):\n");
    for (int i = 0; i < 3; i++) {
        float scaled[9], probs[9];
        for (int k = 0; k < 9; k++)
            scaled[k] = logits[k] / (float)temps[i];
        mygpt_softmax_torch(probs, scaled, 9);
        printf("\nT = %g\n", temps[i]);
        print_sampled_tokens(&ch, probs);
    }
    mygpt_gpt_free(g);
    verdict_free(&v);
    return 0;
}
