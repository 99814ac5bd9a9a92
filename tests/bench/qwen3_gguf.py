#!/usr/bin/python3
"""Writes a GGUF of Qwen3-0.6B's shape (28 layers, width 1024, 16 query heads and 8 key heads
of 128, MLP 3072, the head tied), random weights, its matrices in TYPE (Q8_0 by default, or
F32 / BF16 / Q4_0 ...), the real Qwen3 tokenizer inside (tests/fixtures/tokenizers): what
attnscope opens to measure a quantized model's opening, memory and speed
(doc/performance.md, "GGUF").  A benchmark's input, not a fixture; never run by make.

    PYTHONPATH=LLAMA_CPP/gguf-py python3 tests/bench/qwen3_gguf.py OUT.gguf [TYPE]
"""
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_vocab import gguf_vocab  # noqa: E402

out = sys.argv[1]
qtype = Q[sys.argv[2]] if len(sys.argv) > 2 else Q.Q8_0
L, C, F, H, KV, hd, V = 28, 1024, 3072, 16, 8, 128, 151936
rng = np.random.default_rng(0)
tokens, types, merges = gguf_vocab("qwen3", V)
w = gguf.GGUFWriter(out, "qwen3")
for key, v in (("block_count", L), ("context_length", 40960), ("embedding_length", C),
               ("feed_forward_length", F), ("attention.head_count", H),
               ("attention.head_count_kv", KV), ("attention.key_length", hd),
               ("attention.value_length", hd)):
    w.add_uint32("qwen3." + key, v)
w.add_float32("qwen3.rope.freq_base", 1000000.0)
w.add_float32("qwen3.attention.layer_norm_rms_epsilon", 1e-6)
w.add_tokenizer_model("gpt2")
w.add_tokenizer_pre("qwen2")
w.add_token_list(tokens)
w.add_token_types(types)
w.add_token_merges(merges)
w.add_add_bos_token(False)


def mat(name, rows, cols, kind=qtype):
    x = rng.standard_normal((rows, cols), dtype=np.float32) * 0.02
    if kind == Q.F32:
        w.add_tensor(name, x)
    else:
        w.add_tensor(name, gguf.quants.quantize(x, kind), raw_dtype=kind)


def vec(name, n):
    w.add_tensor(name, np.ones(n, dtype=np.float32))


mat("token_embd.weight", V, C)
vec("output_norm.weight", C)
for l in range(L):
    p = "blk.%d." % l
    vec(p + "attn_norm.weight", C)
    mat(p + "attn_q.weight", H * hd, C)
    mat(p + "attn_k.weight", KV * hd, C)
    mat(p + "attn_v.weight", KV * hd, C)
    mat(p + "attn_output.weight", C, H * hd)
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
