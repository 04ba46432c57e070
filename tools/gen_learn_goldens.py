#!/usr/bin/python3
"""Regenerate tests/golden/learn.txt from PyTorch 1.13 (Debian's python3-torch), the goldens
of the book's appendix-D bells (lib/learn/schedule.c, lib/learn/clip.c):

    /usr/bin/python3 tools/gen_learn_goldens.py

norm SEED N SCALE : HEX
    torch.manual_seed(SEED); x = torch.randn(N) * SCALE; torch.norm(x) (float32 bits)
clip SEED MAX_NORM SCALE N1,N2,... POISON : TOTAL_HEX CHECKSUM1 CHECKSUM2 ...
    torch.manual_seed(SEED); one gradient torch.randn(Ni) * SCALE per tensor, in order;
    POISON `-`, or `inf:T:I` / `nan:T:I` (element I of tensor T set so); then
    torch.nn.utils.clip_grad_norm_(params, MAX_NORM): the total norm it returns and each
    clipped gradient's checksum (tools/reference_gpt.checksum)
lr PEAK INITIAL MIN WARMUP TOTAL COSINE : LR0 LR1 ...
    the appendix's train_model schedule (COSINE 1, D.2 and D.4) or D.1's warmup then the
    peak (COSINE 0), each step's learning rate as Python's repr (a double, exactly)

Deterministic: rerunning rewrites the same file.
"""
import math
import os
import struct
import sys

import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from reference_gpt import checksum  # noqa: E402

GOLDEN = os.path.join(HERE, "..", "tests", "golden")


def h32(v):
    return "%08x" % struct.unpack("<I", struct.pack("<f", v))[0]


def draw(seed, sizes, scale):
    torch.manual_seed(seed)
    return [torch.randn(n) * scale for n in sizes]


def lrs(peak, initial, min_lr, warmup, total, cosine):
    """train_model's lines (appendix D.4; D.1 without the cosine)."""
    out = []
    lr_increment = (peak - initial) / warmup
    for global_step in range(total):
        if global_step < warmup:
            lr = initial + global_step * lr_increment
        elif not cosine:
            lr = peak
        else:
            progress = ((global_step - warmup) / (total - warmup))
            lr = min_lr + (peak - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))
        out.append(lr)
    return out


def main():
    assert torch.__version__.startswith("1.13"), torch.__version__
    torch.set_num_threads(1)
    lines = ["# tools/gen_learn_goldens.py: torch.norm, clip_grad_norm_ and appendix D's learning rates"]
    seed = 0
    sizes = [0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 100, 161, 768, 1000, 3072, 4099, 65541, 589824,
             2359296, 3216448]
    for n in sizes:
        for scale in (1.0, 1e-3, 37.5):
            seed += 1
            x = draw(seed, [n], scale)[0]
            lines.append("norm %d %d %r : %s" % (seed, n, scale, h32(torch.norm(x).item())))
    for n in (9, 1000, 65541):
        for scale in (1e-20, 1e20):  # squares below float32's normals, and beyond its range
            seed += 1
            x = draw(seed, [n], scale)[0]
            lines.append("norm %d %d %r : %s" % (seed, n, scale, h32(torch.norm(x).item())))

    # the book's GPTModel at width 64, 4 heads, 2 layers, context 256: parameters() sizes
    C, V, T = 64, 50257, 256
    block = [C * C] * 4 + [C, 4 * C * C, 4 * C, C * 4 * C, C, C, C, C, C]
    book = [V * C, T * C] + block * 2 + [C, C, V * C]
    cases = [(1.0, 1.0, [3, 5, 8, 1000, 17]), (1.0, 1e-3, [3, 5, 8, 1000, 17]), (0.5, 0.03, [161]),
             (2.5, 0.2, [7] * 9 + [16]), (1e-3, 1e-3, [100, 200, 300]), (1.0, 1e-4, book), (1.0, 1e-2, book),
             (0.3, 1e-5, book), (1.0, 0.1, [768 * 768, 768, 3072 * 768, 3072])]
    for max_norm, scale, ns in cases:
        for poison in ("-",):
            seed += 1
            clip_case(lines, seed, max_norm, scale, ns, poison)
    for poison in ("inf:1:3", "nan:0:0", "inf:2:999"):
        seed += 1
        clip_case(lines, seed, 1.0, 0.5, [3, 5, 1000], poison)

    for peak, initial, min_lr, warmup, total, cosine in (
            (0.001, 1e-5, 1e-5, 27, 135, 1),     # the appendix's run (D.4)
            (0.001, 1e-5, 1e-5, 3, 18, 1),       # the chapter's --smoke
            (0.01, 0.0001, 1e-5, 27, 135, 1),    # D.2's curve (min_lr = 0.1 * initial_lr)
            (0.01, 0.0001, 1e-5, 27, 135, 0),    # D.1's curve
            (0.001, 3e-05, 1e-6, 20, 100, 1),    # train_model's defaults
            (6e-4, 0.0, 6e-5, 7, 1000, 1),
            (4e-4, 1e-5, 0.0, 1, 2, 1),
            (0.1, 0.2, 0.05, 5, 11, 1)):         # a warmup that falls
        lines.append("lr %r %r %r %d %d %d : %s" % (peak, initial, min_lr, warmup, total, cosine,
                                                     " ".join(repr(v) for v in lrs(peak, initial, min_lr,
                                                                                   warmup, total, cosine))))
    with open(os.path.join(GOLDEN, "learn.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def clip_case(lines, seed, max_norm, scale, ns, poison):
    grads = draw(seed, ns, scale)
    if poison != "-":
        kind, t, i = poison.split(":")
        grads[int(t)][int(i)] = float(kind)
    params = []
    for g in grads:
        p = torch.nn.Parameter(torch.zeros_like(g))
        p.grad = g.clone()
        params.append(p)
    total = torch.nn.utils.clip_grad_norm_(params, max_norm=max_norm)
    lines.append("clip %d %r %r %s %s : %s %s" % (seed, max_norm, scale, ",".join(map(str, ns)), poison,
                                                  h32(total.item()),
                                                  " ".join(str(checksum(p.grad)) for p in params)))


if __name__ == "__main__":
    main()
