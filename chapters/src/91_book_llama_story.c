/*
 * 91_book_llama_story - after converting-gpt-to-llama2.ipynb's last section, which loads
 * Meta's Llama-2-7b (not run here: a gated download of 13 GB): a Llama 2 that is in the
 * repository tells a story. corpus/llama/stories260K.bin is llama2.c's stories260K (Andrej
 * Karpathy trained it on TinyStories: width 64, 5 layers, 8 query heads sharing 4 key/value
 * heads, SwiGLU hidden size 172, vocabulary 512, context 512; llama2.c's interleaved RoPE),
 * tok512.bin its tokenizer. The story is sampled as llama2.c's run.c samples it with `-t 1.0
 * -p 0.9 -s 133742` (temperature 1, top-p 0.9, its xorshift generator seeded 133742, 256
 * positions), through the library as `mygpt generate --tokenizer` does; its expected output
 * is the story llama2.c's doc/stories260K.md publishes for those flags, as run.c prints it
 * (tools/reference_book_llama.py --story reads it from tests/golden/llama2c/run.txt, which
 * tools/reference_llama2c.py writes from run.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "chapter.h"

/* The files in the data folder (scripts/fetch-data.sh copies corpus/llama/ there), found as
 * every chapter finds its data: $MYGPT_DATA, else data/ beside the build */
static const char *const FILES[2] = {"llama/stories260K.bin", "llama/tok512.bin"};

/* Prints next's piece as run.c's safe_printf does (a raw byte only when printable). */
static int print_piece(int64_t prev, int64_t next, void *tok)
{
    const char *piece = NULL;
    if (mygpt_sp_piece(tok, (int)prev, (int)next, &piece, NULL) == MYGPT_OK && mygpt_sp_piece_printable(piece))
        fputs(piece, stdout);
    return 0;
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "91_book_llama_story",
                 "A Llama 2 from the repository tells a story: llama2.c's stories260K sampled as run.c\n"
                 "does with temperature 1.0, top-p 0.9 and seed 133742 (llama2.c's xorshift generator).",
                 133742, CH_SEED | CH_SEED_RUNC);
    // run.c reads its -s with atoi, glibc's (int)strtol: the number clamped to a long, its
    // low 32 bits as an int, widened with its sign; 0 means "seed from the clock", which no
    // chapter can reproduce
    const long as_long = ch.seed_text ? strtol(ch.seed_text, NULL, 10) : (long)ch.seed;
    const int32_t seed32 = (int32_t)(uint32_t)(unsigned long)as_long;
    if (seed32 == 0)
        chapter_refuse(&ch, "--seed %s is 0 as run.c reads it (an int): run.c would seed from the clock; "
                            "choose another", ch.seed_text ? ch.seed_text : "0");
    const uint64_t seed = (uint64_t)(int64_t)seed32;
    mygpt_error err = {0};
    char dir[4096], model[4200], tokenizer[4200];
    chapter_data_dir(&ch, dir, sizeof dir, FILES, 2);
    snprintf(model, sizeof model, "%s/%s", dir, FILES[0]);
    snprintf(tokenizer, sizeof tokenizer, "%s/%s", dir, FILES[1]);
    // lesson: story
    mygpt_gpt *g = NULL;
    chapter_check(&ch, mygpt_llama2c_load(&g, model, &err), &err); // run.c's checkpoint
    mygpt_sp_tokenizer *tok = NULL;
    chapter_check(&ch, mygpt_sp_load(&tok, tokenizer, g->config.vocab_size, &err), &err);
    mygpt_llama2c_sampler sampler = {0};
    chapter_check(&ch, mygpt_llama2c_sampler_init(&sampler, g->config.vocab_size, 1.0f, 0.9f, seed, &err), &err);
    const int64_t prompt[1] = {1}; // an empty prompt: BOS only
    int positions = 0;
    chapter_check(&ch, mygpt_generate_llama2c(g, &sampler, prompt, 1, 256, print_piece, tok, &positions, &err),
                  &err);
    printf("\n");
    // end lesson: story
    mygpt_llama2c_sampler_free(&sampler);
    mygpt_sp_free(tok);
    mygpt_gpt_free(g);
    return 0;
}
