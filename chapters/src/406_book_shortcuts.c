/*
 * 406_book_shortcuts - the book's chapter 4 (4.4 Adding shortcut connections): the
 * five-layer ExampleDeepNeuralNetwork([3, 3, 3, 3, 3, 1]) after torch.manual_seed(123),
 * without and then with shortcuts; for each, one backward pass of the MSE loss of the
 * input [1, 0, -1] against 0 and the mean absolute gradient of every layer's weight.
 */
#include <stdio.h>

#include "book_gpt.h"

/* print_gradients(model, x): the mean of |grad| of each layer's weight */
static void print_gradients(const chapter *ch, mygpt_shortcut_net *net, const float *x)
{
    float loss;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_shortcut_net_grads(net, x, &loss, &err), &err);
    for (int l = 0; l < net->n_layers; l++) {
        const int n = net->sizes[l] * net->sizes[l + 1];
        float abs_grad[MYGPT_SHORTCUT_MAX_WIDTH * MYGPT_SHORTCUT_MAX_WIDTH];
        for (int i = 0; i < n; i++) // param.grad.abs()
            abs_grad[i] = net->dweight[l][i] < 0 ? -net->dweight[l][i] : net->dweight[l][i];
        printf("layers.%d.0.weight has gradient mean of ", l);
        ch_pyfloat((double)mygpt_mean_torch(abs_grad, (size_t)n)); // .mean().item()
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "406_book_shortcuts",
                 "The book's chapter 4, section 4.4: the gradients of a deep network without and with\n"
                 "shortcut connections (torch.manual_seed(123) before each).",
                 123, CH_SEED);
    const int layer_sizes[6] = {3, 3, 3, 3, 3, 1};
    const float sample_input[3] = {1.0f, 0.0f, -1.0f};
    mygpt_error err = {0};
    for (int use_shortcut = 0; use_shortcut <= 1; use_shortcut++) {
        mygpt_rng rng = {0};
        mygpt_rng_seed(&rng, ch.seed);
        mygpt_shortcut_net net;
        chapter_check(&ch, mygpt_shortcut_net_init(&net, layer_sizes, 5, use_shortcut, &rng, &err), &err);
        print_gradients(&ch, &net, sample_input);
    }
    return 0;
}
