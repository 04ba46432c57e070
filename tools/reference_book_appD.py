#!/usr/bin/python3
"""The book's appendix D in PyTorch (development oracle only): Raschka's GPTModel
(tools/reference_llms.py) trained on the-verdict by the appendix's train_model (linear
warmup, cosine decay, gradient clipping), as the repository's notebook
(appendix-D/01_main-chapter-code/appendix-D.ipynb) runs it; tiktoken's ids come through
node (tools/reference_train.py).

What it prints, in the notebook's order, is what chapters/src/40_book_train_model.c prints:

    print(warmup_steps)                                  # D.1: int(0.2 * total_steps)
    print(find_highest_gradient(model))                  # D.3: before clip_grad_norm_
    print(find_highest_gradient(model))                  #      and after
    train_model(...)                                     # D.4: the log and a sample per epoch

    /usr/bin/python3 tools/reference_book_appD.py     # the full run: compared by hand (ERRATA.md)
    /usr/bin/python3 tools/reference_book_appD.py --smoke > chapters/expected/40_book_train_model.smoke.txt
    /usr/bin/python3 tools/reference_book_appD.py --smoke --book \\
        > chapters/expected/40_book_train_model.smoke_book.txt

--smoke: the chapter's --smoke configuration (one block of GPT-2 small's width: 768, 12
heads, 1 layer; 1 epoch; samples of 5 tokens), large enough that its gradient norm is
above 1, so that clipping changes the steps. --book: the printed book's train_model,
which clips from `global_step > warmup_steps` (one step later), and its optimizer line,
which leaves out lr= (AdamW's default, 0.001, is then the peak train_model reads; the
book's peak_lr = 5e-4 is never used). --show-norms: each clipped step's learning rate
and gradient norm on stderr. --max-norm: D.4's max_norm (1.0 unless given;
tools/gen_book_goldens.py gives a small model one below its gradient's norm).

The full run (GPT_CONFIG_124M, 15 epochs of 9 steps) takes long: its first epoch took
about 20 minutes on a 2-core machine shared with other work.
"""
import argparse
import math
import os
import sys
import time

import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from reference_llms import GPTModel  # noqa: E402
from reference_train import create_dataloader_v1, decode, encode, generate  # noqa: E402
from reference_book_ch5 import calc_loss_batch, evaluate_model  # noqa: E402  (chapter 5 defines them)


def generate_and_print_sample(model, prompt, n):
    model.eval()
    with torch.no_grad():
        ids = generate(model, prompt, n, model.pos_emb.weight.shape[0])
    print(decode(ids[0].tolist()).replace("\n", " "), flush=True)
    model.train()


def find_highest_gradient(model):
    max_grad = None
    for param in model.parameters():
        if param.grad is not None:
            grad_values = param.grad.data.flatten()
            max_grad_param = grad_values.max()
            if max_grad is None or max_grad_param > max_grad:
                max_grad = max_grad_param
    return max_grad


def train_model(model, train_loader, val_loader, optimizer, n_epochs, eval_freq, eval_iter, prompt, sample_tokens,
                warmup_steps, initial_lr, min_lr, book, lrs, show_norms=False, max_norm=1.0):
    """The appendix's train_model; lrs gets each step's learning rate."""
    global_step = -1
    peak_lr = optimizer.param_groups[0]["lr"]
    total_training_steps = len(train_loader) * n_epochs
    lr_increment = (peak_lr - initial_lr) / warmup_steps
    for epoch in range(n_epochs):
        model.train()
        for input_batch, target_batch in train_loader:
            optimizer.zero_grad()
            global_step += 1
            if global_step < warmup_steps:
                lr = initial_lr + global_step * lr_increment
            else:
                progress = ((global_step - warmup_steps) / (total_training_steps - warmup_steps))
                lr = min_lr + (peak_lr - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))
            for param_group in optimizer.param_groups:
                param_group["lr"] = lr
            lrs.append(lr)
            loss = calc_loss_batch(input_batch, target_batch, model)
            loss.backward()
            if (global_step > warmup_steps) if book else (global_step >= warmup_steps):
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)
                if show_norms:
                    print("step %d: lr %r, gradient norm %.6g" % (global_step, lr, norm.item()), file=sys.stderr)
            optimizer.step()
            if global_step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(model, train_loader, val_loader, eval_iter)
                print(f"Ep {epoch+1} (Iter {global_step:06d}): "
                      f"Train loss {train_loss:.3f}, "
                      f"Val loss {val_loss:.3f}", flush=True)
        generate_and_print_sample(model, prompt, sample_tokens)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--embed", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--context", type=int, default=256)
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--sample-tokens", type=int, default=50)
    p.add_argument("--smoke", action="store_true", help="the chapter's --smoke configuration")
    p.add_argument("--book", action="store_true", help="the printed book's variant")
    p.add_argument("--lrs", help="write each step's learning rate (repr) to this file")
    p.add_argument("--show-norms", action="store_true", help="each clipped step's gradient norm, on stderr")
    p.add_argument("--max-norm", type=float, default=1.0, help="D.4's max_norm (tests/golden/book_cli.txt: smaller, "
                   "so that a small model's gradient is clipped too)")
    p.add_argument("--text", default=os.path.join(HERE, "..", "data", "the-verdict.txt"))
    a = p.parse_args()
    assert torch.__version__.startswith("1.13"), torch.__version__
    if a.smoke:
        a.embed, a.heads, a.layers, a.epochs, a.sample_tokens = 768, 12, 1, 1, 5
    cfg = dict(vocab_size=a.vocab, context_length=a.context, emb_dim=a.embed, n_heads=a.heads,
               n_layers=a.layers, drop_rate=0.1, qkv_bias=False)
    text_data = open(a.text, encoding="utf-8").read()
    split_idx = int(0.90 * len(text_data))
    torch.manual_seed(123)
    train_loader = create_dataloader_v1(text_data[:split_idx], 2, a.context, a.context, shuffle=True,
                                        drop_last=True)
    val_loader = create_dataloader_v1(text_data[split_idx:], 2, a.context, a.context, shuffle=False,
                                      drop_last=False)
    n_epochs = a.epochs

    # D.1: 20 % of the steps warm up
    total_steps = len(train_loader) * n_epochs
    warmup_steps = int(0.2 * total_steps)
    print(warmup_steps, flush=True)

    # D.1 and D.2 each loop over train_loader for n_epochs (drawing the shuffles, training
    # nothing); D.3 takes the last batch of D.2's loop
    for _ in range(2 * n_epochs):
        for input_batch, target_batch in train_loader:
            pass
    torch.manual_seed(123)
    model = GPTModel(cfg)  # a new module is in training mode: dropout
    loss = calc_loss_batch(input_batch, target_batch, model)
    loss.backward()
    print(find_highest_gradient(model), flush=True)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    print(find_highest_gradient(model), flush=True)

    # D.4
    t0 = time.time()
    torch.manual_seed(123)
    model = GPTModel(cfg)
    if a.book:
        optimizer = torch.optim.AdamW(model.parameters(), weight_decay=0.1)  # peak_lr = 5e-4 unused
    else:
        peak_lr = 0.001
        optimizer = torch.optim.AdamW(model.parameters(), lr=peak_lr, weight_decay=0.1)
    prompt = torch.tensor([encode("Every effort moves you")])
    lrs = []
    train_model(model, train_loader, val_loader, optimizer, n_epochs=n_epochs, eval_freq=5, eval_iter=1,
                prompt=prompt, sample_tokens=a.sample_tokens, warmup_steps=warmup_steps, initial_lr=1e-5,
                min_lr=1e-5, book=a.book, lrs=lrs, show_norms=a.show_norms, max_norm=a.max_norm)
    print("training took %.1f s" % (time.time() - t0), file=sys.stderr)
    if a.lrs:
        with open(a.lrs, "w") as f:
            f.write("".join(repr(lr) + "\n" for lr in lrs))


if __name__ == "__main__":
    main()
