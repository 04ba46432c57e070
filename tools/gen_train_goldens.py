#!/usr/bin/python3
"""Regenerate the training goldens from PyTorch 1.13 (Debian's python3-torch):

    /usr/bin/python3 tools/gen_train_goldens.py

tests/golden/loss.txt     F.cross_entropy on random logits: the loss and d loss / d logits
                          (bits), rows of V = 1 .. 50257, N = 1 .. 300 (the cascade sum)
tests/golden/grads.txt    every parameter's gradient of the reference GPT after one
                          backward, on 14 configurations (V 4 .. 1000, C 2 .. 128, heads
                          1 .. 8, layers 1 .. 4, B and T up to max_seq_len): per tensor its
                          size, max |g| and up to 1024 sampled entries (index, bits)
tests/golden/optim.txt    SGD and AdamW updates (every branch: momentum, dampening,
                          nesterov, weight decay), 3 steps each on random parameters
                          and gradients: the parameters after every step (bits)
tests/golden/curves.txt   30 steps of SGD and of AdamW on 3 configurations: the loss of
                          every step (a fixed batch, so the loss goes down)
tests/golden/sampling.txt softmax bits; torch.multinomial token streams (both modes, chains
                          of calls on one generator); the whole top-k / temperature /
                          top-p sampler; DataLoader(shuffle=True) epoch orders
tests/golden/reference.safetensors, checkpoint.txt  a checkpoint the PyTorch side wrote
                          (tools/safetensors_io.py) and its logits for some ids
tests/golden/attention.txt every head's attention probabilities for one sequence
tests/golden/train_cli.txt what tools/reference_train.py prints for `mygpt train` and
                          `mygpt generate` invocations on the-verdict (needs data/ and
                          npm's tiktoken: npm install --prefix tools/node)

Formats: see tests/golden/README.md. Deterministic: rerunning rewrites the same files.
"""
import contextlib
import io
import os
import random
import struct
import sys

import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one thread, as torch's: a product's split follows them
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from reference_gpt import GPT, stacked_parameters  # noqa: E402
from reference_train import sample_next  # noqa: E402

GOLDEN = os.path.join(HERE, "..", "tests", "golden")


def h32(v):
    return "%08x" % struct.unpack("<I", struct.pack("<f", v))[0]


def hexes(t):
    return " ".join(h32(v) for v in t.flatten().tolist())


def stacked_grads(gpt):
    """The gradients in mygpt's storage order."""
    return stacked_parameters(gpt, get=lambda p: p.grad)


def gen_loss(rnd):
    lines = ["# F.cross_entropy(logits, targets): case N V / logits HEX... / targets ... / loss HEX / dlogits HEX..."]
    cases = [(1, 1), (1, 4), (3, 7), (2, 8), (5, 9), (4, 13), (17, 16), (33, 50), (1, 50257),
             (300, 5), (256, 17), (8, 1000)]
    for i, (N, V) in enumerate(cases):
        g = torch.Generator().manual_seed(100 + i)
        x = (torch.randn(N, V, generator=g) * (1 + 3 * (i % 3))).requires_grad_(True)
        y = torch.randint(0, V, (N,), generator=g)
        loss = F.cross_entropy(x, y)
        loss.backward()
        lines.append("case %d %d" % (N, V))
        lines.append("logits " + hexes(x.detach()))
        lines.append("targets " + " ".join(map(str, y.tolist())))
        lines.append("loss " + h32(loss.item()))
        lines.append("dlogits " + hexes(x.grad))
    return lines


GRAD_CONFIGS = [  # seed, V, C, NH, L, maxT, B, T
    (0, 4, 4, 2, 2, 64, 1, 4),
    (1, 5, 2, 1, 1, 8, 2, 8),
    (2, 10, 8, 2, 2, 16, 3, 5),
    (3, 65, 16, 4, 3, 32, 2, 32),
    (4, 100, 32, 8, 1, 20, 4, 1),
    (5, 1000, 64, 4, 2, 64, 1, 64),
    (6, 50, 128, 8, 4, 16, 2, 16),
    (7, 7, 12, 3, 2, 10, 4, 7),
    (8, 300, 24, 6, 1, 12, 1, 12),
    (9, 16, 20, 5, 4, 6, 3, 6),
    (10, 512, 96, 2, 2, 40, 2, 33),
    (11, 5, 6, 1, 3, 3, 1, 3),
    (12, 999, 128, 4, 1, 24, 2, 24),
    (13, 4, 4, 2, 2, 64, 4, 64),
]


def gen_grads(rnd):
    lines = ["# config SEED V C NH L MAXT B T / ids / targets / loss HEX / grad NAME NUMEL MAXABS (INDEX HEX)... / end"]
    for seed, V, C, NH, L, maxT, B, T in GRAD_CONFIGS:
        torch.manual_seed(seed)
        gpt = GPT(V, C, NH, L, maxT)
        ids = torch.tensor([[rnd.randrange(V) for _ in range(T)] for _ in range(B)])
        tg = torch.tensor([[rnd.randrange(V) for _ in range(T)] for _ in range(B)])
        loss = F.cross_entropy(gpt(ids).flatten(0, 1), tg.flatten())
        loss.backward()
        lines.append("config %d %d %d %d %d %d %d %d" % (seed, V, C, NH, L, maxT, B, T))
        lines.append("ids " + " ".join(map(str, ids.flatten().tolist())))
        lines.append("targets " + " ".join(map(str, tg.flatten().tolist())))
        lines.append("loss " + h32(loss.item()))
        for name, g in stacked_grads(gpt):
            n = g.numel()
            idx = list(range(n)) if n <= 1024 else sorted(rnd.sample(range(n), 1024))
            vals = g.tolist()
            lines.append("grad %s %d %s %s" % (name, n, h32(g.abs().max().item()),
                                               " ".join("%d:%s" % (i, h32(vals[i])) for i in idx)))
        lines.append("end")
    return lines


OPTIM_CASES = [  # kind, kwargs
    ("sgd", dict(lr=0.1)),
    ("sgd", dict(lr=0.05, weight_decay=0.01)),
    ("sgd", dict(lr=0.01, momentum=0.9)),
    ("sgd", dict(lr=0.02, momentum=0.8, dampening=0.3, weight_decay=0.1)),
    ("sgd", dict(lr=0.3, momentum=0.95, nesterov=True)),
    ("sgd", dict(lr=1e-3, momentum=0.5, nesterov=True, weight_decay=5e-4)),
    ("adamw", dict(lr=1e-3)),
    ("adamw", dict(lr=4e-4, weight_decay=0.1)),
    ("adamw", dict(lr=3e-2, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.0)),
    ("adamw", dict(lr=0.1, betas=(0.5, 0.9), eps=1e-3, weight_decay=0.5)),
    ("adamw", dict(lr=5e-4, betas=(0.9, 0.99), weight_decay=1e-2)),
    ("adamw", dict(lr=2.5e-3, betas=(0.0, 0.0), eps=0.0, weight_decay=0.0)),
]


def gen_optim(rnd):
    lines = ["# case KIND lr momentum dampening weight_decay nesterov beta1 beta2 eps / params HEX... / "
             "step grads HEX... -> params HEX... (3 steps) / end"]
    for i, (kind, kw) in enumerate(OPTIM_CASES):
        g = torch.Generator().manual_seed(500 + i)
        n = 37 + 11 * i
        p = torch.nn.Parameter(torch.randn(n, generator=g))
        if kind == "sgd":
            opt = torch.optim.SGD([p], **kw)
            hp = (kw["lr"], kw.get("momentum", 0.0), kw.get("dampening", 0.0), kw.get("weight_decay", 0.0),
                  int(kw.get("nesterov", False)), 0.0, 0.0, 0.0)
        else:
            opt = torch.optim.AdamW([p], **kw)
            b1, b2 = kw.get("betas", (0.9, 0.999))
            hp = (kw["lr"], 0.0, 0.0, kw.get("weight_decay", 1e-2), 0, b1, b2, kw.get("eps", 1e-8))
        lines.append("case %s %r %r %r %r %d %r %r %r" % ((kind,) + hp))
        lines.append("params " + hexes(p.detach()))
        for step in range(3):
            grad = torch.randn(n, generator=g) * (10.0 ** (step - 1))
            if step == 2:
                grad[::5] = 0.0  # zero gradients: AdamW still moves (decay, momentum)
            p.grad = grad.clone()
            opt.step()
            lines.append("step " + hexes(grad) + " -> " + hexes(p.detach()))
        lines.append("end")
    return lines


CURVE_CONFIGS = [  # seed, V, C, NH, L, maxT, B, T
    (21, 40, 16, 2, 2, 16, 4, 16),
    (22, 200, 32, 4, 2, 32, 2, 32),
    (23, 65, 48, 3, 3, 24, 3, 20),
]


def gen_curves(rnd):
    lines = ["# curve OPT LR WD SEED V C NH L MAXT B T / ids / targets / losses HEX x 30 / end"]
    for seed, V, C, NH, L, maxT, B, T in CURVE_CONFIGS:
        ids = [[rnd.randrange(V) for _ in range(T + 1)] for _ in range(B)]
        x = torch.tensor([r[:T] for r in ids])
        y = torch.tensor([r[1:] for r in ids])
        for opt_name, lr, wd in (("sgd", 0.5, 0.0), ("adamw", 3e-3, 0.01)):
            torch.manual_seed(seed)
            gpt = GPT(V, C, NH, L, maxT)
            opt = (torch.optim.SGD(gpt.parameters(), lr=lr, weight_decay=wd) if opt_name == "sgd"
                   else torch.optim.AdamW(gpt.parameters(), lr=lr, weight_decay=wd))
            losses = []
            for _ in range(30):
                loss = F.cross_entropy(gpt(x).flatten(0, 1), y.flatten())
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            lines.append("curve %s %r %r %d %d %d %d %d %d %d %d" % (opt_name, lr, wd, seed, V, C, NH, L, maxT, B, T))
            lines.append("ids " + " ".join(map(str, x.flatten().tolist())))
            lines.append("targets " + " ".join(map(str, y.flatten().tolist())))
            lines.append("losses " + " ".join(h32(v) for v in losses))
            lines.append("end")
    return lines


def sample_chain(probs_or_logits, seed, n, fn):
    torch.manual_seed(seed)
    return [fn(probs_or_logits) for _ in range(n)]


def gen_sampling(rnd):
    lines = ["# softmax V / logits HEX... / probs HEX...",
             "# multinomial SEED REPLACEMENT V DRAWS / probs HEX... / tokens ...",
             "# sampler SEED TEMPERATURE TOP_K TOP_P V DRAWS / logits HEX... / tokens ...",
             "# loader SEED NWINDOWS BATCH EPOCHS VALS / order of every epoch (window indices) ..."]
    for i, V in enumerate([1, 3, 8, 9, 17, 100, 1000, 50257]):
        g = torch.Generator().manual_seed(700 + i)
        x = torch.randn(V, generator=g) * 3
        lines.append("softmax %d" % V)
        lines.append("logits " + hexes(x))
        lines.append("probs " + hexes(torch.softmax(x, dim=-1)))
    for i, (seed, V, repl) in enumerate([(123, 9, False), (123, 9, True), (7, 50, False), (7, 50, True),
                                         (99, 1000, False), (99, 1000, True), (2**40 + 1, 5, False),
                                         (5, 50257, False)]):
        g = torch.Generator().manual_seed(800 + i)
        probs = torch.softmax(torch.randn(V, generator=g) * 4, dim=-1)
        draws = 2000 if V < 50257 else 200
        toks = sample_chain(probs, seed, draws, lambda p: torch.multinomial(p, 1, replacement=repl).item())
        lines.append("multinomial %d %d %d %d" % (seed, int(repl), V, draws))
        lines.append("probs " + hexes(probs))
        lines.append("tokens " + " ".join(map(str, toks)))
    for i, (seed, temp, top_k, top_p, V, ties) in enumerate([
            (123, 1.4, 25, 0.0, 50257, 0), (1, 1.0, 0, 0.0, 100, 0), (2, 0.7, 10, 0.0, 100, 0),
            (3, 1.0, 0, 0.9, 100, 0), (4, 2.0, 5, 0.8, 300, 0), (5, 0.0, 3, 0.0, 30, 0), (6, 0.5, 0, 0.5, 1000, 0),
            (7, 1.0, 0, 0.5, 310, 1), (8, 1.0, 0, 0.3, 1000, 1), (9, 1.0, 12, 0.7, 20, 1), (10, 1.0, 0, 0.9, 5000, 1),
            (11, 2.0, 0, 0.5, 17, 1)]):
        g = torch.Generator().manual_seed(900 + i)
        logits0 = torch.randn(1, V, generator=g) * 2
        if ties:  # values repeated many times: top-p then depends on torch.sort's order of ties
            logits0 = (logits0 * 2).round() / 2

        def step(_):
            return sample_next(logits0, temp, top_k, top_p).item()
        draws = 2000 if V < 50257 else 300
        toks = sample_chain(None, seed, draws, step)
        lines.append("sampler %d %r %d %r %d %d" % (seed, temp, top_k, top_p, V, draws))
        lines.append("logits " + hexes(logits0))
        lines.append("tokens " + " ".join(map(str, toks)))
    # DataLoader(shuffle=True) orders, with iter(val_loader) between epochs
    for seed, nwin, batch, epochs, vals in [(123, 143, 8, 3, 1), (0, 10, 3, 4, 2), (2**33 + 7, 57, 57, 2, 0)]:
        torch.manual_seed(seed)
        data = list(range(nwin))
        loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True, drop_last=True)
        val = torch.utils.data.DataLoader(data[:5], batch_size=2, shuffle=False, drop_last=False)
        lines.append("loader %d %d %d %d %d" % (seed, nwin, batch, epochs, vals))
        for _ in range(epochs):
            order = [int(i) for b in loader for i in b]
            lines.append("order " + " ".join(map(str, order)))
            for _ in range(vals):
                for _ in val:
                    pass
    return lines


def gen_checkpoint(rnd):
    """A checkpoint written by the PyTorch side (tests/golden/reference.safetensors) and
    the logits the reference model gives for a few ids."""
    from safetensors_io import save
    torch.manual_seed(31)
    gpt = GPT(50, 16, 4, 2, 12)
    with torch.no_grad():  # move away from the initial values, so loading really matters
        for p in gpt.parameters():
            p.add_(torch.randn(p.shape) * 0.1)
    save(gpt, os.path.join(GOLDEN, "reference.safetensors"))
    ids = torch.tensor([[rnd.randrange(50) for _ in range(12)] for _ in range(2)])
    with torch.no_grad():
        logits = gpt(ids)
    return ["# reference.safetensors: ids (2, 12) / logits HEX... (2, 12, 50)",
            "ids " + " ".join(map(str, ids.flatten().tolist())),
            "logits " + hexes(logits)]


CLI_CASES = [  # the words after `mygpt` (a GPT-2-vocabulary model small enough for the sanitizers)
    "train --seed 5 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --text DATA/the-verdict.txt "
    "--context 8 --batch 2 --steps 6 --optimizer sgd --lr 0.5 --momentum 0.9 --eval-every 3",
    "train --seed 9 --vocab 50257 --embed 16 --heads 4 --layers 2 --max-seq 16 --text DATA/the-verdict.txt "
    "--context 16 --batch 4 --steps 40 --optimizer adamw --lr 0.003 --weight-decay 0.1 --eval-every 13",
    "generate --seed 5 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --prompt Every_effort_moves_you "
    "--max-new 12 --temperature 1.2 --top-k 40 --top-p 0.9 --sample-seed 7",
    "generate --seed 3 --vocab 50257 --embed 16 --heads 2 --layers 2 --max-seq 32 --ids 40,367,2885,1464 "
    "--max-new 20",
    "generate --seed 3 --vocab 50257 --embed 16 --heads 2 --layers 2 --max-seq 32 --ids 40,367,2885,1464 "
    "--max-new 40 --temperature 0.8",
]


def gen_cli(rnd):
    """What tools/reference_train.py prints for the tool's train and generate commands
    (needs data/ and npm's tiktoken in tools/node)."""
    import shlex
    import reference_train
    lines = ["# case WORDS (DATA = the data folder; in --prompt's value _ is a space) / out LINE ... / end"]
    data = os.path.join(HERE, "..", "data")
    for words in CLI_CASES:
        argv = shlex.split(words)
        argv = [w.replace("DATA", data) if i == 0 or argv[i - 1] != "--prompt" else w.replace("_", " ")
                for i, w in enumerate(argv)]
        buf = io.StringIO()
        old, sys.argv = sys.argv, ["reference_train.py"] + argv
        with contextlib.redirect_stdout(buf):
            reference_train.main()
        sys.argv = old
        lines.append("case " + words)
        lines += ["out " + ln for ln in buf.getvalue().splitlines()]
        lines.append("end")
    return lines


ATTENTION_CONFIGS = [  # seed V C NH L maxT T: every head's softmax output for one sequence
    (0, 11, 8, 2, 1, 8, 5),
    (5, 97, 48, 4, 2, 32, 29),
    (123, 300, 64, 2, 1, 80, 66),  # past the attention kernel's blocks of 32 and 64 keys
]


def gen_attention(rnd):
    """The attention probabilities of the reference model (softmax outputs taken with a
    forward hook on each block's attention dropout, the identity in eval mode). Its own
    generator: the file is the same whether or not the others are written with it."""
    rnd = random.Random(36)
    lines = ["# config SEED V C NH L MAXT T / ids / probs L NH T T as HEX, (l, h, t, s) in order / end"]
    for seed, V, C, NH, L, maxT, T in ATTENTION_CONFIGS:
        torch.manual_seed(seed)
        gpt = GPT(V, C, NH, L, maxT).eval()
        ids = torch.tensor([[rnd.randrange(V) for _ in range(T)]])
        probs = []
        hooks = [b.attn.drop.register_forward_hook(lambda m, i, o: probs.append(o[0].detach().clone()))
                 for b in gpt.blocks]
        with torch.no_grad():
            gpt(ids)
        for h in hooks:
            h.remove()
        lines.append("config %d %d %d %d %d %d %d" % (seed, V, C, NH, L, maxT, T))
        lines.append("ids " + " ".join(map(str, ids.flatten().tolist())))
        lines.append("probs " + hexes(torch.stack(probs)))
        lines.append("end")
    return lines


GENERATORS = (("loss.txt", gen_loss), ("grads.txt", gen_grads), ("optim.txt", gen_optim),
              ("curves.txt", gen_curves), ("sampling.txt", gen_sampling), ("checkpoint.txt", gen_checkpoint),
              ("train_cli.txt", gen_cli), ("attention.txt", gen_attention))


def main():
    assert torch.__version__.startswith("1.13"), torch.__version__
    torch.set_num_threads(1)
    only = sys.argv[1:]  # golden file names to write (default: all)
    rnd = random.Random(2026)
    for name, fn in GENERATORS:
        if only and name not in only:
            continue
        lines = ["# generated by tools/gen_train_goldens.py from torch %s -- do not edit" % torch.__version__]
        lines += fn(rnd)
        with open(os.path.join(GOLDEN, name), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("wrote tests/golden/%s" % name)


if __name__ == "__main__":
    main()
