/* instruct_chapter.c - the instruction chapters' data (instruct_chapter.h). */
#include "instruct_chapter.h"

#include <stdio.h>

void instruct_chapter_data(chapter *ch, mygpt_tokenizer **tok, char path[4200])
{
    static const char *const files[3] = {"encoder.json", "vocab.bpe", "instruction-data.json"};
    char dir[4096];
    chapter_data_dir(ch, dir, sizeof dir, files, 3);
    snprintf(path, 4200, "%s/%s", dir, files[2]);
    mygpt_error err = {0};
    chapter_check(ch, mygpt_tokenizer_load_dir(tok, dir, &err), &err);
}
