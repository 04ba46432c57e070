/*
 * spam_chapter.h - what the chapters on the book's chapter 6 and appendix E (80, 81, 87)
 * read first: GPT-2's tokenizer and the three SpamDatasets from the data folder, and the
 * loaders 81 and 87 train with.
 */
#ifndef MYGPT_CHAPTERS_SPAM_CHAPTER_H
#define MYGPT_CHAPTERS_SPAM_CHAPTER_H

#include "chapter.h"
#include "finetune_setup.h"

/* The data folder's sms_spam_{train,validation,test}.csv and GPT-2's vocabulary (the chapter
 * says so and exits 77 when they are absent): *tok, and ds as the book's SpamDataset makes
 * them (the training set padded to its longest text, the other two to its length); dir
 * receives the folder. */
enum { SPAM_DIR_MAX = 4096 };
void spam_chapter_data(chapter *ch, mygpt_tokenizer **tok, mygpt_spam_dataset ds[3], char dir[SPAM_DIR_MAX]);

/* What chapters 81 and 87 train on: the tokenizer and datasets (spam_chapter_data); after
 * torch.manual_seed(123), the book's loaders of SPAM_BATCH (the training one shuffled,
 * drop_last), the generator rng going on from there; and room for one batch (x, y). */
enum { SPAM_BATCH = 8 };
typedef struct spam_run {
    char dir[SPAM_DIR_MAX]; /* the data folder */
    mygpt_tokenizer *tok;
    mygpt_spam_dataset ds[3];
    mygpt_rng rng;
    spam_loaders l;
    int64_t *x, y[SPAM_BATCH]; /* (SPAM_BATCH, the datasets' max_length), (SPAM_BATCH) */
} spam_run;
void spam_run_init(chapter *ch, spam_run *r);

/* The book's check before a model meets the data: the training texts' padded length fits
 * the context of the model (named as `model`), else the chapter refuses, naming the
 * training file and both sizes. */
void spam_run_fits(chapter *ch, const spam_run *r, int context, const char *model);
void spam_run_free(spam_run *r);

#endif
