"""The GGUF fixtures' expected numbers beside an independent implementation: llama.cpp's.

llama_fixtures.py, moe_fixtures.py and window_fixtures.py restate Hugging Face's modeling files
in PyTorch, and check_architectures holds attnscope to them to 1e-5; gguf_models.py writes the
same weights as llama.cpp's converter does (tests/fixtures/decoders/*-gguf).  A misreading of a
modeling file would be in the restatement and in attnscope alike.  llama.cpp computes each
architecture on its own (src/models/llama.cpp, qwen2.cpp, qwen3.cpp, qwen3moe.cpp, gemma3.cpp,
olmoe.cpp, qwen35.cpp): this script runs it on each fixture's GGUF, through libllama
(tests/bench/llama_logits.c, float32 keys and values, no flash attention), on the fixture's own
token ids, and compares its three likeliest next tokens at every position, and their
probabilities, with the restatement's (expected.txt's first `top` line, which attnscope
matches).  The files hold no tokenizer (the tests give ids): each is copied with a plain one of
the model's vocabulary size added, which changes no number.

Run by hand from the top of the source tree (an oracle, never a build or CI step), through
`make crosscheck LLAMA_CPP=DIR`, or:

    PYTHONPATH=LLAMA_CPP/gguf-py /usr/bin/python3 tests/oracle/crosscheck_gguf.py LLAMA_CPP [NAME ...]

(NAME: the fixtures to run, of CASES below; all of them when none is named.)

LLAMA_CPP: llama.cpp's source with its build in build/ (npm's node-llama-cpp carries it).
Exits 1 when a position's likeliest tokens differ or a probability is off by more than its
file's tolerance (float32 and BF16-exact weights 1e-5; quantized weights, whose products
llama.cpp takes over activations rounded to 8 bits, 2e-3; Gemma's GELU, below).

Run 2026-12-02 (llama.cpp de3ff81, this machine's AVX-512 build): all 9 files give the
restatement's likeliest three tokens at every position; the probabilities within 1.3e-7
(Llama), 2.3e-7 (Llama 3's stretched RoPE, 80 tokens), 1.6e-7 (Qwen2), 9.8e-8 (Qwen3),
1.1e-7 (Qwen3-MoE), 1.3e-7 (OLMoE), 3.0e-7 (Mixtral), 3.3e-6 (Qwen3 in Q8_0 ... Q6_K),
3.6e-5 (Gemma 3, llama.cpp's table GELU).

Run 2026-12-03 (the same llama.cpp, its qwen35 model: src/models/qwen35.cpp): qwen35-gguf, a
Qwen3.5 of two Gated DeltaNet and two gated full-attention layers, two value heads to a key
head, gives the restatement's likeliest three tokens at all 11 positions, the probabilities
within 1.1e-6.  The same file written without the value heads tiled is 0.31 off: the check
sees the layout.

Run 2026-12-04 (the same llama.cpp, src/models/qwen35moe.cpp, this session's AVX2 build):
qwen35moe-gguf, a Qwen3.5-MoE of 4 experts (2 a token) and a shared expert, gives the
restatement's likeliest three tokens at all 11 positions, the probabilities within 0.017:
its layer 0 gives two experts the same router row on purpose (torch.topk's choice between
equal probabilities, which attnscope follows), and llama.cpp's argsort breaks that tie the
other way.  The same model with the tie undone (that row times 1.05, written and converted
the same way) agrees within 1.1e-6, so its tolerance here is the tie's, 0.02.

Run 2026-12-07 (the same llama.cpp, src/models/qwen3next.cpp, its AVX-512 build):
qwen3next-gguf, a Qwen3-Next of 4 experts (2 a token, no tie) and a shared expert, its
DeltaNet projections as the converter writes them (attn_qkv, attn_gate, ssm_ba), and
qwen3next-legacy-gguf (in_proj_qkvz whole, ssm_in: llama.cpp's legacy path) give the
restatement's likeliest three tokens at all 11 positions, the probabilities within 9.5e-7.
The same model with layer 0's tie between two experts (as qwen35-moe has) was 0.11 off.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import gguf

LLAMA_CPP = sys.argv[1]
OUT = tempfile.mkdtemp(prefix="attnscope-crosscheck-")
FIXTURES = os.path.join("tests", "fixtures", "decoders")
# (fixture, tolerance of the probabilities).  Gemma 3's: llama.cpp's CPU GELU reads a table
# of half-precision values at its input rounded to half precision (ggml-cpu/vec.h,
# GGML_GELU_FP16), about 3e-5 here; the restatement's and attnscope's GELU is tanh's in float32.
CASES = [("llama-gguf", 1e-5), ("llama3-gguf", 1e-5), ("qwen2-gguf", 1e-5), ("qwen3-gguf", 1e-5),
         ("gemma3-gguf", 2e-4), ("qwen3-moe-gguf", 1e-5), ("olmoe-gguf", 1e-5),
         ("mixtral-gguf", 1e-5), ("qwen3-q-gguf", 2e-3), ("qwen35-gguf", 1e-5),
         ("qwen35moe-gguf", 0.02), ("qwen3next-gguf", 1e-5),
         ("qwen3next-legacy-gguf", 1e-5)]


def expected(name):
    """The fixture's ids and its first `top` line: k, then n*k ids, then n*k probabilities."""
    ids, top = None, None
    with open(os.path.join(FIXTURES, name, "expected.txt")) as f:
        for line in f:
            w = line.split()
            if w[0] == "ids" and ids is None:
                ids = [int(x) for x in w[2:]]
            elif w[0] == "top" and top is None:
                k = int(w[1])
                n = len(ids)
                top = (k, [int(x) for x in w[2:2 + n * k]],
                       [float(x) for x in w[2 + n * k:2 + 2 * n * k]])
    return ids, top


def with_tokenizer(src, dst):
    """src copied to dst with a tokenizer of the model's vocabulary: tokens t0 ... that merge
    nothing (llama.cpp loads no model without one); every key and tensor as they are."""
    r = gguf.GGUFReader(src)
    arch = r.get_field("general.architecture").contents()
    vocab = int(next(t for t in r.tensors if t.name == "token_embd.weight").shape[-1])
    w = gguf.GGUFWriter(dst, arch)
    for field in r.fields.values():
        if field.name == "general.architecture" or field.name.startswith("GGUF."):
            continue
        t = field.types[0]
        w.add_key_value(field.name, field.contents(), t,
                        sub_type=field.types[-1] if t == gguf.GGUFValueType.ARRAY else None)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(["t%d" % i for i in range(vocab)])
    w.add_token_types([int(gguf.TokenType.NORMAL)] * vocab)
    w.add_token_merges(["t 1"])  # (llama.cpp loads no BPE without one; none is used)
    w.add_bos_token_id(0)
    w.add_eos_token_id(vocab - 1)
    w.add_add_bos_token(False)
    for t in r.tensors:
        w.add_tensor_info(t.name, t.data.shape, t.data.dtype, t.data.nbytes, t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for t in r.tensors:
        w.write_tensor_data(t.data)
    w.close()


def main():
    exe = os.path.join(OUT, "llama_logits")
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["cc", "-O2", "-I" + os.path.join(LLAMA_CPP, "include"),
                    "-I" + os.path.join(LLAMA_CPP, "ggml", "include"),
                    os.path.join(here, "..", "bench", "llama_logits.c"),
                    "-L" + os.path.join(LLAMA_CPP, "build", "bin"), "-lllama", "-lggml",
                    "-lggml-base", "-lm", "-Wl,-rpath," + os.path.join(LLAMA_CPP, "build", "bin"),
                    "-o", exe], check=True)
    bad = 0
    cases = [c for c in CASES if not sys.argv[2:] or c[0] in sys.argv[2:]]
    for name, tol in cases:
        ids, (k, top_ids, top_p) = expected(name)
        path = os.path.join(OUT, name + ".gguf")
        with_tokenizer(os.path.join(FIXTURES, name, "model.gguf"), path)
        got = subprocess.run([exe, path, "1", str(k), "f32"] + [str(i) for i in ids],
                             capture_output=True, text=True)
        if got.returncode != 0:
            print("%s: llama.cpp failed: %s" % (name, got.stderr.strip()))
            bad += 1
            continue
        worst, differ = 0.0, 0
        for line in got.stdout.splitlines():
            pos, rank, tid, prob = line.split()
            at = int(pos) * k + int(rank) - 1
            if int(tid) != top_ids[at]:
                # (a tie within the tolerance may swap two ranks)
                if abs(top_p[at] - float(prob)) > tol:
                    differ += 1
                    print("%s: position %s rank %s: llama.cpp's token %s (%.6f), the "
                          "restatement's %d (%.6f)" % (name, pos, rank, tid, float(prob),
                                                        top_ids[at], top_p[at]))
            worst = max(worst, abs(top_p[at] - float(prob)))
        ok = differ == 0 and worst <= tol
        bad += not ok
        print("%-15s %2d tokens: %s; the top-%d probabilities at most %.2g apart (tolerance %g)"
              % (name, len(ids), "the same likeliest tokens" if differ == 0 else
                 "%d ranks differ" % differ, k, worst, tol))
    print("%d of %d files agree with llama.cpp" % (len(cases) - bad, len(cases)))
    shutil.rmtree(OUT)  # (its build and the files it wrote: nothing left in the temporary folder)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
