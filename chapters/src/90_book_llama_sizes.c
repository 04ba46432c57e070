/*
 * 90_book_llama_sizes - Raschka's LLMs-from-scratch, ch05/07_gpt_to_llama,
 * converting-gpt-to-llama2.ipynb, section 2: Llama2Model(LLAMA2_CONFIG_7B) (vocabulary 32000,
 * context 4096, width 4096, 32 heads, 32 layers, SwiGLU hidden size 11008, an untied output
 * head), counted, not built: its parameters (mygpt_param_count), then the notebook's
 * calc_model_memory_size in float32 and bfloat16, which counts every parameter twice (the
 * weight and its gradient) and adds the buffers its MultiHeadAttention registers in each
 * block: the causal mask (4096 x 4096) and RoPE's cos and sin (4096 x 128 each). What it
 * prints is what tools/reference_book_llama.py --sizes prints from the notebook's cells
 * (which builds the model with its Linear and Embedding weights on PyTorch's meta device).
 * The notebook's later cells load Meta's Llama-2-7b weights and tokenizer (a gated download)
 * and were not run here; with them it prints "Every effort has been made to ensure the
 * accuracy of the information contained in this website. However, the information contained
 * in this website is not" for the base model and, for Llama-2-7b-chat, "What do llamas eat?"
 * then "Llamas are herbivores, which means they eat plants for their food. They feed on a
 * variety" (chapter 91 tells a story with a small Llama 2 that is in the repository).
 */
#include <stdio.h>

#include "chapter.h"

/* LLAMA2_CONFIG_7B: the notebook's RoPE pairs channels half a head apart (Hugging Face's) */
static const mygpt_config LLAMA2_CONFIG_7B = {
    .vocab_size = 32000, .embed_dim = 4096, .num_heads = 32, .num_layers = 32, .max_seq_len = 4096,
    .arch = MYGPT_ARCH_LLAMA, .ffn_hidden = 11008, .rope = MYGPT_ROPE_HALVES, .untied_head = 1};

// lesson: memory
/* calc_model_memory_size: (parameters + their gradients + buffers) * bytes a value, in GiB.
 * The buffers are, per block, the causal mask (T, T) and RoPE's cos and sin (T, head size). */
static double model_memory_gb(const mygpt_config *cfg, uint64_t params, size_t bytes)
{
    const uint64_t T = (uint64_t)cfg->max_seq_len, hs = (uint64_t)(cfg->embed_dim / cfg->num_heads);
    const uint64_t buffers = (uint64_t)cfg->num_layers * (T * T + 2 * T * hs);
    return (double)((params + params + buffers) * bytes) / (1024.0 * 1024.0 * 1024.0);
}
// end lesson: memory

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "90_book_llama_sizes",
                 "GPT to Llama 2, section 2: Llama2Model(LLAMA2_CONFIG_7B)'s parameter count and the\n"
                 "notebook's memory estimate in float32 and bfloat16, counted, not allocated.",
                 0, 0);
    mygpt_error err = {0};
    // lesson: count
    mygpt_param_counts pc;
    chapter_check(&ch, mygpt_param_count(&LLAMA2_CONFIG_7B, &pc, &err), &err);
    printf("Total number of parameters: ");
    ch_commas((long long)pc.total);
    // end lesson: count
    printf("\n");
    printf("float32 (PyTorch default): %.2f GB\n",
           model_memory_gb(&LLAMA2_CONFIG_7B, pc.total, mygpt_weights_value_bytes(MYGPT_WEIGHTS_FP32)));
    printf("bfloat16: %.2f GB\n",
           model_memory_gb(&LLAMA2_CONFIG_7B, pc.total, mygpt_weights_value_bytes(MYGPT_WEIGHTS_BF16)));
    return 0;
}
