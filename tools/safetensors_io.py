"""safetensors files for the reference GPT, in plain Python (development oracle only):
what mygpt_checkpoint_save writes and mygpt_checkpoint_load reads.

    from safetensors_io import save, load
    save(model, "m.safetensors")          # model: reference_gpt.GPT
    model = load("m.safetensors")         # a reference_gpt.GPT with those weights
"""
import json
import struct

import torch

from reference_gpt import GPT

KEYS = ("vocab_size", "embed_dim", "num_heads", "num_layers", "max_seq_len")


def save(model, path):
    cfg = dict(vocab_size=model.token_embedding.embedding.num_embeddings,
               embed_dim=model.token_embedding.embedding.embedding_dim,
               num_heads=model.blocks[0].attn.h, num_layers=len(model.blocks), max_seq_len=model.max_seq_len)
    header, blobs, offset = {"__metadata__": {"format": "pt", **{k: str(v) for k, v in cfg.items()}}}, [], 0
    for name, t in model.state_dict().items():
        if name.endswith(".attn.mask"):
            continue  # a buffer, not a parameter
        b = t.detach().contiguous().float().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def load(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__")
    model = GPT(*(int(meta[k]) for k in KEYS))
    state = {}
    for name, e in header.items():
        a, b = e["data_offsets"]
        state[name] = torch.frombuffer(bytearray(raw[8 + n + a:8 + n + b]), dtype=torch.float32).reshape(e["shape"])
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and all(m.endswith(".attn.mask") for m in missing), (missing, unexpected)
    return model
