#!/usr/bin/python3
"""What llama.cpp's bfloat16 arithmetic costs in accuracy, against the PyTorch oracle.

A benchmark's oracle (doc/performance.md, "Performance round three"), never run by make or CI.
The model is samples/models/minillama (a trained Llama-style model, so its next-token
probabilities are peaked, not the near-uniform ones of random weights), its matrices rounded
to bfloat16 and written as a BF16 GGUF (and as an F32 one) as llama.cpp's converter writes a
Llama (tests/oracle/gguf_models.py's conventions).  Then, for every position of the lesson's
text, the next-token probabilities of:
  - PyTorch: float32 arithmetic over the bfloat16-rounded weights
    (tests/oracle/llama_fixtures.forward: the oracle every attnscope fixture is checked against);
  - llama.cpp on the BF16 file (its CPU backend multiplies in bfloat16: activations rounded too)
    and on the F32 file (float32 arithmetic), each with its defaults (a float16 KV cache, flash
    attention when it chooses) and with a float32 cache and flash attention off, through
    libllama (tests/bench/llama_logits.c);
  - attnscope on the BF16 file (--export's next.csv: the widened weights, float32 arithmetic).
Printed: the largest difference from PyTorch's probability of the same token over each
position's top 5, the mean over positions of the KL divergence from PyTorch's distribution
(llama.cpp's whole vocabulary), and how often the likeliest token differs.

    /usr/bin/python3 tests/bench/bf16_accuracy.py LLAMA_CPP OUT_DIR [ATTNSCOPE]
LLAMA_CPP: llama.cpp's source with a build in build/ (build/bin/libllama.so).
"""
import csv
import json
import os
import subprocess
import sys

import numpy as np
import torch

LLAMA_CPP, OUT = sys.argv[1], sys.argv[2]
ATTNSCOPE = sys.argv[3] if len(sys.argv) > 3 else "./attnscope"
sys.path.insert(0, os.path.join(LLAMA_CPP, "gguf-py"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
import gguf  # noqa: E402
from gguf import GGMLQuantizationType as Q  # noqa: E402
from gguf.quants import quantize  # noqa: E402
import gguf_models  # noqa: E402
import llama_fixtures  # noqa: E402

SRC = os.path.join("samples", "models", "minillama")
TEXT = "cat map sun red fox ink owl jam cat map sun red fox ink owl jam"
os.makedirs(OUT, exist_ok=True)
with open(os.path.join(SRC, "config.json")) as f:
    cfg = json.load(f)
with open(os.path.join(SRC, "tokenizer.json")) as f:
    tj = json.load(f)
hf = gguf_models.read_safetensors(os.path.join(SRC, "model.safetensors"))


def bf16(t):
    """t rounded to bfloat16 (to nearest, ties to even: what torch and the converter do)."""
    return torch.from_numpy(np.ascontiguousarray(t, dtype=np.float32)).to(torch.bfloat16).float().numpy()


rounded = {k: (bf16(t) if t.ndim == 2 else np.asarray(t, dtype=np.float32)) for k, t in hf.items()}


def write(path, kind):
    w = gguf.GGUFWriter(path, "llama")
    gguf_models.minillama_header(w, cfg, tj)
    for name, t in rounded.items():
        if name.endswith(("q_proj.weight", "q_proj.bias")):
            t = gguf_models.permute(t, cfg["num_attention_heads"])
        if name.endswith(("k_proj.weight", "k_proj.bias")):
            t = gguf_models.permute(t, cfg["num_key_value_heads"])
        t = np.ascontiguousarray(t, dtype=np.float32)
        if t.ndim == 2 and kind == "BF16":
            w.add_tensor(gguf_models.gguf_name(name), quantize(t, Q.BF16), raw_dtype=Q.BF16)
        else:
            w.add_tensor(gguf_models.gguf_name(name), t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


files = {kind: os.path.join(OUT, "minillama-%s.gguf" % kind.lower()) for kind in ("BF16", "F32")}
for kind, path in files.items():
    write(path, kind)

# The ids (BOS first, as the model's attnscope.json asks), and attnscope's probabilities.
export = os.path.join(OUT, "export")
subprocess.run([ATTNSCOPE, "--model", files["BF16"], "--bos", "-s", TEXT, "--top", "5",
                "--export", export], check=True, stdout=subprocess.DEVNULL)
with open(os.path.join(export, "tokens.csv")) as f:
    ids = [int(r["id"]) for r in csv.DictReader(f)]
attn = {}
with open(os.path.join(export, "next.csv")) as f:
    for r in csv.DictReader(f):
        attn.setdefault(int(r["position"]), {})[int(r["id"])] = float(r["probability"])

# PyTorch, float32 over the rounded weights (HF's layout: no permutation).
L, H, KV, C = (cfg["num_hidden_layers"], cfg["num_attention_heads"],
               cfg["num_key_value_heads"], cfg["hidden_size"])
c = {"arch": "llama", "L": L, "H": H, "KV": KV, "C": C, "hd": cfg["head_dim"],
     "theta": cfg["rope_theta"], "eps": cfg["rms_norm_eps"]}
T = {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in rounded.items()}
p = {"embed": T["model.embed_tokens.weight"], "norm": T["model.norm.weight"],
     "head": T.get("lm_head.weight", T["model.embed_tokens.weight"])}
names = {"q": "self_attn.q_proj", "k": "self_attn.k_proj", "v": "self_attn.v_proj",
         "o": "self_attn.o_proj", "gate": "mlp.gate_proj", "up": "mlp.up_proj",
         "down": "mlp.down_proj"}
for l in range(L):
    pre = "model.layers.%d." % l
    p[(l, "norm1")] = T[pre + "input_layernorm.weight"]
    p[(l, "norm2")] = T[pre + "post_attention_layernorm.weight"]
    for key, name in names.items():
        p[(l, key)] = T[pre + name + ".weight"]
        if pre + name + ".bias" in T:
            p[(l, key + "_b")] = T[pre + name + ".bias"]
with torch.no_grad():
    out = llama_fixtures.forward(c, p, ids, (True, True, 1.0, []))
    torch_probs = torch.softmax(out["final"] @ p["head"].T, dim=-1).double().numpy()


def llama(path, kv):
    exe = os.path.join(OUT, "llama_logits")
    if not os.path.exists(exe):
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run(["cc", "-O2", "-I" + os.path.join(LLAMA_CPP, "include"),
                        "-I" + os.path.join(LLAMA_CPP, "ggml", "include"),
                        os.path.join(here, "llama_logits.c"),
                        "-L" + os.path.join(LLAMA_CPP, "build", "bin"), "-lllama", "-lggml",
                        "-lggml-base", "-lm",
                        "-Wl,-rpath," + os.path.join(LLAMA_CPP, "build", "bin"), "-o", exe],
                       check=True)
    V = cfg["vocab_size"]
    got = subprocess.run([exe, path, "1", str(V), kv] + [str(i) for i in ids], check=True,
                         capture_output=True, text=True).stdout.split("\n")
    probs = np.zeros((len(ids), V))
    for line in got:
        if line:
            pos, _, tok, pr = line.split()
            probs[int(pos), int(tok)] = float(pr)
    return probs


def report(name, top_of):
    """top_of(position) -> {id: probability} (each position's top 5 at least)."""
    worst, flips = 0.0, 0
    for i in range(len(ids)):
        got = top_of(i)
        for tok, pr in got.items():
            worst = max(worst, abs(pr - torch_probs[i, tok]))
        flips += max(got, key=got.get) != int(np.argmax(torch_probs[i]))
    return worst, flips


print("minillama (2 layers, d 64, vocabulary 520, trained), its matrices in bfloat16;")
print("the lesson's text, %d positions; against PyTorch float32 over the same weights" % len(ids))
print("%-32s %16s %14s %12s" % ("", "max |dp| (top 5)", "mean KL", "argmax flips"))
for kind in ("BF16", "F32"):
    for kv in ("f16", "f32"):
        probs = llama(files[kind], kv)
        worst, flips = report(kind, lambda i: {t: probs[i, t] for t in np.argsort(-probs[i])[:5]})
        kl = np.mean([np.sum(torch_probs[i] * (np.log(torch_probs[i]) -
                                               np.log(np.maximum(probs[i], 1e-300))))
                      for i in range(len(ids))])
        print("%-32s %16.3g %14.3g %12d" % ("llama.cpp, %s file, %s" % (kind, "defaults" if kv == "f16" else "f32 cache, no FA"), worst,
                                              kl, flips))
worst, flips = report("attnscope", lambda i: attn[i])
print("%-32s %16.3g %14s %12d" % ("attnscope, BF16 file", worst, "(top 5 only)", flips))
print("largest probability of a position: %.4f" % float(np.max(torch_probs)))
