#!/usr/bin/python3
"""Goldens for mygpt's llama architecture from llama2.c's own model.py (PyTorch 1.13, float32, CPU).

    /usr/bin/python3 tools/reference_llama.py --llama2c LLAMA2C_CHECKOUT \\
        --model corpus/llama/stories260K.bin --out tests/golden/llama

LLAMA2C_CHECKOUT is a clone of karpathy/llama2.c: its model.py (Transformer, ModelArgs) is
imported unchanged. The script writes into OUT:

  stories260K.txt   the logits of llama2.c's stories260K model for fixed ids, and the greedy
                    (argmax) ids of 200 positions from BOS (token 1), as llama2.c's
                    `run MODEL -t 0 -n 200` chooses them: BOS fed at position 0, each argmax
                    fed back, stopping before a 1
  random_N.bin      random models (N = 0 .. 7), written in llama2.c's legacy format as
                    export.py's legacy_export writes it
  random_N.txt      their logits for fixed ids
  init_N.bin        model.py's own initialisation: torch.manual_seed(SEED); Transformer(args)
                    (its _init_weights), written as above (N = 0 .. 2, tied as model.py ties)
  init_N.txt        its config, a `seed SEED multiple_of M` line, and its logits for fixed ids
  grad_NAME.bin     every parameter's gradient after model.py's Transformer(ids, targets) and
                    last_loss.backward() (its cross-entropy, the mean over B * T), for NAME
                    stories260K and random_N, written as the model is (legacy_export of the
                    gradients in the weights' places: a tied classifier's gradient is the
                    embedding's, both uses added)
  grad_NAME.txt     `ids B T` then the B * T ids, `targets` then the B * T targets, `loss` and
                    last_loss (%.9e)
  adamw_random_N.bin the random model after one step of model.py's configure_optimizers(
                    ADAMW) AdamW (weight decay on the tensors of 2 or more dimensions only)
                    from those gradients, written as the model is

With --train-cases, it writes OUT/train_cli.txt instead: what `mygpt train --arch llama`
prints for each of TRAIN_CASES, computed by tools/reference_train.py's loop (its data
loader, GPT-2 ids, AdamW or SGD) over model.py's Transformer built after
torch.manual_seed(SEED) (with --decay-groups, AdamW from model.py's configure_optimizers),
in the case format of tests/golden/train_cli.txt (needs data/ and
npm's tiktoken: npm install --prefix tools/node).

Each .txt: `config DIM HIDDEN LAYERS HEADS KV_HEADS VOCAB SEQ_LEN UNTIED`, `ids B T` then the
B * T ids, `logits` then the B * T * V logits (float32 as %.9e, row by row), and for
stories260K a `greedy N` line of the N chosen ids. The logits are model.py's Transformer's
for every position (its forward with targets, which keeps them all), in eval mode.
Deterministic: rerunning it rewrites identical files.
"""
import argparse
import os
import struct
import sys

import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one thread, as torch's: a product's split follows them
import torch

# model.py's initialisation: (seed, dim, n_layers, n_heads, n_kv_heads, vocab, multiple_of, max_seq_len, B, T)
INITS = [
    (123, 32, 2, 4, 2, 50, 16, 16, 2, 8),
    (1337, 24, 3, 2, 1, 33, 8, 12, 1, 12),
    (7, 64, 1, 8, 8, 100, 32, 20, 2, 5),
]

# (dim, n_layers, n_heads, n_kv_heads, vocab, multiple_of, max_seq_len, untied, B, T)
CONFIGS = [
    (16, 1, 2, 2, 32, 4, 8, False, 2, 8),
    (32, 2, 4, 2, 48, 8, 16, False, 2, 12),
    (32, 2, 4, 1, 40, 16, 12, True, 1, 12),
    (24, 3, 3, 3, 64, 32, 16, True, 2, 7),
    (48, 2, 6, 3, 57, 8, 20, False, 1, 20),
    (64, 1, 8, 4, 96, 32, 32, True, 2, 16),
    (40, 2, 2, 1, 33, 4, 10, False, 3, 5),
    (64, 2, 4, 4, 128, 64, 24, False, 1, 24),
]


# `mygpt train` flags after `train --arch llama` (DATA: the data folder)
TRAIN_CASES = [
    "--seed 123 --vocab 50257 --embed 16 --heads 2 --layers 1 --max-seq 16 --text DATA/the-verdict.txt "
    "--context 16 --batch 4 --steps 12 --optimizer adamw --lr 0.01 --eval-every 4",
    "--seed 7 --vocab 50257 --embed 24 --heads 4 --layers 2 --max-seq 16 --kv-heads 2 --ffn-hidden 40 "
    "--text DATA/the-verdict.txt --context 12 --batch 2 --steps 9 --optimizer adamw --lr 0.003 "
    "--weight-decay 0.1 --eval-every 3",
    "--seed 5 --vocab 50257 --embed 16 --heads 4 --layers 1 --max-seq 8 --kv-heads 1 --multiple-of 8 "
    "--untied-head --text DATA/the-verdict.txt --context 8 --batch 2 --steps 6 --optimizer sgd --lr 0.5 "
    "--momentum 0.9 --eval-every 2",
    "--seed 11 --vocab 50257 --embed 16 --heads 4 --layers 2 --max-seq 12 --kv-heads 2 --multiple-of 16 "
    "--untied-head --text DATA/the-verdict.txt --context 12 --batch 3 --steps 10 --optimizer adamw --lr 0.02 "
    "--weight-decay 2 --decay-groups --eval-every 3",
]


class AllLogits(torch.nn.Module):
    """model.py's Transformer returning every position's logits (its forward with targets)."""
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x, x)


def train_cases(out, data, ModelArgs, Transformer):
    """train_cli.txt: each of TRAIN_CASES run by reference_train.py's loop over model.py."""
    import contextlib
    import io
    import shlex
    import reference_train
    lines = ["# generated by tools/reference_llama.py --train-cases from torch %s -- do not edit" % torch.__version__,
             "# case WORDS (DATA = the data folder) / out LINE ... / end"]
    for case in TRAIN_CASES:
        ap = argparse.ArgumentParser()
        for flag in ("seed", "vocab", "embed", "heads", "layers", "max-seq", "context", "batch", "steps",
                     "eval-every", "kv-heads", "ffn-hidden", "multiple-of"):
            ap.add_argument("--" + flag, type=int)
        for flag in ("lr", "momentum", "weight-decay"):
            ap.add_argument("--" + flag, type=float)
        ap.add_argument("--text")
        ap.add_argument("--optimizer")
        ap.add_argument("--untied-head", action="store_true")
        ap.add_argument("--decay-groups", action="store_true")
        a = ap.parse_args(shlex.split(case.replace("DATA", data)))

        def make_model(a=a):
            # untied (model.py always ties): the embedding keeps its own draw of _init_weights,
            # the classifier output's, the tied weight's value
            drawn = {}
            init = Transformer._init_weights

            def keep_embedding(self, module):
                init(self, module)
                if isinstance(module, torch.nn.Embedding):
                    drawn["embedding"] = module.weight.detach().clone()
            Transformer._init_weights = keep_embedding
            try:
                model = Transformer(ModelArgs(dim=a.embed, n_layers=a.layers, n_heads=a.heads,
                                              n_kv_heads=a.kv_heads, vocab_size=a.vocab, hidden_dim=a.ffn_hidden,
                                              multiple_of=a.multiple_of or 256, max_seq_len=a.max_seq, dropout=0.0))
            finally:
                Transformer._init_weights = init
            if a.untied_head:
                model.output.weight = torch.nn.Parameter(model.output.weight.detach().clone())
                model.tok_embeddings.weight = torch.nn.Parameter(drawn["embedding"])
            return AllLogits(model)

        def make_opt(wrapped, a=a):
            # --decay-groups: AdamW as model.py's configure_optimizers groups it (train.py's):
            # the tensors of 2 or more dimensions decay, the RMSNorm gains not; with the tool's
            # betas (PyTorch's (0.9, 0.999), not train.py's beta2 0.95) and weight decay 0.01
            # unless given. Without it: reference_train.py's AdamW(model.parameters())
            if not a.decay_groups:
                return reference_train.make_optimizer(a, wrapped)
            wd = a.weight_decay if a.weight_decay is not None else 0.01
            return wrapped.model.configure_optimizers(wd, a.lr, (0.9, 0.999), "cpu")  # (it prints its groups)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            reference_train.train(a, make_model=make_model, make_opt=make_opt)
        lines.append("case train --arch llama " + case)
        lines += ["out " + line for line in printed.getvalue().splitlines() if line.startswith("step ")]
        lines.append("end")
    with open(os.path.join(out, "train_cli.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def read_legacy(path, ModelArgs, Transformer):
    """A llama2.c legacy .bin into model.py's Transformer (run.c's reading order)."""
    data = open(path, "rb").read()
    dim, hidden, layers, heads, kv, vocab, seq = struct.unpack("7i", data[:28])
    shared = vocab > 0
    vocab = abs(vocab)
    args = ModelArgs(dim=dim, n_layers=layers, n_heads=heads, n_kv_heads=kv, vocab_size=vocab,
                     hidden_dim=hidden, max_seq_len=seq, dropout=0.0)
    model = Transformer(args)
    floats = torch.frombuffer(bytearray(data[28:]), dtype=torch.float32)
    at = 0

    def take(t):
        nonlocal at
        n = t.numel()
        with torch.no_grad():
            t.copy_(floats[at:at + n].view_as(t))
        at += n

    take(model.tok_embeddings.weight)
    for name in ("attention_norm", "attention.wq", "attention.wk", "attention.wv", "attention.wo",
                 "ffn_norm", "feed_forward.w1", "feed_forward.w2", "feed_forward.w3"):
        for layer in model.layers:
            take(layer.get_submodule(name).weight)
    take(model.norm.weight)
    at += seq * (dim // heads)  # freqs_cos, freqs_sin
    if not shared:
        model.output.weight = torch.nn.Parameter(torch.empty(vocab, dim))
        take(model.output.weight)
    assert at == floats.numel(), (at, floats.numel())
    return model, (dim, hidden, layers, heads, kv, vocab, seq, int(not shared))



def _all_logits(model, ids):
    h = model.tok_embeddings(ids)
    T = ids.shape[1]
    cos, sin = model.freqs_cos[:T], model.freqs_sin[:T]
    for layer in model.layers:
        h = layer(h, cos, sin)
    return model.output(model.norm(h))


def write(path, config, ids, logits, greedy=None, seed=None):
    B, T = ids.shape
    with open(path, "w") as f:
        f.write("config " + " ".join(str(v) for v in config) + "\n")
        if seed is not None:
            f.write("seed %d multiple_of %d\n" % seed)
        f.write(f"ids {B} {T} " + " ".join(str(int(i)) for i in ids.flatten()) + "\n")
        f.write("logits\n")
        for row in logits.reshape(B * T, -1):
            f.write(" ".join("%.9e" % float(v) for v in row) + "\n")
        if greedy is not None:
            f.write(f"greedy {len(greedy)} " + " ".join(str(i) for i in greedy) + "\n")


def greedy_ids(model, steps):
    """run.c's loop at temperature 0 with an empty prompt: BOS at position 0."""
    tokens, chosen = [1], []
    for _ in range(steps):
        with torch.no_grad():
            nxt = int(torch.argmax(_all_logits(model, torch.tensor([tokens]))[0, -1]))
        if nxt == 1:
            break
        chosen.append(nxt)
        tokens.append(nxt)
    return chosen


def random_model(i, cfg, ModelArgs, Transformer):
    dim, layers, heads, kv, vocab, multiple_of, seq, untied, B, T = cfg
    torch.manual_seed(1000 + i)
    args = ModelArgs(dim=dim, n_layers=layers, n_heads=heads, n_kv_heads=kv, vocab_size=vocab,
                     multiple_of=multiple_of, max_seq_len=seq, dropout=0.0)
    model = Transformer(args)
    with torch.no_grad():  # norms not all ones, and an untied classifier of its own values
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(torch.rand(p.shape) + 0.5)
        if untied:
            model.output.weight = torch.nn.Parameter(torch.randn(vocab, dim) * 0.05)
    return model


# configure_optimizers(weight_decay, learning_rate, betas, device_type): llama2.c's train.py's
ADAMW = (0.1, 5e-4, (0.9, 0.95), "cpu")


def write_grads(out, name, model, B, T, g, legacy_export):
    """model.py's loss and gradients for random ids and targets, into grad_NAME.bin and .txt."""
    vocab = model.params.vocab_size
    ids = torch.randint(0, vocab, (B, T), generator=g)
    targets = torch.randint(0, vocab, (B, T), generator=g)
    model.train()  # (dropout 0: the same numbers as eval)
    model.zero_grad()
    model(ids, targets)
    loss = model.last_loss
    loss.backward()
    if name.startswith("random"):
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):  # (it prints its groups)
            opt = model.configure_optimizers(*ADAMW)
        kept = [p.detach().clone() for p in model.parameters()]
        opt.step()
        legacy_export(model, os.path.join(out, f"adamw_{name}.bin"))
        model.params.vocab_size = vocab  # (legacy_export negates it for an untied classifier)
        with torch.no_grad():
            for p, k in zip(model.parameters(), kept):
                p.copy_(k)
    with torch.no_grad():
        for p in model.parameters():  # (unique: a tied classifier once)
            p.copy_(p.grad)
    legacy_export(model, os.path.join(out, f"grad_{name}.bin"))
    with open(os.path.join(out, f"grad_{name}.txt"), "w") as f:
        f.write(f"ids {B} {T} " + " ".join(str(int(i)) for i in ids.flatten()) + "\n")
        f.write("targets " + " ".join(str(int(i)) for i in targets.flatten()) + "\n")
        f.write("loss %.9e\n" % float(loss))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--llama2c", required=True, help="a checkout of karpathy/llama2.c")
    ap.add_argument("--model", required=True, help="stories260K.bin")
    ap.add_argument("--out", required=True)
    ap.add_argument("--train-cases", metavar="DATA", help="write OUT/train_cli.txt, the data folder DATA")
    a = ap.parse_args()
    sys.path.insert(0, a.llama2c)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from model import ModelArgs, Transformer  # llama2.c's model.py
    from export import legacy_export
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)
    if a.train_cases:
        train_cases(a.out, a.train_cases, ModelArgs, Transformer)
        return

    model, config = read_legacy(a.model, ModelArgs, Transformer)
    model.eval()
    g = torch.Generator().manual_seed(260)
    ids = torch.randint(0, config[5], (1, 24), generator=g)
    write(os.path.join(a.out, "stories260K.txt"), config, ids, _all_logits(model, ids).detach(),
          greedy_ids(model, 200))

    for i, cfg in enumerate(CONFIGS):
        model = random_model(i, cfg, ModelArgs, Transformer)
        model.eval()
        path = os.path.join(a.out, f"random_{i}.bin")
        legacy_export(model, path)  # (it prints "wrote PATH")
        model, config = read_legacy(path, ModelArgs, Transformer)  # what the file holds
        model.eval()
        B, T = cfg[8], cfg[9]
        ids = torch.randint(0, cfg[4], (B, T), generator=g)
        write(os.path.join(a.out, f"random_{i}.txt"), config, ids, _all_logits(model, ids).detach())

    for i, (seed, dim, layers, heads, kv, vocab, multiple_of, seq, B, T) in enumerate(INITS):
        torch.manual_seed(seed)
        model = Transformer(ModelArgs(dim=dim, n_layers=layers, n_heads=heads, n_kv_heads=kv, vocab_size=vocab,
                                      multiple_of=multiple_of, max_seq_len=seq, dropout=0.0))
        model.eval()
        ids = torch.randint(0, vocab, (B, T), generator=g)
        logits = _all_logits(model, ids).detach()
        legacy_export(model, os.path.join(a.out, f"init_{i}.bin"))
        config = (dim, model.layers[0].feed_forward.w1.weight.shape[0], layers, heads, kv, vocab, seq, 0)
        write(os.path.join(a.out, f"init_{i}.txt"), config, ids, logits, seed=(seed, multiple_of))

    # gradients (a generator of their own: the files above stay as they were)
    g = torch.Generator().manual_seed(49)
    model, _ = read_legacy(a.model, ModelArgs, Transformer)
    write_grads(a.out, "stories260K", model, 2, 16, g, legacy_export)
    for i, cfg in enumerate(CONFIGS):
        model, _ = read_legacy(os.path.join(a.out, f"random_{i}.bin"), ModelArgs, Transformer)
        write_grads(a.out, f"random_{i}", model, cfg[8], cfg[9], g, legacy_export)


if __name__ == "__main__":
    main()
