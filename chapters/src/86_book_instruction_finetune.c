/*
 * 86_book_instruction_finetune - Raschka's *Build a Large Language Model (From Scratch)*,
 * chapter 7 (sections 7.6, 7.7) as ch07/01_main-chapter-code/gpt_instruction_finetuning.py
 * runs it with --test_mode: its small test model (the book's GPTModel with emb_dim 12,
 * n_heads 2, n_layers 1, context_length 120, drop_rate 0.0, no qkv bias, drawn after
 * torch.manual_seed(123)) and the first 10 entries of each split. The DataLoaders
 * (batch 8, the training one shuffled with drop_last, custom_collate_fn with
 * allowed_max_length 1024), the initial losses over 5 batches, train_model_simple
 * (trainer/book_train.c: AdamW lr 5e-5, weight decay 0.1, 2 epochs, eval_freq 5,
 * eval_iter 5, a greedy sample of format_input(val_data[0]) after each epoch), then the
 * responses to the test entries (greedy, max_new_tokens 256, stopping at <|endoftext|>,
 * the text after the prompt without "### Response:", stripped) and the
 * instruction-data-with-response.json the book writes, printed. It prints what
 * tools/reference_book_ch7.py --finetune prints with PyTorch 1.13. --smoke: the same
 * with 8 new tokens a sample and a response.
 *
 * --gpt2 DIR: the book's own run, gpt_instruction_finetuning.py without --test_mode: the
 * model is the Hugging Face GPT-2 in DIR (model.safetensors and its config.json; GPT-2
 * medium, 355M, is the book's), every entry of each split (935, 55 and 110), the batches
 * cut to min(1024, the model's context). The book prints, in its notebook, the initial
 * losses 3.8259105682373047 and 3.7619349479675295, then a log from "Ep 1 (Step 000000):
 * Train loss 2.637, Val loss 2.626" to "Ep 2 (Step 000230): Train loss 0.299, Val loss
 * 0.657", and the 110 responses. Not run here: there are no GPT-2 weights on this machine
 * (what is checked is that the flag loads a Hugging Face folder and runs the same code).
 *
 * Needs the GPT-2 vocabulary and instruction-data.json in the data folder
 * (scripts/fetch-data.sh copies it from corpus/); absent, it says so and exits 77
 * (skipped; 1 under CI=true).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book_train.h"
#include "instruct_chapter.h"
#include "finetune_setup.h"


enum { TEST_MODE_ENTRIES = 10, BATCH = 8, ALLOWED = 1024 };

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "86_book_instruction_finetune",
                 "The book's chapter 7 (7.6, 7.7) as gpt_instruction_finetuning.py --test_mode runs it:\n"
                 "a small GPTModel (emb_dim 12, 2 heads, 1 layer, context 120) fine-tuned on 10\n"
                 "instruction entries with train_model_simple (AdamW lr 5e-5, 2 epochs), then its\n"
                 "greedy responses to 10 test entries as instruction-data-with-response.json.",
                 0, CH_SMOKE | CH_GPT2);
    char path[4200];
    mygpt_tokenizer *tok;
    instruct_chapter_data(&ch, &tok, path);
    mygpt_error err = {0};
    const int max_new_tokens = ch.smoke ? 8 : 256, sample_tokens = ch.smoke ? 8 : 50;

    mygpt_gpt *g = NULL;
    if (ch.gpt2) { // --gpt2: the folder's model, read before anything is printed
        chapter_check_flag(&ch, "--gpt2", finetune_model_load(&g, ch.gpt2, &err), &err);
        g->config.dropout = 0.0; // BASE_CONFIG's drop_rate
    }

    // the book's split; test_mode: train_data[:10], val_data[:10], test_data[:10]
    instruct_splits split;
    chapter_check(&ch, instruct_splits_read(&split, path, ch.gpt2 ? 0 : TEST_MODE_ENTRIES, &err), &err);
    instruct_print_lengths(stdout, &split);

    // torch.manual_seed(123); train_loader = DataLoader(InstructionDataset(train_data), batch_size=8,
    // collate_fn=partial(custom_collate_fn, allowed_max_length=1024), shuffle=True, drop_last=True);
    // val_loader the same over val_data, shuffle=False, drop_last=False
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 123);
    // the test_mode BASE_CONFIG; model = GPTModel(BASE_CONFIG) (right after the seed: the loaders draw
    // nothing yet); --gpt2: the folder's weights (nothing drawn)
    const mygpt_config cfg = book_test_mode_config(0);
    if (!ch.gpt2)
        chapter_check(&ch, mygpt_gpt_create_from(&g, &cfg, &rng, &err), &err);
    const size_t allowed = ch.gpt2 && (size_t)g->config.max_seq_len < ALLOWED ? (size_t)g->config.max_seq_len : ALLOWED;
    instruct_loaders l;
    chapter_check(&ch, instruct_loaders_init(&l, &split, tok, BATCH, allowed, 0, &err), &err);
    printf("Loaded model: %s\n", ch.gpt2 ? ch.gpt2 : "Small test model");
    printf("--------------------------------------------------\n");
    int64_t *x = chapter_alloc(&ch, l.room, sizeof *x), *y = chapter_alloc(&ch, l.room, sizeof *y);

    // with torch.no_grad(): calc_loss_loader(train_loader / val_loader, model, device, num_batches=5)
    chapter_check(&ch, instruct_print_initial_losses(stdout, g, &l, &rng, 5, x, y, &err), &err);

    // optimizer = AdamW(lr=0.00005, weight_decay=0.1); torch.manual_seed(123)
    // train_model_simple(..., num_epochs=2, eval_freq=5, eval_iter=5, start_context=format_input(val_data[0]))
    mygpt_trainer *tr;
    chapter_check(&ch, mygpt_trainer_create(&tr, g, &err), &err);
    mygpt_optimizer opt;
    mygpt_adamw_init(&opt, 5e-5);
    opt.weight_decay = 0.1;
    mygpt_rng_seed(&rng, 123);
    tr->dropout_rng = &rng; // model.train() (drop_rate 0.0: nothing drawn)
    int64_t *start = NULL;
    size_t n_start = 0;
    if (split.n_val)
        chapter_check(&ch, instruct_encode_prompt(tok, &split.val[0], &start, &n_start, &err), &err);
    const book_run run = {.epochs = 2, .eval_every = 5, .eval_batches = 5, .tok = tok, .prompt = start,
                          .n_prompt = n_start, .sample_tokens = sample_tokens};
    long steps;
    chapter_check(&ch, book_train_loaders(stdout, tr, &opt, &l.l_train, &l.l_train_eval, &l.l_val, &rng, &run, x, y,
                                          &steps, &err),
                  &err);
    mygpt_trainer_free(tr);
    printf("--------------------------------------------------\n");

    // for each test entry: generate(model, text_to_token_ids(format_input(entry)), max_new_tokens=256,
    // context_size=120, eos_id=50256); the response: generated_text[len(input_text):]
    // .replace("### Response:", "").strip()
    printf("Generating responses\n");
    char *json;
    size_t json_len;
    chapter_check(&ch, instruct_responses_json(g, tok, split.test, split.n_test, max_new_tokens, &json, &json_len, &err),
                  &err);
    printf("instruction-data-with-response.json:\n");
    fwrite(json, 1, json_len, stdout);
    printf("\n");

    free(json);
    free(start);
    free(x);
    free(y);
    mygpt_optimizer_free(&opt);
    mygpt_gpt_free(g);
    instruct_loaders_free(&l);
    instruct_splits_free(&split);
    mygpt_tokenizer_free(tok);
    return 0;
}
