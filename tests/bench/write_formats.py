"""The benchmark's GPT-2 small in the other formats attnscope reads, for `make bench` section 7.

    /usr/bin/python3 tests/bench/write_formats.py SRC OUT

SRC is the folder `bench gpt2-folder` writes (config.json, model.safetensors
in Hugging Face's names, GPT-2's tokenizer files).  Writes the same weights
as OUT/tf/ (OpenAI's TensorFlow checkpoint, as chapter 5 downloads it: the
index by LevelDB's TableBuilder through tests/oracle/tf_index.cc, the
entries by python3-protobuf) and OUT/pth/ (pytorch_model.bin by torch.save,
with config.json), each with the tokenizer files.  Needs Debian's
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
    for d in ("tf", "pth"):
        for f in tok:
            shutil.copy(os.path.join(src, f), os.path.join(out, d))


if __name__ == "__main__":
    main()
