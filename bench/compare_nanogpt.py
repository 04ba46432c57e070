#!/usr/bin/python3
"""mygpt's shakespeare-char preset against nanoGPT's train.py on the same machine, in one run.

Each round runs nanoGPT's train.py (PyTorch 1.13, float32, CPU, the README's command via
tools/reference_nanogpt.py's copy of a nanoGPT checkout) and then
`mygpt train --preset shakespeare-char` for the same iterations, in fresh processes with
the same environment (threads: both libraries' defaults, or --threads N for both), and
times each run's wall clock and the per-iteration times each prints (`iter N: ..., time
Xms`, the first 5 left out as train.py's mfu leaves them out). Prints the medians over the
rounds and the ratio nanoGPT / mygpt (> 1: mygpt is faster), and checks that both printed
the same step lines. Measures only: nothing here is a test.

    /usr/bin/python3 bench/compare_nanogpt.py --nanogpt NANOGPT_CHECKOUT \\
        [--text corpus/tinyshakespeare.txt] [--iters 2000] [--eval-every 250] [--rounds 3]
        [--threads N] [--mygpt build/cli/mygpt]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import reference_nanogpt  # noqa: E402


def timed(cmd, cwd, env):
    t0 = time.time()
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.time() - t0
    if r.returncode != 0:
        sys.exit("%s failed:\n%s" % (" ".join(cmd), r.stderr))
    per_iter = [float(m.group(2)) for m in re.finditer(r"^iter (\d+): .*time ([0-9.]+)ms", r.stdout, re.M)
                if int(m.group(1)) >= 5]
    steps = [l for l in r.stdout.splitlines() if l.startswith("step ")]
    return wall, statistics.median(per_iter), steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nanogpt", required=True)
    ap.add_argument("--text", default=os.path.join(ROOT, "corpus", "tinyshakespeare.txt"))
    ap.add_argument("--mygpt", default=os.path.join(ROOT, "build", "cli", "mygpt"))
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="OMP_NUM_THREADS for both (0: their defaults)")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.threads:
        env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = str(args.threads)
    text, tool = os.path.abspath(args.text), os.path.abspath(args.mygpt)
    walls = {"nanoGPT": [], "mygpt": []}
    iters = {"nanoGPT": [], "mygpt": []}
    with tempfile.TemporaryDirectory() as work:
        reference_nanogpt.prepare(os.path.abspath(args.nanogpt), text, work)
        nano = [sys.executable, "train.py", "config/train_shakespeare_char.py"] + reference_nanogpt.README_CPU + [
            "--dtype=float32", "--max_iters=%d" % args.iters, "--eval_interval=%d" % args.eval_every]
        mine = [tool, "train", "--preset", "shakespeare-char", "--text", text, "--steps", str(args.iters),
                "--eval-every", str(args.eval_every)]
        for k in range(args.rounds):
            for who, cmd in (("nanoGPT", nano), ("mygpt", mine)):
                wall, it, steps = timed(cmd, work, env)
                walls[who].append(wall)
                iters[who].append(it)
                print("round %d %-7s wall %7.1f s, median iteration %7.2f ms" % (k + 1, who, wall, it), flush=True)
                if who == "nanoGPT":
                    nano_steps = steps
                elif steps != nano_steps:
                    print("  the step lines differ:\n    " + "\n    ".join(
                        "%s | %s" % (a, b) for a, b in zip(nano_steps, steps) if a != b))
    for who in walls:
        print("%-7s median wall %7.1f s, median iteration %7.2f ms (%d rounds)"
              % (who, statistics.median(walls[who]), statistics.median(iters[who]), args.rounds))
    print("nanoGPT / mygpt: wall %.2fx, iteration %.2fx"
          % (statistics.median(walls["nanoGPT"]) / statistics.median(walls["mygpt"]),
             statistics.median(iters["nanoGPT"]) / statistics.median(iters["mygpt"])))


if __name__ == "__main__":
    main()
