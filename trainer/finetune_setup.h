/*
 * finetune_setup.h - what Raschka's *Build a Large Language Model (From Scratch)* sets up
 * around its two fine-tunings, once for every program that runs them: chapter 6's
 * SpamDatasets, their DataLoaders, the accuracies and classify_review (chapters 80 and 81,
 * `mygpt finetune --task classify`); chapter 7's split of the instruction data, its
 * DataLoaders, the initial losses and the greedy responses to the test set (chapters 85 and
 * 86, tests/test_instruct_finetune.c, `mygpt finetune --task instruct`); appendix E's LoRA
 * counts and wrapping (chapter 87, `mygpt finetune --lora`).
 */
#ifndef MYGPT_FINETUNE_SETUP_H
#define MYGPT_FINETUNE_SETUP_H

#include <stdio.h>

#include "book_train.h"
#include "mygpt/data.h"
#include "mygpt/tokenizer.h"
#include "mygpt/train.h"

/* The model a fine-tuning starts from: path is a checkpoint or a training state (what
 * mygpt_model_load reads), or a
 * Hugging Face GPT-2 folder (path/model.safetensors and its config.json). MYGPT_EINVAL,
 * naming the file, for a vocabulary other than GPT-2's 50257 tokens (the book's data are
 * GPT-2's tokens) or quantized weights (training needs float32); the loader's errors. */
mygpt_status finetune_model_load(mygpt_gpt **out, const char *path, mygpt_error *err);

/* The GPTModel both scripts build with --test_mode: vocabulary 50257, context 120, emb_dim
 * 12, 2 heads, 1 layer, no qkv bias, no dropout; with a head of num_classes (0: the
 * language model's). */
mygpt_config book_test_mode_config(int num_classes);

/* ---- chapter 6: the SMS spam texts ----------------------------------------------------- */

/* The book's three files, in the order train, validation, test. */
extern const char *const SPAM_FILES[3];

/* The classifier's classes: 0 not spam, 1 spam */
#define SPAM_CLASSES 2

/* SpamDataset of each file in dir: the training one cut and padded to max_length (0: the
 * book's None, its longest text), validation and test to the training one's max_length, all
 * padded with <|endoftext|>; every label of every file below SPAM_CLASSES. On failure
 * nothing is left to free. The library's errors (naming the file and line), MYGPT_EINVAL
 * for a path too long. */
mygpt_status spam_datasets_load(mygpt_spam_dataset ds[3], const char *dir, const mygpt_tokenizer *tok,
                                size_t max_length, mygpt_error *err);
void spam_datasets_free(mygpt_spam_dataset ds[3]);

/* The book's four loaders of batch_size rows: train (shuffled, drop_last), train_eval (the
 * same DataLoader's own iter() for the evaluations), val and test (in order, keeping the last
 * short batch). */
typedef struct spam_loaders {
    mygpt_spam_loader train, train_eval, val, test;
} spam_loaders;
mygpt_status spam_loaders_init(spam_loaders *l, const mygpt_spam_dataset ds[3], size_t batch_size, mygpt_error *err);
void spam_loaders_free(spam_loaders *l);

/* calc_accuracy_loader over train_eval, val and test (num_batches each; 0: all), printed as
 * the book prints them: "Training accuracy: 97.21%", "Validation accuracy: ...", "Test
 * accuracy: ...". x, y: room for one batch. */
mygpt_status spam_print_accuracies(FILE *out, mygpt_gpt *g, spam_loaders *l, mygpt_rng *rng, size_t num_batches,
                                   int64_t *x, int64_t *y, mygpt_error *err);

/* calc_loss_loader over the same three, printed as "Training loss: 0.xxx" ... */
mygpt_status spam_print_losses(FILE *out, mygpt_gpt *g, spam_loaders *l, mygpt_rng *rng, size_t num_batches,
                               int64_t *x, int64_t *y, mygpt_error *err);

/* The book's chapter-6 run after its set-up (section 6.7; appendix E's too): torch.manual_seed(123);
 * AdamW(model.parameters(), lr, weight_decay=0.1); train_classifier_simple(num_epochs=epochs,
 * eval_freq=50, eval_iter=5) printing its log; "Examples seen: N"; then the accuracies over
 * every batch. tr trains what its mask says. x, y: room for one batch. */
mygpt_status spam_finetune_print(FILE *out, mygpt_trainer *tr, spam_loaders *l, mygpt_rng *rng, double lr,
                                 long epochs, int64_t *x, int64_t *y, mygpt_error *err);

/* The book's chapter-6 model from a language model lm (any architecture, not changed): its
 * weights, the output head replaced by nn.Linear(emb_dim, num_classes) drawn after
 * torch.manual_seed(123) as the book draws it. *out is new; MYGPT_EINVAL for num_classes < 1
 * or an lm that already has a classification head, MYGPT_ENOMEM. */
mygpt_status classifier_from_lm(mygpt_gpt **out, const mygpt_gpt *lm, int num_classes, mygpt_error *err);

/* classify_review(text, model, tokenizer, max_length): the text's tokens cut to
 * min(max_length, the model's context) and padded with <|endoftext|> to max_length, the
 * argmax of the last position's logits in *label (the book: 1 is "spam") and, when prob
 * is not NULL, its softmax probability in *prob. MYGPT_EINVAL when max_length exceeds the
 * model's context (the padded row would not fit), MYGPT_ERANGE when the logits are not all
 * finite (finite weights that overflow). */
mygpt_status classify_review(mygpt_gpt *g, const mygpt_tokenizer *tok, const char *text, size_t max_length,
                             int *label, double *prob, mygpt_error *err);

/* ---- appendix E: LoRA --------------------------------------------------------------------- */

/* Appendix E's (and exercise 7.4's) three counts around replace_linear_with_lora, each
 * summed over a trainer's mask as the book sums requires_grad: "Total trainable parameters
 * before: 124,441,346" (nothing frozen), "... after: 0" (every parameter frozen); then g gets
 * adapters of rank and alpha, each A drawn from rng (mygpt_lora_add), *tr a trainer of them
 * alone (mygpt_trainer_freeze_for_lora), and "Total trainable LoRA parameters: 2,666,528". */
mygpt_status lora_wrap_print(FILE *out, mygpt_gpt *g, int rank, double alpha, mygpt_rng *rng, mygpt_trainer **tr,
                             mygpt_error *err);

/* f"Total trainable {what}: {n:,}" */
void print_trainable_count(FILE *out, const char *what, unsigned long long n);

/* ---- chapter 7: the instruction data ---------------------------------------------------- */

/* instruction-data.json and the book's 85 / 5 / 10 % split in file order; with limit > 0
 * each part cut to its first limit entries (gpt_instruction_finetuning.py --test_mode: 10).
 * An entry kept in any part that tokenizer.encode would refuse is an error naming the file
 * and the entry's index in it (mygpt_instruct_data_check). */
typedef struct instruct_splits {
    mygpt_instruct_data data;
    const mygpt_instruct_entry *train, *test, *val;
    size_t n_train, n_test, n_val;
} instruct_splits;
mygpt_status instruct_splits_read(instruct_splits *s, const char *path, size_t limit, mygpt_error *err);
void instruct_splits_free(instruct_splits *s);

/* print("Training set length:", len(train_data)), the validation and test sets' too, then
 * the book's line of 50 dashes. */
void instruct_print_lengths(FILE *out, const instruct_splits *s);

/* InstructionDataset of the training and validation parts and the book's loaders over
 * them (custom_collate_fn with allowed_max_length, 0: None; the prompts masked in the
 * targets with mask, exercise 7.2): train (shuffled, drop_last), train_eval (its own
 * iter() for the evaluations), val (in order); as book_loaders for book_train_loaders;
 * room: the tokens of the largest batch any of them gives. Lives where it was made (the
 * book_loaders point into it). */
typedef struct instruct_loaders {
    mygpt_instruct_dataset train_ds, val_ds;
    mygpt_instruct_loader train, train_eval, val;
    book_loader l_train, l_train_eval, l_val;
    size_t room;
} instruct_loaders;
mygpt_status instruct_loaders_init(instruct_loaders *l, const instruct_splits *s, const mygpt_tokenizer *tok,
                                   size_t batch_size, size_t allowed_max_length, int mask, mygpt_error *err);
void instruct_loaders_free(instruct_loaders *l);

/* The book's "Initial losses" with torch.no_grad(): calc_loss_loader over train_eval and
 * val, num_batches each, printed with Python's repr of the float:
 *   Initial losses
 *      Training loss: 3.8259105682373047
 *      Validation loss: 3.7619349479675295 */
mygpt_status instruct_print_initial_losses(FILE *out, mygpt_gpt *g, instruct_loaders *l, mygpt_rng *rng,
                                           size_t num_batches, int64_t *x, int64_t *y, mygpt_error *err);

/* tokenizer.encode(format_input(entry)): *ids malloc'd, *n of them. */
mygpt_status instruct_encode_prompt(const mygpt_tokenizer *tok, const mygpt_instruct_entry *e, int64_t **ids,
                                    size_t *n, mygpt_error *err);

/* The book's response to one entry: generate(model, format_input(entry), max_new_tokens,
 * context_size, eos_id=50256), greedy (use_cache: with the KV cache, else the whole window
 * every step: the same tokens), the text after the prompt without "### Response:",
 * stripped, in *response (malloc'd); the new tokens in *new_ids (malloc'd; NULL: not
 * kept), *n_new of them. */
mygpt_status instruct_respond(mygpt_gpt *g, const mygpt_tokenizer *tok, const mygpt_instruct_entry *e, int max_new,
                              int use_cache, char **response, int64_t **new_ids, size_t *n_new, mygpt_error *err);

/* instruct_respond to each of the n entries, then what the book writes into
 * instruction-data-with-response.json (json.dump(test_data, indent=4) with each entry's
 * "model_response"): *json malloc'd, *len bytes. */
mygpt_status instruct_responses_json(mygpt_gpt *g, const mygpt_tokenizer *tok, const mygpt_instruct_entry *entries,
                                     size_t n, int max_new, char **json, size_t *len, mygpt_error *err);

#endif
