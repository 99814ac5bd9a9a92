#!/usr/bin/python3
"""Writes a GGUF of Llama 3.1 8B's shape in llama.cpp's Q4_K_M mix (Q4_K for most matrices,
Q6_K for the values, half the MLP's down projections and the head; F32 norms), random blocks
(any block is a weight; their scales kept small), Llama 3's tokenizer inside
(tests/fixtures/tokenizers): what attnscope opens to measure a quantized 8B model's memory
(doc/performance.md, "GGUF").  A benchmark's input, not a fixture; never run by make.

    PYTHONPATH=LLAMA_CPP/gguf-py python3 tests/bench/llama8b_gguf.py OUT.gguf
"""
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q
from gguf.constants import GGML_QUANT_SIZES

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_vocab import gguf_vocab  # noqa: E402

L, C, F, H, KV, hd, V = 32, 4096, 14336, 32, 8, 128, 128256
rng = np.random.default_rng(0)
SCALE_AT = {Q.Q4_K: [0, 2], Q.Q6_K: [208]}
TOP = {Q.Q4_K: 945, Q.Q6_K: 4064}


def blocks(rows, cols, kind):
    per, size = GGML_QUANT_SIZES[kind]
    b = rng.integers(0, 256, size=(rows * cols // per, size), dtype=np.uint8)
    for off in SCALE_AT[kind]:
        h = (rng.uniform(0.2, 1.0, b.shape[0]) * 0.05 / TOP[kind]).astype(np.float16)
        b[:, off:off + 2] = h.view(np.uint8).reshape(-1, 2)
    return b.reshape(rows, -1)


tokens, types, merges = gguf_vocab("llama3", V)
w = gguf.GGUFWriter(sys.argv[1], "llama")
for key, v in (("block_count", L), ("context_length", 131072), ("embedding_length", C),
               ("feed_forward_length", F), ("attention.head_count", H),
               ("attention.head_count_kv", KV), ("rope.dimension_count", hd)):
    w.add_uint32("llama." + key, v)
w.add_float32("llama.rope.freq_base", 500000.0)
w.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5)
w.add_tokenizer_model("gpt2")
w.add_tokenizer_pre("llama-bpe")
w.add_token_list(tokens)
w.add_token_types(types)
w.add_token_merges(merges)
w.add_bos_token_id(128000)
w.add_add_bos_token(True)
w.add_tensor("token_embd.weight", blocks(V, C, Q.Q4_K), raw_dtype=Q.Q4_K)
w.add_tensor("output_norm.weight", np.ones(C, dtype=np.float32))
w.add_tensor("output.weight", blocks(V, C, Q.Q6_K), raw_dtype=Q.Q6_K)
for l in range(L):
    p = "blk.%d." % l
    w.add_tensor(p + "attn_norm.weight", np.ones(C, dtype=np.float32))
    w.add_tensor(p + "attn_q.weight", blocks(H * hd, C, Q.Q4_K), raw_dtype=Q.Q4_K)
    w.add_tensor(p + "attn_k.weight", blocks(KV * hd, C, Q.Q4_K), raw_dtype=Q.Q4_K)
    w.add_tensor(p + "attn_v.weight", blocks(KV * hd, C, Q.Q6_K), raw_dtype=Q.Q6_K)
    w.add_tensor(p + "attn_output.weight", blocks(C, H * hd, Q.Q4_K), raw_dtype=Q.Q4_K)
    w.add_tensor(p + "ffn_norm.weight", np.ones(C, dtype=np.float32))
    w.add_tensor(p + "ffn_gate.weight", blocks(F, C, Q.Q4_K), raw_dtype=Q.Q4_K)
    w.add_tensor(p + "ffn_up.weight", blocks(F, C, Q.Q4_K), raw_dtype=Q.Q4_K)
    down = Q.Q6_K if l % 2 == 0 else Q.Q4_K
    w.add_tensor(p + "ffn_down.weight", blocks(C, F, down), raw_dtype=down)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
