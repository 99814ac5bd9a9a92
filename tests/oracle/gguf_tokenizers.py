#!/usr/bin/python3
"""Writes tests/fixtures/tokenizers/NAME.gguf.xz: the real tokenizers in GGUF, as llama.cpp's
converter writes them, for check_tokjson to compare with their tokenizer.json.

Run by hand from the top of the source tree (an oracle, never a build or CI step):
    PYTHONPATH=LLAMA_CPP/gguf-py /usr/bin/python3 tests/oracle/gguf_tokenizers.py
LLAMA_CPP is llama.cpp's source (npm's node-llama-cpp carries it as llama/gitRelease.bundle).

What convert_hf_to_gguf.py's _set_vocab_gpt2 (get_vocab_base) writes, restated: every id's
token in order (added tokens included), its type (an added special token CONTROL, another
added one USER_DEFINED, the rest NORMAL), the merges as "a b" strings, tokenizer.ggml.pre
(the name llama.cpp gives the pre-tokenizer: here set directly, llama.cpp finds it by
hashing the ids of a test text), and the BOS and whether it is added.  The files hold no
tensors; each is compressed with xz -9.
"""
import json
import lzma
import os
import subprocess

import gguf

HERE = os.path.join("tests", "fixtures", "tokenizers")
CASES = [("qwen3", "qwen2", None, False), ("llama3", "llama-bpe", 128000, True)]


def write(name, pre, bos, add_bos):
    with lzma.open(os.path.join(HERE, name + ".tokenizer.json.xz")) as f:
        tj = json.load(f)
    vocab = dict(tj["model"]["vocab"])
    added = {a["id"]: a for a in tj["added_tokens"]}
    for i, a in added.items():
        vocab[a["content"]] = i
    size = max(vocab.values()) + 1
    rev = {i: t for t, i in vocab.items()}
    tokens, types = [], []
    for i in range(size):
        if i in added:
            tokens.append(added[i]["content"])
            types.append(gguf.TokenType.CONTROL if added[i]["special"] else gguf.TokenType.USER_DEFINED)
        elif i in rev:
            tokens.append(rev[i])
            types.append(gguf.TokenType.NORMAL)
        else:
            tokens.append("[PAD%d]" % i)
            types.append(gguf.TokenType.UNUSED)
    merges = [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]
    path = os.path.join(HERE, name + ".gguf")
    w = gguf.GGUFWriter(path, "llama")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    if bos is not None:
        w.add_bos_token_id(bos)
    w.add_add_bos_token(add_bos)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    subprocess.run(["xz", "-9", "-f", path], check=True)
    print("wrote", path + ".xz")


for case in CASES:
    write(*case)
