/*
 * gpt_experiment.h - the parameter-accounting part shared by document 000's GPT
 * chapters: build GPT(V, C, h, N, max_seq) with a seed, count its parameters by
 * module, and print the chapter's table.
 */
#ifndef MYGPT_GPT_EXPERIMENT_H
#define MYGPT_GPT_EXPERIMENT_H

#include "chapter.h"

/* Builds the model (exits with a message on error). */
mygpt_gpt *build_gpt(const chapter *ch, int V, int C, int h, int N, int max_seq);

/* Prints "Predicted: ... = a + b + c + d = total" from the formula, then the
 * counted table of the built model, then whether they agree. */
void print_predicted_vs_counted(const chapter *ch, const mygpt_gpt *gpt);

/* Prints the six-line table of document 000's main. */
void print_param_table(const mygpt_gpt *gpt);

#endif
