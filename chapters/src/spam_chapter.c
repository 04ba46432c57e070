/* spam_chapter.c - the spam chapters' data (spam_chapter.h). */
#include "spam_chapter.h"

#include <stdlib.h>

#include "finetune_setup.h"

void spam_chapter_data(chapter *ch, mygpt_tokenizer **tok, mygpt_spam_dataset ds[3], char dir[SPAM_DIR_MAX])
{
    const char *const files[5] = {SPAM_FILES[0], SPAM_FILES[1], SPAM_FILES[2], "encoder.json", "vocab.bpe"};
    chapter_data_dir(ch, dir, SPAM_DIR_MAX, files, 5);
    mygpt_error err = {0};
    chapter_check(ch, mygpt_tokenizer_load_dir(tok, dir, &err), &err);
    // train_dataset = SpamDataset(csv_file="train.csv", max_length=None, tokenizer=tokenizer)
    // val_dataset, test_dataset: max_length=train_dataset.max_length
    chapter_check(ch, spam_datasets_load(ds, dir, *tok, 0, &err), &err);
}

void spam_run_init(chapter *ch, spam_run *r)
{
    mygpt_error err = {0};
    spam_chapter_data(ch, &r->tok, r->ds, r->dir);
    r->rng = (mygpt_rng){0};
    mygpt_rng_seed(&r->rng, 123);
    chapter_check(ch, spam_loaders_init(&r->l, r->ds, SPAM_BATCH, &err), &err);
    r->x = chapter_alloc(ch, SPAM_BATCH * r->ds[0].max_length, sizeof *r->x);
}

void spam_run_fits(chapter *ch, const spam_run *r, int context, const char *model)
{
    // assert train_dataset.max_length <= model.pos_emb.weight.shape[0]
    if (r->ds[0].max_length > (size_t)context)
        chapter_refuse(ch, "%s/%s: its texts are padded to %zu tokens, more than %s's context of %d", r->dir,
                       SPAM_FILES[0], r->ds[0].max_length, model, context);
}

void spam_run_free(spam_run *r)
{
    free(r->x);
    spam_loaders_free(&r->l);
    spam_datasets_free(r->ds);
    mygpt_tokenizer_free(r->tok);
}
