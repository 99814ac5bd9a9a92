"""attnscope's gpt-oss beside an independent implementation: llama.cpp's (src/models/openai-moe.cpp
through libllama, tests/bench/llama_logits.c), on one GGUF file both read.

gptoss_fixtures.py restates Hugging Face's modeling_gpt_oss in PyTorch, and check_architectures
holds attnscope to it; a misreading of the modeling file would be in both.  llama.cpp computes
gpt-oss on its own: the sinks in its softmax (ggml_soft_max_ext with sinks), the biased router
with its top k softmaxed (LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT), the experts' clamped
SwiGLU (ggml_swiglu_oai, alpha 1.702, limit 7), MXFP4's dequantization, every other layer
sliding (its swa pattern 2).  This script writes a small gpt-oss GGUF (2 layers, width 64, 4
query heads of 16 sharing 2 key heads, 4 experts of 32 in MXFP4, 2 chosen, a window of 4, a
byte-level tokenizer) in float32 but for the experts, without a RoPE stretch (llama.cpp's YaRN
rounds its ramp's bounds to whole dimensions always; Hugging Face's gpt-oss does not, so the two
would differ by design there), runs both on one text, and prints the largest difference of
each position's five likeliest tokens' probabilities.

Run by hand from the top of the source tree after make (an oracle, never a build or CI step):

    PYTHONPATH=LLAMA_CPP/gguf-py /usr/bin/python3 tests/oracle/crosscheck_gptoss.py LLAMA_CPP [F32]

LLAMA_CPP: llama.cpp's source with its build in build/ (npm's node-llama-cpp carries it).
F32: the experts' same blocks widened to float32 in the file (llama.cpp's quantized products
round their inputs to 8 bits, Q8_0, which a float32 file leaves out).

Run 2026-11-28: MXFP4, 14 tokens, all 70 of llama.cpp's top-5 tokens among attnscope's, the
largest difference of their probabilities 2.0e-4 (llama.cpp's inputs to the MXFP4 products
rounded to Q8_0); F32, the same 70, largest difference 6.2e-7.
"""
import csv
import os
import subprocess
import sys
import tempfile

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_models import byte_chars  # noqa: E402

LLAMA_CPP = sys.argv[1]
EXPERTS = sys.argv[2] if len(sys.argv) > 2 else "MXFP4"  # or F32: the same blocks widened
OUT = tempfile.mkdtemp(prefix="attnscope-gptoss-")
ATTNSCOPE = os.environ.get("ATTNSCOPE", "./attnscope")
# (llama.cpp rounds the MXFP4 products' inputs to Q8_0; with the experts in float32, none)
TOLERANCE = 1e-5 if EXPERTS == "F32" else 1e-3
TEXT = "the cat sat on the mat and the cat sat"
L, H, KV, hd, C, E, K, FE = 2, 4, 2, 16, 64, 4, 2, 32
rng = np.random.default_rng(5)


def write(path):
    merges = ["\u0120 t", "h e", "\u0120t he", "\u0120 c", "a t", "\u0120c at", "\u0120 s",
              "\u0120s at", "o n", "\u0120 on", "\u0120 m", "\u0120m at"]
    tokens = byte_chars() + [m.replace(" ", "") for m in merges] + ["<|endoftext|>"]
    V = len(tokens)
    a = "gpt-oss"
    w = gguf.GGUFWriter(path, a)
    for key, v in (("block_count", L), ("context_length", 128), ("embedding_length", C),
                   ("feed_forward_length", FE), ("attention.head_count", H),
                   ("attention.head_count_kv", KV), ("attention.key_length", hd),
                   ("attention.value_length", hd), ("expert_count", E),
                   ("expert_used_count", K), ("expert_feed_forward_length", FE),
                   ("attention.sliding_window", 4)):
        w.add_uint32(a + "." + key, v)
    w.add_float32(a + ".rope.freq_base", 150000.0)
    w.add_float32(a + ".attention.layer_norm_rms_epsilon", 1e-5)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.NORMAL] * (V - 1) + [gguf.TokenType.CONTROL])
    w.add_token_merges(merges)
    w.add_eos_token_id(V - 1)
    w.add_add_bos_token(False)

    def f32(name, *shape, scale=0.15, base=0.0):
        w.add_tensor(name, (base + rng.standard_normal(shape) * scale).astype(np.float32))

    def mxfp4(name, rows, cols):
        b = rng.integers(0, 256, size=(E, rows, cols // 32 * 17), dtype=np.uint8)
        b[:, :, 0::17] = rng.integers(118, 122, size=(E, rows, cols // 32), dtype=np.uint8)
        if EXPERTS == "F32":
            w.add_tensor(name, gguf.quants.dequantize(b, Q.MXFP4).astype(np.float32))
        else:
            w.add_tensor(name, b, raw_dtype=Q.MXFP4)

    f32("token_embd.weight", V, C, scale=0.3)
    f32("output.weight", V, C, scale=0.3)
    f32("output_norm.weight", C, scale=0.1, base=1.0)
    for l in range(L):
        p = "blk.%d." % l
        f32(p + "attn_norm.weight", C, scale=0.1, base=1.0)
        for n, rows, cols in (("attn_q", H * hd, C), ("attn_k", KV * hd, C),
                              ("attn_v", KV * hd, C), ("attn_output", C, H * hd)):
            f32(p + n + ".weight", rows, cols)
            f32(p + n + ".bias", rows, scale=0.1)
        f32(p + "attn_sinks.weight", H, scale=1.5)
        f32(p + "post_attention_norm.weight", C, scale=0.1, base=1.0)
        f32(p + "ffn_gate_inp.weight", E, C, scale=0.5)
        f32(p + "ffn_gate_inp.bias", E, scale=0.2)
        for n, rows, cols in (("ffn_gate_exps", FE, C), ("ffn_up_exps", FE, C),
                              ("ffn_down_exps", C, FE)):
            mxfp4(p + n + ".weight", rows, cols)
            f32(p + n + ".bias", E, rows, scale=0.1)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    path = os.path.join(OUT, "gptoss.gguf")
    write(path)
    exe = os.path.join(OUT, "llama_logits")
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["cc", "-O2", "-I" + os.path.join(LLAMA_CPP, "include"),
                    "-I" + os.path.join(LLAMA_CPP, "ggml", "include"),
                    os.path.join(here, "..", "bench", "llama_logits.c"),
                    "-L" + os.path.join(LLAMA_CPP, "build", "bin"), "-lllama", "-lggml",
                    "-lggml-base", "-lm", "-Wl,-rpath," + os.path.join(LLAMA_CPP, "build", "bin"),
                    "-o", exe], check=True)
    subprocess.run([ATTNSCOPE, "--model", path, "-s", TEXT, "--top", "5", "--export",
                    os.path.join(OUT, "ours"), "--stage", "next"], check=True,
                   capture_output=True)
    ours = {}
    ids = {}
    with open(os.path.join(OUT, "ours", "next.csv")) as f:
        for row in csv.DictReader(f):
            ours[(int(row["position"]), int(row["id"]))] = float(row["probability"])
    tokens = subprocess.run([ATTNSCOPE, "--model", path, "-s", TEXT, "--print", "--stage",
                             "tokens", "--format", "csv"], check=True, capture_output=True,
                            text=True).stdout.splitlines()
    for line in tokens[1:]:
        parts = line.split(",")
        if len(parts) >= 2 and parts[0].isdigit():
            ids[int(parts[0])] = int(parts[1])
    seq = [ids[i] for i in range(len(ids))]
    got = subprocess.run([exe, path, "1", "5", "f32"] + [str(i) for i in seq], check=True,
                         capture_output=True, text=True).stdout.split("\n")
    worst = 0.0
    seen = 0
    for line in got:
        if not line:
            continue
        pos, rank, tid, prob = line.split()
        key = (int(pos), int(tid))
        if key in ours:
            worst = max(worst, abs(ours[key] - float(prob)))
            seen += 1
        else:
            print("position %s: llama.cpp's rank %s token %s (%.6f) is not in attnscope's five"
                  % (pos, rank, tid, float(prob)))
    print("gpt-oss (%s experts): %d tokens, %d of llama.cpp's %d top-5 probabilities in "
          "attnscope's; largest difference %.3g (tolerance %g)"
          % (EXPERTS, len(seq), seen, 5 * len(seq), worst, TOLERANCE))
    sys.exit(0 if seen == 5 * len(seq) and worst <= TOLERANCE else 1)


if __name__ == "__main__":
    main()
