#!/usr/bin/python3
"""The book's chapters 2, 3 and 4 cell by cell (development oracle only): runs the code cells of
LLMs-from-scratch's main-chapter notebooks under PyTorch 1.13 and writes what each group of
printed cells prints (as Jupyter shows it: print()'s text, then the repr of a last bare
expression) to chapters/expected/PROGRAM.txt, one file per chapter program of the book's
chapters 2-4 (2xx, 3xx, 4xx in chapters/index.tsv):

    /usr/bin/python3 tools/reference_book_cells.py CHECKOUT ch02 [ch03 ch04]

CHECKOUT is a clone of rasbt/LLMs-from-scratch (its notebooks are read, never copied).
The notebooks' cells run as they are, but for: the version cells and the download cell,
left out (the-verdict is read from data/); tiktoken, whose GPT-2 ids come through node
(tools/reference_train.py, `npm install --prefix tools/node`). A cell's stored output
that differs from this run is listed on stderr (chapters/ERRATA.md says why). PyTorch's
kernels are pinned as avx2_kernels.py says (OpenBLAS's Haswell sgemm, fused multiply-adds),
so the files do not depend on the CPU that makes them.
"""
import ast
import contextlib
import io
import json
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import avx2_kernels  # noqa: E402,F401  (before torch: OPENBLAS_CORETYPE, ATEN_CPU_CAPABILITY)
import torch  # noqa: E402
from reference_train import tiktoken as node_tiktoken  # noqa: E402

NOTEBOOKS = {"ch02": "ch02/01_main-chapter-code/ch02.ipynb",
             "ch03": "ch03/01_main-chapter-code/ch03.ipynb",
             "ch04": "ch04/01_main-chapter-code/ch04.ipynb"}

# chapter -> [(program, [code cells whose output it prints])], in the notebook's order;
# the cells between two groups' run too, printing nothing that is checked
GROUPS = {
    "ch02": [
        ("201_book_raw_text", [18]),
        ("202_book_regex_split", [20, 22, 24, 26]),
        ("203_book_preprocess", [29, 31]),
        ("204_book_vocabulary", [36, 39]),
        ("205_book_tokenizer_v1", [47, 49, 50]),
        ("206_book_unknown_word", [58]),
        ("207_book_tokenizer_v2", [61, 62, 66, 67, 68]),
        ("208_book_bpe", [74, 75]),
        ("209_book_next_word", [81, 84, 86, 87]),
        ("210_book_dataloader", [97, 98, 102]),
        ("211_book_embedding", [111, 114, 116]),
        ("212_book_input_embeddings", [129, 130, 133, 135]),
    ],
    "ch03": [
        ("301_book_attention_scores", [28, 30]),
        ("302_book_attention_weights", [33, 35, 37]),
        ("303_book_context_vector", [40]),
        ("304_book_all_context_vectors", [47, 49, 51, 53, 55, 57]),
        ("305_book_trainable_weights", [70, 72, 75, 77, 80, 83]),
        ("306_book_self_attention_v1", [86]),
        ("307_book_self_attention_v2", [89]),
        ("308_book_causal_mask", [98, 100, 102, 105, 108, 110]),
        ("309_book_dropout", [115, 116]),
        ("310_book_causal_attention", [120, 121]),
        ("311_book_multihead_wrapper", [127]),
        ("312_book_multihead_attention", [131]),
        ("313_book_batched_heads", [138, 140]),
    ],
    "ch04": [
        ("401_book_dummy_gpt", [15, 16]),
        ("402_book_layer_outputs", [22, 24]),
        ("403_book_normalize", [28, 30]),
        ("404_book_layernorm", [35]),
        ("405_book_feedforward", [45, 47]),
        ("406_book_shortcuts", [55, 57]),
        ("407_book_transformer_block", [64]),
        ("409_book_generate", [90, 91, 93]),
    ],
}
# cells left out: the downloads; cells run but not shown: the versions (this run's are
# PyTorch 1.13's and node's tiktoken's; the programs are mygpt's)
SKIP = {"ch02": [16], "ch03": [], "ch04": []}
# ch04: 42 draws the GELU figure (chapter 405 writes it as an SVG); 72-80 are chapter 37's (tools/reference_book_ch4.py), the
# same GPTModel
UNSHOWN = {"ch02": [3, 72, 90], "ch03": [3], "ch04": [2, 42, 72, 74, 76, 78, 80]}


class Tokenizer:
    """tiktoken.get_encoding("gpt2") through node."""

    def encode(self, text, allowed_special=()):
        return json.loads(node_tiktoken(["encode"], text))

    def decode(self, ids):
        return node_tiktoken(["decode"], json.dumps(list(ids))).decode("utf-8", errors="replace")


def run_cell(src, env):
    """Runs src in env; returns what Jupyter shows: the printed text, then the repr of a last
    bare expression that is not None, or the last line of the traceback of an exception
    (the book's cell that shows the V1 tokenizer fail on a word it has not seen)."""
    tree = ast.parse(src)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(tree, "<cell>", "exec"), env)
            if last is not None:
                value = eval(compile(last, "<cell>", "eval"), env)
                if value is not None:
                    print(repr(value))
        except Exception as e:  # noqa: BLE001 - the cell's error is its output
            print(f"{type(e).__name__}: {e}")
    return out.getvalue()


def stored(cell):
    text = ""
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            text += "".join(o["text"])
        elif "data" in o and "text/plain" in o["data"]:
            text += "".join(o["data"]["text/plain"]) + "\n"
    return text


def run_chapter(checkout, chapter):
    nb = json.load(open(os.path.join(checkout, NOTEBOOKS[chapter])))
    shim = types.ModuleType("tiktoken")
    shim.get_encoding = lambda name: Tokenizer()
    sys.modules["tiktoken"] = shim
    env = {"__name__": "__main__"}
    owner = {c: p for p, cells in GROUPS[chapter] for c in cells}
    texts = {p: "" for p, _ in GROUPS[chapter]}
    os.chdir(os.path.join(ROOT, "data"))  # open("the-verdict.txt")
    sys.path.insert(0, os.path.dirname(os.path.join(checkout, NOTEBOOKS[chapter])))  # previous_chapters
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code" or i in SKIP[chapter]:
            continue
        src = "".join(cell["source"])
        src = "\n".join(ln for ln in src.split("\n") if not ln.lstrip().startswith(("%", "!")))
        got = run_cell(src, env)
        if i in owner:
            texts[owner[i]] += got
            if got != stored(cell):
                print(f"{chapter} cell {i} ({owner[i]}) differs from the notebook's stored output",
                      file=sys.stderr)
        elif got and i not in UNSHOWN[chapter]:
            print(f"{chapter} cell {i} prints but no program shows it:\n{got}", file=sys.stderr)
    for program, text in texts.items():
        with open(os.path.join(ROOT, "chapters", "expected", program + ".txt"), "w") as f:
            f.write(text)


def main():
    assert torch.__version__.startswith("1.13"), torch.__version__
    checkout = os.path.abspath(sys.argv[1])
    for chapter in sys.argv[2:]:
        run_chapter(checkout, chapter)


if __name__ == "__main__":
    main()
