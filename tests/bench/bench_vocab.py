"""The bench's GGUF writers' tokenizers: a tokenizer.json of tests/fixtures/tokenizers as
llama.cpp's converter lists it (every id's token, its type: 3 an added special one, 1 a
normal one, 5 a hole; the merges as "a b").  Imported by qwen3_gguf.py and llama8b_gguf.py."""
import json
import lzma


def gguf_vocab(name, size):
    with lzma.open("tests/fixtures/tokenizers/%s.tokenizer.json.xz" % name) as f:
        tj = json.load(f)
    vocab = dict(tj["model"]["vocab"])
    special = {a["id"]: a for a in tj["added_tokens"]}
    for i, a in special.items():
        vocab[a["content"]] = i
    rev = {i: t for t, i in vocab.items()}
    tokens = [special[i]["content"] if i in special else rev.get(i, "[PAD%d]" % i)
              for i in range(size)]
    types = [3 if i in special else 1 if i in rev else 5 for i in range(size)]
    merges = [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]
    return tokens, types, merges
