#!/usr/bin/python3
"""Regenerate chapters/expected/*.txt of the chapters of documents 000-004: what each
chapter's document code prints under PyTorch 1.13 (Debian's python3-torch), with the
stand-ins listed in chapters/index.tsv. The book's chapters (2xx-4xx, 37, 38, 40, 80-94)
come from tools/reference_book_*.py (tests/README.md lists their commands) and are left
alone here.

    /usr/bin/python3 tools/gen_chapter_expected.py                    # rewrite their expected files
    /usr/bin/python3 tools/gen_chapter_expected.py --check            # compare with the built chapters
    /usr/bin/python3 tools/gen_chapter_expected.py --check --seed 7   # the same at another seed
                                                                      # (every seeded chapter)

Each function below is the document's code for one printed block (reduced to what it
prints). Lines whose last digit is float32 summation order get a "~DIGIT " prefix: the
checker (scripts/check-chapter.sh) lets each decimal number differ by one unit in the last
digit printed here (integers must be equal). Lines whose digits no two runs share (a
time per step) get "~MAX=B ": every number at most B.
The document's own text is kept beside each function where PyTorch prints exactly that,
and the script asserts the two agree, so an "exact" chapter can only pass if PyTorch and
the document agree.
"""
import argparse
import contextlib
import io
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import avx2_kernels  # noqa: E402,F401  (before torch: the AVX2 machine's kernels)
import torch  # noqa: E402
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, HERE)
from reference_gpt import GPT  # noqa: E402

CHAPTERS = {}


DIGIT = "digit"  # one unit in the last printed digit


def chapter(name, default_seed=None, tol=None, document=None):
    """Registers a chapter. tol: {line index: DIGIT or ("max", bound)}. document: the
    document's printed text, when PyTorch prints exactly that."""
    def wrap(fn):
        CHAPTERS[name] = (fn, default_seed, tol or {}, document)
        return fn
    return wrap


# ---------------------------------------------------------------- document 000

@chapter("25_position_breaks_invariance", 0, document="""\
Without position embedding (token 3 row):
  ids1 position 3: tensor([ 0.1198,  1.2377,  1.1168, -0.2473], grad_fn=<SelectBackward0>)
  ids2 position 0: tensor([ 0.1198,  1.2377,  1.1168, -0.2473], grad_fn=<SelectBackward0>)
  identical: True

With position embedding (token 3 at different positions):
  ids1 position 3 (token 3 at pos 3): tensor([ 1.5092,  2.8240,  2.0631, -1.0910], grad_fn=<SelectBackward0>)
  ids2 position 0 (token 3 at pos 0): tensor([-1.2328, -0.4583,  1.6834,  0.5462], grad_fn=<SelectBackward0>)
  identical: False
""")
def ch25(seed):
    torch.manual_seed(seed)
    V, C, max_seq = 4, 4, 8
    te = nn.Embedding(V, C)  # TokenEmbedding wraps one nn.Embedding
    pe = nn.Embedding(max_seq, C)
    ids1 = torch.tensor([0, 1, 2, 3])
    ids2 = torch.tensor([3, 2, 1, 0])
    print("Without position embedding (token 3 row):")
    print(f"  ids1 position 3: {te(ids1)[3]}")
    print(f"  ids2 position 0: {te(ids2)[0]}")
    print(f"  identical: {torch.equal(te(ids1)[3], te(ids2)[0])}")
    print()

    def with_pos(ids):
        T = ids.shape[-1]
        return te(ids) + pe(torch.arange(T))

    v1, v2 = with_pos(ids1), with_pos(ids2)
    print("With position embedding (token 3 at different positions):")
    print(f"  ids1 position 3 (token 3 at pos 3): {v1[3]}")
    print(f"  ids2 position 0 (token 3 at pos 0): {v2[0]}")
    print(f"  identical: {torch.equal(v1[3], v2[0])}")


def param_table(gpt, N):
    n_te = sum(p.numel() for p in gpt.token_embedding.parameters())
    n_pe = sum(p.numel() for p in gpt.position_embedding.parameters())
    n_blocks = sum(p.numel() for p in gpt.blocks.parameters())
    n_ln_f = sum(p.numel() for p in gpt.ln_f.parameters())
    n_total = sum(p.numel() for p in gpt.parameters())
    per = n_blocks // N
    print(f"Token embedding       (V*C):       {n_te:>5}")
    print(f"Position embedding (max_seq*C):    {n_pe:>5}")
    print(f"{N} TransformerBlocks  (N*{per}):     {n_blocks:>5}")  # the document writes N*228
    print(f"Final LayerNorm       (2*C):        {n_ln_f:>5}")
    print(f"Tied head            (0 extra):     {0:>5}")
    print(f"Total parameters:                  {n_total:>5}")


@chapter("26_gpt_main", 0, document="""\
Vocabulary: ('I', 'love', 'AI', '!')
Vocabulary size V = 4

Token ids shape:  (1, 4)
Logits shape:     (1, 4, 4)  (B, T, V)

Token embedding       (V*C):          16
Position embedding (max_seq*C):      256
2 TransformerBlocks  (N*228):       456
Final LayerNorm       (2*C):            8
Tied head            (0 extra):         0
Total parameters:                    736
""")
def ch26(seed):
    VOCAB = ("I", "love", "AI", "!")
    print("Vocabulary:", VOCAB)
    print(f"Vocabulary size V = {len(VOCAB)}")
    torch.manual_seed(seed)
    V, C, h, N = len(VOCAB), 4, 2, 2
    gpt = GPT(vocab_size=V, embed_dim=C, num_heads=h, num_layers=N, max_seq_len=64, dropout=0.0)
    gpt.eval()
    ids = torch.tensor([VOCAB.index(w) for w in ["I", "love", "AI", "!"]]).unsqueeze(0)
    logits = gpt(ids)
    print(f"\nToken ids shape:  {tuple(ids.shape)}")
    print(f"Logits shape:     {tuple(logits.shape)}  (B, T, V)")
    print()
    param_table(gpt, N)


def experiment(title, seed, V, C, h, N, M):
    print(title)
    torch.manual_seed(seed)
    gpt = GPT(V, C, h, N, M)
    te, pe, per = V * C, M * C, 12 * C * C + 9 * C
    predicted = te + pe + N * per + 2 * C
    counted = sum(p.numel() for p in gpt.parameters())
    print(f"gpt = GPT(vocab_size={V}, embed_dim={C}, num_heads={h}, num_layers={N}, max_seq_len={M})")
    print(f"Predicted: V*C + max_seq_len*C + N*(12*C^2 + 9*C) + 2*C = "
          f"{te} + {pe} + {N * per} + {2 * C} = {predicted}")
    print(f"Counted:   sum(p.numel() for p in gpt.parameters()) = {counted}")
    print(f"Prediction verified: {predicted == counted}")
    print()
    param_table(gpt, N)
    return gpt


@chapter("27_wider_model", 0)
def ch27(seed):
    experiment("Experiment 1. Wider model", seed, 4, 8, 2, 2, 64)


@chapter("28_deeper_model", 0)
def ch28(seed):
    experiment("Experiment 2. Deeper model", seed, 4, 4, 2, 4, 64)


@chapter("29_short_context", 0)
def ch29(seed):
    gpt = experiment("Experiment 3. Position-embedding hyperparameter", seed, 4, 4, 2, 2, 8)
    ids = torch.tensor([[t % 4 for t in range(9)]])
    for T in (8, 9):
        try:
            out = gpt(ids[:, :T])
            print(f"\ngpt(ids) with ids of shape (1, {T}): logits of shape {tuple(out.shape)}", end="")
        except ValueError as e:
            print(f"\ngpt(ids) with ids of shape (1, {T}): ValueError: {e}", end="")
    print()


@chapter("30_tied_head", 0, tol={i: DIGIT for i in (2, 3, 4, 5, 9, 10, 11, 12)})
def ch30(seed):
    print("Experiment 4. The tied head really is tied")
    torch.manual_seed(seed)
    gpt = GPT(4, 4, 2, 2, 64).eval()
    ids = torch.tensor([[0, 1, 2, 3]])
    print("with torch.no_grad(): logits = gpt(ids)")
    with torch.no_grad():
        before = gpt(ids)
    print(before)
    gpt.token_embedding.embedding.weight.data[0, 0] = 999.0
    print("\ngpt.token_embedding.embedding.weight.data[0, 0] = 999.0")
    print("with torch.no_grad(): logits = gpt(ids)")
    with torch.no_grad():
        after = gpt(ids)
    print(after)
    print("\nlogits != logits_before:")
    print(after != before)
    print(f"column 0 changed at every position: {bool((after != before)[..., 0].all())}")


@chapter("31_gpt2_small_params")
def ch31(seed):
    V, C, h, N, M = 50257, 768, 12, 12, 1024
    rows = [("V * C", V * C), ("max_seq_len * C", M * C), ("N * (12 C^2 + 9 C)", N * (12 * C * C + 9 * C)),
            ("2 * C", 2 * C), ("tied head", 0)]
    total = sum(n for _, n in rows)
    # cross-check against the model itself: sum(p.numel()) of the reference GPT
    assert total == sum(p.numel() for p in GPT(V, C, h, N, M).parameters())
    print("GPT-2 small: V=50,257, C=768, h=12, N=12, max_seq_len=1024, tied head\n")
    for label, n in rows + [("total", total)]:
        print(f"{label:<26} {n:>13,}")
    print(f"\n= {total / 1e6:.1f} M parameters (the published GPT-2 small figure is 124 M)")


# ---------------------------------------------------------------- the course's chapters 13-15
# (announced at the end of document 000; tools/reference_train.py is their loop in PyTorch;
# the-verdict's ids come from npm's tiktoken through node: npm install --prefix tools/node)

def verdict_args(**kw):
    import argparse
    a = argparse.Namespace(seed=123, vocab=50257, embed=64, heads=4, layers=2, max_seq=32,
                           text=os.path.join(ROOT, "data", "the-verdict.txt"), context=32, batch=8,
                           steps=60, eval_every=10, optimizer="adamw", lr=1e-2, momentum=None, weight_decay=None)
    for k, v in kw.items():
        setattr(a, k, v)
    return a


@chapter("32_loss", 0, tol={9: DIGIT, 14: DIGIT, 16: DIGIT, 18: DIGIT, 19: DIGIT, 20: DIGIT, 21: DIGIT})
def ch32(seed):
    import reference_train as rt
    torch.manual_seed(seed)
    gpt = GPT(4, 4, 2, 2, 64)
    ids = torch.tensor([[0, 1, 2, 3]])
    x, y = ids[:, :-1], ids[:, 1:]
    print("inputs: ", x)
    print("targets:", y)
    print("loss = F.cross_entropy(gpt(inputs).flatten(0, 1), targets.flatten())")
    loss = F.cross_entropy(gpt(x).flatten(0, 1), y.flatten())
    print(loss)
    print(f"ln V = ln 4 = {math.log(4):.4f}: the loss of a uniform guess over the vocabulary.")
    print("A loss above it means the untrained model is confidently wrong somewhere:\n"
          "its N(0, 1) embeddings, tied to the head, make large logits.")
    a = verdict_args()
    text = open(a.text, encoding="utf-8").read()
    loader = rt.create_dataloader_v1(text[:int(0.9 * len(text))], batch_size=8, max_length=32, stride=32,
                                     shuffle=False, drop_last=True)
    bx, by = next(iter(loader))
    torch.manual_seed(123)
    big = GPT(50257, 64, 4, 2, 32)
    with torch.no_grad():
        big_loss = F.cross_entropy(big(bx).flatten(0, 1), by.flatten())
    print(f"\nGPT(50257, 64, 4, 2, 32), torch.manual_seed(123), on the first the-verdict batch (8 x 32):")
    print(str(big_loss).replace(")", ", grad_fn=<NllLossBackward0>)"))  # computed under no_grad here
    print(f"ln V = ln 50257 = {math.log(50257):.4f}")
    loss.backward()
    print("\nloss.backward(), then:")
    print("gpt.ln_f.gamma.grad")
    print(gpt.ln_f.gamma.grad)
    print("gpt.blocks[1].mlp.fc2.bias.grad")
    print(gpt.blocks[1].mlp.fc2.bias.grad)
    print("gpt.token_embedding.embedding.weight.grad (the tied head's gradient and the lookup's)")
    print(gpt.token_embedding.embedding.weight.grad)


def verdict_line(step, epoch, train_loss, val_loss, tokens):
    print(f"Ep {epoch} (Step {step:06d}): Train loss {train_loss:.3f}, Val loss {val_loss:.3f}")
    verdict_line.tokens = tokens


@chapter("33_training", None, tol={i: DIGIT for i in list(range(5, 10)) + list(range(13, 20))})
def ch33(seed):
    import reference_train as rt
    a = verdict_args()
    text = open(a.text, encoding="utf-8").read()
    split = int(0.9 * len(text))
    ntrain, nval = len(rt.encode(text[:split])), len(rt.encode(text[split:]))
    print(f"GPT(50257, 64, 4, 2, 32), torch.manual_seed(123), on the-verdict: {ntrain} training and {nval}\n"
          f"validation tokens, batches of 8 x 32, {len(range(0, ntrain - 32, 32)) // 8} batches per epoch")
    print("\nSGD (lr 0.1), 40 steps:")
    rt.train(verdict_args(optimizer="sgd", lr=0.1, steps=40), on_eval=verdict_line)
    print(f"tokens seen: {verdict_line.tokens:,}")
    print("\nAdamW (lr 0.01, weight decay 0.01), 60 steps:")
    rt.train(verdict_args(), on_eval=verdict_line)
    print(f"tokens seen: {verdict_line.tokens:,}")


@chapter("35_data_parallel", None, tol=dict([(i, DIGIT) for i in range(5, 12)] + [(14, ("max", 1e6))]))
def ch35(seed):
    # One PyTorch run stands for both columns: data parallelism changes only the grouping
    # of the sums (the 2-process column is compared to the last printed digit). The time
    # line's numbers are only bounded; 0.0 stands for them here.
    import reference_train as rt
    evals = []
    rt.train(verdict_args(), on_eval=lambda step, epoch, tl, vl, tokens: evals.append((step, tl, vl)))
    print("Chapter 14's AdamW run: GPT(50257, 64, 4, 2, 32), torch.manual_seed(123), batches of 8 x 32,\n"
          "lr 0.01, 60 steps; by 1 process, then by 2 (rows 0-3 and 4-7 of every batch), the\n"
          "gradients averaged over MPI before each step, 1 OpenMP thread per process\n")
    print("%6s %11s %11s %11s %11s" % ("step", "train P=1", "train P=2", "val P=1", "val P=2"))
    for step, tl, vl in evals:
        print("%6d %11.3f %11.3f %11.3f %11.3f" % (step, tl, tl, vl, vl))
    print("\nthe 2 ranks' parameters were compared after every step: identical")
    print("time per step: 1 process 0.0 ms, 2 processes 0.0 ms")


def token_repr(text):
    """A token's text as chapter 36 quotes it: '...' with \\n, \\\\ and \\' escaped."""
    return "'" + text.replace("\\", "\\\\").replace("\n", "\\n").replace("'", "\\'") + "'"


def attention_probabilities(model, ids):
    """Every head's softmax output for ids (1, T): (L, NH, T, T), taken with forward
    hooks on each block's attention dropout (the identity in eval mode)."""
    probs = []
    hooks = [b.attn.drop.register_forward_hook(lambda m, i, o: probs.append(o[0].detach().clone()))
             for b in model.blocks]
    model.eval()
    with torch.no_grad():
        model(ids)
    for h in hooks:
        h.remove()
    return torch.stack(probs)


@chapter("36_attention_maps", None, tol={i: DIGIT for i in range(5, 55)})
def ch36(seed):
    import reference_train as rt
    model = rt.train(verdict_args(), on_eval=lambda *args: None)
    text = open(verdict_args().text, encoding="utf-8").read()
    val = text[int(0.9 * len(text)):]
    start = val.find("\n\n")
    start = start + 2 if start >= 0 else 0
    dot = val.find(".", start)
    sentence = val[start:dot + 1] if dot >= 0 else val[start:]
    ids = rt.encode(sentence)[:32]
    T = len(ids)
    p = attention_probabilities(model, torch.tensor([ids]))
    L, NH = p.shape[0], p.shape[1]
    words = [token_repr(rt.decode([i])) for i in ids]
    print("Chapter 33's model reads the first sentence of the-verdict's validation part\n"
          f"(the first after a blank line), {T} GPT-2 tokens:")
    print(" ".join(words))
    print(f"one forward pass with the attention probabilities of its {L} layers x {NH} heads kept")
    for l, h in ((0, 0), (L - 1, NH - 1)):
        print(f"\nLayer {l}, head {h}: the 3 tokens each position attends to most")
        for t in range(T):
            row = p[l, h, t].tolist()
            order = sorted(range(t + 1), key=lambda s: (-row[s], s))[:3]
            print("%4d %-14s" % (t, words[t]) + ",".join(" %s %.3f" % (words[s], row[s]) for s in order))
    print("\nfigure: every head's attention, layers down and heads across (36_attention_maps.svg)")


@chapter("34_generation", None)
def ch34(seed):
    import reference_train as rt
    model = rt.train(verdict_args(), on_eval=lambda *args: None)
    model.eval()
    print("Chapter 33's model (AdamW, 60 steps) continues \"Every effort moves you\", 20 new tokens.")
    ids = torch.tensor([rt.encode("Every effort moves you")])
    for title, temp, top_k in (("Greedy (argmax):", 0.0, None),
                               ("Temperature 1.4, top-k 25, torch.manual_seed(123):", 1.4, 25)):
        print("\n" + title)
        if temp:
            torch.manual_seed(123)
        out = rt.generate(model, ids, 20, 32, temp, top_k, None, 50256)
        print("ids:", out)
        print("text: " + rt.decode(out[0].tolist()).replace("\n", " "))
    vocab = ["closer", "every", "effort", "forward", "inches", "moves", "pizza", "toward", "you"]
    logits = torch.tensor([4.51, 0.89, -1.90, 6.75, 1.63, -1.62, -1.89, 6.28, 1.79])
    print("\nTemperature on a 9-word vocabulary (torch.multinomial(softmax(logits / T), 1), 1,000 draws):")
    for t in (1, 0.1, 5):
        probas = torch.softmax(logits / t, dim=0)
        print(f"\nT = {t}")
        torch.manual_seed(123)
        sample = [torch.multinomial(probas, num_samples=1).item() for _ in range(1_000)]
        for i, freq in enumerate(torch.bincount(torch.tensor(sample))):
            print(f"{freq} x {vocab[i]}")


def bytes_per_token(model, fmt):
    """mygpt_weights_bytes_per_token: every matmul weight (the tied head: the token
    embedding) as stored, the vectors in float32, one row of the position embedding"""
    total = 0
    for name, p in model.named_parameters():
        rows, cols = (p.shape[0], p.shape[1]) if p.dim() == 2 else (1, p.shape[0])
        if "pos" in name or "position" in name:
            total += cols * 4
        elif p.dim() == 2 and fmt == "bf16":
            total += rows * cols * 2
        elif p.dim() == 2 and fmt == "int8":
            total += rows * (cols + 4 * ((cols + 63) // 64))
        else:
            total += rows * cols * 4
    return total


@chapter("39_quantization", None, tol={7: DIGIT, 8: DIGIT, 9: DIGIT})
def ch39(seed):
    import reference_train as rt
    from quantize_reference import dequantize
    from reference_llms import gpt2
    trained = rt.train(verdict_args(), on_eval=lambda *args: None)
    text = open(os.path.join(ROOT, "data", "the-verdict.txt"), encoding="utf-8").read()
    val_text = text[int(0.9 * len(text)):]
    val_ids = rt.encode(val_text)
    val_loader = rt.create_dataloader_v1(val_text, batch_size=8, max_length=32, stride=32, shuffle=False,
                                         drop_last=False)
    P, PL, NEW = 8, 8, 16
    print("Chapter 33's AdamW model, GPT(50257, 64, 4, 2, 32), its weights stored three ways for\n"
          "inference: as trained (fp32), rounded to bfloat16 (bf16), and in int8 groups of 64 with a\n"
          "float32 scale max|w| / 127 each (int8). Every matmul weight and the token embedding (the\n"
          "tied head) are stored so; LayerNorm parameters and the position embedding stay float32.\n"
          f"Greedy: {P} validation prompts of {PL} tokens, {NEW} new tokens each.\n")
    print("%-7s %9s %9s %20s %15s" % ("weights", "MB/token", "val loss", "tokens as fp32's", "same text"))
    ref = None
    for fmt in ("fp32", "bf16", "int8"):
        model = GPT(50257, 64, 4, 2, 32)
        model.load_state_dict(trained.state_dict())
        model.eval()
        with torch.no_grad():
            if fmt != "fp32":
                for name, p in model.named_parameters():
                    if p.dim() == 2 and "position" not in name:
                        p.copy_(dequantize(p, fmt))
            losses = [F.cross_entropy(model(vx).flatten(0, 1), vy.flatten()).item() for vx, vy in val_loader]
        loss = sum(losses) / len(losses)
        outs = [rt.generate(model, torch.tensor([val_ids[k * 32:k * 32 + PL]]), NEW, 32)[0, PL:].tolist()
                for k in range(P)]
        mb = bytes_per_token(model, fmt) / 1e6
        if ref is None:
            ref = outs
            print("%-7s %9.3f %9.3f %20s %15s" % (fmt, mb, loss, "-", "-"))
        else:
            same = sum(a == b for o, r in zip(outs, ref) for a, b in zip(o, r))
            whole = sum(o == r for o, r in zip(outs, ref))
            print("%-7s %9.3f %9.3f %20s %15s" % (fmt, mb, loss, "%d/%d" % (same, P * NEW), "%d/%d" % (whole, P)))
    print()
    for fmt in ("bf16", "int8"):
        print(f"{fmt}: logits on a validation window ({32 * 50257} floats) against the float32 model of the\n"
              "dequantized weights: identical, bit for bit")
    big = gpt2(50257, 768, 12, 12, 1024)
    print("\nGPT-2 small reads %.1f MB of weights a token in fp32, %.1f in bf16, %.1f in int8."
          % tuple(bytes_per_token(big, f) / 1e6 for f in ("fp32", "bf16", "int8")))


# ---------------------------------------------------------------- document 001

def toy_attention(x):
    scores = x @ x.transpose(-2, -1) / x.shape[-1] ** 0.5
    return scores.softmax(dim=-1) @ x


class GPTEmbedding(nn.Module):
    def __init__(self, vocab_size, block_size, n_embd):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Embedding(block_size, n_embd)

    def forward(self, idx):
        B, T = idx.shape
        return self.tok_emb(idx) + self.pos_emb(torch.arange(T))


def doc001_session(seed):
    """Document 001 is one notebook session: yields the printed blocks in order."""
    out = {}
    buf = io.StringIO()
    torch.manual_seed(seed)
    vocab_size, n_embd = 50, 8
    tok_emb = nn.Embedding(vocab_size, n_embd)
    with contextlib.redirect_stdout(buf):
        print(tok_emb.weight.shape)
    out["41"], buf = buf.getvalue(), io.StringIO()
    ids = torch.tensor([[3, 7, 7, 1], [12, 0, 49, 7]])
    x = tok_emb(ids)
    with contextlib.redirect_stdout(buf):
        print(x.shape)
        print(torch.allclose(x[0, 1], x[0, 2]))
        print(torch.allclose(x[0, 1], x[1, 3]))
    out["42"], buf = buf.getvalue(), io.StringIO()
    onehot = F.one_hot(ids, num_classes=vocab_size).float()
    with contextlib.redirect_stdout(buf):
        print(torch.allclose(onehot @ tok_emb.weight, tok_emb(ids)))
    out["43"], buf = buf.getvalue(), io.StringIO()
    x = torch.randn(1, 6, 8)
    perm = torch.randperm(6)
    with contextlib.redirect_stdout(buf):
        print(torch.allclose(toy_attention(x)[:, perm], toy_attention(x[:, perm]), atol=1e-6))
    out["44"], buf = buf.getvalue(), io.StringIO()
    vocab_size, block_size, n_embd = 65, 256, 384
    emb = GPTEmbedding(vocab_size, block_size, n_embd)
    idx = torch.randint(0, vocab_size, (4, 256))
    with contextlib.redirect_stdout(buf):
        print(emb(idx).shape)
        n_params = sum(p.numel() for p in emb.parameters())
        print(f"{n_params:,} parameters (tok: {vocab_size*n_embd:,}, pos: {block_size*n_embd:,})")
    out["45"], buf = buf.getvalue(), io.StringIO()
    ids = torch.randint(0, vocab_size, (1, 6))
    perm = torch.randperm(6)
    with contextlib.redirect_stdout(buf):
        print(torch.allclose(toy_attention(emb(ids))[:, perm], toy_attention(emb(ids[:, perm])), atol=1e-6))
    out["46"] = buf.getvalue()
    return out


for _num, _name, _doc in [
        ("41", "41_embedding_table", "torch.Size([50, 8])\n"),
        ("42", "42_embedding_lookup", "torch.Size([2, 4, 8])\nTrue\nTrue\n"),
        ("43", "43_onehot_equivalence", "True\n"),
        ("44", "44_permutation_blind", "True\n"),
        ("45", "45_gpt_embedding", "torch.Size([4, 256, 384])\n123,264 parameters (tok: 24,960, pos: 98,304)\n"),
        ("46", "46_position_breaks_blindness", "False\n")]:
    chapter(_name, 42, document=_doc)(lambda seed, _n=_num: print(doc001_session(seed)[_n], end=""))


def sinusoidal_encoding(block_size, n_embd):
    pos = torch.arange(block_size, dtype=torch.float32).unsqueeze(1)
    i = torch.arange(0, n_embd, 2, dtype=torch.float32)
    inv_freq = torch.exp(-math.log(10000.0) * i / n_embd)
    angles = pos * inv_freq
    pe = torch.zeros(block_size, n_embd)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


@chapter("47_sinusoidal_encoding", document="torch.Size([256, 384])\ntensor([0., 1., 0., 1., 0., 1.])\n-1.0 1.0\n")
def ch47(seed):
    pe = sinusoidal_encoding(256, 384)
    print(pe.shape)
    print(pe[0, :6])
    print(pe.min().item(), pe.max().item())


@chapter("48_relative_position_task", 0)
def ch48(seed):
    torch.manual_seed(seed)
    block_size, n_embd, k = 256, 384, 5
    pe = sinusoidal_encoding(block_size, n_embd)
    learned = nn.Embedding(block_size, n_embd).weight.detach()
    print(f"{'base p':>7} | {'sinusoidal PE(p)·PE(p+5)':>25} | {'learned PE(p)·PE(p+5)':>22}")
    print("-" * 62)
    for p in [0, 10, 50, 100, 200]:
        d_sin = (pe[p] @ pe[p + k]).item()
        d_lrn = (learned[p] @ learned[p + k]).item()
        print(f"{p:>7} | {d_sin:>25.4f} | {d_lrn:>22.4f}")
    sims = torch.stack([pe[p] @ pe[p + k] for p in range(0, block_size - k)])
    assert sims.std() < 1e-4 * sims.mean().abs(), "relative-position property violated!"
    print(f"\nsinusoidal: std/mean over ALL base positions = {(sims.std()/sims.mean()).item():.2e}")


@chapter("49_input_stage", 42)
def ch49(seed):
    torch.manual_seed(seed)
    emb = GPTEmbedding(65, 256, 384)
    xb = torch.randint(0, 65, (64, 256))  # stands in for Day 2's get_batch("train")
    x = emb(xb)
    print(f"in : {xb.shape} {xb.dtype}")
    print(f"out: {x.shape} {x.dtype}")
    print(f"x[0, 0, :4] = {x[0, 0, :4].detach()}")


# ---------------------------------------------------------------- document 002

@chapter("51_token_embedding", 0)
def ch51(seed):
    torch.manual_seed(seed)  # stands in for the unseeded notebook
    embed = nn.Embedding(10000, 256)
    token_ids = torch.tensor([[101, 2054, 2003, 2115, 2171], [101, 1045, 2066, 2653, 102]])
    embeddings = embed(token_ids)
    print(f"Input token IDs shape: {token_ids.shape}")
    print(f"Output embeddings shape: {embeddings.shape}")
    print(f"\nEach token is now a {256}-dimensional vector.")
    print(f"\nFirst token (ID {token_ids[0, 0].item()}) embedding (first 8 dims):")
    print(f"  {embeddings[0, 0, :8].detach().numpy().round(4)}")


@chapter("52_learned_position", 0)
def ch52(seed):
    torch.manual_seed(seed)
    nn.Embedding(10000, 256)  # the notebook's earlier cell
    pos_embedding = nn.Embedding(512, 256)
    x = torch.randn(2, 10, 256)
    x_with_pos = x + pos_embedding(torch.arange(10))
    print(f"Input shape: {x.shape}")
    print(f"Output shape: {x_with_pos.shape}")
    print(f"\nPosition embedding for position 0 (first 8 dims):")
    print(f"  {pos_embedding.weight[0, :8].detach().numpy().round(4)}")
    print(f"\nPosition embedding for position 1 (first 8 dims):")
    print(f"  {pos_embedding.weight[1, :8].detach().numpy().round(4)}")
    n_params = sum(p.numel() for p in pos_embedding.parameters())
    print(f"\nPosition embedding parameters: {n_params:,} ({n_params/1e6:.2f}M)")


@chapter("53_alibi", document="""\
ALiBi bias shape: torch.Size([4, 6, 6])
Slopes per head: [0.25   0.0625 0.0156 0.0039]

Head 0 biases (steep slope - prefers nearby tokens):
[[-0.   -0.25 -0.5  -0.75 -1.   -1.25]
 [-0.25 -0.   -0.25 -0.5  -0.75 -1.  ]
 [-0.5  -0.25 -0.   -0.25 -0.5  -0.75]
 [-0.75 -0.5  -0.25 -0.   -0.25 -0.5 ]
 [-1.   -0.75 -0.5  -0.25 -0.   -0.25]
 [-1.25 -1.   -0.75 -0.5  -0.25 -0.  ]]

Head 3 biases (gentle slope - more global attention):
[[-0.    -0.004 -0.008 -0.012 -0.016 -0.02 ]
 [-0.004 -0.    -0.004 -0.008 -0.012 -0.016]
 [-0.008 -0.004 -0.    -0.004 -0.008 -0.012]
 [-0.012 -0.008 -0.004 -0.    -0.004 -0.008]
 [-0.016 -0.012 -0.008 -0.004 -0.    -0.004]
 [-0.02  -0.016 -0.012 -0.008 -0.004 -0.   ]]
""")
def ch53(seed):
    num_heads = 4
    slopes = torch.tensor([2 ** (-8 * (i + 1) / num_heads) for i in range(num_heads)])
    positions = torch.arange(6)
    distances = torch.abs(positions.unsqueeze(0) - positions.unsqueeze(1))
    biases = -slopes.view(-1, 1, 1) * distances.unsqueeze(0).float()
    print(f"ALiBi bias shape: {biases.shape}")
    print(f"Slopes per head: {slopes.numpy().round(4)}")
    print()
    print("Head 0 biases (steep slope - prefers nearby tokens):")
    print(biases[0].numpy().round(3))
    print()
    print("Head 3 biases (gentle slope - more global attention):")
    print(biases[3].numpy().round(3))


def rope_caches(d_model=64, max_seq_len=512, base=10000):
    inv_freq = 1.0 / (base ** (torch.arange(0, d_model, 2).float() / d_model))
    freqs = torch.outer(torch.arange(max_seq_len).float(), inv_freq)
    return inv_freq, freqs.cos(), freqs.sin()


@chapter("54_rope", document="""\
Cos cache shape: torch.Size([10, 32])
Sin cache shape: torch.Size([10, 32])

Frequencies (inverse) for first 4 dimension pairs:
  [1.     0.7499 0.5623 0.4217]

Notice: lower dimensions have higher frequencies (rotate faster).
This lets the model capture both local (fast) and global (slow) patterns.
""")
def ch54(seed):
    inv_freq, cos, sin = rope_caches()
    cos, sin = cos[:10], sin[:10]
    print(f"Cos cache shape: {cos.shape}")
    print(f"Sin cache shape: {sin.shape}")
    print()
    print("Frequencies (inverse) for first 4 dimension pairs:")
    print(f"  {inv_freq[:4].numpy().round(4)}")
    print()
    print("Notice: lower dimensions have higher frequencies (rotate faster).")
    print("This lets the model capture both local (fast) and global (slow) patterns.")


@chapter("55_rope_figure", document="""\
<Figure size 1400x500 with 3 Axes>
Low dimension pairs (top of heatmap) oscillate rapidly.
High dimension pairs (bottom) change slowly across positions.
""")
def ch55(seed):
    # matplotlib is not a dependency of this script: the notebook's display of the
    # figure object is its repr for figsize=(14, 5) at 100 dpi with 2 axes + a colour bar
    print("<Figure size 1400x500 with 3 Axes>")
    print("Low dimension pairs (top of heatmap) oscillate rapidly.")
    print("High dimension pairs (bottom) change slowly across positions.")


def apply_rotary_emb(x, cos, sin):
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


@chapter("56_apply_rotary", 0)
def ch56(seed):
    torch.manual_seed(seed)
    q, k = torch.randn(64), torch.randn(64)
    _, cos, sin = rope_caches()
    print("q_m . k_n after apply_rotary_emb (d_model = 64)")
    print(f"{'m':>5} {'n':>5} {'m - n':>7} {'q_m . k_n':>12}")
    for m, n in [(2, 0), (7, 5), (100, 98), (5, 0), (12, 7), (300, 295)]:
        qm = apply_rotary_emb(q, cos[m], sin[m])
        kn = apply_rotary_emb(k, cos[n], sin[n])
        print(f"{m:>5} {n:>5} {m - n:>7} {(qm @ kn).item():>12.4f}")
    print(f"\nWithout rotation q . k = {(q @ k).item():.4f} at every pair of positions.")


@chapter("57_transformer_embedding", 0, document="""\
Input tokens: torch.Size([4, 32])
Output embeddings: torch.Size([4, 32, 256])

Embedding parameters: 2,691,072
  Token embeddings: 2,560,000
  Position embeddings: 131,072
""")
def ch57(seed):
    torch.manual_seed(seed)
    tok, pos = nn.Embedding(10000, 256), nn.Embedding(512, 256)
    token_ids = torch.randint(0, 10000, (4, 32))
    embeddings = nn.Dropout(0.1)(tok(token_ids) + pos(torch.arange(32)))
    print(f"Input tokens: {token_ids.shape}")
    print(f"Output embeddings: {embeddings.shape}")
    n_params = sum(p.numel() for p in list(tok.parameters()) + list(pos.parameters()))
    print(f"\nEmbedding parameters: {n_params:,}")
    print(f"  Token embeddings: {10000 * 256:,}")
    print(f"  Position embeddings: {512 * 256:,}")


# ---------------------------------------------------------------- document 003

@chapter("61_verdict_dataloader", 123, document="""\
Token IDs:
 tensor([[   40,   367,  2885,  1464],
        [ 1807,  3619,   402,   271],
        [10899,  2138,   257,  7026],
        [15632,   438,  2016,   257],
        [  922,  5891,  1576,   438],
        [  568,   340,   373,   645],
        [ 1049,  5975,   284,   502],
        [  284,  3285,   326,    11]])

Inputs shape:
 torch.Size([8, 4])

torch.Size([8, 4, 256])

torch.Size([4, 256])

torch.Size([8, 4, 256])
""")
def ch61(seed):
    from torch.utils.data import DataLoader
    from reference_train import GPTDatasetV1
    # tiktoken's ids of the-verdict (tests/golden/verdict_ids.txt, from npm tiktoken:
    # Python's tiktoken is not a Debian package)
    with open(os.path.join(ROOT, "tests", "golden", "verdict_ids.txt")) as f:
        token_ids = [int(x) for x in [ln for ln in f if not ln.startswith("#")][0].split()]

    torch.manual_seed(seed)
    max_length, output_dim, vocab_size = 4, 256, 50257
    token_embedding_layer = torch.nn.Embedding(vocab_size, output_dim)
    dataloader = DataLoader(GPTDatasetV1(token_ids, max_length, max_length), batch_size=8,
                            shuffle=False, drop_last=True)
    inputs, targets = next(iter(dataloader))
    print("Token IDs:\n", inputs)
    print("\nInputs shape:\n", inputs.shape)
    token_embeddings = token_embedding_layer(inputs)
    print()
    print(token_embeddings.shape)
    pos_embedding_layer = torch.nn.Embedding(max_length, output_dim)
    pos_embeddings = pos_embedding_layer(torch.arange(max_length))
    print()
    print(pos_embeddings.shape)
    input_embeddings = token_embeddings + pos_embeddings
    print()
    print(input_embeddings.shape)


# ---------------------------------------------------------------- document 004

def make_embed(vocab_size, d_model, max_seq_len):
    tok = nn.Embedding(vocab_size, d_model)
    nn.init.normal_(tok.weight, mean=0.0, std=0.02)
    pos = nn.Embedding(max_seq_len, d_model)
    nn.init.normal_(pos.weight, mean=0.0, std=0.02)
    return lambda ids: tok(ids) + pos(torch.arange(ids.shape[1])), tok, pos


@chapter("71_embed_sanity_check", 0)
def ch71(seed):
    torch.manual_seed(seed)
    embed, tok, pos = make_embed(4096, 128, 64)
    print(f"params: {sum(p.numel() for p in list(tok.parameters()) + list(pos.parameters())):,}")
    ids = torch.randint(0, 4096, (2, 12))
    out = embed(ids)
    print(f"\ninput shape:  {tuple(ids.shape)}")
    print(f"output shape: {tuple(out.shape)}")
    print(f"output dtype: {out.dtype}")
    print(f"output stats: mean={out.mean():.4f}, std={out.std():.4f}")
    same_out = embed(torch.tensor([[42, 42, 42, 42]]))
    print(f"\nsame token (id=42) at positions 0..3:")
    print(f"  position 0 vs 1 differ: {not torch.allclose(same_out[0, 0], same_out[0, 1])}")
    print(f"  position 0 vs 2 differ: {not torch.allclose(same_out[0, 0], same_out[0, 2])}")
    diff_out = embed(torch.tensor([[10, 20]]))
    print(f"\ndifferent tokens at position 0 (id=10) and 1 (id=20):")
    print(f"  vectors differ: {not torch.allclose(diff_out[0, 0], diff_out[0, 1])}")


@chapter("72_smoke_test", 0, document="x: (2, 12)\nafter embed: (2, 12, 64)\nafter attention: (2, 12, 64)\n")
def ch72(seed):
    torch.manual_seed(seed)
    data = torch.randint(0, 4096, (20000,))  # stands in for TinyStories valid.bin
    ix = torch.randint(len(data) - 12, (2,))
    x = torch.stack([data[i:i + 12] for i in ix])
    print(f"x: {tuple(x.shape)}")
    embed, _, _ = make_embed(4096, 64, 64)
    e = embed(x)
    print(f"after embed: {tuple(e.shape)}")
    W = [nn.Linear(64, 64, bias=False) for _ in range(4)]
    q, k, v = W[0](e), W[1](e), W[2](e)
    s = (q @ k.transpose(-2, -1) / math.sqrt(64)).masked_fill(torch.ones(12, 12).tril() == 0, float("-inf"))
    a = W[3](s.softmax(-1) @ v)
    print(f"after attention: {tuple(a.shape)}")


# ---------------------------------------------------------------- driver

def render(name, seed):
    fn, default_seed, tol, document = CHAPTERS[name]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(default_seed if seed is None else seed)
    return buf.getvalue(), tol, document


def with_tolerances(text, tol):
    def mark(t):
        return "~DIGIT " if t == DIGIT else "~MAX=%g " % t[1]
    lines = text.split("\n")
    return "\n".join((mark(tol[i]) + ln) if i in tol else ln for i, ln in enumerate(lines))


def main():
    assert torch.__version__.startswith("1.13"), torch.__version__
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="compare with the built chapter programs")
    ap.add_argument("--seed", type=int, help="use this seed for every seeded chapter (with --check)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", help="this chapter alone (its program name)")
    a = ap.parse_args()
    if a.seed is not None and not a.check:
        ap.error("--seed goes with --check (the expected files hold the default seeds' outputs)")
    index = [ln.split("\t") for ln in open(os.path.join(ROOT, "chapters", "index.tsv")).read().splitlines()[1:]]
    if a.only:
        index = [row for row in index if row[1] == a.only]
    bad = written = 0
    for row in index:
        name, document_file, expected_file, fidelity = row[1], row[2], row[4], row[5]
        if name not in CHAPTERS:
            if document_file == "raschka_llms-from-scratch" and not a.only:
                print("%-32s the book's: tools/reference_book_*.py" % name)
            else:
                print("no reference for", name, "(the book's: tools/reference_book_*.py)" if
                      document_file == "raschka_llms-from-scratch" else "")
                bad += 1
            continue
        seeded = CHAPTERS[name][1] is not None
        text, tol, document = render(name, a.seed if seeded else None)
        if fidelity.startswith("exact") and document is not None and a.seed is None:
            assert text == document, "%s: PyTorch does not print the document's text" % name
        if a.check:
            args = [os.path.join(a.build, "chapters", name)] + (["--seed", str(a.seed)] if a.seed is not None and seeded else [])
            exp = os.path.join("/tmp", "expected-" + name)
            with open(exp, "w") as f:
                f.write(with_tolerances(text, tol))
            r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "check-chapter.sh"), args[0], exp] + args[1:],
                               capture_output=True, text=True,
                               env=dict(os.environ, MYGPT_FIGURES="/tmp", MYGPT_DATA=os.path.join(ROOT, "data")))
            status = "ok" if r.returncode == 0 else "DIFFERS"
            bad += r.returncode != 0
            print("%-32s %s" % (name, status))
            if r.returncode:
                print(r.stdout + r.stderr)
        else:
            with open(os.path.join(ROOT, "chapters", "expected", expected_file), "w") as f:
                f.write(with_tolerances(text, tol))
            written += 1
    if not a.check:
        print("wrote %d expected files" % written)
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
