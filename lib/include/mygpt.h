/*
 * mygpt.h - the whole public API of libmygpt in one include.
 *
 *   mygpt/error.h   status codes and the caller-owned error struct
 *   mygpt/rng.h     PyTorch's CPU generator: manual_seed, randn, rand, randint,
 *                   randperm, nn.Embedding / nn.Linear initialisers
 *   mygpt/print.h   print(tensor) as PyTorch and numpy show it, Python number formats
 */
#ifndef MYGPT_H
#define MYGPT_H

#include "mygpt/error.h"
#include "mygpt/print.h"
#include "mygpt/rng.h"

#endif
