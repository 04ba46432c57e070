#!/usr/bin/env python3
"""Regenerate tests/golden/llama2c/ from llama2.c's own run.c (no PyTorch needed):

    python3 tools/reference_llama2c.py LLAMA2C_DIR [--model corpus/llama/stories260K.bin]
        [--tokenizer corpus/llama/tok512.bin] [--out tests/golden/llama2c] [--cc cc]

LLAMA2C_DIR is a checkout of karpathy/llama2.c (its run.c, test_all.py and
doc/stories260K.md are read, never copied). In a temporary folder the script builds

  run      from run.c with `CC -O3 -fopenmp run.c -lm`: `make run`'s -O3 (the build the
           published outputs come from), with OpenMP's threads, which change no number
           (each output of a product is one thread's sum in order). Not runomp's -Ofast
           -march=native: fast math and contracted multiply-adds print other stories.
  harness  tools/llama2c_harness.c, which includes run.c whole, with the same flags.

and first checks run.c against its published outputs: `-t 0.0 -n 200` must print
test_all.py's expected_stdout, and the two runs of doc/stories260K.md (`-t 0.0`, and
`-t 1.0 -p 0.9 -s 133742`) the stories shown there; the script fails otherwise. Then it
writes (lines starting with # are comments):

encode.txt   HEX<TAB>IDS<TAB>IDS_EOS<TAB>PRINTED: a text (UTF-8 or not, hex; - when empty;
             the last three are stories run.c tells, the last 4 of them together),
             run.c's encode(text, bos 1, eos 0) and encode(text, bos 0, eos 1), and the hex
             of what run.c prints for the first ids after their BOS (decode, safe_printf)
pieces.txt   ID PREV HEX PRINTS: decode(prev, id) for prev 0 and 1, and whether
             safe_printf prints it
ties.bin     a tokenizer made here to try what tok512.bin never meets: merges of equal
             scores, pieces two to four times over (bsearch finds one, not always the
             first: "ab" and "bc" here are found at a later copy), NaN, -inf and
             -1e10 scores (never merged), a 2-byte code point, bytes 0x00 .. 0xFF
ties.txt     encode.txt's columns, for ties.bin
rng.txt      rng SEED COUNT : U32:F32BITS ...: random_u32 and random_f32 of each step
sample.txt   case N TEMPERATURE TOPP SEED DRAWS, logits (float32 bits in hex), tokens (DRAWS
             calls of sample() on fresh copies of the logits), state (the generator after)
run.txt      TEMPERATURE<TAB>TOPP<TAB>SEED<TAB>STEPS<TAB>PROMPT<TAB>STDOUT: `run MODEL -z TOK
             [-t T] [-p P] [-s S] [-n N] [-i PROMPT]` (an empty field leaves its flag out:
             run.c's default), its whole stdout with \\n, \\t and \\\\ escaped; the first
             three lines are the published runs (test_all.py's, doc/stories260K.md's two)

Deterministic: rerunning rewrites the same files.
"""
import argparse
import ast
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TEXTS = [
    "Once upon a time, there was a little girl named Lily.",
    "Hello world",
    "",
    " ",
    " leading space",
    "trailing space ",
    "  two leading and two trailing  ",
    "double  space   triple",
    "line one\nline two\n",
    "\n",
    "\n\nTwo newlines first",
    "tabs\tand\ttabs",
    'Lily\'s mom said, "Lily, let\'s go to the park."',
    "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, na\u00efve fa\u00e7ade",
    "\u00c0 bient\u00f4t, \u00e7a va? \u00d1and\u00fa \u00fcber \u00df",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8",
    "\u4e2d\u6587 and English \ud55c\uad6d\uc5b4",
    "emoji \U0001f642 and \U0001f680!",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467 family",
    "1234567890 3.14 -42",
    "ALL CAPS and MiXeD cAsE",
    "".join(chr(c) for c in range(32, 127)),
    "bell\x07 and\x01control\x1f",
    "The dog ran to the park. He saw a big red ball and he was very happy. "
    "He played with the ball all day long. When the sun went down, he went home to sleep.",
]

# not UTF-8: stray continuation bytes (more than 4 in a row), a cut code point, an overlong
RAW_TEXTS = [b"\x80\x81\x82\x83\x84x", b"ab\xc3", b"\xc0\xafz", b"\xf0\x9f\x99", b"\xff\xfe end"]


def fuzz_texts(seed, count):
    """Random strings drawn from ASCII, Latin-1, Greek, CJK and emoji code points."""
    rng = random.Random(seed)
    ranges = [(32, 126), (32, 126), (0xA0, 0xFF), (0x391, 0x3C9), (0x4E00, 0x4FFF), (0x1F600, 0x1F64F), (9, 10)]
    out = []
    for _ in range(count):
        n = rng.randint(1, 40)
        out.append("".join(chr(rng.randint(*rng.choice(ranges))) for _ in range(n)))
    return out


TIES_TEXTS = ["abcd", "aaaa", "aaaaa", "abcabc", "bcd ab", "a b c d", "cdcdcd", "ababab", "dcba", "\u00e9a\u00e9",
              "zz", "", " ", "  a", "abcdabcdabcd bcda"]


def ties_tokenizer():
    """(score, piece) of ties.bin: <unk>, BOS, EOS, the 256 bytes, then its pieces."""
    nan, inf = float("nan"), float("inf")
    toks = [(0.0, b"<unk>"), (0.0, b"\n<s>\n"), (0.0, b"\n</s>\n")]
    toks += [(0.0, b"<0x%02X>" % b) for b in range(256)]
    singles = [(-5.0, c.encode()) for c in ("a", "b", "c", "d", " ", "\u00e9")]
    merges = [(-1.0, b"ab"), (-1.0, b"bc"), (-1.0, b"cd"), (-1.0, b"aa"), (-2.0, b"abc"), (-2.0, b"bcd"),
              (-1.0, b" a"), (-3.0, b"ab"), (-0.5, b"cd"), (-1.0, b"cd"), (nan, b"da"), (-inf, b"dc"),
              (-1e10, b"ba"), (-2.0, b"abcd"), (-2.0, b"aaa"), (-1.0, b"\xc3\xa9a"), (-4.0, b" ab"),
              (-0.25, b"bc"), (-4.5, b"bc"), (-0.75, b"bc")]
    return toks + singles + merges


def write_tokenizer(path, toks):
    with open(path, "wb") as f:
        f.write(struct.pack("<i", max(len(p) for _, p in toks)))
        for score, piece in toks:
            f.write(struct.pack("<fi", score, len(piece)) + piece)


def h32(v):
    return "%08x" % struct.unpack("<I", struct.pack("<f", v))[0]


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def sample_cases():
    """(n, temperature, topp, seed, draws, logits) cases: every branch of sample()."""
    rng = random.Random(49)

    def gauss(n, scale):
        return [f32(rng.gauss(0.0, 1.0) * scale) for _ in range(n)]

    ties = [f32(float(round(rng.gauss(0.0, 2.0)))) for _ in range(512)]
    two_max = gauss(512, 2.0)
    two_max[17] = two_max[300] = 9.0
    return [
        (512, "0", "0.9", 1, 3, gauss(512, 3.0)),
        (512, "0", "0.9", 1, 2, two_max),
        (512, "1", "0.9", 133742, 20, gauss(512, 3.0)),
        (512, "1", "1", 42, 20, gauss(512, 3.0)),
        (512, "0.8", "0", 7, 20, gauss(512, 3.0)),
        (512, "0.5", "0.5", 99, 20, gauss(512, 2.0)),
        (512, "1.5", "0.95", 12345, 20, gauss(512, 3.0)),
        (512, "2", "0.99", 18446744073709551611, 20, gauss(512, 5.0)),
        (512, "1", "0.9", 5, 20, [0.0] * 512),
        (512, "1", "0.9", 6, 20, ties),
        (512, "0.7", "0.3", 8, 20, ties),
        (2, "1", "0.5", 3, 20, gauss(2, 1.0)),
        (3, "1", "0.5", 4, 20, [1.0, 1.0, 1.0]),
        (4096, "1", "0.9", 2024, 10, gauss(4096, 4.0)),
    ]


# (-t, -p, -s, -n, -i); "" leaves the flag out (run.c's defaults: -t 1.0 -p 0.9 -n 256, the
# seed from the clock, so only at -t 0). The first three are the published runs, verbatim.
RUNS = [
    ("0.0", "", "", "200", ""),
    ("0.0", "", "", "", ""),
    ("1.0", "0.9", "133742", "", ""),
    ("0.0", "0.9", "1", "0", ""),
    ("1.0", "0.9", "133742", "0", ""),
    ("1.0", "0.9", "42", "100", ""),
    ("1.0", "1.0", "42", "100", ""),
    ("0.8", "0.0", "7", "120", ""),
    ("0.5", "0.5", "1337", "80", ""),
    ("1.2", "0.95", "2024", "150", ""),
    ("1.0", "0.9", "133742", "64", "Once upon a time"),
    ("0.0", "0.9", "1", "60", "Lily and Tom"),
    ("0.9", "0.8", "99", "90", "The dog was sad because"),
    ("1.0", "0.9", "5", "40", "Caf\u00e9 \U0001f642"),
    ("1.0", "0.9", "5", "3", "One day, a little girl named Sue"),
    ("1.0", "0.9", "5", "1", ""),
    ("0.0", "0.9", "1", "2", ""),
]


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, **kw).stdout


def published(src):
    """test_all.py's expected_stdout, and doc/stories260K.md's two stories by their flags."""
    tree = ast.parse(open(os.path.join(src, "test_all.py")).read())
    expected = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                    and getattr(n.targets[0], "id", "") == "expected_stdout")
    doc = open(os.path.join(src, "doc", "stories260K.md"), encoding="utf-8").read()
    stories = {}
    for flags in ("-t 0.0", "-t 1.0 -p 0.9 -s 133742"):
        head = "$ ./run stories260K/stories260K.bin -z stories260K/tok512.bin %s\n" % flags
        at = doc.index(head) + len(head)
        stories[flags] = doc[at:doc.index("```", at)].encode()
    return expected, stories


def build(src, tmp, cc):
    flags = ["-O3", "-fopenmp"]
    run = os.path.join(tmp, "run")
    harness = os.path.join(tmp, "harness")
    sh([cc] + flags + ["-o", run, os.path.join(src, "run.c"), "-lm"])
    sh([cc] + flags + ["-I", src, "-o", harness, os.path.join(HERE, "llama2c_harness.c"), "-lm"])
    return run, harness


def check_published(run, model, tok, src):
    expected, stories = published(src)
    out = sh([run, model, "-z", tok, "-t", "0.0", "-n", "200"], stderr=subprocess.DEVNULL)
    if out[:-1] != expected:
        sys.exit("run.c's -t 0.0 -n 200 differs from test_all.py's expected_stdout:\n%r" % out)
    for flags, story in stories.items():
        out = sh([run, model, "-z", tok] + flags.split(), stderr=subprocess.DEVNULL)
        if out != story:
            sys.exit("run.c's %s differs from doc/stories260K.md:\n%r\n%r" % (flags, out, story))
    print("run.c prints test_all.py's expected_stdout and doc/stories260K.md's two stories")


def escape(b):
    return b.replace(b"\\", b"\\\\").replace(b"\n", b"\\n").replace(b"\t", b"\\t")


def write_goldens(run, harness, model, tok, out, vocab):
    head = "# made by tools/reference_llama2c.py from llama2.c's run.c; see its docstring\n"
    texts = [t.encode() for t in TEXTS + fuzz_texts(7, 24)] + RAW_TEXTS
    # long texts, many merges: run.c's own stories, alone and four together (9 KB)
    stories = [sh([run, model, "-z", tok] + flags.split(), stderr=subprocess.DEVNULL)
               for flags in ("-t 0.0", "-t 1.0 -p 0.9 -s 133742", "-t 0.8 -s 7", "-t 1.2 -p 0.95 -s 2024")]
    texts += stories[:2] + [b"".join(stories)]
    lines = "".join((t.hex() or "-") + "\n" for t in texts).encode()
    enc = sh([harness, "encode", tok, str(vocab)], input=lines)
    with open(os.path.join(out, "encode.txt"), "wb") as f:
        f.write(head.encode() + enc)
    ties = os.path.join(out, "ties.bin")
    write_tokenizer(ties, ties_tokenizer())
    lines = "".join((t.encode().hex() or "-") + "\n" for t in TIES_TEXTS).encode()
    enc = sh([harness, "encode", ties, str(len(ties_tokenizer()))], input=lines)
    with open(os.path.join(out, "ties.txt"), "wb") as f:
        f.write(head.encode() + enc)
    with open(os.path.join(out, "pieces.txt"), "wb") as f:
        f.write(head.encode() + sh([harness, "pieces", tok, str(vocab)]))
    with open(os.path.join(out, "rng.txt"), "w") as f:
        f.write(head)
        for seed in (1, 42, 133742, 2**63, 2**64 - 1):
            draws = sh([harness, "rng", str(seed), "20"]).decode().strip()
            f.write("rng %d 20 : %s\n" % (seed, draws))
    with open(os.path.join(out, "sample.txt"), "w") as f:
        f.write(head)
        for n, t, p, seed, draws, logits in sample_cases():
            case = "%d %s %s %d %d\n%s\n" % (n, t, p, seed, draws, " ".join(h32(v) for v in logits))
            tokens, state = sh([harness, "sample"], input=case.encode()).decode().strip().split("\t")
            f.write("case %d %s %s %d %d\nlogits %s\ntokens %s\nstate %s\n" %
                    (n, t, p, seed, draws, " ".join(h32(v) for v in logits), tokens, state))
    with open(os.path.join(out, "run.txt"), "wb") as f:
        f.write(head.encode())
        for t, p, s, n, prompt in RUNS:
            flags = [(f, v) for f, v in (("-t", t), ("-p", p), ("-s", s), ("-n", n), ("-i", prompt)) if v]
            cmd = [run, model, "-z", tok] + [w for pair in flags for w in pair]
            stdout = sh(cmd, stderr=subprocess.DEVNULL, env=dict(os.environ, OMP_NUM_THREADS="1"))
            f.write(("\t".join((t, p, s, n, prompt)) + "\t").encode() + escape(stdout) + b"\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("llama2c", help="a checkout of karpathy/llama2.c")
    ap.add_argument("--model", default=os.path.join(ROOT, "corpus", "llama", "stories260K.bin"))
    ap.add_argument("--tokenizer", default=os.path.join(ROOT, "corpus", "llama", "tok512.bin"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "golden", "llama2c"))
    ap.add_argument("--cc", default="cc")
    a = ap.parse_args()
    with open(a.model, "rb") as f:
        vocab = abs(struct.unpack("<7i", f.read(28))[5])
    tmp = tempfile.mkdtemp(prefix="llama2c-")
    try:
        run, harness = build(a.llama2c, tmp, a.cc)
        check_published(run, a.model, a.tokenizer, a.llama2c)
        os.makedirs(a.out, exist_ok=True)
        write_goldens(run, harness, a.model, a.tokenizer, a.out, vocab)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
