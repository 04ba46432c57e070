#!/usr/bin/python3
"""mygpt's saves of the book's model and of GPT-2 load into tools/reference_llms.py's
models and generate the same tokens there (development oracle only):

    /usr/bin/python3 tools/crosscheck_checkpoints.py [BUILD_DIR] [TRIALS]

Each trial trains a random small model of each architecture for a few steps with
`mygpt train --save` (dropout in train mode), loads the file the way a PyTorch user
would (the book's: load_state_dict; GPT-2's: Hugging Face's names through from_hf, the
head count from the config.json mygpt wrote), and compares greedy tokens.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from reference_llms import GPTModel, from_hf, load_safetensors  # noqa: E402
from reference_train import generate  # noqa: E402


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build")
    trials = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    rnd = random.Random(24)
    bad = 0
    for t in range(trials):
        for arch in ("llms-from-scratch", "gpt2"):
            NH = rnd.choice([1, 2, 4])
            C, L, M = NH * rnd.choice([8, 16]), rnd.randrange(1, 4), rnd.choice([16, 32])
            qkv = arch == "gpt2" or rnd.random() < 0.5
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "m.safetensors")
                args = [os.path.join(build, "cli", "mygpt"), "train", "--arch", arch, "--seed", str(rnd.randrange(1000)),
                        "--vocab", "50257", "--embed", str(C), "--heads", str(NH), "--layers", str(L), "--max-seq",
                        str(M), "--dropout", "0.1", "--text", os.path.join(HERE, "..", "data", "the-verdict.txt"),
                        "--context", str(M), "--batch", "2", "--steps", "3", "--optimizer", "adamw", "--lr", "1e-3",
                        "--save", path] + (["--qkv-bias"] if qkv else [])
                subprocess.run(args, check=True, capture_output=True)
                sd = load_safetensors(path)
                if arch == "gpt2":
                    model = from_hf(sd, json.load(open(os.path.join(d, "config.json")))["n_head"])
                else:
                    model = GPTModel(dict(vocab_size=50257, context_length=M, emb_dim=C, n_heads=NH, n_layers=L,
                                          drop_rate=0.1, qkv_bias=qkv))
                    missing, unexpected = model.load_state_dict(sd, strict=False)
                    assert not unexpected and all(k.endswith(".att.mask") for k in missing), (missing, unexpected)
                model.eval()
                prompt = [rnd.randrange(50257) for _ in range(3)]
                want = generate(model, torch.tensor([prompt]), 8, M)[0].tolist()
                got = subprocess.run([os.path.join(build, "cli", "mygpt"), "generate", "--checkpoint", path, "--ids",
                                      ",".join(map(str, prompt)), "--max-new", "8", "--no-stream", "--eos", "-1"],
                                     check=True, capture_output=True, text=True).stdout.split("\n")[0]
                same = got == " ".join(map(str, want))
                bad += not same
                print("trial %d %s C=%d NH=%d L=%d qkv=%d: %s" % (t, arch, C, NH, L, qkv, "same tokens" if same else
                                                                   "DIFFER: mygpt %s, PyTorch %s" % (got, want)))
    print("%d differed" % bad)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
