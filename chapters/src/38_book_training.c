/*
 * 38_book_training - Raschka's *Build a Large Language Model (From Scratch)*, chapter 5:
 * the book's GPTModel (GPT_CONFIG_124M with a context of 256) pretrained on the-verdict
 * as train_model_simple does it (trainer/book_train.c: AdamW lr 4e-4, weight decay 0.1, 10
 * epochs of batches of 2, dropout in training mode, an evaluation every 5 steps and a
 * greedy sample after each epoch), its log line for line; then section 5.3: 25 greedy
 * tokens in eval mode, and torch.manual_seed(123) with temperature 1.4 and top-k 25.
 * --smoke: the same code on a small model for one epoch (the sanitizer stage's run).
 */
#include <stdio.h>
#include <stdlib.h>

#include "book_train.h"
#include "verdict.h"

/* print("Output text:\n", token_ids_to_text(ids)) */
static void output_text(const chapter *ch, const mygpt_tokenizer *tok, const int64_t *ids, int n)
{
    char *text;
    size_t len;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_decode(tok, ids, (size_t)n, &text, &len, &err), &err);
    printf("Output text:\n ");
    mygpt_strbuf shown = {0}; // tiktoken's decode: a cut character is U+FFFD
    chapter_check(ch, mygpt_sb_append_replaced(&shown, text, len), &err);
    fwrite(shown.data, 1, shown.len, stdout);
    mygpt_sb_free(&shown);
    printf("\n");
    free(text);
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "38_book_training",
                 "The book's chapter 5: GPTModel (GPT_CONFIG_124M, context 256) trained on the-verdict\n"
                 "for 10 epochs as train_model_simple does, its log and samples; then greedy and\n"
                 "temperature-1.4, top-k-25 text. Takes minutes (a 162M-parameter model, 90 steps).",
                 0, CH_SMOKE);
    verdict v;
    verdict_load(&ch, &v);
    mygpt_error err = {0};
    // GPT_CONFIG_124M with context_length 256; --smoke: a small model, one epoch
    const mygpt_config cfg = ch.smoke ? (mygpt_config){50257, 64, 4, 2, 256, MYGPT_ARCH_LLMS_FROM_SCRATCH, 0, 0.1}
                                      : (mygpt_config){50257, 768, 12, 12, 256, MYGPT_ARCH_LLMS_FROM_SCRATCH, 0, 0.1};
    const size_t B = 2, T = 256;

    // create_dataloader_v1(train_data, batch_size=2, max_length=256, stride=256, drop_last=True,
    // shuffle=True) and the validation loader (drop_last=False, shuffle=False)
    book_data d;
    book_data_init(&ch, &v, B, T, &d);

    // torch.manual_seed(123); model = GPTModel(...); optimizer = AdamW(lr=0.0004, weight_decay=0.1)
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 123);
    mygpt_gpt *g;
    mygpt_trainer *tr;
    chapter_check(&ch, mygpt_gpt_create_from(&g, &cfg, &rng, &err), &err);
    chapter_check(&ch, mygpt_trainer_create(&tr, g, &err), &err);
    tr->dropout_rng = &rng; // model.train()
    mygpt_optimizer opt;
    mygpt_adamw_init(&opt, 4e-4);
    opt.weight_decay = 0.1;

    // train_model_simple(..., num_epochs=10, eval_freq=5, eval_iter=5,
    //                    start_context="Every effort moves you", tokenizer=tokenizer)
    const book_run run = {.epochs = ch.smoke ? 1 : 10, .eval_every = 5, .eval_batches = 5, .tok = v.tok,
                          .prompt = d.prompt, .n_prompt = d.n_prompt, .sample_tokens = ch.smoke ? 5 : 50,
                          .progress = stderr}; // how far, and how long is left
    long steps;
    chapter_check(&ch, book_train(stdout, tr, &opt, &d.train, &d.val, &rng, &run, d.x, d.y, &steps, &err), &err);
    mygpt_trainer_free(tr);

    // model.eval(); generate_text_simple(..., max_new_tokens=25, context_size=256)
    int64_t out[64];
    int nout;
    const mygpt_generation greedy = {.max_new = ch.smoke ? 3 : 25, .sampling = {0}, .eos = -1, .use_cache = 1};
    chapter_check(&ch, mygpt_generate(g, NULL, d.prompt, (int)d.n_prompt, &greedy, out, &nout, &err), &err);
    output_text(&ch, v.tok, out, nout);
    // torch.manual_seed(123); generate(..., max_new_tokens=15, top_k=25, temperature=1.4)
    mygpt_rng_seed(&rng, 123);
    const mygpt_generation sampled = {.max_new = ch.smoke ? 3 : 15, .sampling = {.temperature = 1.4, .top_k = 25},
                                      .eos = -1, .use_cache = 1};
    chapter_check(&ch, mygpt_generate(g, &rng, d.prompt, (int)d.n_prompt, &sampled, out, &nout, &err), &err);
    output_text(&ch, v.tok, out, nout);

    mygpt_optimizer_free(&opt);
    book_data_free(&d);
    mygpt_gpt_free(g);
    verdict_free(&v);
    return 0;
}
