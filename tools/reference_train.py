#!/usr/bin/python3
"""What `mygpt train` and `mygpt generate` compute, in PyTorch 1.13 (development oracle):
the reference GPT (reference_gpt.py), LLMs-from-scratch's create_dataloader_v1 with
tiktoken's GPT-2 ids (npm's tiktoken through node: `npm install --prefix tools/node`),
F.cross_entropy, torch.optim.SGD / AdamW, and the tutorial's generation loop.

    /usr/bin/python3 tools/reference_train.py train --seed 123 --vocab 50257 --embed 64 \\
        --heads 4 --layers 2 --max-seq 32 --text data/the-verdict.txt --context 32 \\
        --batch 8 --steps 20 --optimizer adamw --lr 4e-4 --eval-every 5
    /usr/bin/python3 tools/reference_train.py generate --seed 123 ... --checkpoint m.safetensors \\
        --prompt "Every effort moves you" --max-new 20 --temperature 1.4 --top-k 25 --sample-seed 123

Prints exactly what the mygpt tool prints for the same flags (the tool adds tokens/s
on stderr).
"""
import argparse
import json
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from reference_gpt import GPT  # noqa: E402


def tiktoken(args_list, text=None):
    """GPT-2's tiktoken through node (tools/node): encode text -> ids, or decode ids -> text."""
    script = ("const {createRequire}=require('module');const r=createRequire(process.argv[1]+'/node/package.json');"
              "const e=r('tiktoken').get_encoding('gpt2');let d='';process.stdin.on('data',c=>d+=c);"
              "process.stdin.on('end',()=>{if(process.argv[2]==='encode'){process.stdout.write(JSON.stringify("
              "Array.from(e.encode(d,['<|endoftext|>']))))}else{process.stdout.write(new TextDecoder().decode("
              "e.decode(Uint32Array.from(JSON.parse(d)))))}});")
    run = subprocess.run(["node", "-e", script, HERE] + args_list, input=text.encode() if isinstance(text, str)
                         else text, capture_output=True)
    if run.returncode != 0:  # a tool's failure, never a cell's output (SystemExit passes `except Exception`)
        lines = run.stderr.decode(errors="replace").splitlines()
        why = next((line.strip() for line in lines if "Error" in line), lines[0] if lines else "")
        raise SystemExit("tiktoken through node failed (npm install --prefix tools/node installs it): " + why)
    return run.stdout


def encode(text):
    return json.loads(tiktoken(["encode"], text))


def decode(ids):
    return tiktoken(["decode"], json.dumps(ids)).decode("utf-8", errors="replace")


class GPTDatasetV1(torch.utils.data.Dataset):
    """LLMs-from-scratch chapter 2's dataset: windows of max_length every stride tokens."""
    def __init__(self, token_ids, max_length, stride):
        self.input_ids, self.target_ids = [], []
        for i in range(0, len(token_ids) - max_length, stride):
            self.input_ids.append(torch.tensor(token_ids[i:i + max_length]))
            self.target_ids.append(torch.tensor(token_ids[i + 1:i + max_length + 1]))

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, idx):
        return self.input_ids[idx], self.target_ids[idx]


def create_dataloader_v1(txt, batch_size, max_length, stride, shuffle, drop_last):
    dataset = GPTDatasetV1(encode(txt), max_length, stride)
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                                       num_workers=0)


def make_optimizer(a, model):
    if a.optimizer == "sgd":
        return torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum or 0.0,
                               weight_decay=a.weight_decay if a.weight_decay is not None else 0.0)
    return torch.optim.AdamW(model.parameters(), lr=a.lr,
                             weight_decay=a.weight_decay if a.weight_decay is not None else 0.01)


def train(a, on_eval=None, make_model=None, make_opt=None):
    """The training loop of the issue (and `mygpt train`). on_eval(step, epoch, train_loss,
    val_loss, tokens_seen) is called at every printed step; make_model() builds the model
    after the seed (the reference GPT without it), make_opt(model) its optimizer
    (make_optimizer's without it); returns the model."""
    torch.manual_seed(a.seed)
    model = make_model() if make_model else GPT(a.vocab, a.embed, a.heads, a.layers, a.max_seq)
    text = open(a.text, encoding="utf-8").read()
    split = int(0.9 * len(text))
    train_text, val_text = text[:split], text[split:]
    train_loader = create_dataloader_v1(train_text, batch_size=a.batch, max_length=a.context, stride=a.context,
                                        shuffle=True, drop_last=True)
    val_loader = create_dataloader_v1(val_text, batch_size=a.batch, max_length=a.context, stride=a.context,
                                      shuffle=False, drop_last=False)
    opt = make_opt(model) if make_opt else make_optimizer(a, model)
    step, epoch, tokens_seen = 0, 0, 0
    while step < a.steps:
        epoch += 1
        for x, y in train_loader:
            loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
            tokens_seen += x.numel()
            if step % a.eval_every == 0 or step == a.steps - 1:
                with torch.no_grad():
                    losses = [F.cross_entropy(model(vx).flatten(0, 1), vy.flatten()).item() for vx, vy in val_loader]
                    val = sum(losses) / len(losses)
                if on_eval:
                    on_eval(step, epoch, loss.item(), val, tokens_seen)
                else:
                    print(f"step {step} train_loss {loss.item():.6f} val_loss {val:.6f}")
            step += 1
            if step == a.steps:
                break
    return model


def sample_next(logits, temperature=0.0, top_k=None, top_p=None):
    """The next token of each row of logits (B, V) as generate draws it: the top_k largest kept, then
    the softmax at temperature, then the smallest set of the likeliest tokens whose probability
    reaches top_p, one torch.multinomial draw; the argmax at temperature 0. Returns (B, 1)."""
    if top_k:
        top_logits, _ = torch.topk(logits, top_k)
        logits = torch.where(logits < top_logits[:, -1:], torch.tensor(float("-inf")), logits)
    if temperature > 0.0:
        probs = torch.softmax(logits / temperature, dim=-1)
        if top_p:
            sp, si = torch.sort(probs, descending=True)
            cum = torch.cumsum(sp, dim=-1)
            sp[cum - sp > top_p] = 0.0
            probs = torch.zeros_like(probs).scatter(-1, si, sp)
        return torch.multinomial(probs, num_samples=1)
    return torch.argmax(logits, dim=-1, keepdim=True)


def generate(model, idx, max_new, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
    """The tutorial's loop (LLMs-from-scratch chapter 5's generate, with top-p added)."""
    for _ in range(max_new):
        with torch.no_grad():
            logits = model(idx[:, -context_size:])[:, -1, :]
        nxt = sample_next(logits, temperature, top_k, top_p)
        if eos_id is not None and nxt.item() == eos_id:
            break
        idx = torch.cat((idx, nxt), dim=1)
    return idx


def main():
    assert torch.__version__.startswith("1.13"), torch.__version__
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["train", "generate"])
    for flag, typ in (("seed", int), ("vocab", int), ("embed", int), ("heads", int), ("layers", int),
                      ("max-seq", int), ("context", int), ("batch", int), ("steps", int), ("eval-every", int),
                      ("max-new", int), ("top-k", int), ("sample-seed", int)):
        ap.add_argument("--" + flag, type=typ)
    for flag in ("lr", "momentum", "weight-decay", "temperature", "top-p"):
        ap.add_argument("--" + flag, type=float)
    for flag in ("text", "optimizer", "checkpoint", "prompt", "ids"):
        ap.add_argument("--" + flag)
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.command == "train":
        a.eval_every = a.eval_every or 1
        train(a)
        return
    if a.checkpoint:
        from safetensors_io import load
        torch.manual_seed(a.seed or 0)  # without --sample-seed the draws continue from here
        model = load(a.checkpoint)
    else:
        torch.manual_seed(a.seed)
        model = GPT(a.vocab, a.embed, a.heads, a.layers, a.max_seq)
    model.eval()
    ids = encode(a.prompt) if a.prompt is not None else [int(t) for t in a.ids.split(",")]
    if a.sample_seed is not None:
        torch.manual_seed(a.sample_seed)
    eos = 50256 if model.token_embedding.embedding.num_embeddings > 50256 else None
    out = generate(model, torch.tensor([ids]), a.max_new, model.max_seq_len, a.temperature or 0.0, a.top_k,
                   a.top_p, eos)
    print(" ".join(map(str, out[0].tolist())))


if __name__ == "__main__":
    main()
