#!/usr/bin/python3
"""Regenerate the foundation goldens in tests/golden/ from real PyTorch and numpy.

Development oracle only: needs Debian's python3-torch (torch 1.13) and python3-numpy
(numpy 1.24) on an x86-64 machine with AVX2. Building and testing mygpt never runs
this script; its output is committed.

    /usr/bin/python3 tools/gen_goldens.py            # writes tests/golden/*.txt

Files written:
  rng.txt          call chains on one generator (randn/normal_, rand/uniform_, randint,
                   randperm, nn.Linear, nn.Embedding) and the exact results, AVX2 kernel
  rng_scalar.txt   the same kind of chains under ATEN_CPU_CAPABILITY=default
  print_torch.txt  tensors and what print(t) shows
  print_numpy.txt  arrays and what print(arr) / print(arr.round(k)) shows
  numfmt.txt       repr(float), str(np.float32), f"{x:,}" cases
  cli.txt          `mygpt` argument lists and the text the same Python prints
  layernorm.txt    F.layer_norm (nn.LayerNorm's kernel) on random rows, every output's bits
                   (`--layernorm`: this file alone)
  sums.txt         x.sum(-1) and x.pow(2).mean(-1) of random rows of 1 to 300,000 values
                   (`--sums`: this file alone)
  posenc.txt       the position encodings' tables as the documents' and the notebook's
                   PyTorch computes them (sinusoidal, RoPE's frequencies and cache, the
                   halves convention's rotation and its gradient), every value's bits
                   (`--posenc`: this file alone)

Formats are line based and documented in tests/golden/README.md.
"""
import os
import random
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "golden")


def f32hex(values):
    return " ".join("%08x" % struct.unpack("<I", struct.pack("<f", float(v)))[0] for v in values)


def esc(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


# ---------------------------------------------------------------------------- RNG

SEEDS = [0, 1, 42, 1337, 2**32 + 5, 2**63 + 12345, 2**64 - 1, 123456789]


def rng_chains(kernel_label):
    """Yields (seed, [ops]) where each op is a tuple the C test replays."""
    import torch
    import torch.nn as nn

    rnd = random.Random(20261121 + (kernel_label == "scalar"))
    cases = []
    # 1. every numel 1..40, then 100, 1000, 4096, for every seed, as 1-D to 3-D shapes
    for seed in SEEDS:
        for n in list(range(1, 41)) + [100, 1000, 4096]:
            if kernel_label == "scalar" and n > 100:
                continue
            shape = rnd.choice([(n,), (1, n), (n, 1)] + ([(2, n // 2)] if n % 2 == 0 else [])
                               + ([(2, 2, n // 4)] if n % 4 == 0 else []))
            cases.append((seed, [("randn", shape, 0.0, 1.0)]))
    # 2. mixed chains: the cached normal persists across calls and survives
    #    large-path normals, uniforms, randint and randperm
    kinds = ["randn", "normal", "rand", "uniform", "randint", "randint64", "randperm",
             "linear", "embedding"]
    for c in range(60 if kernel_label == "avx2" else 20):
        seed = rnd.choice(SEEDS + [rnd.randrange(0, 2**64)])
        ops = []
        for _ in range(rnd.randint(2, 7)):
            k = rnd.choice(kinds)
            if k == "randn":
                n = rnd.choice([1, 1, 2, 3, 5, 15, 16, 17, 31, 33, 64])
                ops.append(("randn", (n,), 0.0, 1.0))
            elif k == "normal":
                n = rnd.choice([1, 3, 12, 16, 20, 48, 100])
                mean = rnd.choice([0.0, 0.5, -3.25, 1e-3])
                std = rnd.choice([0.02, 1.0, 2.5, 0.1, 0.0])
                ops.append(("randn", (n,), mean, std))
            elif k in ("rand", "uniform"):
                n = rnd.choice([1, 5, 16, 40])
                lo, hi = (0.0, 1.0) if k == "rand" else rnd.choice(
                    [(-0.5, 0.5), (-0.378, 0.378), (-2.0, 3.0), (1.5, 1.5), (-1e-3, 7.0)])
                ops.append(("uniform", (n,), lo, hi))
            elif k == "randint":
                lo, hi = rnd.choice([(0, 10), (-5, 5), (0, 2**31), (3, 4), (0, 2**32 - 1)])
                ops.append(("randint", (rnd.choice([1, 4, 9]),), lo, hi))
            elif k == "randint64":
                lo, hi = rnd.choice([(0, 2**40), (-2**62, 2**62), (0, 2**32), (-(2**63), 2**63 - 1)])
                ops.append(("randint", (rnd.choice([1, 3]),), lo, hi))
            elif k == "randperm":
                ops.append(("randperm", rnd.choice([0, 1, 2, 10, 37, 100])))
            elif k == "linear":
                fin = rnd.choice([1, 3, 4, 5, 7, 10, 33, 100, 768])
                fout = rnd.choice([1, 2, 3, 6, 17])
                ops.append(("linear", fin, fout, rnd.choice([0, 1])))
            else:
                ops.append(("embedding", rnd.choice([1, 3, 10, 50]), rnd.choice([1, 2, 4, 8])))
        cases.append((seed, ops))

    lines = []
    for seed, ops in cases:
        torch.manual_seed(seed)
        lines.append("case %d" % seed)
        for op in ops:
            if op[0] == "randn":
                _, shape, mean, std = op
                t = torch.empty(shape)
                if mean == 0.0 and std == 1.0:
                    t = torch.randn(shape)
                else:
                    nn.init.normal_(t, mean, std)
                lines.append("normal %s %r %r : %s" % (",".join(map(str, shape)), mean, std,
                                                     f32hex(t.flatten().tolist())))
            elif op[0] == "uniform":
                _, shape, lo, hi = op
                t = torch.empty(shape).uniform_(lo, hi)
                lines.append("uniform %s %r %r : %s" % (",".join(map(str, shape)), lo, hi,
                                                      f32hex(t.flatten().tolist())))
            elif op[0] == "randint":
                _, shape, lo, hi = op
                t = torch.randint(lo, hi, shape)
                lines.append("randint %s %d %d : %s" % (",".join(map(str, shape)), lo, hi,
                                                      " ".join(map(str, t.tolist()))))
            elif op[0] == "randperm":
                t = torch.randperm(op[1])
                lines.append("randperm %d : %s" % (op[1], " ".join(map(str, t.tolist()))))
            elif op[0] == "linear":
                _, fin, fout, bias = op
                lin = nn.Linear(fin, fout, bias=bool(bias))
                vals = lin.weight.detach().flatten().tolist()
                if bias:
                    vals += lin.bias.detach().tolist()
                lines.append("linear %d %d %d : %s" % (fin, fout, bias, f32hex(vals)))
            else:
                _, num, dim = op
                emb = nn.Embedding(num, dim)
                lines.append("embedding %d %d : %s" % (num, dim,
                                                      f32hex(emb.weight.detach().flatten().tolist())))
        lines.append("end")
    return lines


# ---------------------------------------------------------------------------- printers

def printer_tensors():
    """Yields (label, tensor, suffix) covering the cases of parity spec section 7."""
    import torch
    g = torch.Generator().manual_seed(7)

    def rn(*shape):
        return torch.randn(*shape, generator=g)

    yield "randn4x4", rn(4, 4), None
    yield "randn2x3x4", rn(2, 3, 4), None
    for n in [1, 2, 5, 8, 9, 10, 11, 12, 13, 20, 30]:
        yield "randn%d" % n, rn(n), None
    yield "zero-d", torch.tensor(3.14159), None
    yield "zero-d-neg0", torch.tensor(-0.0), None
    yield "zero-d-int", torch.tensor(7), None
    yield "zero-d-grad", torch.tensor(8.1701), "grad_fn=<SumBackward0>"
    yield "neg0-one", torch.tensor([-0.0, 1.0]), None
    yield "neg0-half", torch.tensor([-0.0, 0.5]), None
    yield "zeros", torch.zeros(2), None
    yield "ints-as-floats", torch.tensor([0.0, 1.0, 2.0, -3.0]), None
    yield "int-floats-sci", torch.tensor([1.0, 2000.0]), None
    yield "int-floats-big", torch.tensor([1e9, 3.0e9]), None
    yield "with-inf", torch.tensor([1.0, 2.0, float("-inf")]), None
    yield "with-nan", torch.tensor([1.5, float("nan"), 2.25]), None
    yield "nan-only", torch.tensor([float("nan"), float("inf")]), None
    yield "sci-small", torch.tensor([1e-5, 1.0]), None
    yield "sci-1e-4", torch.tensor([1e-4, 1.0]), None
    yield "sci-ratio", torch.tensor([0.001, 1.5, 3.0]), None
    yield "sci-big", torch.tensor([1.5e8, 2.0]), None
    yield "sci-2d", rn(3, 5) * 1e-6, None
    yield "sci-mixed-nan", torch.tensor([1e-7, float("nan"), -2.5e3]), None
    yield "wide-values", rn(4, 6) * 1000, None
    yield "tiny", rn(7) * 1e-3, None
    yield "large-1d", rn(2000), None
    yield "large-2d", rn(50, 50), None
    yield "large-3d", rn(20, 20, 20), None
    yield "large-2d-narrow", rn(1001, 1), None
    yield "large-2d-wide", rn(2, 600), None
    yield "arange2000", torch.arange(2000).float(), None
    yield "4d", rn(2, 2, 2, 3), None
    yield "5d", rn(1, 2, 1, 2, 2), None
    yield "empty-1d", torch.zeros(0), None
    yield "empty-2d", torch.zeros(2, 0), None
    yield "grad-select", rn(4), "grad_fn=<SelectBackward0>"
    yield "grad-2d", rn(3, 4), "grad_fn=<AddBackward0>"
    yield "grad-wrap", rn(9), "grad_fn=<SelectBackward0>"
    yield "grad-wrap2", rn(7) * 100, "grad_fn=<SelectBackward0>"
    yield "grad-wrap3", rn(10), "grad_fn=<SelectBackward0>"
    yield "requires-grad", rn(3), "requires_grad=True"
    yield "int64", torch.tensor([[1, -20], [300, 4]]), None
    yield "int64-1d", torch.tensor([40, 367, 2885, 1464]), None
    yield "int64-long", torch.arange(2000), None
    yield "int64-wrap", torch.randint(-10**6, 10**6, (40,), generator=g), None
    yield "int64-2d", torch.randint(0, 50000, (8, 4), generator=g), None
    yield "int64-empty", torch.zeros(0, dtype=torch.int64), None
    yield "bool", torch.tensor([True, False]), None
    yield "bool-2d", torch.tensor([[True, False, True], [False, False, True]]), None
    yield "bool-0d", torch.tensor(True), None
    for k in range(40):  # random shapes and scales
        nd = 1 + k % 3
        shape = [int(torch.randint(1, 9, (1,), generator=g)) for _ in range(nd)]
        scale = [1.0, 1e-3, 10.0, 1e4, 1e-6, 0.5][k % 6]
        t = rn(*shape) * scale
        if k % 5 == 0:
            t = t.round()
        if k % 7 == 0:
            t.view(-1)[0] = 0.0
        yield "rand%02d" % k, t, None


def gen_print_torch():
    lines = []
    for label, t, suffix in printer_tensors():
        s = repr(t) if suffix is None else repr_with_suffix(t, suffix)
        lines.append(record(label, t, suffix or "-", s))
    return lines


def repr_with_suffix(t, suffix):
    import torch
    if suffix.startswith("grad_fn"):
        # make a real autograd result of the wanted kind
        leaf = t.clone().requires_grad_(True)
        name = suffix[len("grad_fn=<"):-1]
        if name == "SelectBackward0":
            out = torch.stack([leaf, leaf])[0]
        elif name == "SumBackward0":
            out = leaf.sum() if leaf.dim() == 0 else leaf.sum()
        elif name == "AddBackward0":
            out = leaf + 0
        else:
            raise ValueError(name)
        assert out.grad_fn.name() == name, out.grad_fn.name()
        assert torch.equal(out.detach(), t)
        return repr(out)
    if suffix == "requires_grad=True":
        return repr(t.clone().requires_grad_(True))
    raise ValueError(suffix)


def record(label, t, suffix, expected, extra="-"):
    import torch
    dt = {torch.float32: "f32", torch.int64: "i64", torch.bool: "bool"}[t.dtype]
    shape = ",".join(map(str, t.shape)) if t.dim() else "-"
    flat = t.detach().flatten().tolist()
    if dt == "f32":
        data = f32hex(flat)
    elif dt == "i64":
        data = " ".join(map(str, flat))
    else:
        data = " ".join("1" if v else "0" for v in flat)
    return "\t".join([label, dt, shape, suffix, extra, data or "-", esc(expected)])


def gen_print_numpy():
    import numpy as np
    import torch
    lines = []
    g = torch.Generator().manual_seed(11)

    def rn(*shape):
        return torch.randn(*shape, generator=g)

    arrays = [
        ("randn12", rn(12), None), ("randn12-r4", rn(12), 4), ("randn8-r4", rn(8), 4),
        ("randn8", rn(8), None), ("randn3x5", rn(3, 5), None), ("randn2x3x4", rn(2, 3, 4), 3),
        ("neg0", torch.tensor([-0.0, -0.25, 0.5]), None),
        ("round-neg0", torch.tensor([-0.0001, -0.25, 0.5]), 3),
        ("sci-small", torch.tensor([1e-5, 1.0]), None),
        ("sci-1e-4", torch.tensor([1e-4, 1.0]), None),
        ("sci-big", torch.tensor([33554448.0, 1.5]), None),
        ("sci-pad", torch.tensor([7.3593008e-05, 1.0, -2.0]), None),
        ("ratio", torch.tensor([0.001, 1.5, 3.0]), None),
        ("ratio-edge", torch.tensor([0.001, 1.0]), None),
        ("ints", torch.tensor([0.0, 1.0, 2.0, 100.0]), None),
        ("big-int-floats", torch.tensor([33554448.0, 1.0]), None),
        ("pos-9digits", torch.tensor([0.001953125, 1.0]), None),
        ("pos-many", torch.tensor([0.123456789, 12345.678, 0.1]), None),
        ("nan-inf", torch.tensor([1.5, float("nan"), float("-inf"), 2.0]), None),
        ("inf-only", torch.tensor([float("inf"), float("nan")]), None),
        ("alibi-like", torch.tensor([[-0.0, -0.25, -0.5], [-0.25, -0.0, -0.25]]), 3),
        ("slopes", torch.tensor([0.25, 0.0625, 0.015625, 0.00390625]), 4),
        ("large-1d", rn(2000), None), ("large-2d", rn(40, 40), 4), ("large-3d", rn(11, 11, 11), None),
        ("long-row", rn(30), None), ("long-row-r2", rn(30), 2),
        ("wrap-2d", rn(3, 12), 4), ("wrap-3d", rn(2, 2, 14), None),
        ("4d", rn(2, 2, 2, 2), 2), ("scale1e3", rn(6) * 1e3, None), ("scale1e-3", rn(6) * 1e-3, None),
        ("int64", torch.tensor([1, -20, 300, 4]), None), ("int64-2d", torch.arange(24).view(4, 6), None),
        ("int64-long", torch.arange(3000), None),
        ("bool", torch.tensor([True, False, True]), None),
        ("empty", torch.zeros(0), None),
    ]
    for k in range(40):
        nd = 1 + k % 3
        shape = [int(torch.randint(1, 10, (1,), generator=g)) for _ in range(nd)]
        scale = [1.0, 1e-3, 10.0, 1e4, 1e-6, 0.5, 1e7][k % 7]
        arrays.append(("rand%02d" % k, rn(*shape) * scale, [None, 4, 2, 3][k % 4]))
    for label, t, rnd in arrays:
        a = t.numpy()
        s = str(a if rnd is None else a.round(rnd))
        lines.append(record(label, t, "-", s, "-" if rnd is None else str(rnd)))
    return lines


def gen_numfmt():
    import numpy as np
    lines = []
    rnd = random.Random(5)
    doubles = [0.0, -0.0, 1.0, -1.0, 0.1, 1e-5, 1e-4, 1.5e16, 1e16, 9999999999999998.0, 3.0,
               0.12345600128173828, 177.22869873046875, 1.3e-07, float("inf"), float("-inf"),
               float("nan"), 2.5, 1e22, 123456789012345678.0, 5e-324, 1.7976931348623157e308]
    for _ in range(200):
        f = struct.unpack("<f", struct.pack("<I", rnd.getrandbits(32)))[0]
        doubles.append(f)
        doubles.append(rnd.uniform(-1000, 1000))
    for d in doubles:
        lines.append("repr\t%s\t%s" % (struct.pack(">d", d).hex(), repr(d)))
    floats = [0.0, -0.0, 3.0, 0.3798, 1e-5, 1.5e16, 1e16, 9.99e15, 1e-4, 0.0001, 33554448.0,
              float("inf"), float("nan"), -1.2515, 7.3593008e-05]
    for _ in range(300):
        floats.append(struct.unpack("<f", struct.pack("<I", rnd.getrandbits(32)))[0])
    for f in floats:
        bits = struct.unpack("<I", struct.pack("<f", f))[0]
        lines.append("f32str\t%08x\t%s" % (bits, str(np.float32(struct.unpack("<f", struct.pack("<I", bits))[0]))))
    for n in [0, 7, 999, 1000, -1000, 123264, 24960, 98304, 2691072, 124412160, -9876543210,
              9223372036854775807]:
        lines.append("commas\t%d\t%s" % (n, format(n, ",")))
    return lines


def gen_cli():
    """Whole `mygpt` invocations and what the equivalent Python prints."""
    import numpy as np
    import torch
    import torch.nn as nn
    cases = []

    def add(args, text):
        cases.append("%s\t%s" % (args, esc(text)))

    def exact(t):
        if t.dtype == torch.float32:
            return "".join("%s\n" % h for h in f32hex(t.flatten().tolist()).split())
        return "".join("%d\n" % v for v in t.flatten().tolist())

    for seed, shape in [(3, (5, 7)), (2**40 + 9, (2, 3, 4)), (77, (1,)), (5, (33,)), (0, (40, 30))]:
        torch.manual_seed(seed)
        t = torch.randn(shape)
        sh = ",".join(map(str, shape))
        add("randn --seed %d --shape %s" % (seed, sh), repr(t) + "\n")
        add("randn --seed %d --shape %s --format numpy" % (seed, sh), str(t.numpy()) + "\n")
        add("randn --seed %d --shape %s --format numpy --round 3" % (seed, sh),
            str(t.numpy().round(3)) + "\n")
        add("randn --seed %d --shape %s --format exact" % (seed, sh), exact(t))
    torch.manual_seed(9)
    a, b, c = torch.randn(3), torch.randn(1), torch.randn(2, 9)
    add("randn --seed 9 --shape 3 --shape 1 --shape 2,9",
        repr(a) + "\n" + repr(b) + "\n" + repr(c) + "\n")
    # empty tensors whose other sizes multiply past int64 (found by fuzz_args)
    torch.manual_seed(0)
    e1, e2 = torch.randn(0, 39999999999, 9999, 99982), torch.randn(2, 0)
    add("randn --seed 0 --shape 0,39999999999,9999,99982 --shape 2,0",
        repr(e1) + "\n" + repr(e2) + "\n")
    # (numpy refuses the first one's size; any empty array prints as [])
    e3 = torch.randn(0, 3, 4)
    add("randn --seed 0 --shape 2,0 --shape 0,3,4 --format numpy",
        str(e2.numpy()) + "\n" + str(e3.numpy()) + "\n")
    torch.manual_seed(-5 % 2**64)
    t = torch.empty(4, 4).normal_(2.5, 0.1)
    add("randn --seed -5 --shape 4,4 --mean 2.5 --std 0.1", repr(t) + "\n")
    torch.manual_seed(21)
    t = torch.empty(6, 3).uniform_(-2, 3)
    add("rand --seed 21 --shape 6,3 --low -2 --high 3", repr(t) + "\n")
    torch.manual_seed(21)
    t = torch.rand(10)
    add("rand --seed 21 --shape 10 --format exact", exact(t))
    torch.manual_seed(8)
    t = torch.randint(-50, 50, (3, 7))
    add("randint --seed 8 --low -50 --high 50 --shape 3,7", repr(t) + "\n")
    torch.manual_seed(8)
    t = torch.randint(0, 2**41, (4,))
    add("randint --seed 8 --high 2199023255552 --shape 4 --format numpy", str(t.numpy()) + "\n")
    torch.manual_seed(12)
    t = torch.randperm(25)
    add("randperm --seed 12 --n 25", repr(t) + "\n")
    torch.manual_seed(12)
    t = torch.randperm(9)
    add("randperm --seed 12 --n 9 --format exact", exact(t))
    torch.manual_seed(4)
    lin = nn.Linear(7, 5)
    add("init linear --seed 4 --in 7 --out 5", repr(lin.weight) + "\n" + repr(lin.bias) + "\n")
    torch.manual_seed(4)
    lin = nn.Linear(3, 2, bias=False)
    add("init linear --seed 4 --in 3 --out 2 --no-bias --format numpy",
        str(lin.weight.detach().numpy()) + "\n")
    torch.manual_seed(6)
    emb = nn.Embedding(3, 4)
    add("init embedding --seed 6 --num 3 --dim 4", repr(emb.weight) + "\n")
    torch.manual_seed(6)
    emb = nn.Embedding(10, 8)
    add("init embedding --seed 6 --num 10 --dim 8 --format exact", exact(emb.weight.detach()))

    # the chapter-12 GPT (tools/reference_gpt.py implements docs/model-spec.md)
    sys.path.insert(0, HERE)
    from reference_gpt import GPT
    for seed, V, C, h, N, M, ids in [(0, 4, 4, 2, 2, 64, [[0, 1, 2, 3]]),
                                     (0, 4, 4, 2, 2, 64, [[0, 1, 2, 3], [3, 2, 1, 0]])]:
        # Only configurations whose printed logits do not sit on a rounding boundary:
        # logits agree with PyTorch within 1e-5, not bit for bit (summation order),
        # so model.txt and tools/crosscheck_tool.py check them numerically.
        torch.manual_seed(seed)
        gpt = GPT(V, C, h, N, M).eval()
        with torch.no_grad():
            logits = gpt(torch.tensor(ids))
        idarg = ";".join(",".join(map(str, r)) for r in ids)
        add("forward --seed %d --vocab %d --embed %d --heads %d --layers %d --max-seq %d --ids %s"
            % (seed, V, C, h, N, M, idarg), repr(logits) + "\n")
    torch.manual_seed(2)
    gpt = GPT(5, 4, 2, 1, 3)
    text = "".join("%s\n%r\n" % (n, p) for n, p in gpt.named_parameters())
    add("init gpt --seed 2 --vocab 5 --embed 4 --heads 2 --layers 1 --max-seq 3", text)
    # the book's GPTModel and GPT-2 (tools/reference_llms.py): named_parameters() order
    from reference_llms import GPTModel
    for arch, qkv, tied in (("llms-from-scratch", False, False), ("llms-from-scratch", True, False),
                            ("gpt2", True, True)):
        torch.manual_seed(3)
        m = GPTModel(dict(vocab_size=5, context_length=3, emb_dim=4, n_heads=2, n_layers=2, drop_rate=0.1,
                          qkv_bias=qkv), tied=tied)
        text = "".join("%s\n%r\n" % (n, p) for n, p in m.named_parameters())
        add("init gpt --arch %s%s --seed 3 --vocab 5 --embed 4 --heads 2 --layers 2 --max-seq 3"
            % (arch, " --qkv-bias" if qkv and arch != "gpt2" else ""), text)
    for V, C, h, N, M in [(4, 4, 2, 2, 64), (4, 8, 2, 2, 64), (4, 4, 2, 4, 64), (4, 4, 2, 2, 8),
                          (50257, 768, 12, 12, 1024)]:
        n_te = V * C
        n_pe = M * C
        per = 12 * C * C + 9 * C
        n_blocks = N * per
        n_ln_f = 2 * C
        n_total = n_te + n_pe + n_blocks + n_ln_f
        if V < 100:  # small enough to let PyTorch count the real model
            g = GPT(V, C, h, N, M)
            assert n_total == sum(p.numel() for p in g.parameters())
            assert n_blocks == sum(p.numel() for p in g.blocks.parameters())
        text = (f"Token embedding       (V*C):       {n_te:>5}\n"
                f"Position embedding (max_seq*C):    {n_pe:>5}\n"
                f"{N} TransformerBlocks  (N*{per}):     {n_blocks:>5}\n"
                f"Final LayerNorm       (2*C):        {n_ln_f:>5}\n"
                f"Tied head            (0 extra):     {0:>5}\n"
                f"Total parameters:                  {n_total:>5}\n")
        add("params --vocab %d --embed %d --heads %d --layers %d --max-seq %d" % (V, C, h, N, M), text)
    return cases


def gen_layernorm():
    """layernorm SEED M C SCALE SHIFT AFFINE : HEX...: torch.manual_seed(SEED);
    x = torch.randn(M, C) * SCALE + SHIFT; with AFFINE the weight and bias are torch.randn(C)
    each, drawn after x (else None); every value of F.layer_norm(x, (C,), w, b, 1e-5)."""
    import torch
    import torch.nn.functional as F
    lines = []
    small = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 127, 128, 129, 130]
    large = [257, 384, 768, 1000, 2049, 4100]
    params = [(1.0, 0.0, 1), (1e-3, 3.5, 0), (50.0, -2.0, 1)]
    cases = [(c, 2, p) for c in small for p in params]
    cases += [(c, 1, params[i % 3]) for i, c in enumerate(large)]
    for i, (c, m, (scale, shift, affine)) in enumerate(cases):
        seed = 1000 + i
        torch.manual_seed(seed)
        x = torch.randn(m, c) * scale + shift
        w = torch.randn(c) if affine else None
        b = torch.randn(c) if affine else None
        y = F.layer_norm(x, (c,), w, b, 1e-5)
        lines.append("layernorm %d %d %d %r %r %d : %s" % (seed, m, c, scale, shift, affine,
                                                           f32hex(y.reshape(-1).tolist())))
    return lines


def gen_sums():
    """sum SEED N SCALE SHIFT : SUM0 SUM1 MEANSQ0 MEANSQ1: torch.manual_seed(SEED);
    x = torch.randn(2, N) * SCALE + SHIFT; x.sum(-1) and x.pow(2).mean(-1) (float32 bits),
    on one thread (PyTorch splits a reduction among threads only when its output is one value,
    so two rows sum alike on any number; one thread keeps that out of the question)."""
    import torch
    torch.set_num_threads(1)
    sizes = list(range(1, 80)) + [100, 127, 128, 129, 255, 256, 257, 288, 511, 512, 513, 768, 1000, 1023,
                                  1024, 1025, 2048, 4096, 4100, 8191, 8192, 8193, 16384, 20000, 65536, 70000,
                                  262144, 300000]
    params = [(1.0, 0.0), (100.0, 5.0), (1e-3, 0.0)]
    lines = []
    for i, n in enumerate(sizes):
        scale, shift = params[i % 3]
        seed = 2000 + i
        torch.manual_seed(seed)
        x = torch.randn(2, n) * scale + shift
        lines.append("sum %d %d %r %r : %s %s" % (seed, n, scale, shift, f32hex(x.sum(-1).tolist()),
                                                  f32hex(x.pow(2).mean(-1).tolist())))
    return lines


def gen_posenc():
    """The tables of mygpt/posenc.h, each value's float32 bits, with PyTorch's own code:
    sinusoidal T C : PE                 document 001's sinusoidal_encoding(T, C)
    inv_freq D BASE : F                 1.0 / (BASE ** (torch.arange(0, D, 2).float() / D))
    rope_cache D L : COS : SIN          document 002's cache, freqs = outer(arange(L), inv_freq)
    halves HD L SEED : OUT : GRAD       the notebook's compute_rope on x = torch.randn(L, HD)
                                        (row l at position l) after manual_seed(SEED), its tables
                                        for L positions, and x's gradient for an upstream
                                        gradient torch.randn(L, HD) drawn next
    halves_tables HD L : COS : SIN      the notebook's precompute_rope_params(HD, context_length=L)
    sincos N SEED : SIN : COS           torch.sin(x), torch.cos(x) of x = torch.rand(N) * 260 - 130
                                        after manual_seed(SEED): vectors of 8 with angles on
                                        both sides of 125 in magnitude
    Sizes mix tables under and over 125 radians (SLEEF's two ways of reducing an angle),
    rows of 12, 24, 14 and 6 values, whose vectors of 8 straddle two positions, and tables
    of 129 x 14 and 131 x 6 values, whose last vector is padded with zeros."""
    import torch
    from gen_chapter_expected import sinusoidal_encoding  # document 001's, as chapter 47 runs it
    torch.set_num_threads(1)
    lines = []
    for t, c in [(8, 6), (130, 12), (130, 32), (300, 4)]:
        pe = sinusoidal_encoding(t, c)
        lines.append("sinusoidal %d %d : %s" % (t, c, f32hex(pe.reshape(-1).tolist())))
    for d in [2, 6, 16, 32, 34, 64, 96, 128, 200, 256]:
        for base in [10000, 500000, 3]:
            f = 1.0 / (base ** (torch.arange(0, d, 2).float() / d))
            lines.append("inv_freq %d %d : %s" % (d, base, f32hex(f.tolist())))
    for d, n in [(16, 50), (12, 130), (32, 130), (6, 300)]:
        inv_freq = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        freqs = torch.outer(torch.arange(n).float(), inv_freq)
        lines.append("rope_cache %d %d : %s : %s" % (d, n, f32hex(freqs.cos().reshape(-1).tolist()),
                                                    f32hex(freqs.sin().reshape(-1).tolist())))
    for n, seed in [(4000, 4000), (4003, 4003)]:
        torch.manual_seed(seed)
        x = torch.rand(n) * 260 - 130
        lines.append("sincos %d %d : %s : %s" % (n, seed, f32hex(torch.sin(x).tolist()), f32hex(torch.cos(x).tolist())))
    for hd, n in [(16, 130), (12, 130), (14, 129), (6, 131)]:
        inv_freq = 1.0 / (10000 ** (torch.arange(0, hd, 2)[: (hd // 2)].float() / hd))
        angles = torch.arange(n)[:, None] * inv_freq[None, :]
        angles = torch.cat([angles, angles], dim=1)
        lines.append("halves_tables %d %d : %s : %s" % (hd, n, f32hex(torch.cos(angles).reshape(-1).tolist()),
                                                        f32hex(torch.sin(angles).reshape(-1).tolist())))
    for hd, n in [(16, 5), (16, 130), (12, 130), (24, 130), (64, 130), (14, 129), (6, 131)]:
        seed = 3000 + hd * 1000 + n
        inv_freq = 1.0 / (10000 ** (torch.arange(0, hd, 2)[: (hd // 2)].float() / hd))
        angles = torch.arange(n)[:, None] * inv_freq[None, :]
        angles = torch.cat([angles, angles], dim=1)
        cos, sin = torch.cos(angles), torch.sin(angles)
        torch.manual_seed(seed)
        x = torch.randn(n, hd)
        g = torch.randn(n, hd)
        xr = x.clone().requires_grad_(True)
        x1, x2 = xr[..., : hd // 2], xr[..., hd // 2:]
        out = (xr * cos) + (torch.cat((-x2, x1), dim=-1) * sin)
        out.backward(g)
        lines.append("halves %d %d %d : %s : %s" % (hd, n, seed, f32hex(out.detach().reshape(-1).tolist()),
                                                    f32hex(xr.grad.reshape(-1).tolist())))
    return lines


def write(name, lines, header):
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        f.write("# %s\n# generated by tools/gen_goldens.py -- do not edit\n" % header)
        for ln in lines:
            f.write(ln + "\n")
    print("wrote %s (%d lines)" % (os.path.relpath(path), len(lines)))


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--layernorm":
        import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)
        import torch
        write("layernorm.txt", gen_layernorm(), "F.layer_norm, torch %s, AVX2 kernels" % torch.__version__)
        return
    if len(sys.argv) == 2 and sys.argv[1] == "--sums":
        import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)
        import torch
        write("sums.txt", gen_sums(), "x.sum(-1), x.pow(2).mean(-1), torch %s, AVX2 kernels" % torch.__version__)
        return
    if len(sys.argv) == 2 and sys.argv[1] == "--posenc":
        import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)
        import torch
        write("posenc.txt", gen_posenc(), "position encodings, torch %s, AVX2 kernels" % torch.__version__)
        return
    if len(sys.argv) == 2 and sys.argv[1] == "--scalar-rng":
        # child process run with ATEN_CPU_CAPABILITY=default
        for ln in rng_chains("scalar"):
            print(ln)
        return
    import numpy
    import torch
    assert torch.__version__.startswith("1.13"), torch.__version__
    ver = "torch %s, numpy %s" % (torch.__version__, numpy.__version__)
    os.makedirs(OUT, exist_ok=True)
    write("rng.txt", rng_chains("avx2"), "RNG chains, AVX2 kernel, " + ver)
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default")
    scalar = subprocess.run([sys.executable, __file__, "--scalar-rng"], env=env, check=True,
                            capture_output=True, text=True).stdout.splitlines()
    write("rng_scalar.txt", scalar, "RNG chains, ATEN_CPU_CAPABILITY=default, " + ver)
    write("print_torch.txt", gen_print_torch(), "print(tensor), " + ver)
    write("print_numpy.txt", gen_print_numpy(), "print(ndarray), " + ver)
    write("numfmt.txt", gen_numfmt(), "Python/numpy number formats, " + ver)
    write("cli.txt", gen_cli(), "mygpt tool invocations and Python's output, " + ver)
    for only in ("--layernorm", "--sums", "--posenc"):  # each in a child that pins PyTorch's AVX2 kernels
        subprocess.run([sys.executable, __file__, only], check=True)


if __name__ == "__main__":
    main()
