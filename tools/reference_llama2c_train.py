#!/usr/bin/env python3
"""Regenerate tests/golden/llama2c/trained.txt: Llamas trained by `mygpt train`, told by llama2.c's run.c
(no PyTorch needed):

    python3 tools/reference_llama2c_train.py LLAMA2C_DIR --mygpt build/cli/mygpt
        [--out tests/golden/llama2c/trained.txt] [--cc cc]

LLAMA2C_DIR is a checkout of karpathy/llama2.c; its run.c is built as tools/reference_llama2c.py
builds it (-O3 -fopenmp, `make run`'s). For each of TRAINS the script runs

    mygpt train --arch llama --vocab 512 --tokenizer corpus/llama/tok512.bin
        --text corpus/the-verdict.txt FLAGS --save F.bin

with OMP_NUM_THREADS=1, with 2, and with the portable kernels (MYGPT_MATMUL_KERNEL and
MYGPT_ATTENTION_KERNEL generic), and fails unless all three write the same bytes (training is
deterministic: the same bits at any thread count, on any kernel). F.bin is llama2.c's legacy file; the
text's ids are tok512.bin's (run.c's encode(text, bos=1, eos=0) of each part), so run.c
reads F.bin with tok512.bin as its own. Then, for each of RUNS, `run F.bin -z tok512.bin -t T
-p P -s S -n N [-i PROMPT]`. It writes (lines starting with # are comments):

    model<TAB>FLAGS<TAB>SHA256               the train flags after the common ones, F.bin's sha256
    run<TAB>T<TAB>P<TAB>S<TAB>N<TAB>PROMPT<TAB>STDOUT
                                             run.c's whole stdout on that model (\\n, \\t and \\\\
                                             escaped as in run.txt)

Deterministic: rerunning rewrites the same file.
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from reference_llama2c import escape, sh  # noqa: E402

# after `mygpt train --arch llama --vocab 512 --tokenizer TOK --text TEXT`: a tied classifier
# and grouped heads (8 query heads' keys and values in 2), then an untied one (one key/value
# head for 4), each a short run
TRAINS = [
    "--seed 49 --embed 32 --heads 4 --kv-heads 2 --layers 2 --max-seq 64 --context 32 --batch 8 --steps 40 "
    "--optimizer adamw --lr 0.01 --decay-groups --eval-every 20",
    "--seed 7 --embed 24 --heads 4 --kv-heads 1 --layers 1 --max-seq 48 --multiple-of 16 --untied-head "
    "--context 24 --batch 8 --steps 30 --optimizer adamw --lr 0.02 --eval-every 10",
]

# (-t, -p, -s, -n, -i): greedy, run.c's published sampling setting, and a prompt
RUNS = [
    ("0.0", "0.9", "1", "48", ""),
    ("1.0", "0.9", "133742", "48", ""),
    ("0.8", "0.95", "7", "40", "I had always thought"),
]


def train(mygpt, flags, text, tok, out, threads, kernel=None):
    cmd = [mygpt, "train", "--arch", "llama", "--vocab", "512", "--tokenizer", tok, "--text", text] + flags.split()
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if kernel:
        env.update(MYGPT_MATMUL_KERNEL=kernel, MYGPT_ATTENTION_KERNEL=kernel)
    sh(cmd + ["--save", out], stderr=subprocess.DEVNULL, env=env)
    with open(out, "rb") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("llama2c", help="a checkout of karpathy/llama2.c")
    ap.add_argument("--mygpt", required=True, help="the built mygpt tool")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "golden", "llama2c", "trained.txt"))
    ap.add_argument("--cc", default="cc")
    a = ap.parse_args()
    text = os.path.join(ROOT, "corpus", "the-verdict.txt")
    tok = os.path.join(ROOT, "corpus", "llama", "tok512.bin")
    tmp = tempfile.mkdtemp(prefix="llama2c-train-")
    try:
        run = os.path.join(tmp, "run")
        sh([a.cc, "-O3", "-fopenmp", "-o", run, os.path.join(a.llama2c, "run.c"), "-lm"])
        lines = [b"# made by tools/reference_llama2c_train.py: mygpt train's models, llama2.c's run.c on them\n"]
        for i, flags in enumerate(TRAINS):
            model = os.path.join(tmp, "m%d.bin" % i)
            one = train(a.mygpt, flags, text, tok, os.path.join(tmp, "m%d_1.bin" % i), 1)
            two = train(a.mygpt, flags, text, tok, model, 2)
            portable = train(a.mygpt, flags, text, tok, os.path.join(tmp, "m%d_g.bin" % i), 2, "generic")
            if one != two or one != portable:
                sys.exit("mygpt train %s: a different model at 1 and 2 threads or on the generic kernels" % flags)
            lines.append(("model\t%s\t%s\n" % (flags, hashlib.sha256(one).hexdigest())).encode())
            for t, p, s, n, prompt in RUNS:
                cmd = [run, model, "-z", tok, "-t", t, "-p", p, "-s", s, "-n", n] + (["-i", prompt] if prompt else [])
                stdout = sh(cmd, stderr=subprocess.DEVNULL, env=dict(os.environ, OMP_NUM_THREADS="1"))
                lines.append(("run\t" + "\t".join((t, p, s, n, prompt)) + "\t").encode() + escape(stdout) + b"\n")
        with open(a.out, "wb") as f:
            f.write(b"".join(lines))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
