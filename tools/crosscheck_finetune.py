#!/usr/bin/python3
"""Cross-check the book's fine-tuning (chapter 6's classifier, chapter 7's instructions) with live
PyTorch 1.13 on random configurations no committed golden holds (development oracle; needs a
build in build/ with its tests, and the data folder: bash scripts/fetch-data.sh; tiktoken through
node: npm install --prefix tools/node).

    /usr/bin/python3 tools/crosscheck_finetune.py --seed 1 --configs 8            # both tasks
    /usr/bin/python3 tools/crosscheck_finetune.py --seed 2 --task instruct --keep DIR

From the seed it draws --configs configurations per task (vocab 50257; width, heads, layers,
context, batch, learning rate, steps or epochs, the book's GPTModel with or without qkv_bias or
GPT-2; chapter 7: the prompt masked or not (exercise 7.2), allowed_max_length, dropout, all
training, random parts frozen or exercise 7.4's LoRA adapters alone), runs the book's code path in PyTorch through the golden
writers (tools/reference_book_ch6.py's classify_golden, tools/reference_book_ch7.py's
finetune_golden) into a fresh folder, and runs the C side on those files: the test binaries
tests/test_classify and tests/test_instruct_finetune, pointed at the folder by the environment's
MYGPT_GOLDEN_DIR. There the tolerances are docs/training-parity.md's: chapter 6's losses within
1e-5, the accuracies' counts equal, every trainable gradient within 1e-5 x max(1, max |g|),
parameters after the steps within 1e-5 (W_key's bias: steps x lr), frozen tensors bit-identical;
chapter 7's batches the same tensors, each step's loss within 1e-4 relative, the first step's
gradients within 1e-5 x max(1, max |g|), frozen tensors without a gradient and bit-identical
after training, the printed log line for line and the greedy responses the same tokens.
Prints one line per task (the worst gradient the test logs) and exits 1 if any check fails.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, HERE)
import reference_book_ch6 as ch6  # noqa: E402
import reference_book_ch7 as ch7  # noqa: E402

LRS = [5e-5, 1e-4, 2e-4, 5e-4, 1e-3]


def classify_cases(rnd, n):
    """CLASSIFY_CASES rows: (seed, tied, qkv, C, NH, L, ctx, B, T, classes, lr, steps, LoRA rank, LoRA
    alpha): about half of them appendix E's LoRA (rank 1 to 32, alpha / rank 0.5 to 4), the rest chapter 6's
    freezing."""
    cases = []
    for _ in range(n):
        lora = rnd.random() < 0.5
        rank = rnd.choice([1, 2, 4, 8, 16, 32]) if lora else 0
        alpha = rank * rnd.choice([0.5, 1, 2, 4]) if lora else 0
        tied = rnd.random() < 0.3
        NH = rnd.choice([1, 2, 3, 4, 6, 8])
        C = NH * rnd.choice([2, 4, 6, 8, 12])  # up to 96: 4C past the LoRA kernels' 256 columns
        ctx = rnd.randrange(4, 65)
        cases.append((rnd.randrange(2 ** 31), tied, tied or rnd.random() < 0.5, C, NH, rnd.randrange(1, 5), ctx,
                      rnd.randrange(1, 9), rnd.randrange(1, ctx + 1), rnd.randrange(2, 5), rnd.choice(LRS),
                      rnd.randrange(1, 5), rank, alpha))
    return cases


def instruct_cases(rnd, n):
    """FINETUNE_CASES rows: (NAME C NH L CONTEXT BATCH LR MASK N EPOCHS ALLOWED MAX_NEW DROP ARCH QKV TRAINS)."""
    cases = []
    for k in range(n):
        gpt2 = rnd.random() < 0.3
        NH = rnd.choice([1, 2, 3, 4])
        C = NH * rnd.choice([2, 4, 6, 8])
        L = rnd.randrange(1, 4)
        ctx = rnd.randrange(24, 129)  # allowed_max_length = ctx: the batches fit the position embedding
        B = rnd.randrange(1, 6)
        trains = "all"
        draw = rnd.random()
        if draw < 0.3:  # exercise 7.4: the adapters alone
            trains = "lora-%d-%d" % (rnd.choice([1, 2, 4, 8, 16]), rnd.choice([1, 2, 4, 8, 16, 32]))
        elif draw < 0.6:  # some parts train, the rest is frozen
            parts = ["tok_emb", "pos_emb", "final_norm"] + ([] if gpt2 else ["out_head"])
            for l in range(L):
                parts += ["trf_blocks.%d" % l, "trf_blocks.%d.att" % l, "trf_blocks.%d.ff" % l]
            picked = rnd.sample(parts, rnd.randrange(1, 4))
            trains = ",".join(p for p in picked  # a block and a part of it: the block
                              if not any(p.startswith(q + ".") for q in picked))
        cases.append(("random_%d" % k, C, NH, L, ctx, B, rnd.choice(LRS), int(rnd.random() < 0.5),
                      rnd.randrange(B, 13), rnd.randrange(1, 3), ctx, rnd.randrange(2, 13),
                      rnd.choice([0.0, 0.0, 0.1]), "gpt2" if gpt2 else "llms-from-scratch",
                      int(gpt2 or rnd.random() < 0.5), trains))
    return cases


def run_test(binary, test, folder):
    """The test binary on the goldens in folder: (passed, what it printed)."""
    env = dict(os.environ, MYGPT_GOLDEN_DIR=folder)
    r = subprocess.run([binary, "--verbose", "--filter", test, "--jobs", "1"], capture_output=True, text=True,
                       env=env)
    return r.returncode == 0, r.stdout + r.stderr


def summary(out):
    """The test's own lines: its log of the worst differences and any failure."""
    keep = [l for l in out.splitlines() if "worst" in l or "FAIL" in l or "expected" in l.lower() or "rror" in l]
    return "\n".join("    " + l for l in keep[:40])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--configs", type=int, default=8, help="per task: 8 to 16 (the instruct test reads at most 16)")
    ap.add_argument("--task", choices=["classify", "instruct", "both"], default="both")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--data", default=os.path.join(ROOT, "data"))
    ap.add_argument("--keep", help="write the goldens into this folder and keep them")
    a = ap.parse_args()
    if not 8 <= a.configs <= 16:  # the instruct test refuses a golden of fewer runs, as a failure
        ap.error("--configs: %d is outside 8 to 16" % a.configs)
    import torch
    assert torch.__version__.startswith("1.13"), torch.__version__
    torch.set_num_threads(1)
    rnd = random.Random(a.seed)
    folder = a.keep or tempfile.mkdtemp(prefix="crosscheck_finetune_")
    os.makedirs(folder, exist_ok=True)
    failed = 0
    try:
        for task in ["classify", "instruct"] if a.task == "both" else [a.task]:
            if task == "classify":
                cases = classify_cases(rnd, a.configs)
                ch6.CLASSIFY_CASES[:] = cases
                ch6.classify_golden(os.path.join(folder, "classify.txt"))
                ok, out = run_test(os.path.join(a.build, "tests", "test_classify"),
                                   "classify/the_book_s_fine_tuning_and_its_lora_follow_pytorch_in_thirteen_configurations", folder)
            else:
                cases = instruct_cases(rnd, a.configs)
                ch7.FINETUNE_CASES[:] = cases
                ch7.finetune_golden(a.data, os.path.join(folder, "instruct_finetune.txt"))
                ok, out = run_test(os.path.join(a.build, "tests", "test_instruct_finetune"),
                                   "instruct_finetune/runs_as_pytorch_does", folder)
            print("%s seed %d, %d configurations: %s" % (task, a.seed, len(cases), "agree" if ok else "DIFFER"))
            for c in cases:
                print("    " + " ".join(str(v) for v in c))
            print(summary(out))
            failed += not ok
    finally:
        if not a.keep:
            shutil.rmtree(folder)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
