#!/usr/bin/python3
"""The book's GPT-to-Llama notebook in PyTorch 1.13 (development oracle only): runs the code
cells of LLMs-from-scratch's ch05/07_gpt_to_llama/converting-gpt-to-llama2.ipynb (read from
the notebook, never copied) and prints what chapters 88-94 print (91 from llama2.c's run.c instead):

    /usr/bin/python3 tools/reference_book_llama.py NOTEBOOK --norms > chapters/expected/88_book_llama_norms.txt
    /usr/bin/python3 tools/reference_book_llama.py NOTEBOOK --rope  > chapters/expected/89_book_llama_rope.txt
    /usr/bin/python3 tools/reference_book_llama.py NOTEBOOK --sizes > chapters/expected/90_book_llama_sizes.txt
    python3 tools/reference_book_llama.py --story > chapters/expected/91_book_llama_story.txt
    /usr/bin/python3 tools/reference_book_llama.py NOTEBOOK --model > chapters/expected/93_book_llama_model.txt
    /usr/bin/python3 tools/reference_book_llama.py NOTEBOOK --llama3-rope NOTEBOOK3 > chapters/expected/94_book_llama3_rope.txt
    /usr/bin/python3 tools/reference_book_llama.py NOTEBOOK --llama3-sizes NOTEBOOK3 \
        > chapters/expected/92_book_llama3_sizes.txt

(NOTEBOOK3: converting-llama2-to-llama3.ipynb beside it, which takes RMSNorm, SiLU, FeedForward,
MultiHeadAttention and compute_rope from NOTEBOOK as its own first cells do.)

A cell is found by a line it holds (its class or function definition), so a reordered notebook
still works. The notebook's own check of RMSNorm against torch.nn.RMSNorm needs PyTorch 2.4;
PyTorch 1.13 has none, so the LayerNorm of the same batch is printed beside it instead
(chapters/ERRATA.md). --sizes builds the 7B model with its nn.Linear and nn.Embedding weights
on the meta device (shapes, no memory); its RMSNorm weights and buffers are real, as in the
notebook. --story needs no PyTorch: it prints the published run of llama2.c's run.c
(`run stories260K.bin -z tok512.bin -t 1.0 -p 0.9 -s 133742`) from tests/golden/llama2c/run.txt,
which tools/reference_llama2c.py writes from run.c itself.

`--seed S` after the notebook runs --norms, --rope or --model with torch.manual_seed(S) where the
notebook seeds 123, as the chapter's `--seed S` does. PyTorch's kernels are pinned to the AVX2
machine's, as every generator's (avx2_kernels.py).
"""
import functools
import json
import os
import sys

SEED = 123  # the notebook's torch.manual_seed(123); --seed S replaces it
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cell_sources(notebook):
    with open(notebook, encoding="utf-8") as f:
        nb = json.load(f)
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def run_cells(ns, cells, *markers):
    """Executes, in notebook order, the cells holding a line that starts with one of markers;
    a cell whose definitions are followed by print() calls runs up to its first print."""
    for src in cells:
        if any(line.startswith(markers) for line in src.splitlines()):
            exec(src.split("\nprint(")[0], ns)


def norms(cells):
    import torch
    ns = {}
    run_cells(ns, cells, "class RMSNorm", "class SiLU")
    torch.manual_seed(SEED)
    example_batch = torch.randn(2, 3, 4)
    print("example_batch:\n", example_batch)
    rms_norm = ns["RMSNorm"](emb_dim=example_batch.shape[-1])
    print("RMSNorm:\n", rms_norm(example_batch))
    layer_norm = torch.nn.LayerNorm(example_batch.shape[-1], eps=1e-5)
    print("LayerNorm:\n", layer_norm(example_batch))
    silu = ns["SiLU"]()
    print("SiLU:\n", silu(example_batch))
    print("allclose(SiLU, F.silu):", torch.allclose(silu(example_batch), torch.nn.functional.silu(example_batch)))
    # FeedForward's product silu(fc1(x)) * fc2(x), with the batch's two rows standing in for fc1(x) and fc2(x)
    print("SwiGLU gate silu(a) * b:\n", silu(example_batch[0]) * example_batch[1])


def rope(cells):
    import torch
    ns = {"torch": torch}
    run_cells(ns, cells, "def precompute_rope_params")
    batch_size, context_len, num_heads, head_dim = 2, 5, 4, 16
    cos, sin = ns["precompute_rope_params"](head_dim=head_dim, context_length=context_len)
    torch.manual_seed(SEED)
    queries = torch.randn(batch_size, num_heads, context_len, head_dim)
    keys = torch.randn(batch_size, num_heads, context_len, head_dim)
    queries_rot = ns["compute_rope"](queries, cos, sin)
    keys_rot = ns["compute_rope"](keys, cos, sin)
    print("queries_rot.shape:", queries_rot.shape)
    print("queries_rot[0, 0]:\n", queries_rot[0, 0])
    print("keys_rot[1, 3]:\n", keys_rot[1, 3])
    # the point of RoPE: a rotated query and key meet at an angle that depends on m - n only
    q, k = queries[0, 0, 0], keys[0, 0, 0]
    for m, n in ((1, 0), (3, 2), (4, 3)):
        qm = ns["compute_rope"](q.expand(1, 1, context_len, head_dim).contiguous(), cos, sin)[0, 0, m]
        kn = ns["compute_rope"](k.expand(1, 1, context_len, head_dim).contiguous(), cos, sin)[0, 0, n]
        print(f"q at {m} . k at {n}: {torch.dot(qm, kn).item():.4f}")


def sizes(cells):
    import torch
    ns = {}
    run_cells(ns, cells, "class RMSNorm", "class SiLU", "class FeedForward(nn.Module):", "def precompute_rope_params",
              "class MultiHeadAttention", "class TransformerBlock", "class Llama2Model", "LLAMA2_CONFIG_7B",
              "def calc_model_memory_size")
    model = meta_build(lambda: ns["Llama2Model"](ns["LLAMA2_CONFIG_7B"]))
    total_params = sum(p.numel() for p in model.parameters())
    print(f"Total number of parameters: {total_params:,}")
    calc = ns["calc_model_memory_size"]
    print(f"float32 (PyTorch default): {calc(model, input_dtype=torch.float32):.2f} GB")
    print(f"bfloat16: {calc(model, input_dtype=torch.bfloat16):.2f} GB")


# a Llama2Model small enough to print: the notebook's keys, our sizes
LLAMA2_CONFIG_MINI = dict(vocab_size=50, context_length=8, emb_dim=16, n_heads=2, n_layers=2, hidden_dim=24)
MINI_IDS = [[3, 14, 15, 9, 26]]


def model(cells):
    """The notebook's Llama2Model on LLAMA2_CONFIG_MINI in float32 after torch.manual_seed(123):
    its parameter count and the logits of MINI_IDS, then the next token greedy at each position."""
    import torch
    ns = {}
    run_cells(ns, cells, "class RMSNorm", "class SiLU", "class FeedForward(nn.Module):", "def precompute_rope_params",
              "class MultiHeadAttention", "class TransformerBlock", "class Llama2Model")
    torch.manual_seed(SEED)
    llama = ns["Llama2Model"](dict(LLAMA2_CONFIG_MINI, dtype=torch.float32))
    print(f"Total number of parameters: {sum(p.numel() for p in llama.parameters()):,}")
    idx = torch.tensor(MINI_IDS)
    with torch.no_grad():
        logits = llama(idx)
    print("logits.shape:", logits.shape)
    print("logits[0, :, :8]:\n", logits[0, :, :8])
    print("next tokens:", logits.argmax(dim=-1))


def meta_build(build):
    """build() with every nn.Linear and nn.Embedding weight on the meta device."""
    import torch
    linear, embedding = torch.nn.Linear, torch.nn.Embedding
    torch.nn.Linear = functools.partial(linear, device="meta")
    torch.nn.Embedding = functools.partial(embedding, device="meta")
    try:
        return build()
    finally:
        torch.nn.Linear, torch.nn.Embedding = linear, embedding


def llama3_sizes(cells, cells3):
    """converting-llama2-to-llama3.ipynb's printed shapes and counts. Its MHA and GQA cells also
    run a forward pass on an unseeded torch.randn((1, 3000, 4096)) whose output is not printed:
    skipped here."""
    import torch
    ns = {"torch": torch, "nn": torch.nn}
    run_cells(ns, cells, "class RMSNorm", "class SiLU", "class FeedForward(nn.Module):", "def precompute_rope_params",
              "class MultiHeadAttention")
    run_cells(ns, cells3, "def precompute_rope_params", "class GroupedQueryAttention", "class TransformerBlock",
              "class Llama3Model", "LLAMA3_CONFIG_8B", "LLAMA31_CONFIG_8B", "def calc_model_memory_size")
    mha = meta_build(lambda: ns["MultiHeadAttention"](d_in=4096, d_out=4096, context_length=8192, num_heads=32))
    gqa = meta_build(lambda: ns["GroupedQueryAttention"](d_in=4096, d_out=4096, num_heads=32, num_kv_groups=8))
    for att in (mha, gqa):
        print("W_key:", att.W_key.weight.shape)
        print("W_value:", att.W_value.weight.shape)
        print("W_query:", att.W_query.weight.shape)
        print()
    print("Total number of parameters:")
    print(f"MHA: {sum(p.numel() for p in mha.parameters()):,}")
    print(f"GQA: {sum(p.numel() for p in gqa.parameters()):,}")
    del mha, gqa
    model = meta_build(lambda: ns["Llama3Model"](ns["LLAMA3_CONFIG_8B"]))
    print(f"\nLlama 3 8B\nTotal number of parameters: {sum(p.numel() for p in model.parameters()):,}")
    calc = ns["calc_model_memory_size"]
    print(f"float32 (PyTorch default): {calc(model, input_dtype=torch.float32):.2f} GB")
    print(f"bfloat16: {calc(model, input_dtype=torch.bfloat16):.2f} GB")
    model = meta_build(lambda: ns["Llama3Model"](ns["LLAMA31_CONFIG_8B"]))
    print(f"\nLlama 3.1 8B\nTotal number of parameters: {sum(p.numel() for p in model.parameters()):,}")
    model = meta_build(lambda: ns["Llama3Model"](ns["LLAMA32_CONFIG_1B"]))
    total_params = sum(p.numel() for p in model.parameters())
    print(f"\nLlama 3.2 1B\nTotal number of parameters: {total_params:,}")
    print(f"\nTotal number of unique parameters: {total_params - model.tok_emb.weight.numel():,}")


def llama3_rope(cells3):
    """The frequencies inside converting-llama2-to-llama3.ipynb's precompute_rope_params for head
    size 128: Llama 2's base, Llama 3's, and Llama 3.1's and 3.2's rescaling. The function returns
    only cos and sin; its angles at position 1 are the frequencies themselves (1 * inv_freq), so
    they are read off torch.cos's argument."""
    import torch
    ns = {}
    run_cells(ns, cells3, "def precompute_rope_params")
    cos = torch.cos
    seen = []
    torch.cos = lambda x: (seen.append(x), cos(x))[1]
    try:
        runs = [("Llama 2 (base 10,000)", 10_000, None),
                ("Llama 3 (base 500,000)", 500_000.0, None),
                ("Llama 3.1 (base 500,000, factor 8)", 500_000.0,
                 dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_context_length=8192)),
                ("Llama 3.2 (base 500,000, factor 32)", 500_000.0,
                 dict(factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0, original_context_length=8192))]
        for name, base, freq_config in runs:
            ns["precompute_rope_params"](head_dim=128, theta_base=base, context_length=2, freq_config=freq_config)
            inv_freq = seen[-1][1, :64]
            print(name)
            print("inv_freq[::8]:", inv_freq[::8])
            print("inv_freq[28:36]:", inv_freq[28:36])
    finally:
        torch.cos = cos


def story():
    with open(os.path.join(ROOT, "tests", "golden", "llama2c", "run.txt"), encoding="utf-8") as f:
        runs = [line.rstrip("\n").split("\t") for line in f if not line.startswith("#")]
    # the published run: -t 1.0 -p 0.9 -s 133742, run.c's defaults for the rest
    run = next(r for r in runs if r[:5] == ["1.0", "0.9", "133742", "", ""])
    out = run[5]
    text = out.replace("\\\\", "\0").replace("\\n", "\n").replace("\\t", "\t").replace("\0", "\\")
    sys.stdout.write(text)


def main():
    global SEED
    args = sys.argv[1:]
    if args == ["--story"]:
        return story()
    if len(args) == 4 and args[2] == "--seed" and args[1] in ("--norms", "--rope", "--model"):
        SEED = int(args[3])
        args = args[:2]
    import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)
    import torch
    assert torch.__version__.startswith("1.13"), torch.__version__
    if len(args) == 3 and args[1] == "--llama3-rope":
        return llama3_rope(cell_sources(args[2]))
    if len(args) == 3 and args[1] == "--llama3-sizes":
        return llama3_sizes(cell_sources(args[0]), cell_sources(args[2]))
    if len(args) != 2 or args[1] not in ("--norms", "--rope", "--sizes", "--model"):
        sys.exit("usage: reference_book_llama.py NOTEBOOK --norms|--rope|--model [--seed S], "
                 "NOTEBOOK --sizes|--llama3-rope|--llama3-sizes NOTEBOOK3, or --story")
    cells = cell_sources(args[0])
    {"--norms": norms, "--rope": rope, "--sizes": sizes, "--model": model}[args[1]](cells)


if __name__ == "__main__":
    main()
