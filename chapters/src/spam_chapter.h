/*
 * spam_chapter.h - what the chapters on the book's chapter 6 and appendix E (80, 81, 87)
 * read first: GPT-2's tokenizer and the three SpamDatasets from the data folder.
 */
#ifndef MYGPT_CHAPTERS_SPAM_CHAPTER_H
#define MYGPT_CHAPTERS_SPAM_CHAPTER_H

#include "chapter.h"
#include "finetune_setup.h"

/* The data folder's sms_spam_{train,validation,test}.csv and GPT-2's vocabulary (the chapter
 * says so and exits 77 when they are absent): *tok, and ds as the book's SpamDataset makes
 * them (the training set padded to its longest text, the other two to its length). */
void spam_chapter_data(chapter *ch, mygpt_tokenizer **tok, mygpt_spam_dataset ds[3]);

#endif
