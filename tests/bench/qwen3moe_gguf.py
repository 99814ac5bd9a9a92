#!/usr/bin/python3
"""Writes a GGUF of Qwen3-30B-A3B's shape (width 2048, 32 query heads and 4 key heads of 128,
QK-norm, 128 experts of 768 a layer, 8 chosen, the vocabulary of 151,936 and the head untied),
random weights, LAYERS of its 48 layers (default 48: about 18.6 GB in Q4_K_M once llama.cpp's
llama-quantize has turned the F16 file), its matrices in F16 (or TYPE: Q8_0, F32 ...; Q4_K as random blocks, which gguf-py cannot
quantize to: the whole depth written at about the size of llama.cpp's Q4_K_M, no F16 file
first), the real
Qwen3 tokenizer inside: what attnscope and llama.cpp write tokens from, side by side
(doc/performance.md, "Mixtures of experts").  A benchmark's input, not a fixture; never run by
make.

    PYTHONPATH=LLAMA_CPP/gguf-py python3 tests/bench/qwen3moe_gguf.py OUT.gguf [LAYERS [TYPE]]
"""
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_vocab import gguf_vocab  # noqa: E402

out = sys.argv[1]
L = int(sys.argv[2]) if len(sys.argv) > 2 else 48
kind = Q[sys.argv[3]] if len(sys.argv) > 3 else Q.F16
C, H, KV, hd, E, K, FE, V = 2048, 32, 4, 128, 128, 8, 768, 151936
rng = np.random.default_rng(0)
tokens, types, merges = gguf_vocab("qwen3", V)
a = "qwen3moe"
w = gguf.GGUFWriter(out, a)
for key, v in (("block_count", L), ("context_length", 40960), ("embedding_length", C),
               ("feed_forward_length", 6144), ("attention.head_count", H),
               ("attention.head_count_kv", KV), ("attention.key_length", hd),
               ("attention.value_length", hd), ("expert_count", E), ("expert_used_count", K),
               ("expert_feed_forward_length", FE)):
    w.add_uint32(a + "." + key, v)
w.add_float32(a + ".rope.freq_base", 1000000.0)
w.add_float32(a + ".attention.layer_norm_rms_epsilon", 1e-6)
w.add_tokenizer_model("gpt2")
w.add_tokenizer_pre("qwen2")
w.add_token_list(tokens)
w.add_token_types(types)
w.add_token_merges(merges)
w.add_add_bos_token(False)


def tensor(name, *shape, scale=0.02, keep=None):
    k = keep if keep is not None else kind
    if k == Q.Q4_K:
        # (gguf-py cannot quantize to Q4_K: random blocks, any block being a weight, their
        # half-precision d and dmin small, as tests/oracle/gguf_fixtures.py makes them)
        per, size = gguf.constants.GGML_QUANT_SIZES[k]
        rows = int(np.prod(shape[:-1]))
        b = rng.integers(0, 256, size=(rows * shape[-1] // per, size), dtype=np.uint8)
        for off in (0, 2):
            b[:, off:off + 2] = (np.abs(rng.standard_normal(b.shape[0])) * 0.0005).astype(
                np.float16).view(np.uint8).reshape(-1, 2)
        w.add_tensor(name, b.reshape(*shape[:-1], shape[-1] // per * size), raw_dtype=k)
        return
    x = (rng.standard_normal(shape, dtype=np.float32) * scale)
    if k == Q.F32:
        w.add_tensor(name, x)
    elif k == Q.F16:
        w.add_tensor(name, x.astype(np.float16))
    else:
        w.add_tensor(name, gguf.quants.quantize(x, k), raw_dtype=k)


def vec(name, n):
    w.add_tensor(name, np.ones(n, dtype=np.float32))


tensor("token_embd.weight", V, C)
tensor("output.weight", V, C)
vec("output_norm.weight", C)
for l in range(L):
    p = "blk.%d." % l
    vec(p + "attn_norm.weight", C)
    tensor(p + "attn_q.weight", H * hd, C)
    tensor(p + "attn_k.weight", KV * hd, C)
    tensor(p + "attn_v.weight", KV * hd, C)
    tensor(p + "attn_output.weight", C, H * hd)
    vec(p + "attn_q_norm.weight", hd)
    vec(p + "attn_k_norm.weight", hd)
    vec(p + "ffn_norm.weight", C)
    tensor(p + "ffn_gate_inp.weight", E, C, scale=0.5, keep=Q.F32)
    tensor(p + "ffn_gate_exps.weight", E, FE, C)
    tensor(p + "ffn_up_exps.weight", E, FE, C)
    tensor(p + "ffn_down_exps.weight", E, C, FE)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
print("wrote", out)
