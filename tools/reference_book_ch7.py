#!/usr/bin/python3
"""The book's chapter 7 (Raschka, Build a Large Language Model (From Scratch)), its data side in
PyTorch 1.13 as ch07/01_main-chapter-code/gpt_instruction_finetuning.py does it: instruction-data.json
read with json.load, the 85 / 5 / 10 % split in file order, format_input (Alpaca's template),
InstructionDataset (tiktoken's gpt2 encoding of format_input(entry) + "\\n\\n### Response:\\n" + output),
custom_collate_fn (pad with 50256 to the longest item + 1, inputs / targets shifted by one, every
padding token after the first in the targets -100, allowed_max_length), exercise 7.2's masking of
the prompt in the targets (custom_collate_with_masking_fn) and F.cross_entropy(ignore_index=-100).
Written from the book's code; tiktoken's ids come through node (npm install --prefix tools/node).

    /usr/bin/python3 tools/reference_book_ch7.py > chapters/expected/85_book_instruction_data.txt
    /usr/bin/python3 tools/reference_book_ch7.py --golden    # writes tests/golden/instruct.txt

--finetune runs section 7.6-7.7 as gpt_instruction_finetuning.py does it: train_model_simple on the
instruction data and the responses to the test set (instruction-data-with-response.json, printed):

    /usr/bin/python3 tools/reference_book_ch7.py --finetune > chapters/expected/86_book_instruction_finetune.txt
    /usr/bin/python3 tools/reference_book_ch7.py --finetune-golden  # writes tests/golden/instruct_finetune.txt

The data folder (bash scripts/fetch-data.sh) holds instruction-data.json; --data DIR another.
"""
import argparse
import json
import os
import random
import sys

import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from reference_book_ch5 import (calc_loss_loader, evaluate_model, generate_and_print_sample,  # noqa: E402
                                train_model_simple)
from reference_book_ch6 import checksum, encode_all, first_step_trace, replace_linear_with_lora  # noqa: E402
from gen_train_goldens import h32, hexes, stacked_grads  # noqa: E402
from reference_gpt import GPT  # noqa: E402
from reference_llms import GPTModel  # noqa: E402
from reference_train import decode  # noqa: E402

PAD = 50256
IGNORE = -100


def format_input(entry):
    """The book's format_input: the instruction, and the input when it is not empty."""
    text = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
            "request.\n\n### Instruction:\n" + entry["instruction"])
    return text + ("\n\n### Input:\n" + entry["input"] if entry["input"] else "")


def full_text(entry):
    return format_input(entry) + "\n\n### Response:\n" + entry["output"]


def split(data):
    """train, test, validation as the book slices them."""
    train_portion = int(len(data) * 0.85)
    test_portion = int(len(data) * 0.1)
    return (data[:train_portion], data[train_portion:train_portion + test_portion],
            data[train_portion + test_portion:])


class InstructionDataset(Dataset):
    """The book's InstructionDataset, with the encoding batched through node; prompt_lengths are
    exercise 7.2's instruction_length (format_input(entry) encoded alone)."""

    def __init__(self, data):
        self.data = data
        self.encoded_texts = encode_all([full_text(e) for e in data])
        self.prompt_lengths = [len(t) for t in encode_all([format_input(e) for e in data])]

    def __getitem__(self, index):
        return self.encoded_texts[index]

    def __len__(self):
        return len(self.data)


def collate(batch, prompt_lengths=None, pad_token_id=PAD, ignore_index=IGNORE, allowed_max_length=None):
    """custom_collate_fn; with prompt_lengths, custom_collate_with_masking_fn's masking too."""
    batch_max_length = max(len(item) + 1 for item in batch)
    inputs_lst, targets_lst = [], []
    for b, item in enumerate(batch):
        padded = list(item) + [pad_token_id] * (batch_max_length - len(item))
        inputs = torch.tensor(padded[:-1])
        targets = torch.tensor(padded[1:])
        pads = torch.nonzero(targets == pad_token_id).squeeze()
        if pads.numel() > 1:
            targets[pads[1:]] = ignore_index
        if prompt_lengths is not None:
            targets[:prompt_lengths[b] - 1] = ignore_index
        if allowed_max_length is not None:
            inputs = inputs[:allowed_max_length]
            targets = targets[:allowed_max_length]
        inputs_lst.append(inputs)
        targets_lst.append(targets)
    return torch.stack(inputs_lst), torch.stack(targets_lst)


def load(data_dir):
    with open(os.path.join(data_dir, "instruction-data.json"), "r", encoding="utf-8") as f:
        return json.load(f)


def formula_logits(N, V, seed):
    """Logits both sides compute exactly: small integers over 512 as float32 (tests/test_instruct.c)."""
    i = np.arange(N * V, dtype=np.int64)
    v = ((i * 40503 + seed * 977) % 8191 - 4095).astype(np.float32) / np.float32(512)
    return torch.from_numpy(v.reshape(N, V))


def ints(t):
    return " ".join(str(int(v)) for v in (t.flatten().tolist() if torch.is_tensor(t) else t))


def golden(data_dir, out):
    data = load(data_dir)
    rnd = random.Random(7)
    lines = ["# the book's chapter-7 data and F.cross_entropy(ignore_index=-100) in PyTorch %s -- generated by "
             "tools/reference_book_ch7.py --golden, do not edit" % torch.__version__]
    lines.append("# split N TRAIN TEST VAL: int(N * 0.85), int(N * 0.1), the rest")
    for n in (0, 1, 2, 7, 10, 19, 20, 99, 100, 101, 999, 1000, 1100, 1101, 12345):
        train, test, val = split(list(range(n)))
        lines.append("split %d %d %d %d" % (n, len(train), len(test), len(val)))
    ds = InstructionDataset(data)
    lines.append("# entry I LEN PROMPT_LEN CHECKSUM (of the ids, as golden_checksum on int64) for every entry; "
                 "tokens I IDS... for a few")
    lines.append("dataset %d %d" % (len(ds), checksum([v for t in ds.encoded_texts for v in t])))
    for i in range(len(ds)):
        lines.append("entry %d %d %d %d" % (i, len(ds[i]), ds.prompt_lengths[i], checksum(ds[i])))
    for i in (0, 50, 999, len(ds) - 1):
        lines.append("tokens %d %s" % (i, ints(ds[i])))
    # collate cases: explicit items (`item LEN PROMPT_LEN IDS...`) or rows of the whole dataset
    lines.append("# collate NAME ALLOWED(0 = None) MASK(0/1) B, then B `item PROMPT_LEN IDS...` or one "
                 "`rows ROW...`, then `inputs T IDS...` and `targets IDS...`")
    toy = [[0, 1, 2, 3, 4], [5, 6], [7, 8, 9]]
    train_n = int(len(data) * 0.85)
    test_n = int(len(data) * 0.1)
    torch.manual_seed(123)
    order = list(iter(DataLoader(range(train_n), batch_size=8, shuffle=True, drop_last=True)))[0].tolist()
    longest = max(range(len(ds)), key=lambda i: len(ds[i]))
    cases = [
        ("book_toy", toy, None, None, None),
        ("toy_masked", toy, [3, 1, 0], None, None),
        ("toy_cut", toy, None, 3, None),
        ("pads_inside", [[PAD, 1, PAD], [2], [], [PAD]], [2, 2, 1, 5], None, None),
        ("train_first_8", None, None, 1024, list(range(8))),
        ("loader_123_masked", None, True, 1024, order),
        ("val_cut_40_masked", None, True, 40, list(range(train_n + test_n, train_n + test_n + 5))),
        ("test_cut_16_masked", None, True, 16, list(range(train_n, train_n + 3))),
        ("longest_alone", None, None, None, [longest]),
        ("val_last_short", None, None, 1024, list(range(train_n + test_n + 48, len(data)))),
        ("mixed_cut_1", None, True, 1, [3, 1000, 7]),
    ]
    batches = {}
    for name, items, mask, allowed, rows in cases:
        if rows is not None:
            items = [ds[r] for r in rows]
            prompts = [ds.prompt_lengths[r] for r in rows] if mask else None
        else:
            prompts = mask
        x, y = collate(items, prompts, allowed_max_length=allowed)
        batches[name] = (x, y)
        lines.append("collate %s %d %d %d" % (name, allowed or 0, 1 if prompts else 0, len(items)))
        if rows is not None:
            lines.append("rows " + ints(rows))
        else:
            for b, item in enumerate(items):
                lines.append("item %d %s" % (prompts[b] if prompts else 0, ints(item) or "-"))
        lines.append("inputs %d %s" % (x.shape[1], ints(x)))
        lines.append("targets " + ints(y))
    # the loss: explicit logits (HEX) or formula_logits(N, V, SEED); targets with -100
    lines.append("# loss NAME N V SEED, [logits HEX...], targets ..., want LOSS_HEX DLOGITS_CHECKSUM "
                 "(golden_checksum of the gradient's bits); the formula when no logits line")
    loss_cases = [("book_loss_3", torch.tensor([[-1.0, 1.0], [-0.5, 1.5], [-0.5, 1.5]]), [0, 1, IGNORE], 2, 0)]
    y = batches["test_cut_16_masked"][1].flatten().tolist()
    loss_cases.append(("test_cut_16_masked", None, y, 50257, 1))
    y = batches["val_cut_40_masked"][1][:2].flatten().tolist()
    loss_cases.append(("val_cut_40_masked_rows_0_1", None, y, 50257, 2))
    y = batches["toy_masked"][1].flatten().tolist()
    loss_cases.append(("toy_masked", None, y, 50257, 3))
    cascade = [rnd.randrange(7) for _ in range(50)]
    for r in (0, 15, 16, 17, 31, 32, 48):
        cascade[r] = IGNORE
    loss_cases.append(("cascade_blocks", None, cascade, 7, 4))
    loss_cases.append(("all_ignored", None, [IGNORE] * 5, 11, 5))
    one = [IGNORE] * 40
    one[23] = 3
    loss_cases.append(("one_kept", None, one, 9, 6))
    half = [IGNORE if rnd.random() < 0.5 else rnd.randrange(5) for _ in range(300)]
    loss_cases.append(("half_of_300", None, half, 5, 7))
    loss_cases.append(("none_ignored", None, [rnd.randrange(13) for _ in range(33)], 13, 8))
    loss_cases.append(("first_16_ignored", None, [IGNORE] * 16 + [rnd.randrange(17) for _ in range(20)], 17, 9))
    for name, logits, targets, V, seed in loss_cases:
        N = len(targets)
        x = (logits if logits is not None else formula_logits(N, V, seed)).clone().requires_grad_(True)
        loss = F.cross_entropy(x, torch.tensor(targets), ignore_index=IGNORE)
        loss.backward()
        lines.append("loss %s %d %d %d" % (name, N, V, seed))
        if logits is not None:
            lines.append("logits " + hexes(x.detach()))
        lines.append("targets " + ints(targets))
        g = x.grad.contiguous().numpy().view(np.uint32).astype(np.uint64).ravel()
        with np.errstate(over="ignore"):
            gsum = int(np.sum(g * np.arange(1, g.size + 1, dtype=np.uint64), dtype=np.uint64))
        lines.append("want %s %d" % (h32(loss.item()), gsum))
    # the model: mygpt's reference GPT (tools/reference_gpt.py) on collated batches, every gradient
    lines.append("# model NAME SEED V C NH L MAXT B T / ids / targets / loss HEX / grad NAME NUMEL MAXABS "
                 "INDEX:HEX... / end (grads.txt's format)")
    models = [("test_cut_16_masked", 1, 8, 2, 1, 32), ("val_cut_40_masked", 2, 16, 4, 2, 48),
              ("book_toy", 3, 4, 2, 1, 8), ("mixed_cut_1", 4, 8, 1, 1, 4)]
    for name, seed, C, NH, L, maxT in models:
        x, y = batches[name]
        V = 50257
        torch.manual_seed(seed)
        gpt = GPT(V, C, NH, L, maxT)
        loss = F.cross_entropy(gpt(x).flatten(0, 1), y.flatten(), ignore_index=IGNORE)
        loss.backward()
        B, T = x.shape
        lines.append("model %s %d %d %d %d %d %d %d %d" % (name, seed, V, C, NH, L, maxT, B, T))
        lines.append("ids " + ints(x))
        lines.append("targets " + ints(y))
        lines.append("loss " + h32(loss.item()))
        for pname, g in stacked_grads(gpt):
            n = g.numel()
            idx = list(range(n)) if n <= 1024 else sorted(rnd.sample(range(n), 1024))
            vals = g.tolist()
            lines.append("grad %s %d %s %s" % (pname, n, h32(g.abs().max().item()),
                                               " ".join("%d:%s" % (i, h32(vals[i])) for i in idx)))
        lines.append("end")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s" % out, file=sys.stderr)


def chapter(data_dir, seed):
    """What the book prints in sections 7.2 and 7.3 for the data."""
    data = load(data_dir)
    print("Number of entries:", len(data))
    print("Example entry:\n", data[50])
    print()
    print(full_text(data[50]))
    print()
    print("Another example entry:\n", data[999])
    print()
    print(full_text(data[999]))
    print()
    train_data, test_data, val_data = split(data)
    print("Training set length:", len(train_data))
    print("Validation set length:", len(val_data))
    print("Test set length:", len(test_data))
    print()
    batch = ([0, 1, 2, 3, 4], [5, 6], [7, 8, 9])
    inputs, targets = collate(batch)
    print(inputs)
    print(targets)
    print()
    logits_1 = torch.tensor([[-1.0, 1.0], [-0.5, 1.5]])
    loss_1 = F.cross_entropy(logits_1, torch.tensor([0, 1]))
    print(loss_1)
    logits_2 = torch.tensor([[-1.0, 1.0], [-0.5, 1.5], [-0.5, 1.5]])
    print(F.cross_entropy(logits_2, torch.tensor([0, 1, 1])))
    loss_3 = F.cross_entropy(logits_2, torch.tensor([0, 1, -100]))
    print(loss_3)
    print("loss_1 == loss_3:", loss_1 == loss_3)
    print()
    torch.manual_seed(seed)
    train_loader = DataLoader(InstructionDataset(train_data), batch_size=8, shuffle=True, drop_last=True,
                              num_workers=0, collate_fn=lambda b: collate(b, allowed_max_length=1024))
    val_loader = DataLoader(InstructionDataset(val_data), batch_size=8, shuffle=False, drop_last=False,
                            num_workers=0, collate_fn=lambda b: collate(b, allowed_max_length=1024))
    test_loader = DataLoader(InstructionDataset(test_data), batch_size=8, shuffle=False, drop_last=False,
                             num_workers=0, collate_fn=lambda b: collate(b, allowed_max_length=1024))
    print("Train loader:")
    for inputs, targets in train_loader:
        print(inputs.shape, targets.shape)
    print()
    print(inputs[0])
    print()
    print(targets[0])
    print()
    print(f"{len(train_loader)} training batches")
    print(f"{len(val_loader)} validation batches")
    print(f"{len(test_loader)} test batches")


def generate(model, idx, max_new_tokens, context_size, eos_id=None):
    """The book's generate, greedy (temperature 0, no top_k)."""
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx[:, -context_size:])[:, -1, :]
        idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if idx_next == eos_id:
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


def finetune(data_dir, cfg, n_data=10, batch_size=8, lr=5e-5, epochs=2, eval_freq=5, eval_iter=5,
             mask=False, allowed_max_length=1024, max_new_tokens=256, sample_tokens=50, out=sys.stdout,
             trace=None, tied=False, trainable=None, lora=None):
    """gpt_instruction_finetuning.py's main() from the split on, on GPTModel(cfg) drawn after
    torch.manual_seed(123) (its --test_mode: n_data entries of each split; 0: all); tied: GPT-2's
    head (the token embedding); trainable (a list of name prefixes, None for all): every other
    parameter frozen (requires_grad False) before the optimizer is made; lora (rank, alpha): exercise
    7.4's replace_linear_with_lora after the model is loaded (appendix E's notebook layers, scaled by
    alpha / rank), its three counts printed, everything but the adapters frozen. trace (a list) gets each
    step's batch shape, loss as float32 bits and the checksums of its inputs and targets, the first
    step's gradients of what trains (sampled), the frozen names, and the responses' token ids."""
    def say(*a):
        print(*a, file=out, flush=True)
    data = load(data_dir)
    train_data, test_data, val_data = split(data)
    if n_data:
        train_data, val_data, test_data = train_data[:n_data], val_data[:n_data], test_data[:n_data]
    say("Training set length:", len(train_data))
    say("Validation set length:", len(val_data))
    say("Test set length:", len(test_data))
    say(50 * "-")
    if mask:
        def collate_fn(b):
            return collate([t for t, _ in b], [n for _, n in b], allowed_max_length=allowed_max_length)
    else:
        def collate_fn(b):
            return collate([t for t, _ in b], allowed_max_length=allowed_max_length)

    class Items(Dataset):  # InstructionDataset's items, with exercise 7.2's prompt lengths
        def __init__(self, d):
            self.ds = InstructionDataset(d)

        def __getitem__(self, i):
            return self.ds.encoded_texts[i], self.ds.prompt_lengths[i]

        def __len__(self):
            return len(self.ds)

    torch.manual_seed(123)
    train_loader = DataLoader(Items(train_data), batch_size=batch_size, collate_fn=collate_fn, shuffle=True,
                              drop_last=True, num_workers=0)
    val_loader = DataLoader(Items(val_data), batch_size=batch_size, collate_fn=collate_fn, shuffle=False,
                            drop_last=False, num_workers=0)
    model = GPTModel(cfg, tied=tied)
    if trainable is not None:
        for name, p in model.named_parameters():
            p.requires_grad = any(name == t or name.startswith(t + ".") for t in trainable)
    model.eval()
    say("Loaded model: %s" % ("Small test model" if cfg["emb_dim"] == 12 else
                              "GPTModel(emb_dim=%d, n_heads=%d, n_layers=%d, context_length=%d)" %
                              (cfg["emb_dim"], cfg["n_heads"], cfg["n_layers"], cfg["context_length"])))
    say(50 * "-")
    if lora is not None:  # exercise_experiments.py's `if lora:`
        say(f"Total trainable parameters before: {sum(p.numel() for p in model.parameters() if p.requires_grad):,}")
        for param in model.parameters():
            param.requires_grad = False
        say(f"Total trainable parameters after: {sum(p.numel() for p in model.parameters() if p.requires_grad):,}")
        replace_linear_with_lora(model, *lora)
        say(f"Total trainable LoRA parameters: {sum(p.numel() for p in model.parameters() if p.requires_grad):,}")
    say("Initial losses")
    with torch.no_grad():
        train_loss = calc_loss_loader(train_loader, model, 5)
        val_loss = calc_loss_loader(val_loader, model, 5)
    say("   Training loss:", train_loss)
    say("   Validation loss:", val_loss)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)
    start_context = format_input(val_data[0])
    torch.manual_seed(123)

    def on_step(global_step, x, y, loss):  # the trace: each step, and the gradients before the first update
        trace.append("step %d %d %d %s %d %d" % (global_step, x.shape[0], x.shape[1], h32(loss.item()),
                                                 checksum(x.flatten().tolist()), checksum(y.flatten().tolist())))
        if global_step == 0:
            trace.extend(first_step_trace(model))

    def sample():
        prompt = torch.tensor([encode_all([start_context])[0]])
        return decode(generate(model, prompt, sample_tokens, model.pos_emb.weight.shape[0])[0].tolist())

    train_model_simple(model, train_loader, optimizer, epochs, eval_freq,
                       lambda: evaluate_model(model, train_loader, val_loader, eval_iter),
                       lambda: generate_and_print_sample(model, sample, say), say=say,
                       on_step=on_step if trace is not None else None)
    say(50 * "-")
    say("Generating responses")
    model.eval()
    prompts = encode_all([format_input(e) for e in test_data])
    for i, entry in enumerate(test_data):
        input_text = format_input(entry)
        ids = generate(model, torch.tensor([prompts[i]]), max_new_tokens, cfg["context_length"], eos_id=PAD)
        if trace is not None:
            trace.append("response %d %d %s" % (i, len(prompts[i]), ints(ids[0][len(prompts[i]):]) or "-"))
        generated_text = decode(ids[0].tolist())
        response_text = generated_text[len(input_text):].replace("### Response:", "").strip()
        test_data[i]["model_response"] = response_text
    say("instruction-data-with-response.json:")
    say(json.dumps(test_data, indent=4))


def test_mode_config(emb=12, heads=2, layers=1, context=120, drop=0.0, qkv=False):
    """gpt_instruction_finetuning.py --test_mode's BASE_CONFIG (the defaults)."""
    return dict(vocab_size=50257, context_length=context, drop_rate=drop, qkv_bias=qkv, emb_dim=emb,
                n_layers=layers, n_heads=heads)


# the test suite's runs: NAME C NH L CONTEXT BATCH LR MASK N EPOCHS ALLOWED MAX_NEW DROP ARCH QKV TRAINS
# (TRAINS: "all"; the comma-separated name prefixes that train, everything else frozen; or lora-RANK-ALPHA:
# exercise 7.4's adapters alone); vocab 50257
FINETUNE_CASES = [
    ("book_test_mode", 12, 2, 1, 120, 8, 5e-5, 0, 10, 2, 1024, 24, 0.0, "llms-from-scratch", 0, "all"),
    ("masked_lr_1e-3", 16, 4, 2, 96, 4, 1e-3, 1, 12, 2, 96, 20, 0.0, "llms-from-scratch", 0, "all"),
    ("dropout_b3", 8, 1, 1, 64, 3, 5e-4, 0, 9, 2, 64, 12, 0.1, "llms-from-scratch", 0, "all"),
    ("cut_40", 24, 3, 2, 40, 2, 2e-3, 0, 6, 3, 40, 30, 0.0, "llms-from-scratch", 0, "all"),
    ("gpt2_masked", 16, 2, 2, 72, 2, 3e-4, 1, 6, 2, 72, 10, 0.0, "gpt2", 1, "all"),
    ("qkv_bias_b5", 20, 5, 1, 80, 5, 1e-4, 0, 10, 2, 80, 8, 0.0, "llms-from-scratch", 1, "all"),
    ("frozen_last_block_masked", 16, 2, 2, 64, 3, 1e-3, 1, 9, 2, 64, 10, 0.0, "llms-from-scratch", 0,
     "trf_blocks.1,final_norm,out_head"),
    ("gpt2_frozen_dropout", 12, 3, 3, 56, 2, 5e-4, 0, 6, 2, 56, 10, 0.1, "gpt2", 1, "trf_blocks.0.att,trf_blocks.2"),
    ("wide_cut_48_masked", 32, 8, 1, 48, 4, 2e-4, 1, 8, 2, 48, 6, 0.0, "llms-from-scratch", 1, "all"),
    # prompts cut at 38 and masked: three of the four batches (and the evaluations) all -100, their losses nan
    ("masked_out_nan", 8, 2, 1, 38, 1, 2e-4, 1, 4, 1, 38, 2, 0.0, "gpt2", 1, "all"),
    # exercise 7.4: every Linear wrapped, the vocabulary's head of its own too (its A (C, r), B (r, 50257))
    ("lora_r4_a8_head", 16, 2, 2, 64, 4, 1e-3, 0, 8, 2, 64, 12, 0.0, "llms-from-scratch", 1, "lora-4-8"),
    ("gpt2_lora_r2_masked_dropout", 12, 3, 1, 56, 2, 2e-3, 1, 6, 2, 56, 10, 0.1, "gpt2", 1, "lora-2-16"),
]


def finetune_golden(data_dir, path):
    import io
    lines = ["# the book's chapter-7 fine-tuning (train_model_simple, then generate with eos 50256) in PyTorch %s "
             "-- generated by tools/reference_book_ch7.py --finetune-golden, do not edit" % torch.__version__,
             "# run NAME C NH L CONTEXT BATCH LR MASK N EPOCHS ALLOWED MAX_NEW DROP ARCH QKV TRAINS (all, the "
             "prefixes that train, or lora-RANK-ALPHA); step I B T LOSS_HEX INPUTS_CHECKSUM TARGETS_CHECKSUM (golden_checksum on int64); "
             "grad NAME NUMEL MAXABS INDEX:HEX... (the first step's, what trains); frozen NAME...; "
             "response I PROMPT_LEN IDS...; log LINE (what the run prints); end"]
    for name, C, NH, L, ctx, B, lr, mask, n, epochs, allowed, max_new, drop, arch, qkv, trains in FINETUNE_CASES:
        lines.append("run %s %d %d %d %d %d %r %d %d %d %d %d %r %s %d %s" % (
            name, C, NH, L, ctx, B, lr, mask, n, epochs, allowed, max_new, drop, arch, qkv, trains))
        trace, out = [], io.StringIO()
        finetune(data_dir, test_mode_config(C, NH, L, ctx, drop, bool(qkv)), n_data=n, batch_size=B, lr=lr,
                 epochs=epochs, eval_freq=2, eval_iter=2, mask=bool(mask), allowed_max_length=allowed,
                 max_new_tokens=max_new, sample_tokens=10, out=out, trace=trace, tied=arch == "gpt2",
                 trainable=None if trains == "all" or trains.startswith("lora-") else trains.split(","),
                 lora=tuple(int(v) for v in trains.split("-")[1:]) if trains.startswith("lora-") else None)
        lines += trace
        lines += ["log " + l for l in out.getvalue().split("\n")[:-1]]
        lines.append("end")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s" % path, file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "..", "data"))
    ap.add_argument("--seed", type=int, default=123)
    ap.add_argument("--golden", action="store_true")
    ap.add_argument("--finetune", action="store_true", help="the fine-tuning run (--test_mode's model and data)")
    ap.add_argument("--smoke", action="store_true", help="with --finetune: chapter 86's --smoke")
    ap.add_argument("--finetune-golden", action="store_true")
    a = ap.parse_args()
    assert torch.__version__.startswith("1.13"), torch.__version__
    torch.set_num_threads(1)
    if a.finetune:
        if a.smoke:
            finetune(a.data, test_mode_config(), n_data=10, max_new_tokens=8, sample_tokens=8)
        else:
            finetune(a.data, test_mode_config())
    elif a.finetune_golden:
        finetune_golden(a.data, os.path.join(HERE, "..", "tests", "golden", "instruct_finetune.txt"))
    elif a.golden:
        golden(a.data, os.path.join(HERE, "..", "tests", "golden", "instruct.txt"))
    else:
        chapter(a.data, a.seed)


if __name__ == "__main__":
    main()
