#!/usr/bin/python3
"""mygpt's quantized models against PyTorch running the dequantized weights, on random
seeds, sizes, architectures and ids no test uses (development oracle only):

    /usr/bin/python3 tools/crosscheck_quantize.py [BUILD_DIR] [TRIALS] [SEED] [--gpt2]

Each trial draws an architecture, a format (bf16 or int8) and a configuration, builds the
model in PyTorch as mygpt_gpt_create does (torch.manual_seed(S), then the reference
model), replaces its token embedding and every 2-D linear weight by the dequantized
values of tools/quantize_reference.py's recipe, and compares:
  - `mygpt forward --weights F --format exact`'s logits (within 1e-5 * max(1, |x|));
  - `mygpt generate --weights F` greedy tokens with the tutorial's loop in PyTorch,
    past the context (the window slides).
--gpt2 adds two GPT-2-sized cases, bf16 and int8 (V 50257, C 768, 12 heads, 12 layers, context 64).
"""
import os
import random
import struct
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from quantize_reference import dequantize, model  # noqa: E402
from reference_train import generate  # noqa: E402


def mygpt(build, args):
    # (the generated text of a random model may end inside a UTF-8 character: only the
    # ids line is read, so bytes that do not decode are replaced)
    out = subprocess.run([os.path.join(build, "cli", "mygpt")] + args, capture_output=True, text=True,
                         errors="replace")
    if out.returncode:
        sys.exit("mygpt %s failed: %s" % (" ".join(args), out.stderr))
    return out.stdout


def case(build, arch, fmt, seed, V, C, NH, L, M, rnd):
    m = model(arch, seed, V, C, NH, L, M).eval()
    with torch.no_grad():
        for name, p in m.named_parameters():
            if p.dim() == 2 and "pos" not in name and "position" not in name:
                p.copy_(dequantize(p, fmt))
    T = rnd.randrange(1, M + 1)
    ids = [rnd.randrange(V) for _ in range(T)]
    flags = ["--seed", str(seed), "--vocab", str(V), "--embed", str(C), "--heads", str(NH), "--layers", str(L),
             "--max-seq", str(M), "--arch", arch, "--weights", fmt]
    got = [struct.unpack("<f", struct.pack("<I", int(h, 16)))[0]
           for h in mygpt(build, ["forward"] + flags + ["--ids", ",".join(map(str, ids)), "--format", "exact"]).split()]
    with torch.no_grad():
        want = m(torch.tensor([ids])).flatten().tolist()
    if len(got) != len(want):
        sys.exit("mygpt printed %d logits, PyTorch %d" % (len(got), len(want)))
    if V * C < 1_000_000:  # within 1e-5 * max(1, |x|) of PyTorch
        worst = max(abs(g - w) / (1e-5 * max(1.0, abs(w))) for g, w in zip(got, want))
    else:  # GPT-2 scale (docs/model-spec.md): no farther from float64 than PyTorch float32, x 1.25
        with torch.no_grad():
            truth = m.double()(torch.tensor([ids])).flatten().tolist()
        m.float()

        def errors(xs):
            rel = [abs(x - t) / max(1.0, abs(t)) for x, t in zip(xs, truth)]
            return max(rel), (sum(r * r for r in rel) / len(rel)) ** 0.5
        (ow, orms), (tw, trms) = errors(got), errors(want)
        print("  against float64: mygpt worst %.2e rms %.2e, PyTorch float32 worst %.2e rms %.2e" % (ow, orms, tw, trms))
        worst = max(ow / (1.25 * tw), orms / (1.25 * trms))
    prompt = ids[: max(1, T // 2)]
    new = M + 3  # past the context: the window slides
    line = mygpt(build, ["generate"] + flags + ["--ids", ",".join(map(str, prompt)), "--max-new", str(new),
                                                "--no-stream", "--eos", "-1"]).split("\n")[0]
    ours = [int(x) for x in line.split()]
    theirs = generate(m, torch.tensor([prompt]), new, M)[0].tolist()
    ok = worst <= 1 and ours == theirs
    print("%-18s %s seed %4d V %5d C %4d NH %2d L %2d M %4d T %3d: logits worst %.2f of the bound, %d tokens %s"
          % (arch, fmt, seed, V, C, NH, L, M, T, worst, len(ours), "same" if ours == theirs else "DIFFER"))
    return ok


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    build = args[0] if args else os.path.join(HERE, "..", "build")
    trials = int(args[1]) if len(args) > 1 else 6
    rnd = random.Random(int(args[2]) if len(args) > 2 else 2611)
    bad = 0
    for _ in range(trials):
        arch = rnd.choice(["course", "llms-from-scratch", "gpt2"])
        NH = rnd.choice([1, 2, 3, 4])
        C = NH * rnd.choice([4, 8, 16, 24, 40])
        bad += not case(build, arch, rnd.choice(["bf16", "int8"]), rnd.randrange(10000), rnd.randrange(5, 700), C, NH,
                        rnd.randrange(1, 4), rnd.choice([8, 16, 33]), rnd)
    if "--gpt2" in sys.argv:
        for fmt in ("bf16", "int8"):
            bad += not case(build, "gpt2", fmt, 7, 50257, 768, 12, 12, 64, rnd)
    print("%d of %d differ" % (bad, trials + (2 if "--gpt2" in sys.argv else 0)))
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
