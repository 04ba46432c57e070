/*
 * 39_quantization - after generation: the same model in fewer bytes. Decoding a token
 * reads every weight once, so bytes per weight set the speed (mygpt-bench --generate).
 * Chapter 33's AdamW model (its checkpoint in the figures folder, or trained again) is
 * stored three ways: as trained (fp32), rounded to bfloat16 (bf16), and in int8 groups
 * of 64 with a float32 scale each (int8; mygpt/quantize.h). For each the program
 * computes the bytes of weights a token reads, the loss on the-verdict's validation
 * part, and how often greedy continuations of eight validation prompts pick fp32's
 * tokens; then it checks the promise that makes a quantized model something one can
 * reason about: its logits are, bit for bit, those of the float32 model whose weights
 * are the dequantized values. Decoding speed goes to stderr (a timing is not part of the
 * expected text).
 *
 * tools/gen_chapter_expected.py prints the same from PyTorch, quantizing with
 * tools/quantize_reference.py's recipes; losses are compared to their last printed digit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/quantize.h"
#include "train_step.h"
#include "verdict.h"

enum { PROMPTS = 8, PROMPT_LEN = 8, NEW = 16 };

/* The greedy continuations of the PROMPTS prompts (validation windows k * 32, their
 * first PROMPT_LEN tokens), NEW tokens each, into out (PROMPTS x NEW) */
static void continuations(const chapter *ch, mygpt_gpt *g, const verdict *v, int64_t *out, double *seconds)
{
    const mygpt_generation greedy = {.max_new = NEW, .sampling = {.temperature = 0}, .eos = -1, .use_cache = 1};
    mygpt_error err = {0};
    const double t0 = chapter_now_s();
    for (int k = 0; k < PROMPTS; k++) {
        int64_t all[PROMPT_LEN + NEW];
        int n;
        chapter_check(ch, mygpt_generate(g, NULL, v->val_ids + (size_t)k * VERDICT_CONTEXT, PROMPT_LEN, &greedy, all,
                                         &n, &err), &err);
        memcpy(out + (size_t)k * NEW, all + PROMPT_LEN, NEW * sizeof *out);
    }
    *seconds = chapter_now_s() - t0;
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "39_quantization",
                 "Chapter 33's AdamW model with its weights in float32, bfloat16 and int8: the bytes a\n"
                 "token reads, the validation loss, greedy agreement with float32, and the bits of a\n"
                 "quantized model against the float32 model of its dequantized weights.",
                 0, CH_FIGURES | CH_SMOKE);
    verdict v;
    verdict_load(&ch, &v);
    mygpt_gpt *trained = verdict_model(&ch, &v);
    const mygpt_config cfg = trained->config;
    mygpt_error err = {0};
    printf("Chapter 33's AdamW model, GPT(%d, %d, %d, %d, %d), its weights stored three ways for\n"
           "inference: as trained (fp32), rounded to bfloat16 (bf16), and in int8 groups of %d with a\n"
           "float32 scale max|w| / 127 each (int8). Every matmul weight and the token embedding (the\n"
           "tied head) are stored so; LayerNorm parameters and the position embedding stay float32.\n"
           "Greedy: %d validation prompts of %d tokens, %d new tokens each.\n\n",
           cfg.vocab_size, cfg.embed_dim, cfg.num_heads, cfg.num_layers, cfg.max_seq_len, MYGPT_INT8_GROUP, PROMPTS,
           PROMPT_LEN, NEW);
    printf("%-7s %9s %9s %20s %15s\n", "weights", "MB/token", "val loss", "tokens as fp32's", "same text");
    int64_t ref[PROMPTS * NEW], got[PROMPTS * NEW];
    int identical[3] = {0};
    size_t compared[3] = {0};
    for (int w = MYGPT_WEIGHTS_FP32; w <= MYGPT_WEIGHTS_INT8; w++) {
        mygpt_gpt *g;
        chapter_check(&ch, mygpt_gpt_alloc(&g, &cfg, &err), &err);
        memcpy(g->params_memory, trained->params_memory, trained->num_parameters * sizeof(float));
        chapter_check(&ch, mygpt_gpt_quantize(g, (mygpt_weights)w, &err), &err);
        double loss = 0, seconds;
        mygpt_rng rng = {0};
        chapter_check(&ch, dp_val_loss(&(dp_team){0, 1, 0}, g, &v.val, &rng, v.x, v.y, &loss, &err), &err);
        continuations(&ch, g, &v, w == MYGPT_WEIGHTS_FP32 ? ref : got, &seconds);
        const double mb = mygpt_weights_bytes_per_token(&cfg, (mygpt_weights)w) / 1e6;
        if (w == MYGPT_WEIGHTS_FP32) {
            printf("%-7s %9.3f %9.3f %20s %15s\n", mygpt_weights_name(w), mb, loss, "-", "-");
        } else {
            int same = 0, whole = 0;
            for (int k = 0; k < PROMPTS; k++) {
                int all = 1;
                for (int t = 0; t < NEW; t++) {
                    same += got[k * NEW + t] == ref[k * NEW + t];
                    all &= got[k * NEW + t] == ref[k * NEW + t];
                }
                whole += all;
            }
            char tokens[32], texts[32];
            snprintf(tokens, sizeof tokens, "%d/%d", same, PROMPTS * NEW);
            snprintf(texts, sizeof texts, "%d/%d", whole, PROMPTS);
            printf("%-7s %9.3f %9.3f %20s %15s\n", mygpt_weights_name(w), mb, loss, tokens, texts);
            // the promise: the float32 model of the dequantized weights gives the same bits
            mygpt_gpt *twin;
            chapter_check(&ch, mygpt_gpt_alloc(&twin, &cfg, &err), &err);
            memcpy(twin->params_memory, g->params_memory, g->num_parameters * sizeof(float));
            const size_t n = (size_t)VERDICT_CONTEXT * cfg.vocab_size;
            chapter_check(&ch, mygpt_gpt_forward(g, v.val_ids, 1, VERDICT_CONTEXT, &err), &err);
            float *logits = chapter_alloc(&ch, n, sizeof *logits);
            memcpy(logits, g->acts.logits, n * sizeof *logits);
            chapter_check(&ch, mygpt_gpt_forward(twin, v.val_ids, 1, VERDICT_CONTEXT, &err), &err);
            identical[w] = memcmp(logits, twin->acts.logits, n * sizeof *logits) == 0;
            compared[w] = n;
            free(logits);
            mygpt_gpt_free(twin);
        }
        fprintf(stderr, "39_quantization: %s: %d greedy tokens in %.3f s, %.0f tokens/s (a model this small "
                        "is timed by its overheads; mygpt-bench --generate times GPT-2's shapes)\n",
                mygpt_weights_name(w), PROMPTS * NEW, seconds, PROMPTS * NEW / seconds);
        mygpt_gpt_free(g);
    }
    printf("\n");
    for (int w = MYGPT_WEIGHTS_BF16; w <= MYGPT_WEIGHTS_INT8; w++)
        printf("%s: logits on a validation window (%zu floats) against the float32 model of the\n"
               "dequantized weights: %s\n",
               mygpt_weights_name(w), compared[w], identical[w] ? "identical, bit for bit" : "DIFFERENT");
    const mygpt_config gpt2 = {50257, 768, 12, 12, 1024, MYGPT_ARCH_GPT2};
    printf("\nGPT-2 small reads %.1f MB of weights a token in fp32, %.1f in bf16, %.1f in int8.\n",
           mygpt_weights_bytes_per_token(&gpt2, MYGPT_WEIGHTS_FP32) / 1e6,
           mygpt_weights_bytes_per_token(&gpt2, MYGPT_WEIGHTS_BF16) / 1e6,
           mygpt_weights_bytes_per_token(&gpt2, MYGPT_WEIGHTS_INT8) / 1e6);
    mygpt_gpt_free(trained);
    verdict_free(&v);
    return 0;
}
