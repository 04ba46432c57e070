#!/usr/bin/python3
"""Regenerate tests/golden/arch.txt and tests/golden/dropout.txt with PyTorch 1.13 (a
build without MKL, as Debian's: F.dropout's masks come from the default bernoulli_
kernel): the book's GPTModel and GPT-2 (tools/reference_llms.py) over a set of
configurations, and dropout's masks.

    /usr/bin/python3 tools/gen_arch_goldens.py

Also tests/golden/gpt2_hf.safetensors, gpt2_hf_plain.safetensors, config.json and
llms_book.safetensors (see hf_files), listed at the end of arch.txt:
    file NAME ARCH SEED / param FIELD NUMEL CHECKSUM ... / greedy 5 17 3 -> IDS...

arch.txt: the tanh GELU, x and d y, and its y and d x (bits):
    gelu N / x HEX... / dy HEX... / y HEX... / dx HEX...
  then one block per configuration:
    case ARCH SEED V C NH L MAXT QKV_BIAS DROPOUT B T
    ids ... / targets ...            (B*T each)
    param FIELD NUMEL CHECKSUM       (mygpt's table order; checksum as reference_gpt.checksum)
    logits HEX...                    (eval mode)
    loss HEX                         (eval mode: F.cross_entropy)
    grad FIELD MAXABS HEX...         (eval-mode gradients; MAXABS and every value when small)
    trainloss HEX                    (train mode, the generator as after building the model)
    traingrad FIELD MAXABS HEX...
    end
  and 30-step curves:
    curve ARCH OPT LR WD SEED V C NH L MAXT QKV_BIAS DROPOUT B T / ids / targets / losses HEX*30
dropout.txt: chains of F.dropout calls on one generator:
    chain SEED P NUMEL NUMEL ...
    keep NUMEL HEX scale HEX   (each call's keeps, one bit per element, element i in bit i % 8 of byte i / 8, and
               the kept elements' value: 1 / (1 - p) as PyTorch rounds it)
"""
import os
import random
import struct
import sys

import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one thread, as torch's: a product's split follows them
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_gpt import checksum  # noqa: E402
from reference_llms import GPTModel, stacked_parameters  # noqa: E402

ARCHS = {"llms-from-scratch": False, "gpt2": True}  # tied head?
CASES = [  # arch, seed, V, C, NH, L, maxT, qkv_bias, dropout, B, T
    ("llms-from-scratch", 123, 50, 16, 2, 2, 16, 0, 0.1, 2, 8),
    ("llms-from-scratch", 1, 7, 4, 1, 1, 4, 0, 0.5, 1, 4),
    ("llms-from-scratch", 2, 30, 12, 3, 2, 10, 1, 0.1, 3, 5),
    ("llms-from-scratch", 3, 65, 32, 4, 3, 32, 0, 0.9, 2, 32),
    ("llms-from-scratch", 4, 100, 24, 6, 1, 20, 1, 0.1, 4, 1),
    ("llms-from-scratch", 5, 257, 64, 4, 2, 40, 0, 0.1, 1, 33),
    ("llms-from-scratch", 6, 11, 8, 2, 4, 6, 1, 0.5, 3, 6),
    ("llms-from-scratch", 7, 300, 48, 8, 1, 24, 0, 0.1, 2, 24),
    ("llms-from-scratch", 8, 5, 6, 1, 3, 3, 0, 0.1, 1, 2),
    ("llms-from-scratch", 9, 211, 96, 2, 2, 17, 1, 0.1, 2, 17),
    ("gpt2", 123, 50, 16, 2, 2, 16, 1, 0.1, 2, 8),
    ("gpt2", 1, 7, 4, 1, 1, 4, 1, 0.5, 1, 4),
    ("gpt2", 2, 30, 12, 3, 2, 10, 1, 0.1, 3, 5),
    ("gpt2", 3, 65, 32, 4, 3, 32, 1, 0.9, 2, 32),
    ("gpt2", 4, 100, 24, 6, 1, 20, 1, 0.1, 4, 1),
    ("gpt2", 5, 257, 64, 4, 2, 40, 1, 0.1, 1, 33),
    ("gpt2", 6, 11, 8, 2, 4, 6, 1, 0.5, 3, 6),
    ("gpt2", 7, 300, 48, 8, 1, 24, 1, 0.1, 2, 24),
    ("gpt2", 8, 5, 6, 1, 3, 3, 1, 0.1, 1, 2),
    ("gpt2", 9, 211, 96, 2, 2, 17, 1, 0.1, 2, 17),
]
CURVES = [  # arch, opt, lr, wd, seed, V, C, NH, L, maxT, qkv, dropout, B, T
    ("llms-from-scratch", "adamw", 4e-4, 0.1, 123, 60, 32, 4, 2, 16, 0, 0.1, 2, 16),
    ("llms-from-scratch", "sgd", 0.1, 0.0, 7, 40, 16, 2, 2, 8, 1, 0.1, 3, 8),
    ("gpt2", "adamw", 1e-3, 0.01, 11, 60, 32, 4, 2, 16, 1, 0.1, 2, 16),
    ("gpt2", "sgd", 0.1, 0.0, 5, 40, 16, 2, 2, 8, 1, 0.0, 3, 8),
]
SMALL = 4096  # every gradient value written when a tensor has at most this many


def hexes(values):
    return " ".join("%08x" % struct.unpack("<I", struct.pack("<f", v))[0] for v in values)


def build(arch, seed, V, C, NH, L, maxT, qkv, p):
    torch.manual_seed(seed)
    cfg = dict(vocab_size=V, context_length=maxT, emb_dim=C, n_heads=NH, n_layers=L, drop_rate=p,
               qkv_bias=bool(qkv) or arch == "gpt2")
    return GPTModel(cfg, tied=ARCHS[arch])


def grads(lines, tag, model):
    for name, g in stacked_parameters(model, lambda t: t.grad):
        vals = hexes(g.tolist()) if g.numel() <= SMALL else ""
        lines.append("%s %s %s %s" % (tag, name, hexes([g.abs().max().item()]), vals))


def case_lines(arch, seed, V, C, NH, L, maxT, qkv, p, B, T, rnd):
    model = build(arch, seed, V, C, NH, L, maxT, qkv, p)
    state = torch.get_rng_state()
    ids = torch.tensor([[rnd.randrange(V) for _ in range(T)] for _ in range(B)])
    tg = torch.tensor([[rnd.randrange(V) for _ in range(T)] for _ in range(B)])
    out = ["case %s %d %d %d %d %d %d %d %r %d %d" % (arch, seed, V, C, NH, L, maxT, qkv, p, B, T),
           "ids " + " ".join(map(str, ids.flatten().tolist())),
           "targets " + " ".join(map(str, tg.flatten().tolist()))]
    for name, t in stacked_parameters(model):
        out.append("param %s %d %d" % (name, t.numel(), checksum(t)))
    model.eval()
    logits = model(ids)
    out.append("logits " + hexes(logits.detach().flatten().tolist()))
    loss = F.cross_entropy(logits.flatten(0, 1), tg.flatten())
    out.append("loss " + hexes([loss.item()]))
    loss.backward()
    grads(out, "grad", model)
    model.zero_grad()
    model.train()
    torch.set_rng_state(state)  # the generator as right after building the model
    loss = F.cross_entropy(model(ids).flatten(0, 1), tg.flatten())
    out.append("trainloss " + hexes([loss.item()]))
    loss.backward()
    grads(out, "traingrad", model)
    out.append("end")
    return out


def curve_lines(arch, opt, lr, wd, seed, V, C, NH, L, maxT, qkv, p, B, T, rnd):
    model = build(arch, seed, V, C, NH, L, maxT, qkv, p)
    ids = torch.tensor([[rnd.randrange(V) for _ in range(T)] for _ in range(B)])
    tg = torch.tensor([[rnd.randrange(V) for _ in range(T)] for _ in range(B)])
    o = (torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=wd) if opt == "adamw"
         else torch.optim.SGD(model.parameters(), lr=lr, weight_decay=wd))
    model.train()
    losses = []
    for _ in range(30):
        o.zero_grad()
        loss = F.cross_entropy(model(ids).flatten(0, 1), tg.flatten())
        loss.backward()
        o.step()
        losses.append(loss.item())
    return ["curve %s %s %r %r %d %d %d %d %d %d %d %r %d %d" % (arch, opt, lr, wd, seed, V, C, NH, L, maxT, qkv, p,
                                                                 B, T),
            "ids " + " ".join(map(str, ids.flatten().tolist())),
            "targets " + " ".join(map(str, tg.flatten().tolist())),
            "losses " + hexes(losses)]


def dropout_lines(rnd):
    out = []
    for chain in range(24):
        seed = rnd.randrange(2 ** 32) if chain % 3 else chain
        p = (0.1, 0.5, 0.9)[chain % 3]
        sizes = [rnd.choice([1, 7, 8, 15, 16, 17, 31, 64, 100, 257, 1000, 4096]) for _ in range(1 + chain % 4)]
        torch.manual_seed(seed)
        out.append("chain %d %r %s" % (seed, p, " ".join(map(str, sizes))))
        for n in sizes:
            y = F.dropout(torch.ones(n), p, training=True)
            keep = (y != 0).tolist()
            assert all(v == 0 or v == y.max().item() for v in y.tolist())
            packed = bytearray((n + 7) // 8)
            for i, k in enumerate(keep):
                packed[i // 8] |= k << (i % 8)
            out.append("keep %d %s scale %s" % (n, packed.hex(), hexes([y.max().item() if any(keep) else 0.0])))
    return out


def gelu_lines():
    """The book's GELU and its autograd gradient on values over its whole range."""
    from reference_llms import GELU
    torch.manual_seed(24)
    x = torch.cat([torch.randn(3000) * 4, torch.linspace(-12, 12, 997), torch.tensor([0.0, -0.0, 30.0, -30.0])])
    x.requires_grad_()
    dy = torch.randn(x.numel())
    y = GELU()(x)
    y.backward(dy)
    return ["gelu %d" % x.numel(), "x " + hexes(x.tolist()), "dy " + hexes(dy.tolist()),
            "y " + hexes(y.tolist()), "dx " + hexes(x.grad.tolist())]


def hf_files(here):
    """A random GPT-2 in Hugging Face's layout, as a transformers user has it: one file
    saved from GPT2LMHeadModel ("transformer." names, the mask buffers, lm_head = wte),
    one plain; config.json beside them; and the book's model as its state_dict (mask
    buffers included). Returns the golden lines: each file, its model's parameters and
    its greedy tokens."""
    from reference_llms import gpt2, save_safetensors, to_hf
    from reference_train import generate
    out = []
    gold = os.path.join(here, "..", "tests", "golden")
    torch.manual_seed(21)
    model = gpt2(60, 32, 4, 2, 24).eval()
    hf = to_hf(model)
    full = {"transformer." + k: v for k, v in hf.items()}
    for l in range(2):
        full["transformer.h.%d.attn.bias" % l] = torch.tril(torch.ones(24, 24)).view(1, 1, 24, 24)
    full["lm_head.weight"] = model.tok_emb.weight.detach()
    save_safetensors(full, os.path.join(gold, "gpt2_hf.safetensors"))
    save_safetensors(hf, os.path.join(gold, "gpt2_hf_plain.safetensors"))
    with open(os.path.join(gold, "config.json"), "w") as f:
        f.write('{"model_type": "gpt2", "n_embd": 32, "n_head": 4, "n_layer": 2, "n_positions": 24, '
                '"vocab_size": 60}\n')
    torch.manual_seed(22)
    book = GPTModel(dict(vocab_size=50, context_length=16, emb_dim=16, n_heads=2, n_layers=2, drop_rate=0.1,
                         qkv_bias=True)).eval()
    # the state_dict has no head count: __metadata__ gives it (else heads of 64 are assumed)
    save_safetensors(book.state_dict(), os.path.join(gold, "llms_book.safetensors"), {"format": "pt", "num_heads": "2"})
    prompt = torch.tensor([[5, 17, 3]])
    for name, m, seed, arch in (("gpt2_hf.safetensors", model, 21, "gpt2"),
                                ("gpt2_hf_plain.safetensors", model, 21, "gpt2"),
                                ("llms_book.safetensors", book, 22, "llms-from-scratch")):
        out.append("file %s %s %d" % (name, arch, seed))
        for field, t in stacked_parameters(m):
            out.append("param %s %d %d" % (field, t.numel(), checksum(t)))
        ids = generate(m, prompt, 12, m.pos_emb.weight.shape[0])
        out.append("greedy 5 17 3 -> " + " ".join(map(str, ids[0].tolist())))
    return out


def main():
    assert torch.__version__.startswith("1.13"), torch.__version__
    torch.set_num_threads(1)  # PyTorch splits some sums among threads: one, as every golden
    assert not torch.backends.mkl.is_available() or "AMD" in open("/proc/cpuinfo").read(), \
        "an MKL build on an Intel CPU draws other dropout masks"
    here = os.path.dirname(os.path.abspath(__file__))
    rnd = random.Random(24)
    head = ["# tools/reference_llms.py's models, torch %s" % torch.__version__,
            "# generated by tools/gen_arch_goldens.py -- do not edit"]
    lines = head + gelu_lines()
    for c in CASES:
        lines += case_lines(*c, rnd)
    for c in CURVES:
        lines += curve_lines(*c, rnd)
    lines += hf_files(here)
    with open(os.path.join(here, "..", "tests", "golden", "arch.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(here, "..", "tests", "golden", "dropout.txt"), "w") as f:
        f.write("\n".join(head + dropout_lines(rnd)) + "\n")
    print("wrote tests/golden/arch.txt (%d cases, %d curves) and tests/golden/dropout.txt" % (len(CASES), len(CURVES)))


if __name__ == "__main__":
    main()
