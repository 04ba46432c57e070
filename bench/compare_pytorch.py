#!/usr/bin/python3
"""mygpt against PyTorch on the same machine, in one run, side by side.

For every config and thread count, runs PyTorch (the same model, tools/reference_gpt.py,
under torch.no_grad(), eval mode) and mygpt-bench in fresh processes, with
OMP_NUM_THREADS / OPENBLAS_NUM_THREADS set to the thread count. PyTorch runs with the
default OpenMP wait policy and with OMP_WAIT_POLICY=PASSIVE, each with OpenBLAS's
default core detection and with the core it finds when forced to detect
(OPENBLAS_CORETYPE), and keeps its fastest result. mygpt runs just before each of those
PyTorch runs and keeps its fastest too: both sides get the same number of tries, taken
turn about, so a slow spell of a shared machine cannot favour either. Then sgemm at
every GPT-2 matmul shape (q/k/v/o, fc1, fc2, the head at B*T = 1024): mygpt's kernel
against OpenBLAS (F.linear), the same way. Prints the
kept medians and the ratio PyTorch / mygpt (> 1: mygpt is faster).

Optional and never part of the tests: without PyTorch it says so and exits 0.

    /usr/bin/python3 bench/compare_pytorch.py [--configs tiny,char,gpt2,gpt2-b8]
        [--train-configs verdict,gpt2-b4t64] [--generate-new 32]
        [--matmul-shapes "qkvo=1024,768,768;fc1=..."] [--threads 1,2] [--reps 3]
        [--bench build/bench/mygpt-bench] [--csv FILE]

Training: the reference model, F.cross_entropy, loss.backward(), torch.optim.AdamW's
default path against mygpt-bench --train. --book-ch5 instead times the book's chapter 5
whole, once each, one after the other: build/chapters/38_book_training against
tools/reference_book_ch5.py --sample-after (~5 and ~7 minutes on 2 cores), and checks
that both print the same lines. Generation: the tutorial's loop (the whole
window every step) against mygpt's KV-cache decoding, per new token.

--book-finetune [--rounds 5] [--reps 5] [--parts ch6,ch7] times the book's two fine-tunings at GPT-2 small
(random weights in GPT-2's shape), mygpt and PyTorch 1.13 taking turns round by round
(who goes first alternates), each round a fresh process with one warm-up step and --reps
timed ones, the load average (uptime) noted with every figure:
  chapter 6: the book's train_classifier_simple step (batch 8 x 120, the last block,
    final_norm and the 2-class head train, AdamW lr 5e-5 weight_decay 0.1) and its
    evaluation batch (model(x)[:, -1, :] under torch.no_grad()), projected to the book's
    5-epoch run from the step and batch counts of its data (a projection, not a run);
    the step's FLOP limit from mygpt-bench --classify's FMA peak of the same round.
  chapter 7: the book's train_model_simple step with every parameter training (batch 8
    padded to 70 tokens), tokens/s (padding counted).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
CONFIGS = {  # name: V, C, H, N, T, B
    "tiny": (4, 4, 2, 2, 4, 1),
    "char": (65, 384, 6, 6, 256, 4),
    "gpt2": (50257, 768, 12, 12, 1024, 1),
    "gpt2-b8": (50257, 768, 12, 12, 64, 8),
}
TRAIN_CONFIGS = {  # name: V, C, H, N, T, B, the embeddings' std (mygpt-bench --train's)
    "tiny-train": (4, 4, 2, 2, 3, 1, 1.0),
    "verdict": (50257, 64, 4, 2, 32, 8, 1.0),
    "gpt2-b4t64": (50257, 768, 12, 12, 64, 4, 0.02),
}


def worker(args):
    """Runs inside a fresh process: times PyTorch and prints median_ms=..."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    if args.worker == "matmul":
        M, K, N = (int(x) for x in args.shape.split(","))
        a, w = torch.rand(M, K) * 2 - 1, torch.rand(N, K) * 2 - 1
        times = []
        for r in range(args.reps + 2):
            t = time.perf_counter()
            torch.nn.functional.linear(a, w)
            if r >= 2:
                times.append((time.perf_counter() - t) * 1e3)
        print("median_ms=%.4f" % statistics.median(times))
        return
    if args.worker in ("book-ch6", "book-instruct"):
        return book_worker(args)
    from reference_gpt import GPT
    if args.worker.startswith("train-"):  # one training step, as the tutorial writes it
        import torch.nn.functional as F
        V, C, H, N, T, B, emb_std = TRAIN_CONFIGS[args.worker[6:]]
        torch.manual_seed(0)
        gpt = GPT(V, C, H, N, T)
        if emb_std != 1.0:  # as bench_learn.c: GPT-2's initializer_range
            with torch.no_grad():
                for m in gpt.modules():
                    if isinstance(m, torch.nn.Embedding):
                        m.weight.mul_(emb_std)
        x = torch.tensor([[(i * 7919) % V for i in range(b * T, (b + 1) * T)] for b in range(B)])
        y = torch.tensor([[(i * 104729 + 1) % V for i in range(b * T, (b + 1) * T)] for b in range(B)])
        opt = torch.optim.AdamW(gpt.parameters(), lr=1e-4)
        times = []
        for r in range(1 + args.reps):
            t = time.perf_counter()
            loss = F.cross_entropy(gpt(x).flatten(0, 1), y.flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
            if r >= 1:
                times.append((time.perf_counter() - t) * 1e3)
        print("median_ms=%.4f" % statistics.median(times))
        return
    if args.worker == "generate":  # the tutorial's loop: the whole window every step, greedy
        torch.manual_seed(0)
        gpt = GPT(50257, 768, 12, 12, 1024).eval()
        idx = torch.tensor([[(i * 7919) % 50257 for i in range(16)]])
        t = time.perf_counter()
        with torch.no_grad():
            for _ in range(args.reps):  # reps = new tokens
                logits = gpt(idx[:, -1024:])[:, -1, :]
                idx = torch.cat([idx, torch.argmax(logits, dim=-1, keepdim=True)], dim=1)
        print("median_ms=%.4f" % ((time.perf_counter() - t) * 1e3 / args.reps))  # per token
        return
    V, C, H, N, T, B = CONFIGS[args.worker]
    torch.manual_seed(0)
    gpt = GPT(V, C, H, N, T).eval()
    ids = torch.tensor([[(i * 7919) % V for i in range(b * T, (b + 1) * T)] for b in range(B)])
    reps = args.reps if V > 1000 else (10 if C > 100 else 2000)
    warmup = 1 if V > 1000 else 3
    times = []
    with torch.no_grad():
        for r in range(warmup + reps):
            t = time.perf_counter()
            gpt(ids)
            if r >= warmup:
                times.append((time.perf_counter() - t) * 1e3)
    print("median_ms=%.4f" % statistics.median(times))


# The book's fine-tunings at GPT-2 small: its GPTModel (qkv_bias, an untied out_head, context
# 1024, no dropout). Batches as mygpt-bench --classify and --train --config book-instruct
# build them (bench/bench_learn.c): ids (i * 7919) % V, labels b % 2, next-token targets
# (i * 104729 + 1) % V.
GPT2_SMALL = dict(vocab_size=50257, context_length=1024, emb_dim=768, n_heads=12, n_layers=12, drop_rate=0.0,
                  qkv_bias=True)
CH6_BATCH, CH6_LEN = 8, 120    # the book's batch size; its SpamDataset's longest training text
INSTRUCT_BATCH, INSTRUCT_LEN = 8, 70  # the mean padded length of chapter 85's training batches


def book_worker(args):
    """Runs inside a fresh process: one warm-up and args.reps timed steps of the book's loop
    (and, chapter 6, its evaluation batch); prints the times of each."""
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from reference_llms import GPTModel, classification_head
    V = GPT2_SMALL["vocab_size"]
    torch.manual_seed(123)
    model = GPTModel(GPT2_SMALL)
    if args.worker == "book-ch6":  # section 6.5: freeze, the new head, unfreeze the last block
        B, T = CH6_BATCH, CH6_LEN
        classification_head(model, 2)
        y = torch.tensor([b % 2 for b in range(B)])
    else:
        B, T = INSTRUCT_BATCH, INSTRUCT_LEN
        y = torch.tensor([[(i * 104729 + 1) % V for i in range(b * T, (b + 1) * T)] for b in range(B)])
    x = torch.tensor([[(i * 7919) % V for i in range(b * T, (b + 1) * T)] for b in range(B)])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.1)
    model.train()
    steps = []
    for r in range(1 + args.reps):
        t = time.perf_counter()
        optimizer.zero_grad()
        if args.worker == "book-ch6":  # calc_loss_batch: the last position's logits
            loss = F.cross_entropy(model(x)[:, -1, :], y)
        else:
            loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        loss.backward()
        optimizer.step()
        if r >= 1:
            steps.append((time.perf_counter() - t) * 1e3)
    print("step_ms=" + ",".join("%.1f" % v for v in steps))
    if args.worker == "book-ch6":  # calc_loss_loader / calc_accuracy_loader: one batch
        model.eval()
        evals = []
        for r in range(1 + args.reps):
            t = time.perf_counter()
            with torch.no_grad():
                logits = model(x)[:, -1, :]
            F.cross_entropy(logits, y).item()
            (torch.argmax(logits, dim=-1) == y).sum().item()
            if r >= 1:
                evals.append((time.perf_counter() - t) * 1e3)
        print("eval_ms=" + ",".join("%.1f" % v for v in evals))


def openblas_forced_core():
    """The core OpenBLAS picks when asked to detect it explicitly (OPENBLAS_CORETYPE set).
    On some virtual machines its default detection falls back to a generic SSE3 core
    ("Prescott") although the CPU has AVX2 / AVX-512: PyTorch then runs several times
    slower than it can. We try both and keep PyTorch's best."""
    env = dict(os.environ, OPENBLAS_VERBOSE="2", OPENBLAS_CORETYPE="")
    out = subprocess.run([sys.executable, "-c", "import torch; torch.mm(torch.ones(2,2), torch.ones(2,2))"],
                         env=env, capture_output=True, text=True)
    m = re.search(r"Core: (\S+)", out.stdout + out.stderr)
    return m.group(1) if m else None


FORCED_CORE = None


def settings():
    """PyTorch's settings: wait policy x OpenBLAS core detection."""
    out = [(p, None) for p in (None, "PASSIVE")]
    if FORCED_CORE:
        out += [(p, FORCED_CORE) for p in (None, "PASSIVE")]
    return out


def run_pytorch_once(kind, threads, reps, policy, core, shape=None):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    else:
        env.pop("OMP_WAIT_POLICY", None)
    if core:
        env["OPENBLAS_CORETYPE"] = core
    else:
        env.pop("OPENBLAS_CORETYPE", None)
    cmd = [sys.executable, __file__, "--worker", kind, "--reps", str(reps)]
    if shape:
        cmd += ["--shape", shape]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    m = re.search(r"median_ms=([0-9.]+)", out.stdout)
    if not m:
        sys.exit("PyTorch worker failed:\n" + out.stderr)
    return float(m.group(1))


def run_mygpt(bench, args_list):
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    out = subprocess.run([bench] + args_list, env=env, capture_output=True, text=True)
    m = re.findall(r"median_ms=([0-9.]+)", out.stdout)
    if not m:  # --generate reports tokens/s: ms per token
        m = [1e3 / float(v) for v in re.findall(r"tokens_per_s=([0-9.]+)", out.stdout)]
    if not m:
        sys.exit("mygpt-bench failed:\n" + out.stdout + out.stderr)
    return float(m[-1])


def side_by_side(bench, mygpt_args, kind, threads, reps, shape=None):
    """Turn about: mygpt, then PyTorch in one setting, for every setting. Returns
    (mygpt's best ms, PyTorch's best ms, PyTorch's best setting)."""
    ours, theirs = None, None
    for policy, core in settings():
        ms = run_mygpt(bench, mygpt_args)
        ours = ms if ours is None else min(ours, ms)
        ms = run_pytorch_once(kind, threads, reps, policy, core, shape)
        if theirs is None or ms < theirs[0]:
            theirs = (ms, (policy or "default") + (" OPENBLAS_CORETYPE=" + core if core else ""))
    return ours, theirs[0], theirs[1]


def book_ch5(chapter):
    """The book's chapter-5 training run, mygpt's chapter then PyTorch's, wall time each."""
    if not os.access(chapter, os.X_OK):
        sys.exit("compare_pytorch: %s is not there: build the chapters first (meson compile -C build)" % chapter)
    runs = []
    for name, cmd in (("mygpt", [chapter]),
                      ("PyTorch", [sys.executable, os.path.join(ROOT, "tools", "reference_book_ch5.py"),
                                   "--sample-after"])):
        start = time.monotonic()
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.monotonic() - start
        if out.returncode != 0:
            sys.exit("compare_pytorch: %s failed (exit %d): %s" % (" ".join(cmd), out.returncode,
                                                                     out.stderr.strip()[-500:]))
        runs.append((name, wall, out.stdout))
        shown = [os.path.relpath(c, ROOT) if c.startswith(os.path.abspath(ROOT)) else c for c in cmd]
        print("%-8s %8.1f s  %s" % (name, wall, " ".join(shown)), flush=True)
    same = runs[0][2] == runs[1][2]
    print("PyTorch / mygpt: %.2fx (target, issue 26: >= 5x); the two printed %s (%d lines)" % (
        runs[1][1] / runs[0][1], "the same lines" if same else "DIFFERENT lines", runs[0][2].count("\n")))
    if not same:
        sys.exit(1)


def load_average():
    """uptime's three load averages (1, 5, 15 minutes)."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def spam_rows():
    """Rows of the book's three spam CSV files (data/ as scripts/fetch-data.sh fills it, else corpus/)."""
    import csv
    for folder in ("data", "corpus"):
        paths = [os.path.join(ROOT, folder, "sms_spam_%s.csv" % s) for s in ("train", "validation", "test")]
        if all(os.path.exists(p) for p in paths):
            return [sum(1 for _ in csv.DictReader(open(p, newline=""))) for p in paths]
    sys.exit("compare_pytorch: the book's sms_spam_*.csv are in neither data/ nor corpus/")


def ch6_run_counts(batch=CH6_BATCH, epochs=5, eval_freq=50, eval_iter=5):
    """The steps and evaluation batches of the book's chapter-6 run (gpt_class_finetune.py):
    train_classifier_simple for 5 epochs over the training loader (drop_last), its
    evaluate_model every eval_freq steps (eval_iter batches of the training and the validation
    loader), its accuracies after each epoch (eval_iter batches of each), then the final
    accuracies over the whole training, validation and test loaders (the last two keep their
    short last batch, counted here as a whole one)."""
    train, val, test = spam_rows()
    per_epoch = train // batch
    steps = epochs * per_epoch
    evaluations = len(range(0, steps, eval_freq))
    ceil = lambda n: -(-n // batch)
    batches = evaluations * 2 * eval_iter + epochs * 2 * eval_iter + per_epoch + ceil(val) + ceil(test)
    return dict(rows=(train, val, test), per_epoch=per_epoch, steps=steps, evaluations=evaluations,
                eval_batches=batches)


def parse_values(text, key):
    m = re.search(key + r"=([0-9.,]+)", text)
    return [float(v) for v in m.group(1).split(",")] if m else None


def median_range(values):
    return "%.0f (%.0f to %.0f)" % (statistics.median(values), min(values), max(values))


def book_finetune(bench, rounds, reps, threads, parts):
    """The book's two fine-tunings (parts: "ch6", "ch7"), mygpt and PyTorch taking turns round by round."""
    if not os.access(bench, os.X_OK):
        sys.exit("compare_pytorch: %s is not there: build first (ninja -C build)" % bench)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    for k in ("OMP_WAIT_POLICY", "OPENBLAS_CORETYPE"):
        env.pop(k, None)
    counts = ch6_run_counts()
    print("PyTorch: OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=%d, OpenBLAS's own core detection, the default wait "
          "policy; mygpt-bench --threads %d" % (threads, threads))
    print("each round: a fresh process each, 1 warm-up step then %d timed steps (medians); who goes first "
          "alternates; load = /proc/loadavg (uptime's 1, 5, 15 min) just before each process" % reps)

    def run(cmd, who):
        load = load_average()
        out = subprocess.run(cmd, env=env if who == "PyTorch" else dict(os.environ), capture_output=True,
                             text=True)
        if out.returncode != 0:
            sys.exit("compare_pytorch: %s failed (exit %d): %s" % (" ".join(cmd), out.returncode,
                                                                     out.stderr.strip()[-500:]))
        return out.stdout, load

    worker = lambda kind: [sys.executable, __file__, "--worker", kind, "--reps", str(reps)]

    def take_turns(mygpt_round, pytorch_round):
        """rounds rounds of both sides (each called with the round's index), who goes first alternating."""
        for r in range(rounds):
            for side in ((mygpt_round, pytorch_round) if r % 2 == 0 else (pytorch_round, mygpt_round)):
                side(r)

    ch6 = {"mygpt": [], "PyTorch": []}
    ins = {"mygpt": [], "PyTorch": []}
    if "ch6" in parts:
        print("\nchapter 6: the book's step at GPT-2 small, batch %d x %d (the last block, final_norm and the "
              "2-class head train)" % (CH6_BATCH, CH6_LEN))
        def ch6_mygpt(r):
            out, load = run([bench, "--classify", "--config", "book", "--threads", str(threads),
                             "--reps", str(reps)], "mygpt")
            m = re.search(r"classify=book .*", out)
            if not m:
                sys.exit("compare_pytorch: mygpt-bench --classify printed no summary:\n" + out)
            v = dict(kv.split("=") for kv in m.group(0).split()[1:])
            step, ev = float(v["step_ms"]), float(v["eval_ms"])
            gflop, peak = float(v["step_gflop"]), float(v["peak_gflops"])
            ch6["mygpt"].append((step, ev, load, gflop, peak, float(v["eval_gflop"])))
            print("  round %d  mygpt    step %7.0f ms  eval batch %6.0f ms  FMA peak %5.1f GFLOP/s  load %s"
                  % (r + 1, step, ev, peak, load), flush=True)

        def ch6_pytorch(r):
            out, load = run(worker("book-ch6"), "PyTorch")
            step, ev = statistics.median(parse_values(out, "step_ms")), statistics.median(parse_values(out, "eval_ms"))
            ch6["PyTorch"].append((step, ev, load))
            print("  round %d  PyTorch  step %7.0f ms  eval batch %6.0f ms  %22s  load %s"
                  % (r + 1, step, ev, "", load), flush=True)

        take_turns(ch6_mygpt, ch6_pytorch)
        print("chapter 6 summary: medians over the %d rounds of each round's median (range in brackets); ratio = "
              "PyTorch / mygpt, per round" % rounds)
        ours, theirs = ch6["mygpt"], ch6["PyTorch"]
        print("chapter 6 step (ms):       mygpt %s   PyTorch %s   ratio %.2fx (%.2f to %.2f)" % (
            median_range([o[0] for o in ours]), median_range([t[0] for t in theirs]),
            statistics.median([t[0] / o[0] for o, t in zip(ours, theirs)]),
            min(t[0] / o[0] for o, t in zip(ours, theirs)), max(t[0] / o[0] for o, t in zip(ours, theirs))))
        print("chapter 6 eval batch (ms): mygpt %s   PyTorch %s   ratio %.2fx" % (
            median_range([o[1] for o in ours]), median_range([t[1] for t in theirs]),
            statistics.median([t[1] / o[1] for o, t in zip(ours, theirs)])))
        gflop = ours[0][3]
        limits = [gflop / o[4] * 1e3 for o in ours]
        print("chapter 6 step's FLOP limit: %.1f GFLOP (forward everywhere, backward through the last block and the "
              "head) at the FMA peak of each round (%s GFLOP/s) = %s ms; mygpt %.2fx it (%.2f to %.2f), PyTorch %.2fx" % (
                  gflop, median_range([o[4] for o in ours]), median_range(limits),
                  statistics.median([o[0] / lim for o, lim in zip(ours, limits)]),
                  min(o[0] / lim for o, lim in zip(ours, limits)), max(o[0] / lim for o, lim in zip(ours, limits)),
                  statistics.median([t[0] / lim for t, lim in zip(theirs, limits)])))
        c = counts
        print("the book's 5-epoch run over %d / %d / %d rows (training / validation / test): %d steps (%d a epoch), "
              "%d evaluations, %d evaluation batches in all" % (c["rows"] + (c["steps"], c["per_epoch"], c["evaluations"],
                                                                         c["eval_batches"])))
        proj = lambda s: (c["steps"] * s[0] + c["eval_batches"] * s[1]) / 1e3
        po = statistics.median([proj(o) for o in ours])
        pt = statistics.median([proj(t) for t in theirs])
        run_gflop = c["steps"] * gflop + c["eval_batches"] * ours[0][5]
        run_limit = run_gflop / statistics.median([o[4] for o in ours])
        print("projected 5-epoch time (steps x step + batches x eval batch, each round's medians; a projection, not a "
              "timed run):\n  mygpt %.0f s, PyTorch %.0f s, ratio %.2fx; the run's %.0f GFLOP at the median FMA peak: "
              "%.0f s (mygpt %.2fx it, PyTorch %.2fx)" % (po, pt, pt / po, run_gflop, run_limit, po / run_limit,
                                                         pt / run_limit))
    if "ch7" in parts:
        print("\nchapter 7: the book's step at GPT-2 small, every parameter training, batch %d padded to %d tokens"
              % (INSTRUCT_BATCH, INSTRUCT_LEN))
        tokens = INSTRUCT_BATCH * INSTRUCT_LEN
        def ch7_mygpt(r):
            out, load = run([bench, "--train", "--config", "book-instruct", "--threads", str(threads),
                             "--reps", str(reps)], "mygpt")
            m = re.search(r"train=book-instruct .*median_ms=([0-9.]+)", out)
            lim = re.search(r"this step: ([0-9.]+)x the limit", out)
            if not m:
                sys.exit("compare_pytorch: mygpt-bench --train printed no summary:\n" + out)
            step = float(m.group(1))
            ins["mygpt"].append((step, load))
            print("  round %d  mygpt    step %7.0f ms  %6.0f tokens/s  (%sx its FLOP + AdamW limit)  load %s"
                  % (r + 1, step, tokens / step * 1e3, lim.group(1) if lim else "?", load), flush=True)

        def ch7_pytorch(r):
            out, load = run(worker("book-instruct"), "PyTorch")
            step = statistics.median(parse_values(out, "step_ms"))
            ins["PyTorch"].append((step, load))
            print("  round %d  PyTorch  step %7.0f ms  %6.0f tokens/s  %29s  load %s"
                  % (r + 1, step, tokens / step * 1e3, "", load), flush=True)

        take_turns(ch7_mygpt, ch7_pytorch)

        ours, theirs = ins["mygpt"], ins["PyTorch"]
        print("chapter 7 summary: medians over the %d rounds of each round's median (range in brackets); ratio = "
              "PyTorch / mygpt, per round" % rounds)
        print("chapter 7 step (ms):       mygpt %s   PyTorch %s   ratio %.2fx (%.2f to %.2f)" % (
            median_range([o[0] for o in ours]), median_range([t[0] for t in theirs]),
            statistics.median([t[0] / o[0] for o, t in zip(ours, theirs)]),
            min(t[0] / o[0] for o, t in zip(ours, theirs)), max(t[0] / o[0] for o, t in zip(ours, theirs))))
        print("chapter 7 tokens/s:        mygpt %s   PyTorch %s" % (
            median_range([tokens / o[0] * 1e3 for o in ours]), median_range([tokens / t[0] * 1e3 for t in theirs])))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", default="tiny,char,gpt2,gpt2-b8", help="'' for none")
    ap.add_argument("--train-configs", default="verdict,gpt2-b4t64", help="'' for none")
    ap.add_argument("--generate-new", type=int, default=32, help="new tokens of the generation loop (0: none)")
    ap.add_argument("--matmul-shapes", default="qkvo=1024,768,768;fc1=1024,768,3072;fc2=1024,3072,768;"
                    "head=1024,768,50257", help="name=M,K,N;... ('' for none)")
    ap.add_argument("--threads", default=",".join(str(t) for t in range(1, (os.cpu_count() or 1) + 1)))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bench", "mygpt-bench"))
    ap.add_argument("--csv")
    ap.add_argument("--book-ch5", action="store_true", help="time the book's chapter 5 run both ways, only that")
    ap.add_argument("--book-finetune", action="store_true",
                    help="time the book's chapter-6 and chapter-7 steps at GPT-2 small both ways, only that")
    ap.add_argument("--rounds", type=int, default=5, help="--book-finetune's rounds")
    ap.add_argument("--parts", default="ch6,ch7", help="--book-finetune's chapters (ch6, ch7)")
    ap.add_argument("--worker")
    ap.add_argument("--shape")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    try:
        import torch
    except ImportError:
        print("compare_pytorch: PyTorch is not installed (apt-get install python3-torch); skipped")
        return
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    family = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("cpu family")), "?")
    torch.mm(torch.ones(2, 2), torch.ones(2, 2))  # make sure the BLAS is loaded
    blas = sorted({ln.split()[-1] for ln in open("/proc/self/maps") if "blas" in ln.lower()})
    print("PyTorch %s loaded these BLAS libraries:\n%s" % (torch.__version__, "\n".join("  " + b for b in blas)
                                                          or "  none found"))
    # the library answering for libblas.so.3 (sgemm_), if any, must be OpenBLAS's
    blas_so = [b for b in blas if os.path.basename(b).startswith("libblas.so")]
    if not blas or any("openblas" not in b for b in blas_so):
        # Debian's torch links libblas.so.3: without OpenBLAS that is the reference BLAS
        # (~3 GFLOP/s), and every ratio below would be absurd
        sys.exit("compare_pytorch: PyTorch is not running on OpenBLAS (the paths above): its matmuls would run\n"
                 "on the reference BLAS and every ratio would be meaningless. Install OpenBLAS, which takes\n"
                 "over libblas.so.3:  sudo apt-get install libopenblas0-pthread  (then run this again)")
    print("mygpt vs PyTorch %s on %s (cpu family %s), %d cores, %s: ratios depend on the CPU family" % (
        torch.__version__, cpu, family, os.cpu_count(), time.strftime("%Y-%m-%d")))
    if args.book_finetune:
        return book_finetune(args.bench, args.rounds, args.reps, int(args.threads.split(",")[-1]),
                             args.parts.split(","))
    if args.book_ch5:
        return book_ch5(os.path.normpath(os.path.join(os.path.dirname(args.bench), "..", "chapters", "38_book_training")))
    global FORCED_CORE
    FORCED_CORE = openblas_forced_core()
    print("OpenBLAS core when forced to detect: %s (tried as well as the default)" % FORCED_CORE)
    print("each side's best of %d turn-about runs (mygpt, then PyTorch in one of its settings)" % len(settings()))
    print("%-9s %7s %12s %12s %9s  %s" % ("config", "threads", "mygpt ms", "pytorch ms", "ratio", "pytorch setting"))
    rows = []
    threads = [int(t) for t in args.threads.split(",")]
    for name in filter(None, args.configs.split(",")):
        for t in threads:
            reps = str(args.reps) if CONFIGS[name][0] > 1000 else "0"
            ours, theirs, policy = side_by_side(
                args.bench, ["--config", name, "--threads", str(t)] + (["--reps", reps] if reps != "0" else []),
                name, t, args.reps)
            rows.append((name, t, ours, theirs, policy))
            print("%-9s %7d %12.3f %12.3f %8.2fx  %s" % (name, t, ours, theirs, theirs / ours, policy))
    if args.train_configs:
        print("\ntraining step (forward with loss, backward, AdamW): ms per step")
        for name in args.train_configs.split(","):
            for t in threads:
                ours, theirs, policy = side_by_side(
                    args.bench, ["--train", "--config", name, "--threads", str(t), "--reps", str(args.reps)],
                    "train-" + name, t, args.reps)
                rows.append(("train-" + name, t, ours, theirs, policy))
                print("%-11s %5d %12.3f %12.3f %8.2fx  %s" % (name, t, ours, theirs, theirs / ours, policy))
    if args.generate_new:
        n = args.generate_new
        print("\ngeneration, gpt2 at B = 1, prompt 16, %d greedy tokens: ms per new token" % n)
        print("(mygpt with its KV cache; PyTorch as the tutorial writes it, the whole window every step)")
        for t in threads:
            ours, theirs, policy = side_by_side(
                args.bench, ["--generate", "--weights", "fp32", "--prompt", "16", "--new", str(n), "--threads", str(t)],
                "generate", t, n)
            rows.append(("generate", t, ours, theirs, policy))
            print("%-11s %5d %12.2f %12.2f %8.2fx  %s" % ("generate", t, ours, theirs, theirs / ours, policy))
    if args.matmul_shapes:
        print("\nsgemm at GPT-2's shapes, B*T = 1024 (GFLOP/s): mygpt vs OpenBLAS via torch "
              "(F.linear, out = x W^T); mygpt/ob = mygpt / OpenBLAS")
        print("%-16s %7s %12s %12s %9s  %s" % ("shape", "threads", "mygpt", "openblas", "mygpt/ob", "pytorch setting"))
    for shape in filter(None, args.matmul_shapes.split(";")):
        name, dims = shape.split("=") if "=" in shape else (shape, shape)
        M, K, N = (int(x) for x in dims.split(","))
        gf = 2.0 * M * K * N / 1e6
        reps = max(3, min(20, int(2e10 / (2.0 * M * K * N))))  # about 20 GFLOP a run
        for t in threads:
            ours, theirs, policy = side_by_side(
                args.bench, ["--matmul", dims, "--threads", str(t), "--reps", str(reps)], "matmul", t, reps, dims)
            rows.append(("matmul-" + name, t, ours, theirs, policy))
            print("%-16s %7d %12.1f %12.1f %8.0f%%  %s" % (name, t, gf / ours, gf / theirs,
                                                          100 * theirs / ours, policy))
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("config,threads,mygpt_ms,pytorch_ms,pytorch_setting\n")
            for r in rows:
                f.write("%s,%d,%.4f,%.4f,%s\n" % r)


if __name__ == "__main__":
    main()
