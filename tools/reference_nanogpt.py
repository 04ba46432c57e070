#!/usr/bin/python3
"""Run nanoGPT's own train.py (PyTorch 1.13, float32, CPU) on Tiny Shakespeare and keep its
printed loss lines: the goldens `mygpt train --preset shakespeare-char` is compared with.

    /usr/bin/python3 tools/reference_nanogpt.py --nanogpt NANOGPT_CHECKOUT \
        --text corpus/tinyshakespeare.txt --out tests/golden/nanogpt/short.txt \
        -- --max_iters=30 --eval_interval=10

(dropout.txt: `-- --max_iters=10 --eval_interval=5 --dropout=0.2`; full.txt: no extra
arguments; each file's first line names its own.)

NANOGPT_CHECKOUT is a clone of karpathy/nanoGPT (model.py, train.py, configurator.py,
config/, data/shakespeare_char/prepare.py are used unchanged). The script copies them into a
temporary folder, runs prepare.py there on TEXT (it then downloads nothing), and runs

    train.py config/train_shakespeare_char.py  <README's CPU command>  --dtype=float32  <extra>

where the README's CPU command is --device=cpu --compile=False --eval_iters=20
--log_interval=1 --block_size=64 --batch_size=12 --n_layer=4 --n_head=4 --n_embd=128
--max_iters=2000 --lr_decay_iters=2000 --dropout=0.0; arguments after `--` override it.
With --sample MODEL (a model `mygpt train --preset shakespeare-char --save MODEL` wrote),
it runs sample.py's generation instead: torch.manual_seed(1337), GPT(...) built, MODEL's
weights loaded, model.generate(encode("\\n"), 500, temperature=0.8, top_k=200), and OUT
receives decode(y[0].tolist()), the first of sample.py's samples.

OUT receives the `step N: ...` lines and the `iter N: loss X` part of each iter line (its
time and mfu are dropped: they are not deterministic); the wall time goes to stderr.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import avx2_kernels  # noqa: F401  (the AVX2 machine's kernels, for train.py too: it inherits them)

README_CPU = ["--device=cpu", "--compile=False", "--eval_iters=20", "--log_interval=1",
              "--block_size=64", "--batch_size=12", "--n_layer=4", "--n_head=4",
              "--n_embd=128", "--max_iters=2000", "--lr_decay_iters=2000", "--dropout=0.0"]


def prepare(nanogpt, text, work):
    for name in ("model.py", "train.py", "configurator.py"):
        shutil.copy(os.path.join(nanogpt, name), work)
    shutil.copytree(os.path.join(nanogpt, "config"), os.path.join(work, "config"))
    data = os.path.join(work, "data", "shakespeare_char")
    os.makedirs(data)
    shutil.copy(os.path.join(nanogpt, "data", "shakespeare_char", "prepare.py"), data)
    shutil.copy(text, os.path.join(data, "input.txt"))
    subprocess.run([sys.executable, "prepare.py"], cwd=data, check=True,
                   stdout=subprocess.DEVNULL)


def torch_version():
    r = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                       capture_output=True, text=True, check=True)
    return r.stdout.strip()


def loss_lines(stdout):
    """The step lines whole, the iter lines up to their loss."""
    out = []
    for line in stdout.splitlines():
        if line.startswith("step "):
            out.append(line)
        elif line.startswith("iter "):
            out.append(line.split(", time")[0])
    return out


def read_safetensors(path):
    """name -> float32 tensor of a safetensors file (F32 tensors only)"""
    import json
    import struct
    import torch
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", name
        a, b = e["data_offsets"]
        t = torch.frombuffer(bytearray(raw[8 + n + a:8 + n + b]), dtype=torch.float32)
        out[name] = t.reshape(e["shape"])
    return out, header.get("__metadata__", {})


def sample(nanogpt, text, model_path, max_new):
    """sample.py's first sample from mygpt's saved nanogpt model"""
    import torch
    sys.path.insert(0, nanogpt)
    from model import GPTConfig, GPT
    w, meta = read_safetensors(model_path)
    L = int(meta["num_layers"])
    with open(text, "r") as f:
        data = f.read()
    chars = sorted(list(set(data)))
    stoi = {ch: i for i, ch in enumerate(chars)}
    torch.manual_seed(1337)
    conf = GPTConfig(n_layer=L, n_head=int(meta["num_heads"]), n_embd=int(meta["embed_dim"]),
                     block_size=int(meta["max_seq_len"]), bias=False,
                     vocab_size=int(meta["vocab_size"]), dropout=0.0)
    model = GPT(conf)
    sd = {"transformer.wte.weight": w["token_embedding.embedding.weight"],
          "lm_head.weight": w["token_embedding.embedding.weight"],
          "transformer.wpe.weight": w["position_embedding.weight"],
          "transformer.ln_f.weight": w["ln_f.gamma"]}
    for l in range(L):
        p, q = "blocks.%d." % l, "transformer.h.%d." % l
        sd[q + "ln_1.weight"] = w[p + "ln1.gamma"]
        sd[q + "ln_2.weight"] = w[p + "ln2.gamma"]
        sd[q + "attn.c_attn.weight"] = torch.cat([w[p + "attn.W_q.weight"], w[p + "attn.W_k.weight"],
                                                  w[p + "attn.W_v.weight"]])
        sd[q + "attn.c_proj.weight"] = w[p + "attn.W_o.weight"]
        sd[q + "mlp.c_fc.weight"] = w[p + "mlp.fc1.weight"]
        sd[q + "mlp.c_proj.weight"] = w[p + "mlp.fc2.weight"]
    model.load_state_dict(sd, strict=False)  # the causal masks are buffers, not in sd
    model.eval()
    x = torch.tensor([stoi[c] for c in "\n"], dtype=torch.long)[None, ...]
    with torch.no_grad():
        y = model.generate(x, max_new, temperature=0.8, top_k=200)
    return "".join(chars[i] for i in y[0].tolist())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nanogpt", required=True, help="a karpathy/nanoGPT checkout")
    ap.add_argument("--text", required=True, help="Tiny Shakespeare's input.txt")
    ap.add_argument("--out", required=True, help="file for the loss lines")
    ap.add_argument("--sample", metavar="MODEL", help="sample.py from mygpt's saved model instead")
    ap.add_argument("--max-new", type=int, default=500, help="--sample's new characters")
    ap.add_argument("extra", nargs="*", help="train.py overrides after --")
    args = ap.parse_args()
    text = os.path.abspath(args.text)
    if args.sample:
        with open(args.out, "w") as f:
            f.write(sample(os.path.abspath(args.nanogpt), text, args.sample, args.max_new) + "\n")
        return
    with tempfile.TemporaryDirectory() as work:
        prepare(os.path.abspath(args.nanogpt), text, work)
        cmd = [sys.executable, "train.py", "config/train_shakespeare_char.py"]
        cmd += README_CPU + ["--dtype=float32"] + args.extra
        t0 = time.time()
        r = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
        wall = time.time() - t0
        if r.returncode != 0:
            sys.exit("train.py failed:\n" + r.stderr)
    with open(args.out, "w") as f:
        f.write("# nanoGPT's train.py under PyTorch %s: tools/reference_nanogpt.py -- %s\n"
                % (torch_version(), " ".join(args.extra)))
        f.write("\n".join(loss_lines(r.stdout)) + "\n")
    print("train.py %s: %.1f s wall" % (" ".join(cmd[2:]), wall), file=sys.stderr)


if __name__ == "__main__":
    main()
