/*
 * base/draws.h - private to the library: moving a generator on without computing the
 * values (a model whose weights are loaded still draws as GPT.__init__ did).
 */
#ifndef MYGPT_BASE_DRAWS_H
#define MYGPT_BASE_DRAWS_H

#include <stddef.h>

#include "mygpt/error.h"

/* The generator as after uniform_ (rng.c) or normal_ (normal.c) over n floats, the
 * floats not computed: the big draws are skipped as 32-bit outputs; normal_'s small
 * path (n < 16) keeps a Box-Muller partner pending, so those samples are drawn. */
struct mygpt_rng;
void mygpt_uniform_skip(struct mygpt_rng *rng, size_t n);
mygpt_status mygpt_normal_skip(struct mygpt_rng *rng, size_t n, mygpt_error *err);

#endif
