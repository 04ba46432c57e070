"""Other people's GPTs in plain PyTorch (development oracle only), written from the facts
of issue 24: the GPTModel of Raschka's *Build a Large Language Model (From Scratch)*
(chapter 4), and GPT-2 as that model with qkv_bias and the head tied to the token
embedding, with converters to and from Hugging Face's layout (Conv1D weights (in, out),
c_attn = Q | K | V).

    model = GPTModel(dict(vocab_size=V, context_length=T, emb_dim=C, n_heads=NH,
                          n_layers=L, drop_rate=0.1, qkv_bias=False))   # the book's
    model = GPTModel(cfg, tied=True)                                     # gpt2
    hf = to_hf(model); model = from_hf(hf_state_dict, n_heads)
    stacked_parameters(model): the tensors in mygpt's parameter-table order
"""
import torch
import torch.nn as nn


class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        norm_x = (x - mean) / torch.sqrt(var + self.eps)
        return self.scale * norm_x + self.shift


class GELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * torch.pow(x, 3))))


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg["emb_dim"]
        self.layers = nn.Sequential(nn.Linear(C, 4 * C), GELU(), nn.Linear(4 * C, C))

    def forward(self, x):
        return self.layers(x)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, T, _ = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        split = lambda t: t.view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
        keys, queries, values = split(keys), split(queries), split(values)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores.masked_fill_(self.mask.bool()[:T, :T], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context = (attn_weights @ values).transpose(1, 2).contiguous().view(b, T, self.d_out)
        return self.out_proj(context)


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], cfg["drop_rate"],
                                      cfg["n_heads"], cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        x = self.drop_shortcut(self.att(self.norm1(x))) + x
        return self.drop_shortcut(self.ff(self.norm2(x))) + x


class GPTModel(nn.Module):
    """The book's GPTModel; tied=True: GPT-2 (no out_head: the head is tok_emb)."""

    def __init__(self, cfg, tied=False):
        super().__init__()
        self.cfg, self.tied = dict(cfg), tied
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        if not tied:
            self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        T = in_idx.shape[1]
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(T, device=in_idx.device))
        x = self.trf_blocks(self.drop_emb(x))
        x = self.final_norm(x)
        return x @ self.tok_emb.weight.T if self.tied else self.out_head(x)


def classification_head(model, num_classes):
    """The book's section 6.5 on model: every parameter frozen, torch.manual_seed(123) and the new
    out_head nn.Linear(emb_dim, num_classes) (an untied head, also on a tied GPT-2), then the last
    block and final_norm unfrozen. Returns model."""
    for param in model.parameters():
        param.requires_grad = False
    torch.manual_seed(123)
    model.out_head = nn.Linear(in_features=model.cfg["emb_dim"], out_features=num_classes)
    model.tied = False
    for param in model.trf_blocks[-1].parameters():
        param.requires_grad = True
    for param in model.final_norm.parameters():
        param.requires_grad = True
    return model


def gpt2(V, C, NH, L, ctx, drop_rate=0.0):
    return GPTModel(dict(vocab_size=V, context_length=ctx, emb_dim=C, n_heads=NH, n_layers=L,
                         drop_rate=drop_rate, qkv_bias=True), tied=True)


def stacked_parameters(model, get=lambda p: p.detach()):
    """(field, tensor) in mygpt's parameter-table order, per-layer tensors stacked; get
    picks what of each parameter (its value, or p.grad)."""
    blocks = list(model.trf_blocks)
    cat = lambda f: torch.cat([get(f(b)).flatten() for b in blocks])
    out = [("wte", get(model.tok_emb.weight).flatten()), ("wpe", get(model.pos_emb.weight).flatten()),
           ("ln1w", cat(lambda b: b.norm1.scale)), ("ln1b", cat(lambda b: b.norm1.shift))]
    for w, m in (("q", "W_query"), ("k", "W_key"), ("v", "W_value"), ("o", "out_proj")):
        out.append(("w" + w, cat(lambda b: getattr(b.att, m).weight)))
        if getattr(blocks[0].att, m).bias is not None:
            out.append(("b" + w, cat(lambda b: getattr(b.att, m).bias)))
    out += [("ln2w", cat(lambda b: b.norm2.scale)), ("ln2b", cat(lambda b: b.norm2.shift)),
            ("fc1w", cat(lambda b: b.ff.layers[0].weight)), ("fc1b", cat(lambda b: b.ff.layers[0].bias)),
            ("fc2w", cat(lambda b: b.ff.layers[2].weight)), ("fc2b", cat(lambda b: b.ff.layers[2].bias)),
            ("lnfw", get(model.final_norm.scale).flatten()), ("lnfb", get(model.final_norm.shift).flatten())]
    if not model.tied:
        out.append(("lmw", get(model.out_head.weight).flatten()))
    return out


def to_hf(model, prefix=""):
    """A gpt2 model's state_dict in Hugging Face's names and Conv1D layout."""
    sd = {prefix + "wte.weight": model.tok_emb.weight, prefix + "wpe.weight": model.pos_emb.weight}
    for l, b in enumerate(model.trf_blocks):
        p, a = "%sh.%d." % (prefix, l), b.att
        sd[p + "ln_1.weight"], sd[p + "ln_1.bias"] = b.norm1.scale, b.norm1.shift
        sd[p + "attn.c_attn.weight"] = torch.cat([a.W_query.weight, a.W_key.weight, a.W_value.weight]).T
        sd[p + "attn.c_attn.bias"] = torch.cat([a.W_query.bias, a.W_key.bias, a.W_value.bias])
        sd[p + "attn.c_proj.weight"], sd[p + "attn.c_proj.bias"] = a.out_proj.weight.T, a.out_proj.bias
        sd[p + "ln_2.weight"], sd[p + "ln_2.bias"] = b.norm2.scale, b.norm2.shift
        sd[p + "mlp.c_fc.weight"], sd[p + "mlp.c_fc.bias"] = b.ff.layers[0].weight.T, b.ff.layers[0].bias
        sd[p + "mlp.c_proj.weight"], sd[p + "mlp.c_proj.bias"] = b.ff.layers[2].weight.T, b.ff.layers[2].bias
    sd[prefix + "ln_f.weight"], sd[prefix + "ln_f.bias"] = model.final_norm.scale, model.final_norm.shift
    return {k: v.detach().contiguous() for k, v in sd.items()}


def from_hf(sd, n_heads):
    """A gpt2 model from a Hugging Face state_dict (with or without 'transformer.')."""
    sd = {k[len("transformer."):] if k.startswith("transformer.") else k: v for k, v in sd.items()}
    V, C = sd["wte.weight"].shape
    L = 1 + max(int(k.split(".")[1]) for k in sd if k.startswith("h."))
    model = gpt2(V, C, n_heads, L, sd["wpe.weight"].shape[0])
    with torch.no_grad():
        model.tok_emb.weight.copy_(sd["wte.weight"])
        model.pos_emb.weight.copy_(sd["wpe.weight"])
        for l, b in enumerate(model.trf_blocks):
            p, a = "h.%d." % l, b.att
            b.norm1.scale.copy_(sd[p + "ln_1.weight"]), b.norm1.shift.copy_(sd[p + "ln_1.bias"])
            w, bias = sd[p + "attn.c_attn.weight"].T, sd[p + "attn.c_attn.bias"]
            for i, m in enumerate((a.W_query, a.W_key, a.W_value)):
                m.weight.copy_(w[i * C:(i + 1) * C]), m.bias.copy_(bias[i * C:(i + 1) * C])
            a.out_proj.weight.copy_(sd[p + "attn.c_proj.weight"].T), a.out_proj.bias.copy_(sd[p + "attn.c_proj.bias"])
            b.norm2.scale.copy_(sd[p + "ln_2.weight"]), b.norm2.shift.copy_(sd[p + "ln_2.bias"])
            b.ff.layers[0].weight.copy_(sd[p + "mlp.c_fc.weight"].T), b.ff.layers[0].bias.copy_(sd[p + "mlp.c_fc.bias"])
            b.ff.layers[2].weight.copy_(sd[p + "mlp.c_proj.weight"].T), b.ff.layers[2].bias.copy_(sd[p + "mlp.c_proj.bias"])
        model.final_norm.scale.copy_(sd["ln_f.weight"]), model.final_norm.shift.copy_(sd["ln_f.bias"])
    return model


def save_safetensors(state, path, metadata=None):
    """A safetensors file of float32 tensors (name -> tensor), data in the given order."""
    import json
    import struct
    header, offset = {"__metadata__": dict(metadata or {"format": "pt"})}, 0
    for name, t in state.items():
        n = t.numel() * 4
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + n]}
        offset += n
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:  # one tensor at a time: a 1.5B model is written without a second copy
        f.write(struct.pack("<Q", len(h)) + h)
        for t in state.values():
            f.write(t.detach().contiguous().float().numpy().tobytes())


def load_safetensors(path):
    import json
    import struct
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    return {k: torch.frombuffer(bytearray(raw[8 + n + e["data_offsets"][0]:8 + n + e["data_offsets"][1]]),
                                dtype=torch.float32).reshape(e["shape"]) for k, e in header.items()}
