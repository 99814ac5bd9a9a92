#!/usr/bin/python3
"""Writes a GGUF of gpt-oss-20b's shape (width 2880, 64 query heads and 8 key heads of 64, a
sink per head, biases on q, k, v and o, 32 experts of 2880 a layer in MXFP4, 4 chosen, every
other layer sliding over 128 keys, YaRN over 4096 positions, the vocabulary of 201,088 and the
head untied), random weights, LAYERS of its 24 layers (default 24: about 13 GB), the rest of
its matrices in F16 as ggml-org's conversion keeps them, the real Qwen3 tokenizer inside
(gpt-oss's own, o200k, is not among the fixtures; the vocabulary padded to gpt-oss's size):
what attnscope and llama.cpp write tokens from, side by side (doc/performance.md, "gpt-oss").
The MXFP4 blocks are random bytes, each block's exponent kept where the weights are small
(2^-8 .. 2^-5 per level): any block is a weight.  A benchmark's input, not a fixture; never
run by make.

    PYTHONPATH=LLAMA_CPP/gguf-py python3 tests/bench/gptoss_gguf.py OUT.gguf [LAYERS]
"""
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_vocab import gguf_vocab  # noqa: E402

out = sys.argv[1]
L = int(sys.argv[2]) if len(sys.argv) > 2 else 24
C, H, KV, hd, E, K, FE, V = 2880, 64, 8, 64, 32, 4, 2880, 201088
rng = np.random.default_rng(0)
tokens, types, merges = gguf_vocab("qwen3", V)
a = "gpt-oss"
w = gguf.GGUFWriter(out, a)
for key, v in (("block_count", L), ("context_length", 131072), ("embedding_length", C),
               ("feed_forward_length", FE), ("attention.head_count", H),
               ("attention.head_count_kv", KV), ("attention.key_length", hd),
               ("attention.value_length", hd), ("expert_count", E), ("expert_used_count", K),
               ("expert_feed_forward_length", FE), ("attention.sliding_window", 128),
               ("rope.scaling.original_context_length", 4096)):
    w.add_uint32(a + "." + key, v)
w.add_float32(a + ".rope.freq_base", 150000.0)
w.add_float32(a + ".attention.layer_norm_rms_epsilon", 1e-5)
w.add_string(a + ".rope.scaling.type", "yarn")
w.add_float32(a + ".rope.scaling.factor", 32.0)
w.add_tokenizer_model("gpt2")
w.add_tokenizer_pre("qwen2")
w.add_token_list(tokens)
w.add_token_types(types)
w.add_token_merges(merges)
w.add_add_bos_token(False)


def tensor(name, *shape, scale=0.02):
    w.add_tensor(name, (rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float16))


def vec(name, n, scale=0.0, base=1.0):
    w.add_tensor(name, (base + rng.standard_normal(n, dtype=np.float32) * scale).astype(np.float32))


def mxfp4(name, experts, rows, cols):
    blocks = rng.integers(0, 256, size=(experts, rows, cols // 32 * 17), dtype=np.uint8)
    blocks[:, :, 0::17] = rng.integers(120, 124, size=(experts, rows, cols // 32), dtype=np.uint8)
    w.add_tensor(name, blocks, raw_dtype=Q.MXFP4)


tensor("token_embd.weight", V, C)
tensor("output.weight", V, C)
vec("output_norm.weight", C)
for l in range(L):
    p = "blk.%d." % l
    vec(p + "attn_norm.weight", C)
    for n, rows, cols in (("attn_q", H * hd, C), ("attn_k", KV * hd, C), ("attn_v", KV * hd, C),
                          ("attn_output", C, H * hd)):
        tensor(p + n + ".weight", rows, cols)
        vec(p + n + ".bias", rows, 0.02, 0.0)
    vec(p + "attn_sinks.weight", H, 1.0, 0.0)
    vec(p + "post_attention_norm.weight", C)
    w.add_tensor(p + "ffn_gate_inp.weight", rng.standard_normal((E, C), dtype=np.float32) * 0.5)
    vec(p + "ffn_gate_inp.bias", E, 0.1, 0.0)
    for n, rows, cols in (("ffn_gate_exps", FE, C), ("ffn_up_exps", FE, C),
                          ("ffn_down_exps", C, FE)):
        mxfp4(p + n + ".weight", E, rows, cols)
        w.add_tensor(p + n + ".bias", rng.standard_normal((E, rows), dtype=np.float32) * 0.02)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
print("wrote", out)
