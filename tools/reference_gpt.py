"""The reference GPT of docs/model-spec.md, in PyTorch (development oracle only).

This is the chapter-12 `GPT` on top of the Chapter-11 `TransformerBlock` that the
document does not show, written exactly as model-spec.md fixes it: module creation
order = random draw order, pre-LayerNorm blocks, causal multi-head attention with
bias-free projections, a 4C exact-GELU MLP, a final LayerNorm and a head tied to
the token embedding.
"""
import math

import torch
import torch.nn as nn


class LayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(dim))
        self.beta = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        return (x - mean) / torch.sqrt(var + self.eps) * self.gamma + self.beta


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)

    def forward(self, ids):
        return self.embedding(ids)


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, max_seq_len, dropout=0.0):
        super().__init__()
        assert embed_dim % num_heads == 0
        self.h = num_heads
        self.d = embed_dim // num_heads
        self.W_q = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_k = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_v = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_o = nn.Linear(embed_dim, embed_dim, bias=False)
        self.register_buffer("mask", torch.tril(torch.ones(max_seq_len, max_seq_len)))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        q = self.W_q(x).view(B, T, self.h, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.h, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.h, self.d).transpose(1, 2)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        s = s.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
        p = self.drop(s.softmax(dim=-1))
        y = (p @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.W_o(y)


class MLP(nn.Module):
    def __init__(self, embed_dim, dropout=0.0):
        super().__init__()
        self.fc1 = nn.Linear(embed_dim, 4 * embed_dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * embed_dim, embed_dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.drop(self.fc2(self.act(self.fc1(x))))


class TransformerBlock(nn.Module):
    def __init__(self, embed_dim, num_heads, max_seq_len, dropout=0.0):
        super().__init__()
        self.ln1 = LayerNorm(embed_dim)
        self.attn = MultiHeadAttention(embed_dim, num_heads, max_seq_len, dropout)
        self.ln2 = LayerNorm(embed_dim)
        self.mlp = MLP(embed_dim, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_heads, num_layers, max_seq_len=64, dropout=0.0):
        super().__init__()
        self.max_seq_len = max_seq_len
        self.token_embedding = TokenEmbedding(vocab_size, embed_dim)
        self.position_embedding = nn.Embedding(max_seq_len, embed_dim)
        self.embed_drop = nn.Dropout(dropout)
        self.blocks = nn.Sequential(*[TransformerBlock(embed_dim, num_heads, max_seq_len, dropout)
                                      for _ in range(num_layers)])
        self.ln_f = LayerNorm(embed_dim)

    def forward(self, ids):
        B, T = ids.shape
        if T > self.max_seq_len:
            raise ValueError(f"input length T={T} exceeds max_seq_len={self.max_seq_len}")
        positions = torch.arange(T, device=ids.device)
        x = self.token_embedding(ids) + self.position_embedding(positions)
        x = self.embed_drop(x)
        x = self.blocks(x)
        x = self.ln_f(x)
        return x @ self.token_embedding.embedding.weight.T


def stacked_parameters(gpt, get=lambda p: p.detach()):
    """The parameters in mygpt's storage order (mygpt_params): per-layer tensors stacked.
    get picks what to stack of each parameter (its value; p.grad for the gradients)."""
    blocks = list(gpt.blocks)
    cat = lambda ts: torch.cat([get(t).flatten() for t in ts])
    return [
        ("wte", get(gpt.token_embedding.embedding.weight).flatten()),
        ("wpe", get(gpt.position_embedding.weight).flatten()),
        ("ln1w", cat([b.ln1.gamma for b in blocks])), ("ln1b", cat([b.ln1.beta for b in blocks])),
        ("wq", cat([b.attn.W_q.weight for b in blocks])), ("wk", cat([b.attn.W_k.weight for b in blocks])),
        ("wv", cat([b.attn.W_v.weight for b in blocks])), ("wo", cat([b.attn.W_o.weight for b in blocks])),
        ("ln2w", cat([b.ln2.gamma for b in blocks])), ("ln2b", cat([b.ln2.beta for b in blocks])),
        ("fc1w", cat([b.mlp.fc1.weight for b in blocks])), ("fc1b", cat([b.mlp.fc1.bias for b in blocks])),
        ("fc2w", cat([b.mlp.fc2.weight for b in blocks])), ("fc2b", cat([b.mlp.fc2.bias for b in blocks])),
        ("lnf", cat([gpt.ln_f.gamma, gpt.ln_f.beta])),
    ]


def checksum(t):
    """sum over i of (i + 1) * bits(t[i]) mod 2^64: any changed element changes it."""
    import numpy as np
    bits = t.contiguous().numpy().view(np.uint32).astype(np.uint64)
    idx = np.arange(1, bits.size + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return int(np.sum(bits * idx, dtype=np.uint64))
