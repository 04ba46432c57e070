#!/usr/bin/python3
"""The book's chapter 6 (Raschka, Build a Large Language Model (From Scratch)), its data side in
PyTorch 1.13 as ch06/01_main-chapter-code/gpt_class_finetune.py does it: the SpamDataset
(pandas.read_csv, tiktoken's gpt2 encoding, truncation to max_length, padding with 50256 to the
training set's longest text) and its DataLoaders (batch 8, torch.manual_seed(123); the training
loader shuffled with drop_last). Written from the book's code; tiktoken's ids come through node
(npm install --prefix tools/node), pandas is Debian's python3-pandas.

    /usr/bin/python3 tools/reference_book_ch6.py > chapters/expected/80_book_spam_data.txt
    /usr/bin/python3 tools/reference_book_ch6.py --golden    # writes tests/golden/spam.txt
    /usr/bin/python3 tools/reference_book_ch6.py --classify-golden   # writes tests/golden/classify.txt
                                  (with appendix E's LoRA: the cases with a rank)
    /usr/bin/python3 tools/reference_book_ch6.py --train [--smoke] > chapters/expected/81_book_classifier[.smoke].txt
    /usr/bin/python3 tools/reference_book_ch6.py --lora [--smoke] > chapters/expected/87_book_lora[.smoke].txt

The data folder (bash scripts/fetch-data.sh) holds the three CSV files; --data DIR another.
"""
import argparse
import copy
import json
import math
import os
import struct
import subprocess
import sys

import avx2_kernels  # noqa: F401  (before numpy and torch: the AVX2 machine's kernels)

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one thread, as torch's: a product's split follows them
import pandas as pd  # (loads numpy, and so OpenBLAS)
import torch

torch.set_num_threads(1)
from torch.utils.data import DataLoader, Dataset

HERE = os.path.dirname(os.path.abspath(__file__))
SPLITS = ("train", "validation", "test")


def encode_all(texts):
    """tiktoken.get_encoding("gpt2").encode(text) for every text (tiktoken's defaults: a special
    token in the text is an error, as in Python)."""
    script = ("const {createRequire}=require('module');const r=createRequire(process.argv[1]+'/node/package.json');"
              "const e=r('tiktoken').get_encoding('gpt2');let d='';process.stdin.on('data',c=>d+=c);"
              "process.stdin.on('end',()=>{process.stdout.write(JSON.stringify(JSON.parse(d).map("
              "t=>Array.from(e.encode(t)))))});")
    out = subprocess.run(["node", "-e", script, HERE], input=json.dumps(texts).encode(), capture_output=True,
                         check=True).stdout
    return json.loads(out)


class SpamDataset(Dataset):
    """The book's SpamDataset, with tokenizer.encode batched through node."""

    def __init__(self, csv_file, max_length=None, pad_token_id=50256):
        self.data = pd.read_csv(csv_file)
        self.encoded_texts = encode_all(list(self.data["Text"]))
        self.lengths = [len(t) for t in self.encoded_texts]
        self.longest = max(self.lengths)
        if max_length is None:
            self.max_length = self._longest_encoded_length()
        else:
            self.max_length = max_length
            self.encoded_texts = [encoded_text[:self.max_length] for encoded_text in self.encoded_texts]
        self.encoded_texts = [encoded_text + [pad_token_id] * (self.max_length - len(encoded_text))
                              for encoded_text in self.encoded_texts]
        self.accessed = []  # the indices __getitem__ was asked for, in order (num_workers=0)

    def __getitem__(self, index):
        self.accessed.append(index)
        encoded = self.encoded_texts[index]
        label = self.data.iloc[index]["Label"]
        return torch.tensor(encoded, dtype=torch.long), torch.tensor(label, dtype=torch.long)

    def __len__(self):
        return len(self.data)

    def _longest_encoded_length(self):
        return max(len(encoded_text) for encoded_text in self.encoded_texts)


def checksum(values):
    """sum over i of (i + 1) * v[i] mod 2^64, the tests' golden_checksum for integers."""
    s = 0
    for i, v in enumerate(values):
        s = (s + (i + 1) * (v % 2**64)) % 2**64
    return s


def datasets(data, max_length):
    """The book's three datasets: validation and test take the training set's max_length."""
    train = SpamDataset(os.path.join(data, "sms_spam_train.csv"), max_length=max_length)
    val = SpamDataset(os.path.join(data, "sms_spam_validation.csv"), max_length=train.max_length)
    test = SpamDataset(os.path.join(data, "sms_spam_test.csv"), max_length=train.max_length)
    return train, val, test


def loaders(train, val, test, batch_size=8):
    """The book's DataLoaders, num_workers=0."""
    train_loader = DataLoader(train, batch_size=batch_size, shuffle=True, num_workers=0, drop_last=True)
    val_loader = DataLoader(val, batch_size=batch_size, num_workers=0, drop_last=False)
    test_loader = DataLoader(test, batch_size=batch_size, num_workers=0, drop_last=False)
    return train_loader, val_loader, test_loader


# CSV files and what mygpt_csv_parse does with them: "same" (it reads what pandas reads) or
# "refuse LINE" (an error naming that line; pandas reads the file some other way, or not at all)
CSV_CASES = [
    (b'Label,Text\n0,plain text\n1,"quoted, with a comma"\n', "same"),
    (b'Label,Text\n0,"a ""quote"" inside"\n', "same"),
    (b'Label,Text\n0,"two\nlines"\n1,"three\n\nlines, one blank"\n', "same"),
    (b'Label,Text\n0,say "hi" now\n', "same"),
    (b'Label,Text\n0, "a"\n', "same"),
    (b'\xef\xbb\xbfLabel,Text\r\n0,x\r\n1,"a\r\nb"\r\n', "same"),
    (b'Label,Text\n0,no newline at the end', "same"),
    (b'Label,Text\n\n0,blank lines\n\n\n1,are skipped\n\n', "same"),
    (b'Label,Text\n0,  spaces kept  \n', "same"),
    (b'Label,Text\n0,"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"\n', "same"),
    (b'Label,Text\n0,"abc"def\n', "refuse 2"),
    (b'Label,Text\n0,ok\n1,"not closed\n', "refuse 3"),
    (b'Label,Text\n0,ok\n0,a,b\n', "refuse 3"),
    (b'Label,Text\n0\n', "refuse 2"),
    (b'Label,Text\n0,a\rb\n', "refuse 2"),
    (b'Label,Text\n0,"x"\n1,\xff\n', "refuse 3"),
    (b'Label,Text\n0,a\x00b\n', "refuse 2"),
    (b'', "refuse 0"),
]


def pandas_reads(raw):
    """What pd.read_csv makes of raw: the rows as (label, text) pairs, or the error."""
    import io
    try:
        df = pd.read_csv(io.BytesIO(raw))
    except Exception as e:  # pandas' own refusal
        return "error " + type(e).__name__
    return [(str(a), str(b)) for a, b in df.itertuples(index=False)] if list(df.columns) == ["Label", "Text"] \
        else "columns " + ",".join(map(str, df.columns))


def classifier_head(C, num_classes, tied, V=50257, NH=4, L=2, ctx=64):
    """Section 6.5 on a random GPTModel (OpenAI's weights are not needed for the draw): freeze
    every parameter, torch.manual_seed(123), the new out_head, then unfreeze the last block,
    the final LayerNorm and the head. Returns the head and the trainable / total counts."""
    sys.path.insert(0, HERE)
    from reference_llms import GPTModel, classification_head
    torch.manual_seed(123)
    model = classification_head(GPTModel(dict(vocab_size=V, context_length=ctx, emb_dim=C, n_heads=NH, n_layers=L,
                                              drop_rate=0.0, qkv_bias=tied), tied=tied), num_classes)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return model.out_head, trainable, sum(p.numel() for p in model.parameters())


def golden(data, out):
    lines = ["# the book's SpamDataset and DataLoaders in PyTorch 1.13 -- generated by tools/reference_book_ch6.py "
             "--golden, do not edit",
             "# dataset MAXLEN(0 = None) SPLIT n max_length longest ids_checksum labels_checksum; then",
             "# row INDEX IDS... for a few rows; loader SEED BATCH: epoch orders and the first batches"]
    lines.append("# csv same|refuse LINE HEX-OF-THE-FILE, then pandas' rows (want LABEL HEX-OF-TEXT) or what pandas did")
    for raw, expect in CSV_CASES:
        lines.append("csv %s %s" % (expect, raw.hex() or "-"))
        got = pandas_reads(raw)
        if expect == "same":
            assert isinstance(got, list), (raw, got)
            lines += ["want %s %s" % (a, b.encode().hex() or "-") for a, b in got]
        else:
            lines.append("# pandas: %s" % (got if isinstance(got, str) else repr(got)))
        lines.append("end")
    for max_length in (None, 16, 64, 200):
        train, val, test = datasets(data, max_length)
        for name, ds in zip(SPLITS, (train, val, test)):
            ids = [v for row in ds.encoded_texts for v in row]
            labels = [int(v) for v in ds.data["Label"]]
            lines.append("dataset %d %s %d %d %d %d %d" % (max_length or 0, name, len(ds), ds.max_length, ds.longest,
                                                           checksum(ids), checksum(labels)))
            for i in sorted({0, 3, ds.lengths.index(ds.longest), len(ds) - 1}):
                x, y = ds[i]
                lines.append("row %d %d %s" % (i, int(y), " ".join(str(int(v)) for v in x)))
    # the classification head: nn.Linear(C, num_classes) right after torch.manual_seed(123)
    import numpy as np
    lines.append("# head C NUM_CLASSES WEIGHT_CHECKSUM BIAS_BITS... (float32 bits in hex; the checksum over the "
                 "weight's bits as golden_checksum); the counts of the book's model with it (L 2, 4 heads, ctx 64)")
    for C, n, tied in ((768, 2, False), (1024, 2, True), (32, 2, False), (48, 3, True)):
        head, trainable, total = classifier_head(C, n, tied)
        w = head.weight.detach().contiguous().numpy().view(np.uint32).astype(np.uint64).ravel()
        with np.errstate(over="ignore"):
            wsum = int(np.sum(w * np.arange(1, w.size + 1, dtype=np.uint64), dtype=np.uint64))
        bias = " ".join("%08x" % v for v in head.bias.detach().numpy().view(np.uint32))
        lines.append("# %s: %d trainable of %d" % ("tied (gpt2)" if tied else "untied", trainable, total))
        lines.append("head %d %d %d %s" % (C, n, wsum, bias))
    # the loaders: two epochs of the training loader with a pass over the validation loader
    # between them (its iter() draws the base seed only), as train_classifier_simple runs them
    for seed, batch in ((123, 8), (7, 5)):
        train, val, test = datasets(data, None)
        torch.manual_seed(seed)
        train_loader, val_loader, _ = loaders(train, val, test, batch)
        lines.append("loader %d %d %d %d" % (seed, batch, len(train_loader), len(val_loader)))
        for epoch in range(2):
            train.accessed.clear()
            first = None
            for x, y in train_loader:
                if first is None:
                    first = (x, y)
            lines.append("order " + " ".join(str(i) for i in train.accessed))
            lines.append("first %d %s" % (checksum([int(v) for v in first[0].flatten()]),
                                          " ".join(str(int(v)) for v in first[1])))
            for _ in val_loader:
                pass
        lines.append("end")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s" % out, file=sys.stderr)


def h32(v):
    import struct
    return "%08x" % struct.unpack("<I", struct.pack("<f", v))[0]


def sampled_indices(t, k=48):
    """Up to k evenly spaced indices of t and that of its largest magnitude (all of a small t)."""
    flat = t.detach().flatten()
    n = flat.numel()
    return sorted(set(range(n)) if n <= k else {i * n // k for i in range(k)} | {int(flat.abs().argmax())})


def sampled(t, k=48):
    """INDEX:HEX of sampled_indices(t, k)."""
    flat = t.detach().flatten()
    return " ".join("%d:%s" % (i, h32(flat[i].item())) for i in sampled_indices(t, k))


def first_step_trace(model):
    """The goldens' lines after a run's first backward: each trainable tensor's gradient (its mygpt name, size,
    max |g| and sampled entries), then the names of the frozen ones (those without a gradient)."""
    lines = ["grad %s %d %s %s" % (mygpt_name(name), p.numel(), h32(p.grad.abs().max().item()), sampled(p.grad))
             for name, p in model.named_parameters() if p.requires_grad]
    lines.append("frozen " + " ".join(mygpt_name(name) for name, p in model.named_parameters()
                                      if not p.requires_grad and p.grad is None))
    return lines


# The fine-tuning configurations: (model seed, tied (gpt2) or the book's GPTModel, qkv_bias, C, heads, layers,
# context, B, T, num_classes, lr, AdamW steps, LoRA rank, LoRA alpha); vocab 50257 throughout. Rank 0: chapter
# 6's freezing; a rank: appendix E's (everything frozen, every Linear wrapped, A drawn after
# torch.manual_seed(seed + LORA_SEED_OFFSET))
CLASSIFY_CASES = [
    (123, False, False, 32, 4, 2, 64, 8, 20, 2, 5e-5, 3, 0, 0),
    (7, False, True, 48, 3, 3, 32, 4, 32, 2, 5e-5, 3, 0, 0),
    (1, True, True, 32, 2, 2, 24, 2, 24, 2, 1e-3, 3, 0, 0),
    (42, False, False, 16, 2, 1, 16, 5, 9, 2, 1e-3, 3, 0, 0),
    (99, False, False, 64, 8, 2, 40, 3, 40, 3, 5e-5, 2, 0, 0),
    (5, True, True, 24, 4, 4, 12, 6, 1, 2, 5e-4, 3, 0, 0),
    (11, False, True, 40, 5, 2, 50, 2, 50, 2, 1e-4, 3, 0, 0),
    (2024, False, False, 32, 4, 3, 20, 7, 13, 2, 2e-4, 4, 0, 0),
    (123, False, True, 32, 4, 2, 64, 8, 20, 2, 8e-4, 3, 16, 16),
    (3, False, False, 48, 6, 2, 32, 4, 17, 2, 1e-3, 3, 4, 8),
    (8, True, True, 32, 4, 3, 24, 3, 24, 3, 5e-4, 3, 8, 2),
    (77, False, True, 24, 3, 1, 16, 6, 11, 2, 2e-3, 4, 1, 1.5),
    (13, False, True, 72, 6, 1, 16, 3, 9, 2, 1e-3, 2, 8, 8),  # 4C = 288: the kernels' column blocks of 256
]
LORA_SEED_OFFSET = 500


class LoRALayer(torch.nn.Module):
    """Appendix E's: A (in, r) kaiming-uniform, B (r, out) zeros, (alpha / r) (x A) B."""
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = torch.nn.Parameter(torch.empty(in_dim, rank))
        torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = torch.nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha
        self.rank = rank

    def forward(self, x):
        return (self.alpha / self.rank) * (x @ self.A @ self.B)


class LinearWithLoRA(torch.nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        return self.linear(x) + self.lora(x)


def replace_linear_with_lora(model, rank, alpha):
    for name, module in model.named_children():
        if isinstance(module, torch.nn.Linear):
            setattr(model, name, LinearWithLoRA(module, rank, alpha))
        else:
            replace_linear_with_lora(module, rank, alpha)


def lora_model(seed, tied, qkv, C, NH, L, ctx, n, rank, alpha, V=50257):
    """Appendix E: the model with its new head (section 6.5's draws), every parameter frozen, then
    every nn.Linear wrapped (A drawn after torch.manual_seed(seed + LORA_SEED_OFFSET))."""
    model = classify_model(seed, tied, qkv, C, NH, L, ctx, n, V)
    for param in model.parameters():
        param.requires_grad = False
    torch.manual_seed(seed + LORA_SEED_OFFSET)
    replace_linear_with_lora(model, rank, alpha)
    return model


def mygpt_name(name):
    """mygpt keeps a wrapped Linear's own names (its adapters are saved alone): W_query.linear.weight is
    W_query.weight there."""
    return name.replace(".linear.", ".")


def classify_model(seed, tied, qkv, C, NH, L, ctx, n, V=50257):
    """The book's section 6.5: the model from its seed, every parameter frozen, torch.manual_seed(123)
    and the new out_head, then the last block and final_norm unfrozen."""
    sys.path.insert(0, HERE)
    from reference_llms import GPTModel, classification_head
    torch.manual_seed(seed)
    return classification_head(GPTModel(dict(vocab_size=V, context_length=ctx, emb_dim=C, n_heads=NH, n_layers=L,
                                             drop_rate=0.0, qkv_bias=qkv), tied=tied), n)


def calc_loss_batch(input_batch, target_batch, model):
    """The book's: the cross-entropy of the last output token's logits."""
    logits = model(input_batch)[:, -1, :]
    return torch.nn.functional.cross_entropy(logits, target_batch)


def classify_golden(out):
    import numpy as np
    lines = ["# classification fine-tuning as the book's chapter 6 in PyTorch 1.13 -- generated by "
             "tools/reference_book_ch6.py --classify-golden, do not edit",
             "# config SEED ARCH QKV V C NH L CTX B T CLASSES LR STEPS LORA_RANK LORA_ALPHA (rank 0: chapter 6's "
             "freezing; else appendix E's, A drawn after torch.manual_seed(SEED + %d)); ids (B*T); labels (B)"
             % LORA_SEED_OFFSET,
             "# lora NAME CHECKSUM: each adapter's initial A, bit for bit (the checksum of the head line); a wrapped "
             "Linear's own tensors are named without its '.linear'",
             "# head WEIGHT_CHECKSUM BIAS_BITS...; counts TRAINABLE TOTAL; loss BITS (calc_loss_batch before "
             "training); correct N (argmax of the last logits == label, model.eval())",
             "# grad NAME NUMEL MAXABS INDEX:BITS... (the first backward, every trainable tensor); frozen NAME...",
             "# step K LOSS_BITS (AdamW lr, weight_decay 0.1, the same batch each step); param NAME NUMEL MAXABS "
             "INDEX:BITS... after the steps, then param64 NAME INDEX:BITS64... the same entries after the same "
             "steps in float64 (model.double()); end"]
    def checksum_bits(t):
        w = t.detach().contiguous().numpy().view(np.uint32).astype(np.uint64).ravel()
        with np.errstate(over="ignore"):
            return int(np.sum(w * np.arange(1, w.size + 1, dtype=np.uint64), dtype=np.uint64))

    for seed, tied, qkv, C, NH, L, ctx, B, T, n, lr, steps, rank, alpha in CLASSIFY_CASES:
        V = 50257
        if rank:
            model = lora_model(seed, tied, qkv, C, NH, L, ctx, n, rank, alpha, V)
            head = model.out_head.linear
        else:
            model = classify_model(seed, tied, qkv, C, NH, L, ctx, n, V)
            head = model.out_head
        gen = torch.Generator().manual_seed(seed + 1000)
        x = torch.randint(0, V, (B, T), generator=gen)
        y = torch.randint(0, n, (B,), generator=gen)
        lines.append("config %d %s %d %d %d %d %d %d %d %d %d %r %d %d %r" % (
            seed, "gpt2" if tied else "llms-from-scratch", int(qkv), V, C, NH, L, ctx, B, T, n, lr, steps, rank,
            alpha))
        lines.append("ids " + " ".join(str(int(v)) for v in x.flatten()))
        lines.append("labels " + " ".join(str(int(v)) for v in y))
        lines.append("head %d %s" % (checksum_bits(head.weight), " ".join("%08x" % v for v in
                                                                        head.bias.detach().numpy().view(np.uint32))))
        for name, p in model.named_parameters():
            if name.endswith(".lora.A"):
                lines.append("lora %s %d" % (name, checksum_bits(p)))
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        lines.append("counts %d %d" % (trainable, sum(p.numel() for p in model.parameters())))
        model.eval()
        with torch.no_grad():
            logits = model(x)[:, -1, :]
            correct = int((torch.argmax(logits, dim=-1) == y).sum())
            lines.append("loss %s" % h32(calc_loss_batch(x, y, model).item()))
        lines.append("correct %d" % correct)
        twin = copy.deepcopy(model).double()  # the same run in float64: how far float32 itself is
        optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)
        model.train()
        for step in range(steps):
            optimizer.zero_grad()
            loss = calc_loss_batch(x, y, model)
            loss.backward()
            if step == 0:
                lines += first_step_trace(model)
            lines.append("step %d %s" % (step, h32(loss.item())))
            optimizer.step()
        optimizer = torch.optim.AdamW(twin.parameters(), lr=lr, weight_decay=0.1)
        twin.train()
        for step in range(steps):
            optimizer.zero_grad()
            calc_loss_batch(x, y, twin).backward()
            optimizer.step()
        for (name, p), (_, p64) in zip(model.named_parameters(), twin.named_parameters()):
            if p.requires_grad:
                lines.append("param %s %d %s %s" % (mygpt_name(name), p.numel(),
                                                    h32(p.detach().abs().max().item()), sampled(p)))
                flat = p64.detach().flatten()
                lines.append("param64 %s %s" % (mygpt_name(name), " ".join(
                    "%d:%016x" % (i, struct.unpack("<Q", struct.pack("<d", flat[i].item()))[0])
                    for i in sampled_indices(p))))
        lines.append("end")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s" % out, file=sys.stderr)


def calc_accuracy_loader(data_loader, model, num_batches=None):
    """The book's, on the CPU."""
    model.eval()
    correct_predictions, num_examples = 0, 0
    num_batches = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i < num_batches:
            with torch.no_grad():
                logits = model(input_batch)[:, -1, :]
            predicted_labels = torch.argmax(logits, dim=-1)
            num_examples += predicted_labels.shape[0]
            correct_predictions += (predicted_labels == target_batch).sum().item()
        else:
            break
    return correct_predictions / num_examples


def calc_loss_loader(data_loader, model, num_batches=None):
    total_loss = 0.
    if len(data_loader) == 0:
        return float("nan")
    num_batches = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i < num_batches:
            total_loss += calc_loss_batch(input_batch, target_batch, model).item()
        else:
            break
    return total_loss / num_batches


def train_classifier_simple(model, train_loader, val_loader, optimizer, num_epochs, eval_freq, eval_iter):
    """The book's loop (without its unused tokenizer argument): chapter 5's train_model_simple on the
    classification loss, the accuracies of eval_iter batches of each loader after every epoch. Returns the
    examples seen."""
    from reference_book_ch5 import evaluate_model, train_model_simple
    examples_seen = [0]

    def count(global_step, x, y, loss):
        examples_seen[0] += x.shape[0]

    def accuracies():
        train_accuracy = calc_accuracy_loader(train_loader, model, num_batches=eval_iter)
        val_accuracy = calc_accuracy_loader(val_loader, model, num_batches=eval_iter)
        print(f"Training accuracy: {train_accuracy*100:.2f}% | ", end="")
        print(f"Validation accuracy: {val_accuracy*100:.2f}%")

    train_model_simple(model, train_loader, optimizer, num_epochs, eval_freq,
                       lambda: evaluate_model(model, train_loader, val_loader, eval_iter, calc_loss_loader),
                       accuracies, on_step=count, loss_batch=calc_loss_batch)
    return examples_seen[0]


def test_mode_model(data):
    """gpt_class_finetune.py --test_mode's start: the datasets, their loaders after torch.manual_seed(123),
    and its GPTModel (vocabulary 50257, context 120, width 12, one block of 2 heads, no qkv bias, no
    dropout) in eval mode. Returns the (train, validation, test) loaders and the model."""
    sys.path.insert(0, HERE)
    from reference_llms import GPTModel
    train_ds, val_ds, test_ds = datasets(data, None)
    torch.manual_seed(123)
    loaders3 = loaders(train_ds, val_ds, test_ds)
    model = GPTModel(dict(vocab_size=50257, context_length=120, drop_rate=0.0, qkv_bias=False, emb_dim=12,
                          n_layers=1, n_heads=2))
    model.eval()
    return loaders3, model


def train(data, smoke):
    """gpt_class_finetune.py --test_mode (test_mode_model), with the chapter's sections 6.6 (accuracies
    of 10 batches, losses of 5, before fine-tuning) and 6.7 (the final accuracies over whole loaders)
    around its train_classifier_simple; --smoke: one epoch instead of five."""
    (train_loader, val_loader, test_loader), model = test_mode_model(data)
    from reference_llms import classification_head
    classification_head(model, 2)
    print("Trainable parameters: %d of %d" % (sum(p.numel() for p in model.parameters() if p.requires_grad),
                                              sum(p.numel() for p in model.parameters())))
    torch.manual_seed(123)  # 6.6: the shuffling of the training loader
    train_accuracy = calc_accuracy_loader(train_loader, model, num_batches=10)
    val_accuracy = calc_accuracy_loader(val_loader, model, num_batches=10)
    test_accuracy = calc_accuracy_loader(test_loader, model, num_batches=10)
    print(f"Training accuracy: {train_accuracy*100:.2f}%")
    print(f"Validation accuracy: {val_accuracy*100:.2f}%")
    print(f"Test accuracy: {test_accuracy*100:.2f}%")
    with torch.no_grad():
        train_loss = calc_loss_loader(train_loader, model, num_batches=5)
        val_loss = calc_loss_loader(val_loader, model, num_batches=5)
        test_loss = calc_loss_loader(test_loader, model, num_batches=5)
    print(f"Training loss: {train_loss:.3f}")
    print(f"Validation loss: {val_loss:.3f}")
    print(f"Test loss: {test_loss:.3f}")
    torch.manual_seed(123)  # 6.7
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.1)
    num_epochs = 1 if smoke else 5
    examples_seen = train_classifier_simple(model, train_loader, val_loader, optimizer, num_epochs=num_epochs,
                                            eval_freq=50, eval_iter=5)
    print(f"Examples seen: {examples_seen}")
    train_accuracy = calc_accuracy_loader(train_loader, model)
    val_accuracy = calc_accuracy_loader(val_loader, model)
    test_accuracy = calc_accuracy_loader(test_loader, model)
    print(f"Training accuracy: {train_accuracy*100:.2f}%")
    print(f"Validation accuracy: {val_accuracy*100:.2f}%")
    print(f"Test accuracy: {test_accuracy*100:.2f}%")


def lora(data, smoke):
    """Appendix E (appendix-E.ipynb, in its order) on gpt_class_finetune.py's --test_mode model, after the
    counts it prints for GPT-2 small with the 2-class head: the accuracies of 10 batches, the trainable
    counts before and after freezing and with LoRA (rank 16, alpha 16), the accuracies again (the same: B
    is zero), train_classifier_simple with AdamW (lr 8e-4, weight decay 0.1, 5 epochs, eval_freq 50,
    eval_iter 5) and the accuracies over the whole loaders; --smoke: one epoch."""
    sys.path.insert(0, HERE)
    from reference_llms import GPTModel

    def trainable(model):
        return sum(p.numel() for p in model.parameters() if p.requires_grad)

    def counts(model, rank, alpha):
        print(f"Total trainable parameters before: {trainable(model):,}")
        for param in model.parameters():
            param.requires_grad = False
        print(f"Total trainable parameters after: {trainable(model):,}")
        replace_linear_with_lora(model, rank=rank, alpha=alpha)
        print(f"Total trainable LoRA parameters: {trainable(model):,}")

    print("GPT-2 small (124M) with the 2-class head, as the book prints it:")
    big = GPTModel(dict(vocab_size=50257, context_length=1024, drop_rate=0.0, qkv_bias=True, emb_dim=768,
                        n_layers=12, n_heads=12))
    big.out_head = torch.nn.Linear(in_features=768, out_features=2)
    counts(big, 16, 16)
    del big
    print()
    print("The --test_mode model:")
    (train_loader, val_loader, test_loader), model = test_mode_model(data)
    torch.manual_seed(123)
    model.out_head = torch.nn.Linear(in_features=model.cfg["emb_dim"], out_features=2)

    def accuracies(num_batches):
        for name, loader in (("Training", train_loader), ("Validation", val_loader), ("Test", test_loader)):
            print(f"{name} accuracy: {calc_accuracy_loader(loader, model, num_batches=num_batches)*100:.2f}%")

    torch.manual_seed(123)
    accuracies(10)
    counts(model, 16, 16)
    torch.manual_seed(123)
    accuracies(10)
    torch.manual_seed(123)
    optimizer = torch.optim.AdamW(model.parameters(), lr=8e-4, weight_decay=0.1)
    examples_seen = train_classifier_simple(model, train_loader, val_loader, optimizer,
                                            num_epochs=1 if smoke else 5, eval_freq=50, eval_iter=5)
    print(f"Examples seen: {examples_seen}")
    accuracies(None)


def chapter(data, seed):
    """What the book prints in sections 6.3 and 6.4, with the first batch's labels and first row."""
    train, val, test = datasets(data, None)
    print(train.max_length)
    torch.manual_seed(seed)
    train_loader, val_loader, test_loader = loaders(train, val, test)
    print("Train loader:")
    first = None
    for input_batch, target_batch in train_loader:
        if first is None:
            first = (input_batch, target_batch)
    print("Input batch dimensions:", input_batch.shape)
    print("Label batch dimensions", target_batch.shape)
    print(f"{len(train_loader)} training batches")
    print(f"{len(val_loader)} validation batches")
    print(f"{len(test_loader)} test batches")
    print()
    print("The first training batch's labels (1 = spam):")
    print(first[1])
    print("Its first text's token ids (padded with 50256):")
    print(first[0][0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "..", "data"))
    ap.add_argument("--seed", type=int, default=123)
    ap.add_argument("--golden", action="store_true")
    ap.add_argument("--classify-golden", action="store_true")
    ap.add_argument("--train", action="store_true")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--lora", action="store_true")
    a = ap.parse_args()
    if a.train:
        train(a.data, a.smoke)
    elif a.lora:
        lora(a.data, a.smoke)
    elif a.classify_golden:
        classify_golden(os.path.join(HERE, "..", "tests", "golden", "classify.txt"))
    elif a.golden:
        golden(a.data, os.path.join(HERE, "..", "tests", "golden", "spam.txt"))
    else:
        chapter(a.data, a.seed)


if __name__ == "__main__":
    main()
