#!/usr/bin/python3
"""A random GPT-2 of one of Hugging Face's sizes in its layout (development oracle only):
model.safetensors ("transformer." names, as GPT2LMHeadModel saves them) and config.json
in a folder, for timing `mygpt generate --checkpoint` without downloading anything.

    /usr/bin/python3 tools/write_random_gpt2.py gpt2|gpt2-medium|gpt2-large|gpt2-xl DIR [SEED]
"""
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_llms import gpt2, save_safetensors, to_hf  # noqa: E402

SIZES = {"gpt2": (768, 12, 12), "gpt2-medium": (1024, 16, 24), "gpt2-large": (1280, 20, 36), "gpt2-xl": (1600, 25, 48)}


def main():
    name, folder = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    C, NH, L = SIZES[name]
    os.makedirs(folder, exist_ok=True)
    t0 = time.time()
    torch.manual_seed(seed)
    with torch.no_grad():
        model = gpt2(50257, C, NH, L, 1024)
        state = {"transformer." + k: v for k, v in to_hf(model).items()}
        del model
    save_safetensors(state, os.path.join(folder, "model.safetensors"))
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump({"model_type": "gpt2", "vocab_size": 50257, "n_positions": 1024, "n_embd": C, "n_layer": L,
                   "n_head": NH, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05}, f, indent=2)
    print("wrote %s/model.safetensors (%s, seed %d) in %.1f s" % (folder, name, seed, time.time() - t0))


if __name__ == "__main__":
    main()
