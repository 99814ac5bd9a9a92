#!/usr/bin/python3
"""Writes a GGUF of SmolLM2-135M's shape (llama, BF16 matrices, F32 norms, the head tied to
the embedding), random weights, to time llama.cpp's token generation beside attnscope's
(doc/performance.md, "Writing").  A benchmark's input, not a fixture; never run by make.

    python3 tests/bench/smollm2_gguf.py LLAMA_CPP_DIR OUT.gguf

LLAMA_CPP_DIR is a llama.cpp checkout (its gguf-py writes the file).  The vocabulary is
49,152 made-up tokens of a SentencePiece-style table: llama-bench only needs its size."""
import sys
sys.path.insert(0, sys.argv[1] + "/gguf-py")
import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

d, ff, L, H, KV, hd, V = 576, 1536, 30, 9, 3, 64, 49152
rng = np.random.default_rng(0)
w = gguf.GGUFWriter(sys.argv[2], "llama")
w.add_context_length(8192); w.add_embedding_length(d); w.add_block_count(L)
w.add_feed_forward_length(ff); w.add_head_count(H); w.add_head_count_kv(KV)
w.add_rope_freq_base(100000.0); w.add_layer_norm_rms_eps(1e-5); w.add_rope_dimension_count(hd)
w.add_vocab_size(V)
w.add_tokenizer_model("llama")
toks = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
toks += ["t%d" % i for i in range(V - len(toks))]
w.add_token_list(toks)
w.add_token_scores([0.0] * V)
w.add_token_types([2, 3, 3] + [6] * 256 + [1] * (V - 259))
w.add_bos_token_id(1); w.add_eos_token_id(2)
def mat(name, rows, cols):
    x = (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02)
    w.add_tensor(name, gguf.quants.quantize(x, Q.BF16), raw_dtype=Q.BF16)
def vec(name, n):
    w.add_tensor(name, np.ones(n, dtype=np.float32))
mat("token_embd.weight", V, d)
vec("output_norm.weight", d)
for l in range(L):
    p = "blk.%d." % l
    vec(p + "attn_norm.weight", d)
    mat(p + "attn_q.weight", H * hd, d)
    mat(p + "attn_k.weight", KV * hd, d)
    mat(p + "attn_v.weight", KV * hd, d)
    mat(p + "attn_output.weight", d, H * hd)
    vec(p + "ffn_norm.weight", d)
    mat(p + "ffn_gate.weight", ff, d)
    mat(p + "ffn_up.weight", ff, d)
    mat(p + "ffn_down.weight", d, ff)
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
