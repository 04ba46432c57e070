/*
 * 409_book_generate - the book's chapter 4 (4.7 Generating text): "Hello, I am" encoded,
 * and generate_text_simple's 6 greedy tokens after it from GPTModel(GPT_CONFIG_124M)
 * (torch.manual_seed(123), model.eval()), as ids and as text. The notebook's code asks
 * for 6 tokens; chapter 37 shows the book's 4.6-4.7 with the printed book's 10.
 */
#include <stdio.h>
#include <stdlib.h>

#include "book_text.h"

/* the book's GPT_CONFIG_124M */
static const mygpt_config GPT_CONFIG_124M = {50257, 768, 12, 12, 1024, MYGPT_ARCH_LLMS_FROM_SCRATCH, 0, 0.1};

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "409_book_generate",
                 "The book's chapter 4, section 4.7: 6 greedy tokens after \"Hello, I am\" from\n"
                 "GPTModel(GPT_CONFIG_124M) after torch.manual_seed(123), in eval mode.",
                 123, CH_SEED);
    enum { MAX_NEW_TOKENS = 6 };
    mygpt_tokenizer *tok = book_gpt2(&ch);
    size_t n;
    int64_t *encoded = book_encode(&ch, tok, "Hello, I am", &n);
    printf("encoded: ");
    py_ints(encoded, n);
    printf("\nencoded_tensor.shape: "); // torch.tensor(encoded).unsqueeze(0)
    ch_size(2, (int64_t[]){1, (int64_t)n});
    printf("\n");

    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    mygpt_gpt *model;
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_gpt_create_from(&model, &GPT_CONFIG_124M, &rng, &err), &err);
    // model.eval(); out = generate_text_simple(model, encoded_tensor, 6, context_length)
    const mygpt_generation greedy = {.max_new = MAX_NEW_TOKENS, .sampling = {0}, .eos = -1, .use_cache = 1};
    int64_t out[64];
    int nout;
    chapter_check(&ch, mygpt_generate(model, NULL, encoded, (int)n, &greedy, out, &nout, &err), &err);
    printf("Output: ");
    ch_torch_i64(out, 2, (int64_t[]){1, nout});
    printf("\nOutput length: %d\n", nout);
    book_print_decoded(&ch, tok, out, (size_t)nout); // tokenizer.decode(out.squeeze(0).tolist())
    printf("\n");
    mygpt_gpt_free(model);
    free(encoded);
    mygpt_tokenizer_free(tok);
    return 0;
}
