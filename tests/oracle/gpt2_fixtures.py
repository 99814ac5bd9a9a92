"""Tiny GPT-2 models and PyTorch's forward of them, for tests/check_gpt2.c.

Writes tests/fixtures/gpt2/CASE/ for each case below: config.json, a
model.safetensors written byte by byte from the format's specification (an
8-byte little-endian header length, the JSON header padded to 8 bytes, the
data), and expected.txt, what a float32 PyTorch forward with Hugging Face's
GPT-2 semantics computes for a fixed list of token ids:

    ids N i0 i1 ...
    weights L H N*N values      (every layer, every head)
    resid2 L N*C values         (every layer's output)
    final N*C values            (ln_f's output)
    top K N*K ids, then N*K probabilities

The weights are drawn from torch.manual_seed(CASE's seed), stored in the
case's dtype (F32, F16 or BF16); the forward uses exactly the stored values
converted to float32.  Cases cover several shapes, the three dtypes, Hugging
Face's names with and without the `transformer.` prefix, a saved lm_head, and
the book's GPTModel names (nn.Linear's (out, in) layout).

attnscope's own restatement of GPT-2's computation (Hugging Face's
modeling_gpt2 and the book's chapter 4 compute the same), never used by the
build or by `make check`.  Run from the top of the source tree with Debian's
PyTorch:

    /usr/bin/python3 tests/oracle/gpt2_fixtures.py
"""
import json
import math
import os
import struct

import torch
import torch.nn.functional as F

CASES = [
    # name, n_layer, n_head, n_embd, vocab, positions, dtype, layout, seed
    ("hf-f32", 2, 2, 8, 32, 16, "F32", "hf", 1),
    ("hf-prefix-f16", 2, 4, 16, 40, 12, "F16", "hf-prefix", 2),
    ("hf-bf16-head", 3, 1, 8, 24, 10, "BF16", "hf-lm-head", 3),
    ("book-f32", 2, 2, 12, 30, 16, "F32", "book", 4),
    # A vocabulary wider than one slice of the logits (attnscope scores 2,048 at a time).
    ("hf-vocab-f16", 1, 2, 8, 4500, 8, "F16", "hf", 5),
]
IDS = [3, 17, 5, 5, 0, 21, 9]
TOP = 3
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def draw(gen, *shape, scale=0.3):
    return torch.randn(*shape, generator=gen) * scale


def stored(t, dtype):
    """t as the file holds it, and the float32 values the forward uses."""
    s = t.to(DTYPES[dtype]).contiguous()
    return s, s.to(torch.float32)


def write_safetensors(path, tensors):
    header = {}
    blobs = []
    at = 0
    for name, t in tensors:
        if t.dtype == torch.float32:
            raw = struct.pack("<%df" % t.numel(), *t.flatten().tolist())
        elif t.dtype == torch.uint8:  # raw bytes (MXFP4's blocks and scales)
            raw = bytes(t.flatten().tolist())
        else:  # F16 and BF16: their 16-bit patterns, little-endian
            bits = t.contiguous().view(torch.int16).flatten().tolist()
            raw = struct.pack("<%dh" % len(bits), *bits)
        dtype = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
                 torch.uint8: "U8"}[t.dtype]
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text.encode())
        for raw in blobs:
            f.write(raw)


def make_case(root, name, n_layer, n_head, n_embd, vocab, positions, dtype, layout, seed):
    gen = torch.Generator().manual_seed(seed)
    C, Fw = n_embd, 4 * n_embd
    out = []     # (name, tensor as stored)
    p = {}       # the float32 values, by role

    def put(key, file_name, t):
        s, f32 = stored(t, dtype)
        out.append((file_name, s))
        p[key] = f32

    pre = "transformer." if layout == "hf-prefix" else ""
    book = layout == "book"
    put("wte", "tok_emb.weight" if book else pre + "wte.weight", draw(gen, vocab, C))
    put("wpe", "pos_emb.weight" if book else pre + "wpe.weight", draw(gen, positions, C))
    for l in range(n_layer):
        g = lambda: 1.0 + draw(gen, C, scale=0.1)
        if book:
            b = "trf_blocks.%d." % l
            put((l, "ln1_g"), b + "norm1.scale", g())
            put((l, "ln1_b"), b + "norm1.shift", draw(gen, C, scale=0.1))
            for role in ("W_query", "W_key", "W_value"):
                put((l, role), b + "att.%s.weight" % role, draw(gen, C, C))      # (out, in)
                put((l, role + "_b"), b + "att.%s.bias" % role, draw(gen, C, scale=0.1))
            put((l, "proj"), b + "att.out_proj.weight", draw(gen, C, C))
            put((l, "proj_b"), b + "att.out_proj.bias", draw(gen, C, scale=0.1))
            put((l, "ln2_g"), b + "norm2.scale", g())
            put((l, "ln2_b"), b + "norm2.shift", draw(gen, C, scale=0.1))
            put((l, "fc"), b + "ff.layers.0.weight", draw(gen, Fw, C))
            put((l, "fc_b"), b + "ff.layers.0.bias", draw(gen, Fw, scale=0.1))
            put((l, "fc2"), b + "ff.layers.2.weight", draw(gen, C, Fw))
            put((l, "fc2_b"), b + "ff.layers.2.bias", draw(gen, C, scale=0.1))
        else:
            b = pre + "h.%d." % l
            put((l, "ln1_g"), b + "ln_1.weight", g())
            put((l, "ln1_b"), b + "ln_1.bias", draw(gen, C, scale=0.1))
            put((l, "c_attn"), b + "attn.c_attn.weight", draw(gen, C, 3 * C))   # (in, out)
            put((l, "c_attn_b"), b + "attn.c_attn.bias", draw(gen, 3 * C, scale=0.1))
            put((l, "proj"), b + "attn.c_proj.weight", draw(gen, C, C))
            put((l, "proj_b"), b + "attn.c_proj.bias", draw(gen, C, scale=0.1))
            put((l, "ln2_g"), b + "ln_2.weight", g())
            put((l, "ln2_b"), b + "ln_2.bias", draw(gen, C, scale=0.1))
            put((l, "fc"), b + "mlp.c_fc.weight", draw(gen, C, Fw))
            put((l, "fc_b"), b + "mlp.c_fc.bias", draw(gen, Fw, scale=0.1))
            put((l, "fc2"), b + "mlp.c_proj.weight", draw(gen, Fw, C))
            put((l, "fc2_b"), b + "mlp.c_proj.bias", draw(gen, C, scale=0.1))
    put("lnf_g", "final_norm.scale" if book else pre + "ln_f.weight", 1.0 + draw(gen, C, scale=0.1))
    put("lnf_b", "final_norm.shift" if book else pre + "ln_f.bias", draw(gen, C, scale=0.1))
    if book:
        put("head", "out_head.weight", draw(gen, vocab, C))
    elif layout == "hf-lm-head":
        # A saved lm_head is the tied embedding's copy (Hugging Face saves it so).
        out.append(("lm_head.weight", stored(p["wte"], dtype)[0]))
        p["head"] = p["wte"]
    if "head" not in p:
        p["head"] = p["wte"]

    # The forward, float32, Hugging Face's GPT-2 semantics.
    n = len(IDS)
    hd = C // n_head
    ids = torch.tensor(IDS)
    x = p["wte"][ids] + p["wpe"][:n]
    lines = ["ids %d %s" % (n, " ".join(map(str, IDS)))]
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool))

    for l in range(n_layer):
        h = F.layer_norm(x, (C,), p[(l, "ln1_g")], p[(l, "ln1_b")], eps=1e-5)
        if book:
            q, k, v = (h @ p[(l, r)].T + p[(l, r + "_b")] for r in ("W_query", "W_key", "W_value"))
        else:
            qkv = h @ p[(l, "c_attn")] + p[(l, "c_attn_b")]
            q, k, v = qkv.split(C, dim=1)
        q = q.view(n, n_head, hd).transpose(0, 1)
        k = k.view(n, n_head, hd).transpose(0, 1)
        v = v.view(n, n_head, hd).transpose(0, 1)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        att = att.masked_fill(~causal, torch.finfo(torch.float32).min)
        att = torch.softmax(att, dim=-1)
        lines.append("weights %d %d %s" % (l, n_head, " ".join("%.9g" % e for e in att.flatten().tolist())))
        ctx = (att @ v).transpose(0, 1).reshape(n, C)
        a = ctx @ p[(l, "proj")].T + p[(l, "proj_b")] if book else ctx @ p[(l, "proj")] + p[(l, "proj_b")]
        x = x + a
        h = F.layer_norm(x, (C,), p[(l, "ln2_g")], p[(l, "ln2_b")], eps=1e-5)
        f = h @ p[(l, "fc")].T + p[(l, "fc_b")] if book else h @ p[(l, "fc")] + p[(l, "fc_b")]
        f = 0.5 * f * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (f + 0.044715 * torch.pow(f, 3.0))))
        m = f @ p[(l, "fc2")].T + p[(l, "fc2_b")] if book else f @ p[(l, "fc2")] + p[(l, "fc2_b")]
        x = x + m
        lines.append("resid2 %d %s" % (l, " ".join("%.9g" % e for e in x.flatten().tolist())))
    final = F.layer_norm(x, (C,), p["lnf_g"], p["lnf_b"], eps=1e-5)
    lines.append("final %s" % " ".join("%.9g" % e for e in final.flatten().tolist()))
    probs = torch.softmax(final @ p["head"].T, dim=-1)
    top = torch.topk(probs, TOP, dim=-1)
    lines.append("top %d %s %s" % (TOP, " ".join(map(str, top.indices.flatten().tolist())),
                                   " ".join("%.9g" % e for e in top.values.flatten().tolist())))

    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    config = {"model_type": "gpt2", "n_layer": n_layer, "n_head": n_head, "n_embd": n_embd,
              "vocab_size": vocab, "n_positions": positions, "layer_norm_epsilon": 1e-5,
              "activation_function": "gelu_new", "n_inner": None}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(d, "model.safetensors"), out)
    with open(os.path.join(d, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    root = os.path.join("tests", "fixtures", "gpt2")
    for case in CASES:
        make_case(root, *case)
        print("wrote", os.path.join(root, case[0]))


if __name__ == "__main__":
    main()
