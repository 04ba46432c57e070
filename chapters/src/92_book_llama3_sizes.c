/*
 * 92_book_llama3_sizes - Raschka's LLMs-from-scratch, ch05/07_gpt_to_llama,
 * converting-llama2-to-llama3.ipynb: what changes from Llama 2 to Llama 3, counted. Grouped-
 * query attention first: MultiHeadAttention and GroupedQueryAttention of width 4096 with 32
 * heads (8 key/value groups), their weight shapes and parameter counts; then Llama3Model of
 * LLAMA3_CONFIG_8B (vocabulary 128256, context 8192, SwiGLU hidden size 14336, 8 key/value
 * groups, RoPE base 500000), its count and the notebook's calc_model_memory_size (parameters
 * twice, plus the cos and sin buffers the model registers once); Llama 3.1 8B (the same
 * weights, context 131072 by RoPE frequency scaling) and Llama 3.2 1B (width 2048, 16 layers,
 * hidden size 8192), with its count less the token embedding its output head shares. Nothing
 * is allocated. What it prints is what tools/reference_book_llama.py --llama3-sizes prints
 * from the notebook's cells (which skip the two attention cells' forward pass on an unseeded
 * batch: nothing of it is printed). The notebook's other cells need Meta's weights and
 * tokenizers (gated downloads) and were not run; with them it prints, for Llama 3 8B and
 * 3.1 8B, "Every effort has been made to trace copyright holders and to obtain their
 * permission for the use of copyright material. The publisher apologizes for any", and for
 * 3.2 1B "Every effort is made to ensure that the information on this website is accurate
 * and up to date. However, the information is provided without any".
 */
#include <stdio.h>

#include "chapter.h"

/* the notebook's configurations (RoPE pairs channels half a head apart, as Hugging Face's) */
static const mygpt_config LLAMA3_CONFIG_8B = {
    .vocab_size = 128256, .embed_dim = 4096, .num_heads = 32, .num_layers = 32, .max_seq_len = 8192,
    .arch = MYGPT_ARCH_LLAMA, .num_kv_heads = 8, .ffn_hidden = 14336, .rope = MYGPT_ROPE_HALVES, .untied_head = 1};
static const mygpt_config LLAMA31_CONFIG_8B = {
    .vocab_size = 128256, .embed_dim = 4096, .num_heads = 32, .num_layers = 32, .max_seq_len = 131072,
    .arch = MYGPT_ARCH_LLAMA, .num_kv_heads = 8, .ffn_hidden = 14336, .rope = MYGPT_ROPE_HALVES, .untied_head = 1};
static const mygpt_config LLAMA32_CONFIG_1B = {
    .vocab_size = 128256, .embed_dim = 2048, .num_heads = 32, .num_layers = 16, .max_seq_len = 131072,
    .arch = MYGPT_ARCH_LLAMA, .num_kv_heads = 8, .ffn_hidden = 8192, .rope = MYGPT_ROPE_HALVES, .untied_head = 1};

/* Prints an attention layer's three weight shapes as the notebook does (rows = outputs). */
static void print_attention_shapes(int C, int kv_width)
{
    printf("W_key: torch.Size([%d, %d])\n", kv_width, C);
    printf("W_value: torch.Size([%d, %d])\n", kv_width, C);
    printf("W_query: torch.Size([%d, %d])\n\n", C, C);
}

// lesson: gqa
/* One attention layer's parameters, bias-free: W_query and out_proj (C, C), W_key and W_value
 * (kv_heads * head size, C). With kv_heads = heads it is multi-head attention's 4 C^2. */
static uint64_t attention_params(int C, int heads, int kv_heads)
{
    const uint64_t kv_width = (uint64_t)kv_heads * (uint64_t)(C / heads);
    return 2 * (uint64_t)C * (uint64_t)C + 2 * kv_width * (uint64_t)C;
}
// end lesson: gqa

/* calc_model_memory_size for Llama3Model: parameters and their gradients, plus its cos and sin
 * buffers (T, head size) registered once for all blocks; in GiB. */
static double model_memory_gb(const mygpt_config *cfg, uint64_t params, size_t bytes)
{
    const uint64_t buffers = 2 * (uint64_t)cfg->max_seq_len * (uint64_t)(cfg->embed_dim / cfg->num_heads);
    return (double)((2 * params + buffers) * bytes) / (1024.0 * 1024.0 * 1024.0);
}

/* "Total number of parameters: N" of cfg (mygpt_param_count), and N. */
static uint64_t print_count(const chapter *ch, const mygpt_config *cfg)
{
    mygpt_error err = {0};
    mygpt_param_counts pc;
    chapter_check(ch, mygpt_param_count(cfg, &pc, &err), &err);
    printf("Total number of parameters: ");
    ch_commas((long long)pc.total);
    printf("\n");
    return pc.total;
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "92_book_llama3_sizes",
                 "Llama 2 to Llama 3, counted: multi-head against grouped-query attention, Llama 3 8B's\n"
                 "parameters and memory, Llama 3.1 8B and Llama 3.2 1B.",
                 0, 0);
    const int C = 4096, NH = 32, KV = 8;
    print_attention_shapes(C, C);
    print_attention_shapes(C, KV * (C / NH));
    printf("Total number of parameters:\n");
    printf("MHA: ");
    ch_commas((long long)attention_params(C, NH, NH));
    printf("\nGQA: ");
    ch_commas((long long)attention_params(C, NH, KV));
    printf("\n");

    printf("\nLlama 3 8B\n");
    const uint64_t total = print_count(&ch, &LLAMA3_CONFIG_8B);
    printf("float32 (PyTorch default): %.2f GB\n",
           model_memory_gb(&LLAMA3_CONFIG_8B, total, mygpt_weights_value_bytes(MYGPT_WEIGHTS_FP32)));
    printf("bfloat16: %.2f GB\n",
           model_memory_gb(&LLAMA3_CONFIG_8B, total, mygpt_weights_value_bytes(MYGPT_WEIGHTS_BF16)));
    printf("\nLlama 3.1 8B\n");
    print_count(&ch, &LLAMA31_CONFIG_8B);
    printf("\nLlama 3.2 1B\n");
    const uint64_t total_1b = print_count(&ch, &LLAMA32_CONFIG_1B);
    // the output head will share the token embedding's (V, C) weight: counted once
    const uint64_t tok_emb = (uint64_t)LLAMA32_CONFIG_1B.vocab_size * (uint64_t)LLAMA32_CONFIG_1B.embed_dim;
    printf("\nTotal number of unique parameters: ");
    ch_commas((long long)(total_1b - tok_emb));
    printf("\n");
    return 0;
}
