#!/usr/bin/python3
"""The book's chapter 4 in PyTorch (development oracle only): what Raschka's *Build a Large
Language Model (From Scratch)* prints for its GPTModel (sections 4.6 and 4.7), from the
facts of issue 24; chapters/expected/37_book_gptmodel.txt is its output:

    /usr/bin/python3 tools/reference_book_ch4.py > chapters/expected/37_book_gptmodel.txt

tiktoken's ids come through node (tools/reference_train.py).
"""
import os
import sys

import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_llms import GPTModel  # noqa: E402
from reference_train import decode, encode, generate  # noqa: E402

GPT_CONFIG_124M = dict(vocab_size=50257, context_length=1024, emb_dim=768, n_heads=12, n_layers=12,
                       drop_rate=0.1, qkv_bias=False)


def main():
    assert torch.__version__.startswith("1.13"), torch.__version__
    batch = torch.stack([torch.tensor(encode("Every effort moves you")), torch.tensor(encode("Every day holds a"))])
    print("Input batch:\n", batch)
    torch.manual_seed(123)
    model = GPTModel(GPT_CONFIG_124M)
    out = model(batch)  # a new nn.Module is in training mode: the dropouts draw
    print("\nOutput shape:", out.shape)
    print(out)
    total_params = sum(p.numel() for p in model.parameters())
    print(f"Total number of parameters: {total_params:,}")
    print("Token embedding layer shape:", model.tok_emb.weight.shape)
    print("Output layer shape:", model.out_head.weight.shape)
    total_params_gpt2 = total_params - sum(p.numel() for p in model.out_head.parameters())
    print(f"Number of trainable parameters considering weight tying: {total_params_gpt2:,}")
    total_size_mb = total_params * 4 / (1024 * 1024)
    print(f"Total size of the model: {total_size_mb:.2f} MB")
    encoded = encode("Hello, I am")
    print("encoded:", encoded)
    encoded_tensor = torch.tensor(encoded).unsqueeze(0)
    print("encoded_tensor.shape:", encoded_tensor.shape)
    model.eval()
    out = generate(model, encoded_tensor, 10, GPT_CONFIG_124M["context_length"])
    print("Output:", out)
    print("Output length:", len(out[0]))
    print(decode(out.squeeze(0).tolist()))


if __name__ == "__main__":
    main()
