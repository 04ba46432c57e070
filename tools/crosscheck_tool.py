#!/usr/bin/python3
"""Cross-check the built `mygpt` tool against live PyTorch on random invocations.

Development oracle only (needs Debian's python3-torch). Each trial draws a fresh
seed, shape, format and subcommand (none of them taken from the committed goldens),
runs `mygpt`, runs the same thing in PyTorch, and compares the printed text byte
for byte. A random GPT's logits must be within 1e-5 x max(1, |logit|) of PyTorch's, or,
where PyTorch's own float32 is that far from float64 (a tiny width: a LayerNorm over 2 to
4 values), no farther from the same model in float64 than 1.25 x PyTorch's float32
(docs/model-spec.md's rule).

    /usr/bin/python3 tools/crosscheck_tool.py [--trials N] [--model-trials M] [--exe build/cli/mygpt] [--seed S]
"""
import argparse
import random
import struct
import subprocess

import torch
import torch.nn as nn


def f32hex(values):
    return "".join("%08x\n" % struct.unpack("<I", struct.pack("<f", float(v)))[0] for v in values)


def render(t, fmt, rnd_k, param=False):
    if fmt == "exact":
        if t.dtype == torch.float32:
            return f32hex(t.detach().flatten().tolist())
        return "".join("%d\n" % v for v in t.flatten().tolist())
    if fmt == "numpy":
        a = t.detach().numpy()
        return str(a if rnd_k is None else a.round(rnd_k)) + "\n"
    return repr(t) + "\n"


def trial(rng, exe):
    seed = rng.choice([rng.randrange(0, 2**32), rng.randrange(2**32, 2**64), -rng.randrange(1, 2**63)])
    fmt = rng.choice(["torch", "numpy", "exact"])
    rnd_k = rng.choice([None, 2, 3, 4]) if fmt == "numpy" else None
    kind = rng.choice(["randn", "randn", "rand", "randint", "randperm", "linear", "embedding"])
    args = ["--seed", str(seed), "--format", fmt] + (["--round", str(rnd_k)] if rnd_k is not None else [])
    torch.manual_seed(seed % 2**64)
    expected = ""

    def shape():
        nd = rng.randint(1, 3)
        return [rng.randint(1, 13) for _ in range(nd)]

    if kind in ("randn", "rand", "randint"):
        shapes = [shape() for _ in range(rng.randint(1, 3))]
        for s in shapes:
            args += ["--shape", ",".join(map(str, s))]
        if kind == "randn":
            mean, std = rng.choice([(0.0, 1.0), (0.0, 0.02), (1.5, 3.0)])
            args += ["--mean", repr(mean), "--std", repr(std)]
            for s in shapes:
                t = torch.empty(s)
                if (mean, std) == (0.0, 1.0):
                    t = torch.randn(s)
                else:
                    nn.init.normal_(t, mean, std)
                expected += render(t, fmt, rnd_k)
        elif kind == "rand":
            lo = rng.choice([0.0, -1.0, -0.3, 2.0])
            hi = lo + rng.choice([1.0, 0.6, 5.5])
            args += ["--low", repr(lo), "--high", repr(hi)]
            for s in shapes:
                expected += render(torch.empty(s).uniform_(lo, hi), fmt, rnd_k)
        else:
            lo = rng.choice([0, -100, 7])
            hi = lo + rng.choice([1, 10, 1000, 2**33])
            args += ["--low", str(lo), "--high", str(hi)]
            for s in shapes:
                expected += render(torch.randint(lo, hi, s), fmt, rnd_k)
        cmd = [kind] + args
    elif kind == "randperm":
        n = rng.randint(0, 60)
        cmd = ["randperm", "--n", str(n)] + args
        expected = render(torch.randperm(n), fmt, rnd_k)
    elif kind == "linear":
        fin, fout, bias = rng.randint(1, 40), rng.randint(1, 12), rng.random() < 0.7
        lin = nn.Linear(fin, fout, bias=bias)
        cmd = ["init", "linear", "--in", str(fin), "--out", str(fout)] + ([] if bias else ["--no-bias"]) + args
        expected = render(lin.weight, fmt, rnd_k) + (render(lin.bias, fmt, rnd_k) if bias else "")
    else:
        num, dim = rng.randint(1, 30), rng.randint(1, 10)
        emb = nn.Embedding(num, dim)
        cmd = ["init", "embedding", "--num", str(num), "--dim", str(dim)] + args
        expected = render(emb.weight, fmt, rnd_k)
    got = subprocess.run([exe] + cmd, capture_output=True, text=True)
    return cmd, expected, got


def model_trial(rng, exe):
    """A random GPT: parameters bit-exact, logits within 1e-5 (or PyTorch's own error from
    float64), the same bytes on 1/2/7 threads."""
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from reference_gpt import GPT
    h = rng.choice([1, 2, 3, 4, 6, 8])
    C = h * rng.randint(1, 16)
    V, L, maxT = rng.randint(2, 700), rng.randint(1, 4), rng.randint(1, 48)
    B, T = rng.randint(1, 4), None
    T = rng.randint(1, maxT)
    seed = rng.randrange(0, 2**64)
    ids = [[rng.randrange(V) for _ in range(T)] for _ in range(B)]
    cfg = ["--seed", str(seed), "--vocab", str(V), "--embed", str(C), "--heads", str(h),
           "--layers", str(L), "--max-seq", str(maxT)]
    torch.manual_seed(seed)
    gpt = GPT(V, C, h, L, maxT).eval()
    want_params = f32hex(torch.cat([p.detach().flatten() for p in gpt.parameters()]).tolist())
    got = subprocess.run([exe, "init", "gpt", "--format", "exact"] + cfg, capture_output=True, text=True)
    problems = []
    if got.stdout != want_params:
        problems.append("parameters differ")
    with torch.no_grad():
        ref = gpt(torch.tensor(ids)).flatten().tolist()
    idarg = ";".join(",".join(map(str, r)) for r in ids)
    outs = []
    for threads in ["1", "2", "7"]:
        env = dict(os.environ, OMP_NUM_THREADS=threads)
        outs.append(subprocess.run([exe, "forward", "--format", "exact", "--ids", idarg] + cfg,
                                   capture_output=True, text=True, env=env).stdout)
    if not (outs[0] == outs[1] == outs[2]):
        problems.append("output bytes depend on the thread count")
    vals = [struct.unpack("<f", struct.pack("<I", int(x, 16)))[0] for x in outs[0].split()]
    if len(vals) != len(ref):
        problems.append("%d logits, want %d" % (len(vals), len(ref)))
    else:
        worst = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(vals, ref))
        if not worst <= 1e-5:
            g64 = GPT(V, C, h, L, maxT).eval()
            g64.load_state_dict(gpt.state_dict())
            with torch.no_grad():
                r64 = g64.double()(torch.tensor(ids)).flatten().tolist()
            e_mine = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(vals, r64))
            e_torch = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(ref, r64))
            within = e_mine <= 1.25 * e_torch
            print("model %s: logits %.3g from PyTorch; from float64: mygpt %.3g, PyTorch float32 %.3g: %s"
                  % ("V=%d C=%d h=%d N=%d seed=%d" % (V, C, h, L, seed), worst, e_mine, e_torch,
                     "within PyTorch's own error" if within else "DIFFERS"))
            if not within:
                problems.append("logits differ by %g (from float64: mygpt %g, PyTorch %g)" % (worst, e_mine, e_torch))
    return "V=%d C=%d h=%d N=%d maxT=%d B=%d T=%d seed=%d" % (V, C, h, L, maxT, B, T, seed), problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-trials", type=int, default=0,
                    help="also check this many random GPT configurations (init gpt, forward)")
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--exe", default="build/cli/mygpt")
    ap.add_argument("--seed", type=int, default=None, help="seed of the trial generator")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    ok = bad = 0
    for _ in range(a.trials):
        cmd, expected, got = trial(rng, a.exe)
        if got.returncode == 0 and got.stdout == expected:
            ok += 1
        else:
            bad += 1
            if bad <= 5:
                print("MISMATCH: mygpt " + " ".join(cmd))
                print("--- torch\n" + expected + "--- mygpt\n" + got.stdout + got.stderr)
    print("random tensors: %d agreed, %d differed" % (ok, bad))
    mok = mbad = 0
    for _ in range(a.model_trials):
        desc, problems = model_trial(rng, a.exe)
        if problems:
            mbad += 1
            print("MODEL MISMATCH %s: %s" % (desc, "; ".join(problems)))
        else:
            mok += 1
    if a.model_trials:
        print("random GPTs: %d agreed (parameters bit-exact, logits within 1e-5 or PyTorch's own error, "
              "same bytes on 1/2/7 threads), %d differed" % (mok, mbad))
    raise SystemExit(1 if bad or mbad else 0)


if __name__ == "__main__":
    main()
