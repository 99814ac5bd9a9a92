#!/usr/bin/python3
"""Writes tests/fixtures/gguf/: quants.gguf and quants.expected (every ggml type attnscope
reads) and meta.gguf (metadata of every value type).

Run by hand from the top of the source tree (an oracle, never a build or CI step):
    PYTHONPATH=LLAMA_CPP/gguf-py /usr/bin/python3 tests/oracle/gguf_fixtures.py
where LLAMA_CPP is a checkout of llama.cpp (npm's node-llama-cpp carries one as
llama/gitRelease.bundle: git clone it).  llama.cpp's own writer (gguf-py's GGUFWriter)
writes the file; its own dequantization (gguf.quants.dequantize, the numpy restatement of
ggml-quants.c's dequantize_row_*) gives the expected values.

For each type a tensor of 2 rows x 512 values: F32, F16 and BF16 from random numbers;
the quantized types as random blocks (any block is a weight), their half-precision
scales and minimums replaced by random finite ones; MXFP4's exponent bytes kept where its
values are finite (below 252).  quants.expected holds, for each
tensor in the file's order, its values as little-endian float32 (rows first).
"""
import struct
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q
from gguf.quants import dequantize
from gguf.constants import GGML_QUANT_SIZES

rng = np.random.default_rng(38)
ROWS, COLS = 2, 512

# Where each type keeps its half-precision scale (and minimum): byte offsets in a block.
HALVES = {
    Q.Q4_0: [0], Q.Q4_1: [0, 2], Q.Q5_0: [0], Q.Q5_1: [0, 2], Q.Q8_0: [0],
    Q.Q2_K: [80, 82], Q.Q3_K: [108], Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208],
}


def random_blocks(qtype):
    per, size = GGML_QUANT_SIZES[qtype]
    blocks = rng.integers(0, 256, size=(ROWS * COLS // per, size), dtype=np.uint8)
    for off in HALVES[qtype]:
        halves = (rng.standard_normal(blocks.shape[0]) * 0.05).astype(np.float16)
        blocks[:, off:off + 2] = halves.view(np.uint8).reshape(-1, 2)
    return blocks.reshape(ROWS, -1)


def meta(out):
    """Every metadata value type gguf-py writes, arrays of numbers and strings, two tensors."""
    w = gguf.GGUFWriter(f"{out}/meta.gguf", "qwen3")
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -100)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("t.u32", 4000000000)
    w.add_int32("t.i32", -2000000000)
    w.add_float32("t.f32", 0.1)
    w.add_bool("t.bool", True)
    w.add_string("t.string", "naïve — 日本語")
    w.add_uint64("t.u64", 2 ** 63 + 5)
    w.add_int64("t.i64", -(2 ** 62))
    w.add_float64("t.f64", 0.1)
    w.add_array("t.strings", ["a", "", "Ġthe", "<|endoftext|>"])
    w.add_array("t.ints", [1, -2, 3])
    w.add_array("t.floats", [0.5, -1.25])
    w.add_custom_alignment(64)
    w.add_tensor("a", np.arange(64, dtype=np.float32).reshape(2, 32))
    w.add_tensor("b", np.ones((1, 32), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/gguf"
    w = gguf.GGUFWriter(f"{out}/quants.gguf", "llama")
    expected = []
    plain = {"F32": np.float32, "F16": np.float16}
    for name, dt in plain.items():
        x = rng.standard_normal((ROWS, COLS)).astype(dt)
        w.add_tensor(name, x)
        expected.append(x.astype(np.float32))
    bf = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    bf16 = (bf.view(np.uint32) >> 16).astype(np.uint16)
    w.add_tensor("BF16", bf16.view(np.uint8).reshape(ROWS, -1), raw_dtype=Q.BF16)
    expected.append((bf16.astype(np.uint32) << 16).view(np.float32))
    for qtype in HALVES:
        blocks = random_blocks(qtype)
        w.add_tensor(qtype.name, blocks, raw_dtype=qtype)
        expected.append(dequantize(blocks, qtype).astype(np.float32).reshape(ROWS, COLS))
    # MXFP4 (gpt-oss's): random codes, each block's E8M0 exponent byte from the whole range
    # whose values stay finite (2^(e - 128) times at most 12), its two subnormal ones included.
    per, size = GGML_QUANT_SIZES[Q.MXFP4]
    blocks = rng.integers(0, 256, size=(ROWS * COLS // per, size), dtype=np.uint8)
    blocks[:, 0] = rng.integers(0, 252, size=blocks.shape[0], dtype=np.uint8)
    blocks[:2, 0] = [0, 1]
    blocks = blocks.reshape(ROWS, -1)
    w.add_tensor(Q.MXFP4.name, blocks, raw_dtype=Q.MXFP4)
    expected.append(dequantize(blocks, Q.MXFP4).astype(np.float32).reshape(ROWS, COLS))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with open(f"{out}/quants.expected", "wb") as f:
        for e in expected:
            f.write(e.astype("<f4").tobytes())
    meta(out)


main()
