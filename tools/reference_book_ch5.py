#!/usr/bin/python3
"""The book's chapter 5 in PyTorch (development oracle only): Raschka's GPTModel
(tools/reference_llms.py) trained on the-verdict as *Build a Large Language Model (From
Scratch)* chapter 5 trains it, printing its log; then, with --sample-after, the
chapter's temperature/top-k sampling. Written from the facts of issue 24; tiktoken's ids
come through node (tools/reference_train.py).

    /usr/bin/python3 tools/reference_book_ch5.py [--embed 768 --heads 12 --layers 12 ...]

The defaults are the book's run (GPT_CONFIG_124M with context 256, 10 epochs); what it
prints is what `mygpt train --arch llms-from-scratch --epochs ...` prints, and with
--sample-after what chapters/expected/38_book_training.txt holds:

    /usr/bin/python3 tools/reference_book_ch5.py --sample-after > chapters/expected/38_book_training.txt
"""
import argparse
import os
import sys
import time

import avx2_kernels  # noqa: F401  (before torch: the AVX2 machine's kernels)
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from reference_llms import GPTModel  # noqa: E402
from reference_train import create_dataloader_v1, decode, encode, generate  # noqa: E402


def calc_loss_batch(x, y, model):
    return F.cross_entropy(model(x).flatten(0, 1), y.flatten())


def calc_loss_loader(loader, model, num_batches):
    """The book's calc_loss_loader: the mean loss of the first num_batches batches; nan for an empty
    loader (chapter 7's previous_chapters.py)."""
    if len(loader) == 0:
        return float("nan")
    total = 0.0
    num_batches = min(num_batches, len(loader))
    for i, (x, y) in enumerate(loader):
        if i < num_batches:
            total += calc_loss_batch(x, y, model).item()
        else:
            break
    return total / num_batches


def evaluate_model(model, train_loader, val_loader, eval_iter, loss_loader=calc_loss_loader):
    """The book's evaluate_model: the mean losses of eval_iter batches of each loader, in eval mode."""
    model.eval()
    with torch.no_grad():
        train_loss = loss_loader(train_loader, model, eval_iter)
        val_loss = loss_loader(val_loader, model, eval_iter)
    model.train()
    return train_loss, val_loss


def generate_and_print_sample(model, sample, say=print):
    """The book's generate_and_print_sample: say(sample()), its newlines as spaces, in eval mode."""
    model.eval()
    say(sample().replace("\n", " "))
    model.train()


def train_model_simple(model, train_loader, optimizer, num_epochs, eval_freq, evaluate, after_epoch, say=print,
                       on_step=None, loss_batch=calc_loss_batch):
    """The book's training loop (train_model_simple, section 5.2; chapter 6's train_classifier_simple is the
    same loop): num_epochs passes over train_loader, one optimizer step on loss_batch a batch, then
    on_step(global_step, x, y, loss) when given; every eval_freq steps the training and validation losses of
    evaluate(), said as the book prints them; after_epoch() at the end of each epoch."""
    global_step = -1
    for epoch in range(num_epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = loss_batch(x, y, model)
            loss.backward()
            optimizer.step()
            global_step += 1
            if on_step is not None:
                on_step(global_step, x, y, loss)
            if global_step % eval_freq == 0:
                tl, vl = evaluate()
                say(f"Ep {epoch + 1} (Step {global_step:06d}): Train loss {tl:.3f}, Val loss {vl:.3f}")
        after_epoch()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=123)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--embed", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--max-seq", type=int, default=256)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--qkv-bias", action="store_true")
    p.add_argument("--arch", default="llms-from-scratch", choices=["llms-from-scratch", "gpt2"],
                   help="gpt2: the book's model with qkv_bias and the head tied to tok_emb")
    p.add_argument("--text", default=os.path.join(HERE, "..", "data", "the-verdict.txt"))
    p.add_argument("--context", type=int, default=256)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--lr", type=float, default=4e-4)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--eval-every", type=int, default=5)
    p.add_argument("--eval-batches", type=int, default=5)
    p.add_argument("--sample-prompt", default="Every effort moves you")
    p.add_argument("--sample-tokens", type=int, default=50)
    p.add_argument("--sample-after", action="store_true",
                   help="then section 5.3: 25 greedy tokens, and torch.manual_seed(123); generate(..., 15, "
                        "top_k=25, temperature=1.4)")
    a = p.parse_args()
    assert torch.__version__.startswith("1.13"), torch.__version__
    text = open(a.text, encoding="utf-8").read()
    split = int(0.9 * len(text))
    train_loader = create_dataloader_v1(text[:split], a.batch, a.context, a.context, shuffle=True, drop_last=True)
    val_loader = create_dataloader_v1(text[split:], a.batch, a.context, a.context, shuffle=False, drop_last=False)
    torch.manual_seed(a.seed)
    model = GPTModel(dict(vocab_size=a.vocab, context_length=a.max_seq, emb_dim=a.embed, n_heads=a.heads,
                          n_layers=a.layers, drop_rate=a.dropout, qkv_bias=a.qkv_bias or a.arch == "gpt2"),
                     tied=a.arch == "gpt2")
    optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    prompt = torch.tensor([encode(a.sample_prompt)])
    t0 = time.time()

    def sample():
        with torch.no_grad():
            return decode(generate(model, prompt, a.sample_tokens, model.pos_emb.weight.shape[0])[0].tolist())

    def say(line):
        print(line, flush=True)

    train_model_simple(model, train_loader, optimizer, a.epochs, a.eval_every,
                       lambda: evaluate_model(model, train_loader, val_loader, a.eval_batches),
                       lambda: generate_and_print_sample(model, sample, say), say=say)
    print("training took %.1f s" % (time.time() - t0), file=sys.stderr)
    if a.sample_after:  # section 5.3: model.eval(), greedy, then temperature and top-k
        model.eval()
        ids = generate(model, prompt, 25, a.max_seq)
        print("Output text:\n", decode(ids[0].tolist()))
        torch.manual_seed(123)
        ids = generate(model, prompt, 15, a.max_seq, temperature=1.4, top_k=25)
        print("Output text:\n", decode(ids[0].tolist()))


if __name__ == "__main__":
    main()
