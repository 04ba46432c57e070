#!/usr/bin/python3
"""mygpt's Llama decoding against llama2.c's run.c (its runomp) on the same models, in one run.

Builds llama2.c's run.c from a given checkout into a temporary folder, as its Makefile's
runomp target does (`-Ofast -fopenmp -march=native`) and as the speed issue names it
(`-O3 -march=native -fopenmp`: without -ffast-math gcc does not vectorise run.c's sums).
Writes a random model of stories15M's shape as llama2.c's .bin (`mygpt-bench --generate
--config stories15M --save-model`, which also says the bytes of weights a token reads),
and takes llama2.c's stories260K from corpus/llama. Then, round after round, runs

    run MODEL -z TOKENIZER -t T -p P -s S -n STEPS
    mygpt generate --checkpoint MODEL --tokenizer TOKENIZER --temperature T --top-p P
                   --sample-seed S --steps STEPS

at each thread count (OMP_NUM_THREADS), the programs' order turning each round, and the
read bandwidth (`mygpt-bench --bandwidth`) beside them. Each run is timed whole (its
wall clock and its CPU time: the machine may be shared) and by its own report on stderr
(both run.c's measure: the positions after the first over the time since the first was
done, so neither counts loading the model, mygpt's packing of the weights, nor the first
forward). Prints each figure's median over the rounds, the ratios
(> 1: mygpt is faster), the bandwidth limit of the 15M model's tokens, the load average
before and after, and checks that every program printed the same text. Measures only:
nothing here is a test.

    python3 bench/compare_llama2c.py --llama2c LLAMA2C_CHECKOUT [--threads 1,2] [--rounds 5]
        [--steps 256] [--models stories15M,stories260K] [--temperature 0] [--wait-policy PASSIVE]
        [--mygpt build/cli/mygpt] [--bench build/bench/mygpt-bench] [--cc cc]
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
BUILDS = (("run -Ofast", "-Ofast"), ("run -O3", "-O3"))


def build_run(cc, checkout, work):
    """run.c built with each of BUILDS' flags: {name: path}"""
    out = {}
    for name, opt in BUILDS:
        exe = os.path.join(work, "run" + opt)
        cmd = [cc, opt, "-march=native", "-fopenmp", os.path.join(checkout, "run.c"), "-lm", "-o", exe]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("compare_llama2c: %s failed:\n%s" % (" ".join(cmd), r.stderr))
        out[name] = exe
    return out


def write_15m(bench, path):
    """The random stories15M-shaped model as llama2.c's .bin; returns MB of weights a token reads"""
    cmd = [bench, "--generate", "--config", "stories15M", "--weights", "fp32", "--threads", "1", "--reps", "1",
           "--prompt", "1", "--new", "2", "--save-model", path]
    r = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"^\s*fp32\s+1\s+([0-9.]+)", r.stdout, re.M)
    if r.returncode != 0 or not m:
        sys.exit("compare_llama2c: %s failed:\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return float(m.group(1))


def timed(cmd, env):
    """(stdout, wall s, CPU s, tokens/s the program reports, positions or None)"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if r.returncode != 0:
        sys.exit("compare_llama2c: %s failed:\n%s" % (" ".join(cmd), r.stderr))
    m = re.search(r"achieved tok/s: ([0-9.]+)", r.stderr) or re.search(
        r"(\d+) positions after the first in [0-9.]+ s: ([0-9.]+) tokens/s", r.stderr)
    if not m:
        sys.exit("compare_llama2c: no speed on %s's stderr:\n%s" % (cmd[0], r.stderr))
    positions = int(m.group(1)) + 1 if m.lastindex == 2 else None
    return r.stdout, wall, cpu, float(m.group(m.lastindex)), positions


def bandwidth(bench, env):
    r = subprocess.run([bench, "--bandwidth", "--threads", env["OMP_NUM_THREADS"]], env=env, capture_output=True,
                       text=True)
    m = re.search(r"gb_per_s=([0-9.]+)", r.stdout)
    return float(m.group(1)) if m else float("nan")


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--llama2c", required=True, help="a checkout of karpathy/llama2.c (run.c, tokenizer.bin)")
    ap.add_argument("--mygpt", default=os.path.join(ROOT, "build", "cli", "mygpt"))
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bench", "mygpt-bench"))
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=256, help="positions, run.c's -n (the 15M model's context: 256)")
    ap.add_argument("--models", default="stories15M,stories260K")
    ap.add_argument("--temperature", default="0", help="run.c's -t (0: argmax)")
    ap.add_argument("--top-p", default="0.9")
    ap.add_argument("--seed", default="42")
    ap.add_argument("--wait-policy", default="", help="OMP_WAIT_POLICY for both (PASSIVE: waiting threads sleep, "
                    "which a machine busy with other jobs needs; default: libgomp's own)")
    args = ap.parse_args()
    checkout = os.path.abspath(args.llama2c)
    threads = [int(t) for t in args.threads.split(",")]
    load0 = os.getloadavg()
    print("OMP_WAIT_POLICY=%s for both; %d positions (-n); -t %s" % (args.wait_policy or "(libgomp's default)",
                                                                   args.steps, args.temperature), flush=True)
    with tempfile.TemporaryDirectory() as work:
        runs = build_run(args.cc, checkout, work)
        models, mb_15m = {}, None
        for name in args.models.split(","):
            if name == "stories15M":
                models[name] = (os.path.join(work, "stories15M_random.bin"), os.path.join(checkout, "tokenizer.bin"))
                mb_15m = write_15m(os.path.abspath(args.bench), models[name][0])
            elif name == "stories260K":
                models[name] = (os.path.join(ROOT, "corpus", "llama", "stories260K.bin"),
                                os.path.join(ROOT, "corpus", "llama", "tok512.bin"))
            else:
                sys.exit("compare_llama2c: --models: '%s' is not stories15M or stories260K" % name)
        progs = list(runs) + ["mygpt"]
        flags = ["-t", args.temperature, "-p", args.top_p, "-s", args.seed, "-n", str(args.steps)]
        res = {}  # (model, threads, prog) -> {"wall": [], "cpu": [], "own": []}
        gbs = {t: [] for t in threads}
        texts = {}
        for k in range(args.rounds):
            for t in threads:
                env = dict(os.environ, OMP_NUM_THREADS=str(t))
                if args.wait_policy:
                    env["OMP_WAIT_POLICY"] = args.wait_policy
                gbs[t].append(bandwidth(os.path.abspath(args.bench), env))
                for model, (path, tok) in models.items():
                    order = progs[k % len(progs):] + progs[:k % len(progs)]
                    for prog in order:
                        if prog == "mygpt":
                            cmd = [os.path.abspath(args.mygpt), "generate", "--checkpoint", path, "--tokenizer", tok,
                                   "--temperature", args.temperature, "--top-p", args.top_p, "--sample-seed",
                                   args.seed, "--steps", str(args.steps)]
                        else:
                            cmd = [runs[prog], path, "-z", tok] + flags
                        out, wall, cpu, own, positions = timed(cmd, env)
                        texts.setdefault(model, {})[prog] = out
                        r = res.setdefault((model, t, prog), {"wall": [], "cpu": [], "own": [], "pos": positions})
                        r["wall"].append(wall)
                        r["cpu"].append(cpu)
                        r["own"].append(own)
                        if positions is not None:
                            r["pos"] = positions
                        print("round %d %-11s %d thread%s %-10s wall %6.3f s, CPU %6.3f s, own report %8.1f tok/s"
                              % (k + 1, model, t, " " if t == 1 else "s", prog, wall, cpu, own), flush=True)
            print("  load average after round %d: %.2f %.2f %.2f" % ((k + 1,) + os.getloadavg()), flush=True)
    load1 = os.getloadavg()
    print("\nmedians of %d rounds (tok/s whole: the positions over the whole process's wall clock, or CPU time,"
          " loading included)" % args.rounds)
    for model in models:
        same = len(set(texts[model].values())) == 1
        print("%s: every program printed the same text: %s" % (model, "yes" if same else "NO"))
        for t in threads:
            pos = res[(model, t, "mygpt")]["pos"]
            line = {}
            for prog in progs:
                r = res[(model, t, prog)]
                line[prog] = (med(r["own"]), pos / med(r["wall"]), pos / med(r["cpu"]))
                print("  %d thread%s %-10s own report %8.1f tok/s; whole process %8.1f tok/s of wall, %8.1f of CPU"
                      % ((t, " " if t == 1 else "s", prog) + line[prog]))
            for prog in runs:
                print("  %d thread%s mygpt / %-9s own reports %.2fx, whole wall %.2fx, whole CPU %.2fx"
                      % (t, " " if t == 1 else "s", prog, line["mygpt"][0] / line[prog][0],
                         line["mygpt"][1] / line[prog][1], line["mygpt"][2] / line[prog][2]))
            if model == "stories15M" and mb_15m:
                print("  %d thread%s read bandwidth %.1f GB/s (median): the limit %.1f tok/s (%.2f MB a token); mygpt's"
                      " own report is %.0f %% of it" % (t, " " if t == 1 else "s", med(gbs[t]),
                                                        med(gbs[t]) * 1e3 / mb_15m, mb_15m,
                                                        100 * line["mygpt"][0] / (med(gbs[t]) * 1e3 / mb_15m)))
    print("load average before %.2f %.2f %.2f, after %.2f %.2f %.2f" % (load0 + load1))


if __name__ == "__main__":
    main()
