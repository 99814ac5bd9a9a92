#!/usr/bin/python3
"""Writes the GGUF models of tests/fixtures/decoders/*-gguf/ as llama.cpp's converter would.

Run by hand from the top of the source tree (an oracle, never a build or CI step):
    PYTHONPATH=LLAMA_CPP/gguf-py /usr/bin/python3 tests/oracle/gguf_models.py
LLAMA_CPP is llama.cpp's source (npm's node-llama-cpp carries it as llama/gitRelease.bundle).

Each file is written by gguf-py's GGUFWriter with the metadata keys and tensor names
llama.cpp's convert_hf_to_gguf.py writes for the architecture (general.architecture,
ARCH.block_count ... ARCH.rope.freq_base, token_embd, blk.N.attn_q ... output), and what
that converter does to the weights restated:
  - the llama architecture's q and k rows permuted so that RoPE's pairs sit side by side
    (LlamaModel.permute: reshape(heads, 2, d/2, in).swapaxes(1, 2));
  - Llama 3's stretched frequencies as factors in rope_freqs.weight (generate_extra_tensors:
    1 for short wavelengths, factor for long ones, 1 / ((1 - smooth) / factor + smooth) between);
  - the head left out when it is tied to the embedding.

  qwen3-gguf, llama-gguf, llama3-gguf, qwen2-gguf: the Hugging Face fixtures of the same name
  gemma3-gguf: gemma3-pattern as llama.cpp's converter writes a Gemma 3 (gemma3() says how)
      without -gguf (tests/oracle/llama_fixtures.py) in float32 (their BF16 widened exactly), so
      their expected.txt is the same file: copied.
  qwen3-q-gguf: a Qwen3 wide enough for K-quants (C = F = 256, heads of 32) whose matrices are
      quantized (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 by gguf-py's own quantize; Q2_K ... Q6_K as random
      blocks, any block being a weight); expected.txt is llama_fixtures.forward over the
      weights as gguf.quants.dequantize gives them.
  samples/models/minillama-q4: the minillama that ships, in Q4_0 (lesson 18).
  tests/fixtures/formats/gguf: the formats' GPT-2 (tests/fixtures/formats/hf) as GPT2Model
      converts it (its Conv1D matrices transposed), for check_formats.
  qwen3-moe-gguf, olmoe-gguf, mixtral-gguf: tests/oracle/moe_fixtures.py's qwen3-moe-sparse,
      olmoe and mixtral as llama.cpp converts a mixture (moe() says how), their expected.txt
      copied.
  gpt-oss-gguf: tests/oracle/gptoss_fixtures.py's gpt-oss-mxfp4 as llama.cpp converts a gpt-oss
      (gpt_oss() says how), its MXFP4 blocks checked against gguf-py's dequantization.
  qwen35-gguf: tests/oracle/qwen35_fixtures.py's qwen35-gqa as llama.cpp converts a Qwen3.5
      (qwen35() says how), its expected.txt the HF fixture's with each value head's numbers
      moved to the file's order.
  qwen35-ollama: the same model as Ollama's own converter writes the qwen3.5 blobs its library
      serves (qwen35_ollama() says how): one head_count_kv a layer, ssm_dt without .bias,
      the MTP head's mtp.* and a vision tower's v.* tensors in the same file.
  qwen3next-gguf: tests/oracle/qwen35_fixtures.py's qwen3-next-moe as llama.cpp converts a
      Qwen3-Next (qwen3next() says how), its expected.txt copied; qwen3next-legacy-gguf the
      same with in_proj_qkvz whole (ssm_in), as the converter wrote it before.
  qwen3-tok-gguf: a tiny Qwen3 in Q8_0 carrying a byte-level tokenizer (GPT-2's byte
      characters, a few merges, <|endoftext|> a control token, qwen2's pre-tokenizer): a file
      that --model opens whole.
"""
import json
import os
import shutil
import struct
import sys

import numpy as np
import torch
import gguf
from gguf import GGMLQuantizationType as Q
from gguf.constants import GGML_QUANT_SIZES
from gguf.quants import dequantize, quantize

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_fixtures as lf  # noqa: E402

ROOT = os.path.join("tests", "fixtures", "decoders")


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        raw = data[b:end]
        if e["dtype"] == "F32":
            a = np.frombuffer(raw, dtype="<f4")
        elif e["dtype"] == "U8":  # (MXFP4's blocks and scales)
            a = np.frombuffer(raw, dtype=np.uint8)
        else:  # BF16: its patterns are a float32's upper half
            a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        out[name] = a.reshape(e["shape"]).copy()
    return out


def permute(w, heads):
    rows = w.shape[0]
    return (w.reshape(heads, 2, rows // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape))


def rope_factors(sc, theta, hd):
    factor, low, high = sc["factor"], sc["low_freq_factor"], sc["high_freq_factor"]
    old = sc["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    freqs = 1.0 / (theta ** (np.arange(0, hd, 2, dtype=np.float32) / hd))
    out = []
    for f in freqs:
        wavelen = 2 * np.pi / f
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


NAMES = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
         "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
         "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
         "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate",
         "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}


def gguf_name(hf):
    if hf == "model.embed_tokens.weight":
        return "token_embd.weight"
    if hf == "model.norm.weight":
        return "output_norm.weight"
    if hf == "lm_head.weight":
        return "output.weight"
    parts = hf.split(".")
    layer, rest, kind = parts[2], ".".join(parts[3:-1]), parts[-1]
    return "blk.%s.%s.%s" % (layer, NAMES[rest], kind)


def metadata(w, arch, cfg, hd, rot=None):
    w.add_uint32(arch + ".block_count", cfg["num_hidden_layers"])
    w.add_uint32(arch + ".context_length", cfg["max_position_embeddings"])
    w.add_uint32(arch + ".embedding_length", cfg["hidden_size"])
    if "intermediate_size" in cfg:
        w.add_uint32(arch + ".feed_forward_length", cfg["intermediate_size"])
    w.add_uint32(arch + ".attention.head_count", cfg["num_attention_heads"])
    w.add_uint32(arch + ".attention.head_count_kv", cfg["num_key_value_heads"])
    w.add_float32(arch + ".rope.freq_base", cfg["rope_theta"])
    w.add_float32(arch + ".attention.layer_norm_rms_epsilon", cfg["rms_norm_eps"])
    w.add_uint32(arch + ".attention.key_length", hd)
    w.add_uint32(arch + ".attention.value_length", hd)
    w.add_uint32(arch + ".rope.dimension_count", hd if rot is None else rot)
    w.add_uint32("general.file_type", 0)


def convert(name):
    src = os.path.join(ROOT, name)
    dst = os.path.join(ROOT, name + "-gguf") if name != "llama-gqa" else os.path.join(ROOT, "llama-gguf")
    if name == "llama3-scaled":
        dst = os.path.join(ROOT, "llama3-gguf")
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    arch = cfg["model_type"]
    hd = cfg.get("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    tensors = read_safetensors(os.path.join(src, "model.safetensors"))
    os.makedirs(dst, exist_ok=True)
    w = gguf.GGUFWriter(os.path.join(dst, "model.gguf"), arch)
    metadata(w, arch, cfg, hd)
    if cfg.get("rope_scaling"):
        w.add_tensor("rope_freqs.weight", rope_factors(cfg["rope_scaling"], cfg["rope_theta"], hd))
    for hf, t in tensors.items():
        if arch == "llama" and hf.endswith(("q_proj.weight", "q_proj.bias")):
            t = permute(t, cfg["num_attention_heads"])
        if arch == "llama" and hf.endswith(("k_proj.weight", "k_proj.bias")):
            t = permute(t, cfg["num_key_value_heads"])
        w.add_tensor(gguf_name(hf), t.astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    shutil.copy(os.path.join(src, "expected.txt"), os.path.join(dst, "expected.txt"))
    print("wrote", dst)


# Gemma 3's names in llama.cpp's conversion (conversion/gemma.py, gguf-py's tensor_mapping).
GEMMA_NAMES = dict(NAMES, input_layernorm="attn_norm",
                   post_attention_layernorm="post_attention_norm",
                   pre_feedforward_layernorm="ffn_norm",
                   post_feedforward_layernorm="post_ffw_norm")


def gemma3():
    """tests/fixtures/decoders/gemma3-pattern as llama.cpp's converter writes a Gemma 3: its norms
    stored with the 1 of (1 + w) added (conversion/gemma.py's norm_shift, in float32 as the
    forward adds it), the window, the layers' pattern, the sliding layers' RoPE base and the
    logits' cap in the metadata; llama.cpp derives the query scale from the head size (the
    fixture's query_pre_attn_scalar is its head size)."""
    src, dst = os.path.join(ROOT, "gemma3-pattern"), os.path.join(ROOT, "gemma3-gguf")
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    assert cfg["query_pre_attn_scalar"] == cfg["head_dim"]
    tensors = read_safetensors(os.path.join(src, "model.safetensors"))
    os.makedirs(dst, exist_ok=True)
    w = gguf.GGUFWriter(os.path.join(dst, "model.gguf"), "gemma3")
    metadata(w, "gemma3", cfg, cfg["head_dim"])
    w.add_uint32("gemma3.attention.sliding_window", cfg["sliding_window"])
    # The layers' kinds as a list (what llama.cpp's load_swa_pattern reads first; a count, its
    # other spelling, would say the same here: every third layer full).
    w.add_sliding_window_pattern([(l + 1) % cfg["sliding_window_pattern"] != 0
                                  for l in range(cfg["num_hidden_layers"])])
    w.add_float32("gemma3.rope.freq_base_swa", cfg["rope_local_base_freq"])
    w.add_float32("gemma3.final_logit_softcapping", cfg["final_logit_softcapping"])
    for hf, t in tensors.items():
        name = ("output_norm.weight" if hf == "model.norm.weight" else
                "token_embd.weight" if hf == "model.embed_tokens.weight" else
                "output.weight" if hf == "lm_head.weight" else
                "blk.%s.%s.%s" % (hf.split(".")[2], GEMMA_NAMES[".".join(hf.split(".")[3:-1])],
                                  hf.split(".")[-1]))
        t = t.astype(np.float32)
        if hf.endswith("norm.weight"):
            t = t + np.float32(1.0)
        w.add_tensor(name, t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    shutil.copy(os.path.join(src, "expected.txt"), os.path.join(dst, "expected.txt"))
    print("wrote", dst)


# The quantized Qwen3: which type each matrix gets (the K-quants' rows are 256 wide).
QTYPES = {"attn_q": Q.Q8_0, "attn_k": Q.Q4_0, "attn_v": Q.Q5_0, "attn_output": Q.Q4_1,
          "ffn_gate": Q.Q4_K, "ffn_up": Q.Q6_K, "ffn_down": Q.Q5_K}
QTYPES_1 = {"attn_q": Q.Q3_K, "attn_k": Q.Q2_K, "attn_v": Q.Q5_1, "attn_output": Q.Q8_0,
            "ffn_gate": Q.Q6_K, "ffn_up": Q.Q4_K, "ffn_down": Q.Q5_K}


def quantized(rng, weights, qtype):
    """weights as qtype's blocks, and what they dequantize to."""
    if qtype in (Q.Q8_0, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1):
        blocks = quantize(weights, qtype)
    else:
        per, size = GGML_QUANT_SIZES[qtype]
        halves = {Q.Q2_K: [80, 82], Q.Q3_K: [108], Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208]}[qtype]
        blocks = rng.integers(0, 256, size=(weights.size // per, size), dtype=np.uint8)
        for off in halves:
            # (scales that keep the weights near the others', up to about 0.2: a block's largest
            # scale times its largest integer)
            top = {Q.Q2_K: 45, Q.Q3_K: 128, Q.Q4_K: 945, Q.Q5_K: 1953, Q.Q6_K: 4064}[qtype]
            h = (rng.uniform(0.2, 1.0, blocks.shape[0]) * 0.2 / top).astype(np.float16)
            blocks[:, off:off + 2] = h.view(np.uint8).reshape(-1, 2)
        blocks = blocks.reshape(weights.shape[0], -1)
    return blocks, dequantize(blocks, qtype).astype(np.float32).reshape(weights.shape)


def quantized_qwen3():
    c = dict(name="qwen3-q-gguf", arch="qwen3", L=2, H=4, KV=2, C=256, F=256, V=36, P=64, hd=32,
             tied=True, theta=1000000.0, eps=1e-6, knobs=(False, True, 0.7, [(0, 1), (1, 3)]))
    L, H, KV, C, Fw, V, hd = c["L"], c["H"], c["KV"], c["C"], c["F"], c["V"], c["hd"]
    gen = torch.Generator().manual_seed(39)
    rng = np.random.default_rng(39)
    dst = os.path.join(ROOT, c["name"])
    os.makedirs(dst, exist_ok=True)
    w = gguf.GGUFWriter(os.path.join(dst, "model.gguf"), "qwen3")
    metadata(w, "qwen3", {"num_hidden_layers": L, "max_position_embeddings": c["P"], "hidden_size": C,
                          "intermediate_size": Fw, "num_attention_heads": H,
                          "num_key_value_heads": KV, "rope_theta": c["theta"],
                          "rms_norm_eps": c["eps"]}, hd)
    p = {}

    def plain(key, name, t):
        a = t.numpy().astype(np.float32)
        w.add_tensor(name, a)
        p[key] = torch.from_numpy(a)

    def quant(key, name, t, qtype):
        blocks, back = quantized(rng, t.numpy().astype(np.float32), qtype)
        w.add_tensor(name, blocks, raw_dtype=qtype)
        p[key] = torch.from_numpy(back)

    plain("embed", "token_embd.weight", lf.draw(gen, V, C))
    for l in range(L):
        gain = lambda n: 1.0 + lf.draw(gen, n, scale=0.1)
        types = QTYPES if l == 0 else QTYPES_1
        plain((l, "norm1"), "blk.%d.attn_norm.weight" % l, gain(C))
        for key, gname, rows in (("q", "attn_q", H * hd), ("k", "attn_k", KV * hd), ("v", "attn_v", KV * hd)):
            quant((l, key), "blk.%d.%s.weight" % (l, gname), lf.draw(gen, rows, C, scale=0.05), types[gname])
        quant((l, "o"), "blk.%d.attn_output.weight" % l, lf.draw(gen, C, H * hd, scale=0.05), types["attn_output"])
        # (QK-norm's scales near 1/2: scores of a few units, where float32's rounding of two
        # sums of 32 products in different orders stays well under 1e-5)
        plain((l, "q_norm"), "blk.%d.attn_q_norm.weight" % l, 0.5 * gain(hd))
        plain((l, "k_norm"), "blk.%d.attn_k_norm.weight" % l, 0.5 * gain(hd))
        plain((l, "norm2"), "blk.%d.ffn_norm.weight" % l, gain(C))
        for key, gname, shape in (("gate", "ffn_gate", (Fw, C)), ("up", "ffn_up", (Fw, C)),
                                  ("down", "ffn_down", (C, Fw))):
            quant((l, key), "blk.%d.%s.weight" % (l, gname), lf.draw(gen, *shape, scale=0.05), types[gname])
    plain("norm", "output_norm.weight", 1.0 + lf.draw(gen, C, scale=0.1))
    p["head"] = p["embed"]
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    ids = [i % V for i in lf.IDS]
    out = lf.forward(c, p, ids, (True, True, 1.0, []))
    lines = ["ids %d %s" % (len(ids), " ".join(map(str, ids))),
             "freq %d %s" % (hd // 2, lf.numbers(out["freq"]))]
    lines += lf.lines_of(c, out, True)
    causal, scaled, temperature, ablated = c["knobs"]
    lines.append("knobs %d %d %.9g %s" % (causal, scaled, temperature,
                                          ",".join("%d.%d" % a for a in ablated)))
    lines += lf.lines_of(c, lf.forward(c, p, ids, c["knobs"]), False)
    with open(os.path.join(dst, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", dst)


def byte_chars():
    """GPT-2's byte-to-character table (its encoder.py's bytes_to_unicode, restated)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, n = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + n)
            n += 1
    return [chars[b] for b in range(256)]


def with_tokenizer():
    """A tiny Qwen3 that carries a byte-level tokenizer (qwen2's pre-tokenizer), as llama.cpp's
    files do, its matrices in Q8_0: what --model FILE.gguf opens whole."""
    merges = ["\u0120 t", "h e", "\u0120t he", "\u0120 c", "a t", "\u0120c at", "\u0120 s",
              "\u0120s at", "o n", "\u0120 on", "\u0120 m", "\u0120m at"]
    tokens = byte_chars() + [m.replace(" ", "") for m in merges] + ["<|endoftext|>"]
    types = [gguf.TokenType.NORMAL] * (len(tokens) - 1) + [gguf.TokenType.CONTROL]
    L, H, KV, C, Fw, V, hd = 2, 2, 1, 32, 64, len(tokens), 16
    gen = torch.Generator().manual_seed(40)
    dst = os.path.join(ROOT, "qwen3-tok-gguf")
    os.makedirs(dst, exist_ok=True)
    w = gguf.GGUFWriter(os.path.join(dst, "model.gguf"), "qwen3")
    metadata(w, "qwen3", {"num_hidden_layers": L, "max_position_embeddings": 64, "hidden_size": C,
                          "intermediate_size": Fw, "num_attention_heads": H,
                          "num_key_value_heads": KV, "rope_theta": 1000000.0,
                          "rms_norm_eps": 1e-6}, hd)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_eos_token_id(V - 1)
    w.add_add_bos_token(False)

    def q8(name, *shape):
        a = lf.draw(gen, *shape).numpy().astype(np.float32)
        w.add_tensor(name, quantize(a, Q.Q8_0), raw_dtype=Q.Q8_0)

    w.add_tensor("token_embd.weight", lf.draw(gen, V, C).numpy())
    for l in range(L):
        w.add_tensor("blk.%d.attn_norm.weight" % l, (1.0 + lf.draw(gen, C, scale=0.1)).numpy())
        q8("blk.%d.attn_q.weight" % l, H * hd, C)
        q8("blk.%d.attn_k.weight" % l, KV * hd, C)
        q8("blk.%d.attn_v.weight" % l, KV * hd, C)
        q8("blk.%d.attn_output.weight" % l, C, H * hd)
        w.add_tensor("blk.%d.attn_q_norm.weight" % l, (1.0 + lf.draw(gen, hd, scale=0.1)).numpy())
        w.add_tensor("blk.%d.attn_k_norm.weight" % l, (1.0 + lf.draw(gen, hd, scale=0.1)).numpy())
        w.add_tensor("blk.%d.ffn_norm.weight" % l, (1.0 + lf.draw(gen, C, scale=0.1)).numpy())
        q8("blk.%d.ffn_gate.weight" % l, Fw, C)
        q8("blk.%d.ffn_up.weight" % l, Fw, C)
        q8("blk.%d.ffn_down.weight" % l, C, Fw)
    w.add_tensor("output_norm.weight", (1.0 + lf.draw(gen, C, scale=0.1)).numpy())
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print("wrote", dst)


GPT2_NAMES = {"ln_1": "attn_norm", "attn.c_attn": "attn_qkv", "attn.c_proj": "attn_output",
              "ln_2": "ffn_norm", "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}


def gpt2():
    """tests/fixtures/formats/hf (a GPT-2 in safetensors) as GPT2Model converts it: the Conv1D
    matrices transposed to (out, in), the head tied (left out); its expected.txt is the formats'."""
    src = os.path.join("tests", "fixtures", "formats", "hf")
    dst = os.path.join("tests", "fixtures", "formats", "gguf")
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    tensors = read_safetensors(os.path.join(src, "model.safetensors"))
    os.makedirs(dst, exist_ok=True)
    w = gguf.GGUFWriter(os.path.join(dst, "model.gguf"), "gpt2")
    w.add_uint32("gpt2.block_count", cfg["n_layer"])
    w.add_uint32("gpt2.context_length", cfg["n_positions"])
    w.add_uint32("gpt2.embedding_length", cfg["n_embd"])
    w.add_uint32("gpt2.feed_forward_length", 4 * cfg["n_embd"])
    w.add_uint32("gpt2.attention.head_count", cfg["n_head"])
    w.add_float32("gpt2.attention.layer_norm_epsilon", cfg["layer_norm_epsilon"])
    for name, t in tensors.items():
        name = name[len("transformer."):] if name.startswith("transformer.") else name
        if name in ("wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias"):
            gname = {"wte.weight": "token_embd.weight", "wpe.weight": "position_embd.weight",
                     "ln_f.weight": "output_norm.weight", "ln_f.bias": "output_norm.bias"}[name]
        elif name.startswith("h.") and not name.endswith((".attn.bias", ".attn.masked_bias")):
            parts = name.split(".")
            part, kind = ".".join(parts[2:-1]), parts[-1]
            gname = "blk.%s.%s.%s" % (parts[1], GPT2_NAMES[part], kind)
            if kind == "weight" and part in ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"):
                t = t.T
        else:
            continue
        w.add_tensor(gname, np.ascontiguousarray(t, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print("wrote", dst)


def minillama_header(w, cfg, tj):
    """minillama's metadata and its tokenizer (tj: its tokenizer.json) into writer w, as
    llama.cpp's converter writes a byte-level BPE with Qwen's pre-tokenizer."""
    metadata(w, "llama", cfg, cfg["head_dim"])
    vocab = dict(tj["model"]["vocab"])
    added = {a["id"]: a for a in tj["added_tokens"]}
    for i, a in added.items():
        vocab[a["content"]] = i
    rev = {i: t for t, i in vocab.items()}
    V = cfg["vocab_size"]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list([rev[i] for i in range(V)])
    w.add_token_types([gguf.TokenType.CONTROL if i in added else gguf.TokenType.NORMAL
                       for i in range(V)])
    w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]])
    w.add_bos_token_id(cfg["bos_token_id"])
    w.add_add_bos_token(False)


def minillama_q4():
    """samples/models/minillama (a float32 safetensors folder) as llama.cpp's converter writes it
    and llama-quantize quantizes it to Q4_0 (every matrix; the norms and biases kept float32),
    its tokenizer inside (byte-level BPE, Qwen's pre-tokenizer): what lesson 18 opens."""
    src = os.path.join("samples", "models", "minillama")
    dst = os.path.join("samples", "models", "minillama-q4")
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(src, "tokenizer.json")) as f:
        tj = json.load(f)
    tensors = read_safetensors(os.path.join(src, "model.safetensors"))
    os.makedirs(dst, exist_ok=True)
    w = gguf.GGUFWriter(os.path.join(dst, "model.gguf"), "llama")
    minillama_header(w, cfg, tj)
    for hf, t in tensors.items():
        if hf.endswith(("q_proj.weight", "q_proj.bias")):
            t = permute(t, cfg["num_attention_heads"])
        if hf.endswith(("k_proj.weight", "k_proj.bias")):
            t = permute(t, cfg["num_key_value_heads"])
        t = np.ascontiguousarray(t, dtype=np.float32)
        if t.ndim == 2:
            w.add_tensor(gguf_name(hf), quantize(t, Q.Q4_0), raw_dtype=Q.Q4_0)
        else:
            w.add_tensor(gguf_name(hf), t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print("wrote", dst)


# A mixture's names and keys in llama.cpp's conversion (conversion/qwen.py's Qwen2MoeModel,
# olmo.py's OlmoeModel, llama.py's LlamaModel for Mixtral): each layer's experts stacked into
# one 3-d tensor per projection, (experts, out, in) in PyTorch's order (ggml's ne reversed),
# the router ffn_gate_inp; Mixtral written as the llama architecture with expert_count.
MOE = {"qwen3_moe": ("qwen3moe", "mlp"), "olmoe": ("olmoe", "mlp"),
       "mixtral": ("llama", "block_sparse_moe")}


def moe(name):
    src = os.path.join(ROOT, name)
    dst = os.path.join(ROOT, (name[:-len("-sparse")] if name.endswith("-sparse") else name) + "-gguf")
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    arch, block = MOE[cfg["model_type"]]
    E = cfg.get("num_experts", cfg.get("num_local_experts"))
    FE = cfg.get("moe_intermediate_size", cfg["intermediate_size"])
    hd = cfg.get("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    tensors = read_safetensors(os.path.join(src, "model.safetensors"))
    os.makedirs(dst, exist_ok=True)
    w = gguf.GGUFWriter(os.path.join(dst, "model.gguf"), arch)
    metadata(w, arch, cfg, hd)
    w.add_uint32(arch + ".expert_count", E)
    w.add_uint32(arch + ".expert_used_count", cfg["num_experts_per_tok"])
    if arch == "qwen3moe":
        w.add_uint32(arch + ".expert_feed_forward_length", FE)
    names = ("w1", "w3", "w2") if block == "block_sparse_moe" else ("gate_proj", "up_proj", "down_proj")
    for l in range(cfg["num_hidden_layers"]):
        pre = "model.layers.%d.%s." % (l, block)
        w.add_tensor("blk.%d.ffn_gate_inp.weight" % l, tensors.pop(pre + "gate.weight"))
        for gname, hname in zip(("ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"), names):
            stack = np.stack([tensors.pop(pre + "experts.%d.%s.weight" % (e, hname)) for e in range(E)])
            w.add_tensor("blk.%d.%s.weight" % (l, gname), stack.astype(np.float32))
    for hf, t in tensors.items():
        if arch == "llama" and hf.endswith("q_proj.weight"):
            t = permute(t, cfg["num_attention_heads"])
        if arch == "llama" and hf.endswith("k_proj.weight"):
            t = permute(t, cfg["num_key_value_heads"])
        w.add_tensor(gguf_name(hf), t.astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    shutil.copy(os.path.join(src, "expected.txt"), os.path.join(dst, "expected.txt"))
    print("wrote", dst)


def gpt_oss():
    """tests/oracle/gptoss_fixtures.py's gpt-oss-mxfp4 as llama.cpp's converter writes a gpt-oss
    (its GptOssModel): the experts' gate and up apart (gate_up_proj's even rows the gate, odd the
    up, their biases likewise), each MXFP4 block's nibbles put in ggml's order (value j in byte
    j's low nibble, j + 16 in its high one; Hugging Face's keeps 2j low and 2j + 1 high), the
    sinks as attn_sinks, the router as ffn_gate_inp, the norm before the experts
    post_attention_norm, the window and YaRN in the metadata.  Every expert's blocks are checked
    here to dequantize (gguf-py's MXFP4) to the very values the Hugging Face fixture's forward
    used, so expected.txt is copied."""
    src = os.path.join(ROOT, "gpt-oss-mxfp4")
    dst = os.path.join(ROOT, "gpt-oss-gguf")
    arch = "gpt-oss"
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    E, FE, C = cfg["num_local_experts"], cfg["intermediate_size"], cfg["hidden_size"]
    hd = cfg["head_dim"]
    t = read_safetensors(os.path.join(src, "model.safetensors"))
    os.makedirs(dst, exist_ok=True)
    w = gguf.GGUFWriter(os.path.join(dst, "model.gguf"), arch)
    metadata(w, arch, cfg, hd)
    w.add_uint32(arch + ".expert_count", E)
    w.add_uint32(arch + ".expert_used_count", cfg["num_experts_per_tok"])
    w.add_uint32(arch + ".expert_feed_forward_length", FE)
    w.add_uint32(arch + ".attention.sliding_window", cfg["sliding_window"])
    w.add_string(arch + ".rope.scaling.type", "yarn")
    w.add_float32(arch + ".rope.scaling.factor", cfg["rope_scaling"]["factor"])
    w.add_uint32(arch + ".rope.scaling.original_context_length",
                 cfg["rope_scaling"]["original_max_position_embeddings"])
    lut = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], np.float32)

    def ggml_blocks(blocks, scales):
        """(E, out, G, 16) + (E, out, G) in Hugging Face's order -> (E, out, G * 17) ggml bytes,
        checked against the values transformers' conversion gives."""
        lo, hi = blocks & 0x0F, blocks >> 4
        codes = np.stack((lo, hi), axis=-1).reshape(blocks.shape[:-1] + (32,))
        qs = (codes[..., :16] | (codes[..., 16:] << 4)).astype(np.uint8)
        out = np.concatenate((scales[..., None], qs), axis=-1)
        want = np.ldexp(lut[codes], scales[..., None].astype(np.int32) - 127)
        got = dequantize(out.reshape(-1, 17), Q.MXFP4).reshape(want.shape)
        assert np.array_equal(got, want), "MXFP4 blocks differ from their values"
        return out.reshape(blocks.shape[0], blocks.shape[1], -1)

    for l in range(cfg["num_hidden_layers"]):
        pre = "model.layers.%d." % l
        ex = pre + "mlp.experts."
        G = C // 32
        gu = ggml_blocks(t.pop(ex + "gate_up_proj_blocks").reshape(E, 2 * FE, G, 16),
                         t.pop(ex + "gate_up_proj_scales").reshape(E, 2 * FE, G))
        gub = t.pop(ex + "gate_up_proj_bias")
        for name, rows, bias in (("ffn_gate_exps", gu[:, 0::2], gub[:, 0::2]),
                                 ("ffn_up_exps", gu[:, 1::2], gub[:, 1::2])):
            w.add_tensor("blk.%d.%s.weight" % (l, name), np.ascontiguousarray(rows),
                         raw_dtype=Q.MXFP4)
            w.add_tensor("blk.%d.%s.bias" % (l, name), np.ascontiguousarray(bias))
        down = ggml_blocks(t.pop(ex + "down_proj_blocks").reshape(E, C, FE // 32, 16),
                           t.pop(ex + "down_proj_scales").reshape(E, C, FE // 32))
        w.add_tensor("blk.%d.ffn_down_exps.weight" % l, down, raw_dtype=Q.MXFP4)
        w.add_tensor("blk.%d.ffn_down_exps.bias" % l, t.pop(ex + "down_proj_bias"))
        w.add_tensor("blk.%d.ffn_gate_inp.weight" % l, t.pop(pre + "mlp.router.weight"))
        w.add_tensor("blk.%d.ffn_gate_inp.bias" % l, t.pop(pre + "mlp.router.bias"))
        w.add_tensor("blk.%d.attn_sinks.weight" % l, t.pop(pre + "self_attn.sinks"))
        w.add_tensor("blk.%d.post_attention_norm.weight" % l,
                     t.pop(pre + "post_attention_layernorm.weight"))
    for hf, a in t.items():
        w.add_tensor(gguf_name(hf), a.astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    shutil.copy(os.path.join(src, "expected.txt"), os.path.join(dst, "expected.txt"))
    print("wrote", dst)


# Qwen3.5's names (conversion/qwen.py's Qwen3_5TextModel, gguf-py's tensor_mapping for QWEN35).
QWEN35_NAMES = dict(NAMES, post_attention_layernorm="post_attention_norm",
                    **{"linear_attn.in_proj_qkv": "attn_qkv", "linear_attn.in_proj_z": "attn_gate",
                       "linear_attn.in_proj_b": "ssm_beta", "linear_attn.in_proj_a": "ssm_alpha",
                       "linear_attn.conv1d": "ssm_conv1d", "linear_attn.norm": "ssm_norm",
                       "linear_attn.out_proj": "ssm_out"})
# Qwen3.5-MoE's mixture (Qwen2MoeModel's names; the shared expert's gate kept (1, width) in
# float32, as base.py's prepare_tensors keeps FFN_GATE_INP_SHEXP).
QWEN35_NAMES.update({"mlp.gate": "ffn_gate_inp", "mlp.shared_expert.gate_proj": "ffn_gate_shexp",
                     "mlp.shared_expert.up_proj": "ffn_up_shexp",
                     "mlp.shared_expert.down_proj": "ffn_down_shexp",
                     "mlp.shared_expert_gate": "ffn_gate_inp_shexp"})
# The multi-token head's own tensors (_QwenMtpMixin.filter_tensors' remapper).
QWEN35_MTP = {"fc": "nextn.eh_proj", "pre_fc_norm_embedding": "nextn.enorm",
              "pre_fc_norm_hidden": "nextn.hnorm", "norm": "nextn.shared_head_norm"}


def tiled(t, dim, kh, per, width):
    """Value heads from grouped by key head (Hugging Face's) to tiled (llama.cpp's), along dim:
    _LinearAttentionVReorderBase._reorder_v_heads, restated."""
    shape = list(t.shape)
    dim = dim % len(shape)
    t = t.reshape(shape[:dim] + [kh, per, width] + shape[dim + 1:])
    return np.ascontiguousarray(np.swapaxes(t, dim, dim + 1)).reshape(shape)


def tiled_part(part, t, kh, per, dk, dv):
    """A linear_attn tensor (part: in_proj_qkv, conv1d, ...) with its value heads tiled: the
    v rows of in_proj_qkv and of the convolution, in_proj_z's rows, one row a head of
    in_proj_b, in_proj_a, A_log and dt_bias, and out_proj's columns; the norm as it is."""
    if part in ("in_proj_qkv", "conv1d"):
        return np.concatenate([t[:2 * kh * dk], tiled(t[2 * kh * dk:], 0, kh, per, dv)])
    if part == "in_proj_z":
        return tiled(t, 0, kh, per, dv)
    if part in ("in_proj_b", "in_proj_a", "A_log", "dt_bias"):
        return tiled(t, 0, kh, per, 1)
    if part == "out_proj":
        return tiled(t, 1, kh, per, dv)
    return t


def tiled_line(values, shape, axis, kh, per, width):
    """An expected.txt line's numbers (of shape) with its value-head axis tiled."""
    return tiled(np.array(values, dtype=np.float64).reshape(shape), axis, kh, per, width).ravel()


def experts_stacked(w, layer, kind, t):
    """transformers' stacked experts (mlp.experts.gate_up_proj, .down_proj) as Qwen2MoeModel's
    modify_tensors writes them: gate_up split on its rows into ffn_gate_exps and ffn_up_exps."""
    if kind == "gate_up_proj":
        half = t.shape[1] // 2
        w.add_tensor("blk.%d.ffn_gate_exps.weight" % layer, np.ascontiguousarray(t[:, :half]))
        w.add_tensor("blk.%d.ffn_up_exps.weight" % layer, np.ascontiguousarray(t[:, half:]))
    else:
        w.add_tensor("blk.%d.ffn_down_exps.weight" % layer, t)


def qwen35(name="qwen35-gqa", out="qwen35-gguf", with_mtp=True):
    """A Qwen3.5 as llama.cpp's converter writes one (conversion/qwen.py: Qwen3NextModel,
    _LinearAttentionVReorderBase, _Qwen35MRopeMixin, _QwenMtpMixin, restated): every norm but
    the gated one stored with its 1 added (in float32, as the forward adds it); A_log stored as
    -exp(A_log) (ssm_a), dt_bias as ssm_dt.bias, the convolution squeezed to (channels, taps);
    the value heads tiled across the key heads where Hugging Face groups them (the v rows of
    in_proj_qkv and of the convolution, in_proj_z, in_proj_b, in_proj_a, A_log, dt_bias, and
    out_proj's columns); the MTP layer as layer L (blk.L.*, its own as blk.L.nextn.*), counted
    in block_count and named by nextn_predict_layers; layer_types as recurrent_layers (one
    bool a layer, the MTP layer's false); the rotated columns as rope.dimension_count."""
    src, dst = os.path.join(ROOT, name), os.path.join(ROOT, out)
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    cfg = cfg.get("text_config", cfg)
    L, hd = cfg["num_hidden_layers"], cfg["head_dim"]
    kh, vh = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
    dk, dv, per = cfg["linear_key_head_dim"], cfg["linear_value_head_dim"], vh // kh
    rope = dict(cfg["rope_parameters"])
    rope.setdefault("mrope_section", [11, 11, 10])  # (_Qwen35MRopeMixin's default)
    tensors = read_safetensors(os.path.join(src, "model.safetensors"))
    mtp = 1 + max([int(n.split(".")[2]) for n in tensors if n.startswith("mtp.layers.")] or [-1])
    if not with_mtp:  # (a fixture whose MTP tensors are stubs, not a layer llama.cpp could load)
        tensors = {n: t for n, t in tensors.items() if not n.startswith("mtp.")}
        mtp = 0
    os.makedirs(dst, exist_ok=True)
    arch = "qwen35moe" if "num_experts" in cfg else "qwen35"
    w = gguf.GGUFWriter(os.path.join(dst, "model.gguf"), arch)
    if arch == "qwen35moe":
        # (no intermediate_size in its config: no feed_forward_length, as TextModel writes none)
        w.add_expert_count(cfg["num_experts"])
        w.add_expert_used_count(cfg["num_experts_per_tok"])
        w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
        w.add_expert_shared_feed_forward_length(cfg["shared_expert_intermediate_size"])
    metadata(w, arch, dict(cfg, num_hidden_layers=L + mtp, rope_theta=rope["rope_theta"]), hd,
             int(hd * rope["partial_rotary_factor"]))
    w.add_rope_dimension_sections((rope["mrope_section"] + [0, 0, 0, 0])[:4])
    w.add_ssm_conv_kernel(cfg["linear_conv_kernel_dim"])
    w.add_ssm_state_size(dk)
    w.add_ssm_group_count(kh)
    w.add_ssm_time_step_rank(vh)
    w.add_ssm_inner_size(dv * vh)
    if "layer_types" in cfg:
        w.add_recurrent_layers([t == "linear_attention" for t in cfg["layer_types"]] + [False] * mtp)
    w.add_full_attention_interval(cfg.get("full_attention_interval", 4))
    if mtp > 0:
        w.add_nextn_predict_layers(mtp)
    for hf, t in tensors.items():
        t = t.astype(np.float32)
        parts = hf.split(".")
        if hf.startswith("model.visual."):  # (the vision tower goes to its own mmproj file)
            continue
        if hf.startswith("mtp.") and parts[1] == "layers":
            hf = "model.layers.%d.%s" % (L + int(parts[2]), ".".join(parts[3:]))
        elif hf.startswith("mtp."):
            w.add_tensor("blk.%d.%s.weight" % (L, QWEN35_MTP[parts[1]]), t + np.float32(1.0))
            continue
        hf = hf.replace("model.language_model.", "model.")
        if hf in ("model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"):
            w.add_tensor(gguf_name(hf), t + np.float32(1.0) if hf == "model.norm.weight" else t)
            continue
        parts = hf.split(".")
        layer, rest, kind = int(parts[2]), ".".join(parts[3:-1]), parts[-1]
        if rest == "mlp.experts":
            experts_stacked(w, layer, kind, t)
            continue
        if rest.startswith("linear_attn") and per > 1:
            t = tiled_part(parts[4], t, kh, per, dk, dv)
        if rest == "linear_attn" and kind == "A_log":
            w.add_tensor("blk.%d.ssm_a" % layer, -np.exp(t.astype(np.float32)))
            continue
        if rest == "linear_attn" and kind == "dt_bias":
            w.add_tensor("blk.%d.ssm_dt.bias" % layer, t)
            continue
        if rest == "linear_attn.conv1d":
            t = t.reshape(t.shape[0], t.shape[-1])
        if kind == "weight" and rest.endswith("norm") and rest != "linear_attn.norm":
            t = t + np.float32(1.0)
        w.add_tensor("blk.%d.%s.%s" % (layer, QWEN35_NAMES[rest], kind), t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    # Its numbers are the Hugging Face fixture's, each value head's moved to where the file
    # keeps it (mixed and conv: their v columns; z, out, normed: (n, heads, dv); beta, decay:
    # (n, heads); effective: (heads, n, n)).
    D, Kq, lines = 2 * kh * dk + vh * dv, 2 * kh * dk, []
    with open(os.path.join(src, "expected.txt")) as f:
        for line in f:
            words = line.split()
            if words[0] in ("gdn_mixed", "gdn_conv", "gdn_z", "gdn_out", "gdn_normed", "gdn_beta",
                            "gdn_decay", "effective") and per > 1:
                count, values = int(words[2]), [float(x) for x in words[3:]]
                if words[0] in ("gdn_mixed", "gdn_conv"):
                    rows = np.array(values).reshape(count // D, D)
                    rows = np.concatenate([rows[:, :Kq], tiled(rows[:, Kq:], 1, kh, per, dv)], 1)
                    values = rows.ravel()
                elif words[0] in ("gdn_z", "gdn_out", "gdn_normed"):
                    values = tiled_line(values, (count // (vh * dv), vh * dv), 1, kh, per, dv)
                elif words[0] in ("gdn_beta", "gdn_decay"):
                    values = tiled_line(values, (count // vh, vh), 1, kh, per, 1)
                else:
                    values = tiled_line(values, (vh, count // vh), 0, kh, per, 1)
                line = "%s %s %d %s\n" % (words[0], words[1], count, lf.numbers(torch.tensor(values)))
            lines.append(line)
    with open(os.path.join(dst, "expected.txt"), "w") as f:
        f.writelines(lines)
    print("wrote", dst)


def qwen3next(name="qwen3-next-moe", out="qwen3next-gguf", legacy=False):
    """A Qwen3-Next as llama.cpp's converter writes one (conversion/qwen.py: Qwen3NextModel
    over Qwen2MoeModel, restated): in_proj_qkvz taken apart per key head into attn_qkv (every
    q, every k, then the value heads' v, grouped by key head as Hugging Face groups them: no
    tiling, which only the Qwen3.5 converters do) and attn_gate (the z rows); in_proj_ba kept
    as it is, ssm_ba (each key head's value heads' b, then their a); A_log as -exp(A_log)
    (ssm_a), dt_bias as ssm_dt.bias, the convolution squeezed; every norm but the gated one
    with its 1 added; the experts stacked (ffn_*_exps), the shared expert's tensors *_shexp;
    the kinds from full_attention_interval (no layer_types in its config); the rotated columns
    as rope.dimension_count.  Its numbers are the Hugging Face fixture's: copied.  legacy:
    in_proj_qkvz kept whole as ssm_in, as the converter wrote Qwen3-Next before it split it
    (llama.cpp still reads such files, src/models/qwen3next.cpp's "legacy path")."""
    src, dst = os.path.join(ROOT, name), os.path.join(ROOT, out)
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    L, hd, E = cfg["num_hidden_layers"], cfg["head_dim"], cfg["num_experts"]
    kh, vh = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
    dk, dv, per = cfg["linear_key_head_dim"], cfg["linear_value_head_dim"], vh // kh
    tensors = read_safetensors(os.path.join(src, "model.safetensors"))
    os.makedirs(dst, exist_ok=True)
    arch = "qwen3next"
    w = gguf.GGUFWriter(os.path.join(dst, "model.gguf"), arch)
    w.add_expert_count(E)
    w.add_expert_used_count(cfg["num_experts_per_tok"])
    w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
    w.add_expert_shared_feed_forward_length(cfg["shared_expert_intermediate_size"])
    metadata(w, arch, cfg, hd, int(hd * cfg["partial_rotary_factor"]))
    w.add_ssm_conv_kernel(cfg["linear_conv_kernel_dim"])
    w.add_ssm_state_size(dk)
    w.add_ssm_group_count(kh)
    w.add_ssm_time_step_rank(vh)
    w.add_ssm_inner_size(dv * vh)
    w.add_full_attention_interval(cfg.get("full_attention_interval", 4))
    G = 2 * dk + 2 * per * dv  # (one key head's rows of in_proj_qkvz: q, k, its v's, its z's)
    for l in range(L):
        pre = "model.layers.%d.mlp." % l
        for gname, hname in (("ffn_gate_exps", "gate_proj"), ("ffn_up_exps", "up_proj"),
                             ("ffn_down_exps", "down_proj")):
            stack = np.stack([tensors.pop(pre + "experts.%d.%s.weight" % (e, hname))
                              for e in range(E)])
            w.add_tensor("blk.%d.%s.weight" % (l, gname), stack.astype(np.float32))
    for hf, t in tensors.items():
        t = t.astype(np.float32)
        if hf in ("model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"):
            w.add_tensor(gguf_name(hf), t + np.float32(1.0) if hf == "model.norm.weight" else t)
            continue
        parts = hf.split(".")
        layer, rest, kind = int(parts[2]), ".".join(parts[3:-1]), parts[-1]
        blk = "blk.%d." % layer
        if rest == "linear_attn.in_proj_qkvz" and legacy:
            w.add_tensor(blk + "ssm_in.weight", t)
        elif rest == "linear_attn.in_proj_qkvz":
            g = t.reshape(kh, G, t.shape[1])
            q, k = g[:, :dk], g[:, dk:2 * dk]
            v, z = g[:, 2 * dk:2 * dk + per * dv], g[:, 2 * dk + per * dv:]
            flat = [x.reshape(-1, t.shape[1]) for x in (q, k, v, z)]
            w.add_tensor(blk + "attn_qkv.weight", np.ascontiguousarray(np.concatenate(flat[:3])))
            w.add_tensor(blk + "attn_gate.weight", np.ascontiguousarray(flat[3]))
        elif rest == "linear_attn.in_proj_ba":
            w.add_tensor(blk + "ssm_ba.weight", t)
        elif rest == "linear_attn" and kind == "A_log":
            w.add_tensor(blk + "ssm_a", -np.exp(t))
        elif rest == "linear_attn" and kind == "dt_bias":
            w.add_tensor(blk + "ssm_dt.bias", t)
        elif rest == "linear_attn.conv1d":
            w.add_tensor(blk + "ssm_conv1d.weight", t.reshape(t.shape[0], t.shape[-1]))
        else:
            if kind == "weight" and rest.endswith("norm") and rest != "linear_attn.norm":
                t = t + np.float32(1.0)
            w.add_tensor("%s%s.%s" % (blk, QWEN35_NAMES[rest], kind), t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    shutil.copy(os.path.join(src, "expected.txt"), os.path.join(dst, "expected.txt"))
    print("wrote", dst)


# Ollama's converter's renames (convert/convert_qwen3next.go's Replacements, which it uses for
# qwen3_5 too), applied as it applies them: anywhere in a name, each at most once, in order.
OLLAMA_QWEN35 = [("lm_head", "output"), ("model.embed_tokens", "token_embd"),
                 ("model.norm", "output_norm"), ("model.layers", "blk"),
                 ("input_layernorm", "attn_norm"),
                 ("post_attention_layernorm", "post_attention_norm"),
                 ("self_attn.q_proj", "attn_q"), ("self_attn.q_norm", "attn_q_norm"),
                 ("self_attn.k_proj", "attn_k"), ("self_attn.k_norm", "attn_k_norm"),
                 ("self_attn.v_proj", "attn_v"), ("self_attn.o_proj", "attn_output"),
                 ("linear_attn.in_proj_qkv", "attn_qkv"), ("linear_attn.in_proj_z", "attn_gate"),
                 ("linear_attn.in_proj_a", "ssm_alpha"), ("linear_attn.in_proj_b", "ssm_beta"),
                 ("linear_attn.conv1d", "ssm_conv1d"), ("linear_attn.dt_bias", "ssm_dt"),
                 ("linear_attn.A_log", "ssm_a"), ("linear_attn.norm", "ssm_norm"),
                 ("linear_attn.out_proj", "ssm_out"), ("mlp.down_proj", "ffn_down"),
                 ("mlp.gate_proj", "ffn_gate"), ("mlp.up_proj", "ffn_up")]


def ollama_name(hf):
    name = hf.replace("model.language_model.", "model.")
    for a, b in OLLAMA_QWEN35:
        name = name.replace(a, b, 1)
    return name


def qwen35_ollama(name="qwen35-gqa", out="qwen35-ollama"):
    """The same Qwen3.5 as Ollama's own converter writes it for its library (its
    convert_qwen3next.go, which converts qwen3_5 too, restated): block_count the model's own
    layers, attention.head_count_kv one count a layer (0 on a DeltaNet layer: the only place
    the layers' kinds are, when the config had layer_types), the rope sections three times
    (mrope_sections, rope.mrope_section, rope.dimension_sections) and mrope_interleaved,
    ssm.v_head_reordered true with the value heads tiled as llama.cpp tiles them, dt_bias as
    blk.N.ssm_dt (no .bias), ssm_a as -exp(A_log), the norms but ssm_norm with their 1 added,
    the convolution squeezed, a byte-level tokenizer of pre qwen35; the MTP head's tensors kept under
    mtp.* (renamed in place: mtp.layers.0.attn_q.weight ...) and a vision tower's under v.*,
    both in the same file.  Its expected.txt is qwen35-gguf's (the same tiling)."""
    src, dst = os.path.join(ROOT, name), os.path.join(ROOT, out)
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    cfg = cfg.get("text_config", cfg)
    L, hd = cfg["num_hidden_layers"], cfg["head_dim"]
    kh, vh = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
    dk, dv, per = cfg["linear_key_head_dim"], cfg["linear_value_head_dim"], vh // kh
    rope = cfg["rope_parameters"]
    types = cfg["layer_types"]
    tensors = read_safetensors(os.path.join(src, "model.safetensors"))
    os.makedirs(dst, exist_ok=True)
    w = gguf.GGUFWriter(os.path.join(dst, "model.gguf"), "qwen35")
    a = "qwen35."
    w.add_uint32(a + "block_count", L)
    w.add_uint32(a + "context_length", cfg["max_position_embeddings"])
    w.add_uint32(a + "embedding_length", cfg["hidden_size"])
    w.add_uint32(a + "feed_forward_length", cfg["intermediate_size"])
    w.add_uint32(a + "attention.head_count", cfg["num_attention_heads"])
    w.add_uint32(a + "attention.key_length", hd)
    w.add_uint32(a + "attention.value_length", hd)
    w.add_float32(a + "attention.layer_norm_rms_epsilon", cfg["rms_norm_eps"])
    w.add_float32(a + "rope.freq_base", rope["rope_theta"])
    w.add_uint32(a + "rope.dimension_count", int(hd * rope["partial_rotary_factor"]))
    for key in ("mrope_sections", "rope.mrope_section", "rope.dimension_sections"):
        w.add_array(a + key, rope["mrope_section"])
    w.add_bool(a + "rope.mrope_interleaved", True)
    w.add_uint32(a + "ssm.inner_size", dv * vh)
    w.add_uint32(a + "ssm.state_size", dk)
    w.add_uint32(a + "ssm.group_count", kh)
    w.add_uint32(a + "ssm.time_step_rank", vh)
    w.add_uint32(a + "ssm.conv_kernel", cfg["linear_conv_kernel_dim"])
    w.add_bool(a + "ssm.v_head_reordered", True)
    w.add_array(a + "attention.head_count_kv",
                [cfg["num_key_value_heads"] if t == "full_attention" else 0 for t in types])
    w.add_uint32("general.file_type", 0)
    # A byte-level tokenizer as Qwen3.5's (pre qwen35), bigger than this model's 36 rows: a
    # text of its first bytes' characters ("!#$%") reads ids the embedding has.
    tokens = byte_chars() + ["!#", "<|endoftext|>"]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen35")
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.NORMAL] * (len(tokens) - 1) + [gguf.TokenType.CONTROL])
    w.add_token_merges(["! #"])
    w.add_eos_token_id(len(tokens) - 1)
    for hf, t in tensors.items():
        t = t.astype(np.float32)
        gname = ollama_name(hf)
        parts = hf.replace("model.language_model.", "model.").split(".")
        if hf.startswith("model.") and len(parts) > 4 and parts[3] == "linear_attn" and per > 1:
            t = tiled_part(parts[4], t, kh, per, dk, dv)
        if gname.endswith(".ssm_a"):
            t = -np.exp(t)
        if gname.endswith(".ssm_conv1d.weight"):
            t = t.reshape(t.shape[0], t.shape[-1])
        if gname.endswith("_norm.weight") and not gname.endswith(".ssm_norm.weight"):
            t = t + np.float32(1.0)
        w.add_tensor(gname, t)
    # A vision tower's tensors beside the text model's (Ollama's v.* names), as its blobs have.
    gen = np.random.default_rng(44)
    for vname, shape in (("v.patch_embed.weight", (8, 3, 2, 4)), ("v.blk.0.attn_q.weight", (8, 8)),
                         ("v.blk.0.attn_k.weight", (8, 8)), ("v.blk.0.attn_v.weight", (8, 8)),
                         ("v.merger.mlp.0.weight", (32, 32))):
        w.add_tensor(vname, gen.standard_normal(shape).astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    shutil.copy(os.path.join(ROOT, "qwen35-gguf", "expected.txt"), os.path.join(dst, "expected.txt"))
    print("wrote", dst)


def main():
    if sys.argv[1:] == ["qwen3next"]:
        qwen3next()
        qwen3next(out="qwen3next-legacy-gguf", legacy=True)
        return
    if sys.argv[1:] == ["qwen35"]:  # (those alone; the others' files as they are)
        qwen35()
        qwen35_ollama()
        qwen35("qwen35-moe", "qwen35moe-gguf", with_mtp=False)
        qwen3next()
        return
    qwen35()
    qwen35_ollama()
    qwen35("qwen35-moe", "qwen35moe-gguf", with_mtp=False)
    qwen3next()
    qwen3next(out="qwen3next-legacy-gguf", legacy=True)
    gpt_oss()
    for name in ("qwen3", "llama-gqa", "llama3-scaled", "qwen2"):
        convert(name)
    for name in ("qwen3-moe-sparse", "olmoe", "mixtral"):
        moe(name)
    quantized_qwen3()
    with_tokenizer()
    gpt2()
    minillama_q4()
    gemma3()


if __name__ == "__main__":
    main()
