#!/usr/bin/python3
"""Writes a GGUF of a local model's shape, random weights, its matrices in F16 (or BF16, F32),
the real tokenizer inside (tests/fixtures/tokenizers): the file llama.cpp's own llama-quantize
then turns into Q4_0, Q4_K_M, Q5_K_M, Q6_K and Q8_0, so that attnscope and llama.cpp are
measured on the same files (doc/performance.md, "Performance round four").  A benchmark's
input, not a fixture; never run by make.

    PYTHONPATH=LLAMA_CPP/gguf-py python3 tests/bench/local_gguf.py SHAPE OUT.gguf [TYPE]

SHAPE is llama3.2-1b (16 layers, width 2048, 32 query heads and 8 key heads of 64, MLP 8192,
the head tied, Llama 3's RoPE stretch as llama.cpp keeps it in rope_freqs.weight, Llama 3's
tokenizer) or qwen3-0.6b (28 layers, width 1024, 16 and 8 heads of 128, MLP 3072, QK-norm,
tied, Qwen3's tokenizer) or qwen3.5-0.8b (Qwen/Qwen3.5-0.8B's text model: 24 layers, three
Gated DeltaNet to one gated full attention, width 1024, 8 query heads and 2 key heads of 256
rotated over their first 64 columns, 16 DeltaNet key and value heads of 128, MLP 3584, a
vocabulary of 248320, tied; as llama.cpp's converter names a qwen35 and its norms with the 1
added; Qwen3's tokens, the rest of the vocabulary holes).
"""
import math
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_vocab import gguf_vocab  # noqa: E402

SHAPES = {
    # arch, layers, width, mlp, heads, kv heads, head size, vocab, context, theta, eps
    "llama3.2-1b": ("llama", 16, 2048, 8192, 32, 8, 64, 128256, 131072, 500000.0, 1e-5),
    "qwen3-0.6b": ("qwen3", 28, 1024, 3072, 16, 8, 128, 151936, 40960, 1000000.0, 1e-6),
    "qwen3.5-0.8b": ("qwen35", 24, 1024, 3584, 8, 2, 256, 248320, 262144, 10000000.0, 1e-6),
}
# Qwen3.5's DeltaNet layers: key heads, value heads, their widths, the convolution's taps.
GDN = dict(kh=16, vh=16, dk=128, dv=128, taps=4)
shape, out = sys.argv[1], sys.argv[2]
kind = Q[sys.argv[3]] if len(sys.argv) > 3 else Q.F16
arch, L, C, F, H, KV, hd, V, ctx, theta, eps = SHAPES[shape]
rng = np.random.default_rng(0)
tokens, types, merges = gguf_vocab("llama3" if arch == "llama" else "qwen3", V)
w = gguf.GGUFWriter(out, arch)
for key, v in (("block_count", L), ("context_length", ctx), ("embedding_length", C),
               ("feed_forward_length", F), ("attention.head_count", H),
               ("attention.head_count_kv", KV), ("attention.key_length", hd),
               ("attention.value_length", hd),
               ("rope.dimension_count", hd // 4 if arch == "qwen35" else hd)):
    w.add_uint32(arch + "." + key, v)
if arch == "qwen35":
    w.add_ssm_conv_kernel(GDN["taps"])
    w.add_ssm_state_size(GDN["dk"])
    w.add_ssm_group_count(GDN["kh"])
    w.add_ssm_time_step_rank(GDN["vh"])
    w.add_ssm_inner_size(GDN["vh"] * GDN["dv"])
    w.add_full_attention_interval(4)
    w.add_rope_dimension_sections([11, 11, 10, 0])
w.add_float32(arch + ".rope.freq_base", theta)
w.add_float32(arch + ".attention.layer_norm_rms_epsilon", eps)
w.add_file_type({Q.F16: 1, Q.BF16: 32, Q.F32: 0}[kind])
w.add_tokenizer_model("gpt2")
w.add_tokenizer_pre("llama-bpe" if arch == "llama" else "qwen2")
w.add_token_list(tokens)
w.add_token_types(types)
w.add_token_merges(merges)
if arch == "llama":
    w.add_bos_token_id(128000)
    w.add_add_bos_token(True)
else:
    w.add_add_bos_token(False)


def mat(name, rows, cols):
    x = rng.standard_normal((rows, cols), dtype=np.float32) * 0.02
    if kind == Q.F32:
        w.add_tensor(name, x)
    elif kind == Q.F16:
        w.add_tensor(name, x.astype(np.float16))
    else:
        w.add_tensor(name, gguf.quants.quantize(x, kind), raw_dtype=kind)


def vec(name, n, value=1.0):
    w.add_tensor(name, np.full(n, value, dtype=np.float32))


def deltanet(p):
    """A Gated DeltaNet layer's tensors, as llama.cpp's qwen35 reads them."""
    kh, vh, dk, dv, taps = GDN["kh"], GDN["vh"], GDN["dk"], GDN["dv"], GDN["taps"]
    D = 2 * kh * dk + vh * dv
    mat(p + "attn_qkv.weight", D, C)
    mat(p + "attn_gate.weight", vh * dv, C)
    mat(p + "ssm_beta.weight", vh, C)
    mat(p + "ssm_alpha.weight", vh, C)
    w.add_tensor(p + "ssm_conv1d.weight", rng.standard_normal((D, taps), dtype=np.float32) * 0.5)
    vec(p + "ssm_dt.bias", vh, 0.0)
    vec(p + "ssm_a", vh, -1.0)
    vec(p + "ssm_norm.weight", dv)
    mat(p + "ssm_out.weight", C, vh * dv)


if arch == "llama":
    # Llama 3's stretch as llama.cpp's converter keeps it: a factor for each frequency
    # (factor 32, low 1, high 4, original context 8192).
    factors = []
    for i in range(hd // 2):
        wavelen = 2 * math.pi / (1.0 / theta ** (2 * i / hd))
        if wavelen < 8192 / 4:
            factors.append(1.0)
        elif wavelen > 8192 / 1:
            factors.append(32.0)
        else:
            smooth = (8192 / wavelen - 1) / (4 - 1)
            factors.append(1 / ((1 - smooth) / 32 + smooth))
    w.add_tensor("rope_freqs.weight", np.array(factors, dtype=np.float32))
mat("token_embd.weight", V, C)
vec("output_norm.weight", C)
for l in range(L):
    p = "blk.%d." % l
    vec(p + "attn_norm.weight", C)
    if arch == "qwen35":
        vec(p + "post_attention_norm.weight", C)
        if (l + 1) % 4:
            deltanet(p)
        else:  # (the query projection gives each head its gate beside its query)
            mat(p + "attn_q.weight", 2 * H * hd, C)
            mat(p + "attn_k.weight", KV * hd, C)
            mat(p + "attn_v.weight", KV * hd, C)
            mat(p + "attn_output.weight", C, H * hd)
            vec(p + "attn_q_norm.weight", hd)
            vec(p + "attn_k_norm.weight", hd)
        mat(p + "ffn_gate.weight", F, C)
        mat(p + "ffn_up.weight", F, C)
        mat(p + "ffn_down.weight", C, F)
        continue
    mat(p + "attn_q.weight", H * hd, C)
    mat(p + "attn_k.weight", KV * hd, C)
    mat(p + "attn_v.weight", KV * hd, C)
    mat(p + "attn_output.weight", C, H * hd)
    if arch == "qwen3":
        vec(p + "attn_q_norm.weight", hd)
        vec(p + "attn_k_norm.weight", hd)
    vec(p + "ffn_norm.weight", C)
    mat(p + "ffn_gate.weight", F, C)
    mat(p + "ffn_up.weight", F, C)
    mat(p + "ffn_down.weight", C, F)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
