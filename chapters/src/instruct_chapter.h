/*
 * instruct_chapter.h - what the chapters on the book's chapter 7 (85, 86) read first:
 * GPT-2's tokenizer and instruction-data.json from the data folder.
 */
#ifndef MYGPT_CHAPTERS_INSTRUCT_CHAPTER_H
#define MYGPT_CHAPTERS_INSTRUCT_CHAPTER_H

#include "chapter.h"

/* GPT-2's vocabulary into *tok and the path of instruction-data.json into path, both from
 * the data folder (the chapter says so and exits 77 when they are absent). */
void instruct_chapter_data(chapter *ch, mygpt_tokenizer **tok, char path[4200]);

#endif
