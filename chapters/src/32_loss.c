/*
 * 32_loss - the course's chapter 13 (announced at the end of document 000): the loss.
 * The chapter-12 GPT on "I love AI !" with the next tokens as targets, as PyTorch
 * prints F.cross_entropy; beside it ln V, the loss of a uniform guess; then an untrained
 * GPT-2-vocabulary model on the first the-verdict batch; then one backward pass and a
 * few gradients as PyTorch prints .grad.
 *
 * Needs the-verdict and the GPT-2 vocabulary (scripts/fetch-data.sh); without them it
 * says so and exits 77 (skipped).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "verdict.h"

static void print_loss(float loss)
{
    ch_torch(&loss, 0, NULL, "NllLossBackward0");
    printf("\n");
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "32_loss",
                 "The course's chapter 13: F.cross_entropy of the chapter-12 GPT (seed S) on \"I love\n"
                 "AI !\" with the next tokens as targets, ln V beside it, an untrained GPT-2-vocabulary\n"
                 "model (seed 123) on the first the-verdict batch, then one backward pass.",
                 0, CH_SEED);
    verdict v;
    verdict_load(&ch, &v);
    mygpt_error err = {0};

    // torch.manual_seed(S); gpt = GPT(4, 4, 2, 2, 64); ids = [[0, 1, 2, 3]] ("I love AI !")
    const mygpt_config small = {.vocab_size = 4, .embed_dim = 4, .num_heads = 2, .num_layers = 2,
                                .max_seq_len = 64};
    mygpt_gpt *g;
    chapter_check(&ch, mygpt_gpt_create(&g, &small, ch.seed, &err), &err);
    const int64_t ids[4] = {0, 1, 2, 3}, shape[2] = {1, 3};
    const int64_t *x = ids, *y = ids + 1; // inputs ids[:, :-1], targets ids[:, 1:]
    printf("inputs:  ");
    ch_torch_i64(x, 2, shape);
    printf("\ntargets: ");
    ch_torch_i64(y, 2, shape);
    printf("\nloss = F.cross_entropy(gpt(inputs).flatten(0, 1), targets.flatten())\n");
    float loss;
    mygpt_trainer *tr; // the gradients and what the backward keeps
    chapter_check(&ch, mygpt_trainer_create(&tr, g, &err), &err);
    chapter_check(&ch, mygpt_trainer_forward(tr, x, y, 1, 3, &loss, &err), &err);
    print_loss(loss);
    printf("ln V = ln %d = %.4f: the loss of a uniform guess over the vocabulary.\n",
           small.vocab_size, log((double)small.vocab_size));
    printf("A loss above it means the untrained model is confidently wrong somewhere:\n"
           "its N(0, 1) embeddings, tied to the head, make large logits.\n");

    // an untrained GPT(50257, 64, 4, 2, 32) on the first training batch (in order)
    const mygpt_config big = verdict_config(&v);
    mygpt_gpt *gb;
    chapter_check(&ch, mygpt_gpt_create(&gb, &big, VERDICT_SEED, &err), &err);
    chapter_check(&ch, mygpt_dataloader_batch(&v.train, 0, v.x, v.y, &err), &err);
    float big_loss;
    chapter_check(&ch, mygpt_gpt_loss(gb, v.x, v.y, VERDICT_BATCH, VERDICT_CONTEXT, &big_loss, &err), &err);
    printf("\nGPT(%d, %d, %d, %d, %d), torch.manual_seed(%d), on the first the-verdict batch (%d x %d):\n",
           big.vocab_size, big.embed_dim, big.num_heads, big.num_layers, big.max_seq_len, VERDICT_SEED,
           VERDICT_BATCH, VERDICT_CONTEXT);
    print_loss(big_loss);
    printf("ln V = ln %d = %.4f\n", big.vocab_size, log((double)big.vocab_size));

    // loss.backward() on the small model
    chapter_check(&ch, mygpt_trainer_backward(tr, &err), &err);
    const int64_t C = small.embed_dim, vshape[2] = {small.vocab_size, small.embed_dim};
    printf("\nloss.backward(), then:\n");
    printf("gpt.ln_f.gamma.grad\n");
    ch_torch(tr->grads.lnfw, 1, &C, NULL);
    printf("\ngpt.blocks[1].mlp.fc2.bias.grad\n");
    ch_torch(tr->grads.fc2b + C, 1, &C, NULL);
    printf("\ngpt.token_embedding.embedding.weight.grad (the tied head's gradient and the lookup's)\n");
    ch_torch(tr->grads.wte, 2, vshape, NULL);
    printf("\n");
    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
    mygpt_gpt_free(gb);
    verdict_free(&v);
    return 0;
}
