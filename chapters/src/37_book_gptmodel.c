/*
 * 37_book_gptmodel - Raschka's *Build a Large Language Model (From Scratch)*, chapter 4
 * (sections 4.6 and 4.7): the book's GPTModel (--arch llms-from-scratch: out_proj's bias,
 * the tanh GELU, an untied out_head drawn last, dropout 0.1) with GPT_CONFIG_124M from
 * torch.manual_seed(123). A new model is in training mode, so the book's first forward
 * pass draws its dropout masks; its parameter accounting; then, in eval mode, the 10
 * greedy tokens after "Hello, I am" (generate_text_simple).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict.h"

/* the book's GPT_CONFIG_124M */
static const mygpt_config GPT_CONFIG_124M = {50257, 768, 12, 12, 1024, MYGPT_ARCH_LLMS_FROM_SCRATCH, 0, 0.1};

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "37_book_gptmodel",
                 "The book's chapter 4: GPTModel(GPT_CONFIG_124M) after torch.manual_seed(123), its first\n"
                 "forward pass in training mode (dropout), its parameters, and 10 greedy tokens\n"
                 "after \"Hello, I am\" in eval mode.",
                 0, 0);
    verdict v;
    verdict_load(&ch, &v); // the tokenizer (the text is not used here)
    mygpt_error err = {0};

    // batch = torch.stack([tokenizer.encode(txt1), tokenizer.encode(txt2)])
    const char *texts[2] = {"Every effort moves you", "Every day holds a"};
    int64_t batch[2 * 4];
    for (int i = 0; i < 2; i++) {
        int64_t *ids;
        size_t n;
        chapter_check(&ch, mygpt_encode(v.tok, texts[i], strlen(texts[i]), &ids, &n, &err), &err);
        if (n != 4) {
            fprintf(stderr, "%s: \"%s\" has %zu tokens, not the 4 torch.stack needs\n", ch.name, texts[i], n);
            return 1;
        }
        memcpy(batch + 4 * i, ids, 4 * sizeof *ids);
        free(ids);
    }
    const int64_t bshape[2] = {2, 4};
    printf("Input batch:\n ");
    ch_torch_i64(batch, 2, bshape);
    printf("\n");

    // torch.manual_seed(123); model = GPTModel(GPT_CONFIG_124M); out = model(batch)
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 123);
    mygpt_gpt *g;
    chapter_check(&ch, mygpt_gpt_create_from(&g, &GPT_CONFIG_124M, &rng, &err), &err);
    mygpt_trainer *tr;
    chapter_check(&ch, mygpt_trainer_create(&tr, g, &err), &err);
    tr->dropout_rng = &rng; // training mode: the dropouts draw from the generator
    chapter_check(&ch, mygpt_trainer_forward(tr, batch, NULL, 2, 4, NULL, &err), &err);
    const int64_t oshape[3] = {2, 4, g->config.vocab_size};
    printf("\nOutput shape: ");
    ch_size(3, oshape);
    printf("\n");
    ch_torch(tr->acts.logits, 3, oshape, "UnsafeViewBackward0");
    printf("\n");
    mygpt_trainer_free(tr);

    // total_params = sum(p.numel() for p in model.parameters())
    mygpt_param_counts pc;
    mygpt_gpt_counts(g, &pc);
    printf("Total number of parameters: ");
    ch_commas((long long)pc.total);
    printf("\n");
    // model.tok_emb.weight.shape, model.out_head.weight.shape: read off the state_dict
    const char *layers[2][2] = {{"Token embedding layer shape: ", "tok_emb.weight"},
                                {"\nOutput layer shape: ", "out_head.weight"}};
    for (int k = 0; k < 2; k++) {
        mygpt_state_entry e = {0};
        for (int j = 0; j < mygpt_state_dict_len(&g->config) && strcmp(e.name, layers[k][1]) != 0; j++)
            mygpt_state_dict_entry(&g->config, &g->params, j, &e);
        if (strcmp(e.name, layers[k][1]) != 0) {
            fprintf(stderr, "%s: the model has no %s\n", ch.name, layers[k][1]);
            return 1;
        }
        printf("%s", layers[k][0]);
        ch_size(e.ndim, e.shape);
    }
    printf("\nNumber of trainable parameters considering weight tying: ");
    ch_commas((long long)(pc.total - pc.head));
    printf("\nTotal size of the model: %.2f MB\n", (double)pc.total * 4 / (1024.0 * 1024.0));

    // model.eval(); generate_text_simple(model, encoded_tensor, max_new_tokens=10, ...)
    const char *start = "Hello, I am";
    int64_t *encoded, out[16];
    size_t n;
    chapter_check(&ch, mygpt_encode(v.tok, start, strlen(start), &encoded, &n, &err), &err);
    printf("encoded: [");
    for (size_t i = 0; i < n; i++)
        printf(i ? ", %lld" : "%lld", (long long)encoded[i]);
    const int64_t eshape[2] = {1, (int64_t)n};
    printf("]\nencoded_tensor.shape: ");
    ch_size(2, eshape);
    printf("\n");
    const mygpt_generation greedy = {.max_new = 10, .sampling = {0}, .eos = -1, .use_cache = 1};
    int nout;
    chapter_check(&ch, mygpt_generate(g, NULL, encoded, (int)n, &greedy, out, &nout, &err), &err);
    const int64_t gshape[2] = {1, nout};
    printf("Output: ");
    ch_torch_i64(out, 2, gshape);
    printf("\nOutput length: %d\n", nout);
    char *text;
    size_t len;
    chapter_check(&ch, mygpt_decode(v.tok, out, (size_t)nout, &text, &len, &err), &err);
    mygpt_strbuf shown = {0}; // tiktoken's decode: a cut character is U+FFFD
    chapter_check(&ch, mygpt_sb_append_replaced(&shown, text, len), &err);
    fwrite(shown.data, 1, shown.len, stdout);
    mygpt_sb_free(&shown);
    printf("\n");
    free(text);
    free(encoded);
    mygpt_gpt_free(g);
    verdict_free(&v);
    return 0;
}
