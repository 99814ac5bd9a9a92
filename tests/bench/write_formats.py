"""The benchmark's GPT-2 small in the other formats attnscope reads, for `make bench` section 7.

    /usr/bin/python3 tests/bench/write_formats.py SRC OUT

SRC is the folder `bench gpt2-folder` writes (config.json, model.safetensors
in Hugging Face's names, GPT-2's tokenizer files).  Writes the same weights
as OUT/tf/ (OpenAI's TensorFlow checkpoint, as chapter 5 downloads it: the
index by LevelDB's TableBuilder through tests/oracle/tf_index.cc, the
entries by python3-protobuf), OUT/pth/ (pytorch_model.bin by torch.save,
with config.json), each with the tokenizer files, and OUT/book/model.pth:
the state dict of the book's GPTModel after chapter 5's load_weights_into_gpt
(its names, its Linear weights transposed, separate query, key and value
layers with biases, the causal mask buffers, out_head a copy of the token
embedding), nothing beside it.  Needs Debian's
python3-torch, python3-protobuf, protobuf-compiler, libleveldb-dev and g++;
run from the top of the source tree.  A benchmark's helper, never used by
the build or by `make check`.
"""
import collections
import json
import mmap
import os
import shutil
import struct
import sys
import tempfile

import numpy
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
from format_fixtures import bundle_module, index_writer, write_bundle  # noqa: E402


def read_safetensors(path):
    with open(path, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = []
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32"
        begin, end = e["data_offsets"]
        a = numpy.frombuffer(data, dtype="<f4", count=(end - begin) // 4, offset=8 + n + begin)
        out.append((name, torch.from_numpy(a.copy()).view(*e["shape"])))
    return out


def openai_name(name, t):
    """Hugging Face's GPT-2 name as OpenAI's, its Conv1D weights (1, in, out)."""
    parts = name.split(".")
    if parts[0] == "h":
        leaf = {"weight": "g", "bias": "b"} if parts[2].startswith("ln_") else {"weight": "w", "bias": "b"}
        mid = "/".join(parts[2:-1])
        t = t.unsqueeze(0) if leaf[parts[-1]] == "w" else t
        return "model/h%s/%s/%s" % (parts[1], mid, leaf[parts[-1]]), t
    return {"wte.weight": "model/wte", "wpe.weight": "model/wpe", "ln_f.weight": "model/ln_f/g",
            "ln_f.bias": "model/ln_f/b"}[name], t


def book_state_dict(named, n_layer, n_ctx):
    """Hugging Face's GPT-2 tensors as the book's GPTModel names and shapes them."""
    hf = dict(named)
    C = hf["wte.weight"].shape[1]
    out = collections.OrderedDict()
    out["tok_emb.weight"] = hf["wte.weight"]
    out["pos_emb.weight"] = hf["wpe.weight"]
    for i in range(n_layer):
        h, b = "h.%d." % i, "trf_blocks.%d." % i
        w, bias = hf[h + "attn.c_attn.weight"], hf[h + "attn.c_attn.bias"]
        for k, role in enumerate(("W_query", "W_key", "W_value")):
            out[b + "att.%s.weight" % role] = w[:, k * C:(k + 1) * C].t().contiguous()
            out[b + "att.%s.bias" % role] = bias[k * C:(k + 1) * C].clone()
        out[b + "att.out_proj.weight"] = hf[h + "attn.c_proj.weight"].t().contiguous()
        out[b + "att.out_proj.bias"] = hf[h + "attn.c_proj.bias"]
        out[b + "att.mask"] = torch.triu(torch.ones(n_ctx, n_ctx), diagonal=1)
        out[b + "ff.layers.0.weight"] = hf[h + "mlp.c_fc.weight"].t().contiguous()
        out[b + "ff.layers.0.bias"] = hf[h + "mlp.c_fc.bias"]
        out[b + "ff.layers.2.weight"] = hf[h + "mlp.c_proj.weight"].t().contiguous()
        out[b + "ff.layers.2.bias"] = hf[h + "mlp.c_proj.bias"]
        out[b + "norm1.scale"], out[b + "norm1.shift"] = hf[h + "ln_1.weight"], hf[h + "ln_1.bias"]
        out[b + "norm2.scale"], out[b + "norm2.shift"] = hf[h + "ln_2.weight"], hf[h + "ln_2.bias"]
    out["final_norm.scale"], out["final_norm.shift"] = hf["ln_f.weight"], hf["ln_f.bias"]
    out["out_head.weight"] = hf["wte.weight"].clone()
    return out


def main():
    src, out = sys.argv[1], sys.argv[2]
    named = read_safetensors(os.path.join(src, "model.safetensors"))
    with open(os.path.join(src, "config.json")) as f:
        config = json.load(f)
    tok = ["encoder.json", "vocab.bpe"]
    with tempfile.TemporaryDirectory() as tmp:
        pb, exe = bundle_module(tmp), index_writer(tmp)
        hparams = {"n_vocab": config["vocab_size"], "n_ctx": config["n_positions"],
                   "n_embd": config["n_embd"], "n_head": config["n_head"],
                   "n_layer": config["n_layer"]}
        write_bundle(os.path.join(out, "tf"), [openai_name(n, t) for n, t in named], hparams, pb,
                     exe, crc_by_exe=True)
    os.makedirs(os.path.join(out, "pth"), exist_ok=True)
    torch.save(collections.OrderedDict(named), os.path.join(out, "pth", "pytorch_model.bin"))
    shutil.copy(os.path.join(src, "config.json"), os.path.join(out, "pth"))
    os.makedirs(os.path.join(out, "book"), exist_ok=True)
    torch.save(book_state_dict(named, config["n_layer"], config["n_positions"]),
               os.path.join(out, "book", "model.pth"))
    for d in ("tf", "pth"):
        for f in tok:
            shutil.copy(os.path.join(src, f), os.path.join(out, d))


if __name__ == "__main__":
    main()
