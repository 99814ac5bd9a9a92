#!/usr/bin/python3
"""Writes a SentencePiece-style GGUF tokenizer and the ids SentencePiece itself gives:
tests/fixtures/tokenizers/spm.gguf.xz and tests/golden/spm-ids.txt.

Run by hand from the top of the source tree (an oracle, never a build or CI step), with
Debian's python3-sentencepiece and llama.cpp's gguf-py:
    PYTHONPATH=LLAMA_CPP/gguf-py /usr/bin/python3 tests/oracle/gguf_spm.py

Llama 2, TinyLlama, Mistral and Gemma keep a SentencePiece BPE model; llama.cpp's GGUF
files carry it as tokenizer.ggml.model "llama": the pieces, their scores and types
(convert_hf_to_gguf.py's _create_vocab_sentencepiece).  No such model can be downloaded
here, so one is trained the way Llama's was set up (BPE, byte fallback, digits split, a
dummy prefix, no normalization) on attnscope's own prose (README.md, doc/guide.md) and
the tokenizer test texts, 2,000 pieces, one thread: deterministic.  SentencePiece's own
encoder gives the reference ids of each text of tests/fixtures/tokenizers/texts.json,
BOS first (add_bos_token, as llama.cpp and Llama's tokenizer add it).
"""
import io
import json
import os
import subprocess

import gguf
import sentencepiece as spm

HERE = os.path.join("tests", "fixtures", "tokenizers")
texts = json.load(open(os.path.join(HERE, "texts.json")))
corpus = []
for path in ("README.md", os.path.join("doc", "guide.md")):
    corpus += [line for line in open(path, encoding="utf-8").read().split("\n") if line.strip()]
corpus += [t.replace("\n", " ") for t in texts if t.strip()]
model = io.BytesIO()
spm.SentencePieceTrainer.train(
    sentence_iterator=iter(corpus), model_writer=model, model_type="bpe", vocab_size=2000,
    byte_fallback=True, split_digits=True, normalization_rule_name="identity",
    add_dummy_prefix=True, remove_extra_whitespaces=False, character_coverage=1.0,
    num_threads=1, unk_id=0, bos_id=1, eos_id=2, pad_id=-1, minloglevel=2)
sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
V = sp.get_piece_size()
tokens, scores, types = [], [], []
for i in range(V):
    tokens.append(sp.id_to_piece(i))
    scores.append(sp.get_score(i))
    types.append(gguf.TokenType.UNKNOWN if sp.is_unknown(i) else
                 gguf.TokenType.CONTROL if sp.is_control(i) else
                 gguf.TokenType.BYTE if sp.is_byte(i) else gguf.TokenType.NORMAL)
path = os.path.join(HERE, "spm.gguf")
w = gguf.GGUFWriter(path, "llama")
w.add_tokenizer_model("llama")
w.add_tokenizer_pre("default")
w.add_token_list(tokens)
w.add_token_scores(scores)
w.add_token_types(types)
w.add_bos_token_id(1)
w.add_eos_token_id(2)
w.add_unk_token_id(0)
w.add_add_bos_token(True)
w.add_add_space_prefix(True)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
subprocess.run(["xz", "-9", "-f", path], check=True)
with open(os.path.join("tests", "golden", "spm-ids.txt"), "w") as f:
    f.write("# tests/oracle/gguf_spm.py: SentencePiece %s's ids of each text (BOS first)\n"
            % spm.__version__)
    for k, t in enumerate(texts):
        f.write("spm %d %s\n" % (k, " ".join(str(i) for i in [1] + sp.encode(t))))
print("wrote", path + ".xz", "and tests/golden/spm-ids.txt:", V, "pieces")
