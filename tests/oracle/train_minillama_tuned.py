"""Fine-tunes minillama on a second task: samples/models/minillama-tuned/.

attnscope's own code; Debian's python3-torch, from the top of the source tree:

    /usr/bin/python3 tests/oracle/train_minillama_tuned.py

(minutes on one core; seeded: on the same machine and torch it writes the
same files again).  It starts from the committed samples/models/minillama
(tests/oracle/train_minillama.py) and trains every weight it trained (the
MLPs stay zero: attention only) on a task of its own: random sequences of
words, then the sequence again saying every other word ("cat map sun red
fox ink owl jam cat sun fox owl").  A word of the second pass is predicted
by finding its earlier place and copying the word two after it, not the
one after it: the base model's induction copies the wrong word, and the
heads must change what they look at.  The tokenizer, the shapes and the
config are minillama's, so that `attnscope --model minillama --compare
minillama-tuned` sets the two side by side.  At the end it prints the
measures the lesson quotes (the heads' weight one and two tokens back, the
repeat's next-word probabilities before and after); lesson 21
(samples/walkthroughs/21-fine-tuned.walk) quotes them from the committed
files, and check_walkthrough checks every number it quotes.
"""
import json
import os
import random
import shutil
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_fixtures import write_safetensors  # noqa: E402
from gpt2_tiny_model import encode  # noqa: E402
from train_minigpt import WORDS, contexts, tokenizer, train, write_config  # noqa: E402
import train_minillama as base  # noqa: E402

BASE = os.path.join("samples", "models", "minillama")
OUT = os.path.join("samples", "models", "minillama-tuned")
STEPS = 3000
SEED = 7
EVAL_TEXT = "cat map sun red fox ink owl jam cat sun fox owl"


def passage(rng):
    """k random words, then every other one of them again: the second task."""
    seq = [rng.choice(WORDS) for _ in range(rng.randint(4, 12))]
    return " ".join(seq + seq[::2])


def read_safetensors(path):
    """{name: float32 tensor} of a safetensors file of F32 tensors (its header, then the data)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", name
        a, b = info["data_offsets"]
        buf = bytearray(data[8 + n + a: 8 + n + b])
        out[name] = torch.frombuffer(buf, dtype=torch.float32).reshape(info["shape"]).clone()
    return out


def load_base(model):
    """minillama's committed weights into model (the names its tensors() writes)."""
    saved = read_safetensors(os.path.join(BASE, "model.safetensors"))
    params = dict(model.named())
    assert set(params) == set(saved)
    with torch.no_grad():
        for name, t in params.items():
            t.copy_(saved[name])


def looks_back(model, ids):
    """Per layer and head, the mean weight on the token one back and two back."""
    keep = []
    with torch.no_grad():
        model(torch.tensor([ids]), keep)
    T = len(ids)
    rows = []
    for att in keep:
        a = att[0]
        one = [sum(a[h, i, i - 1].item() for i in range(1, T)) / (T - 1) for h in range(base.N_HEAD)]
        two = [sum(a[h, i, i - 2].item() for i in range(2, T)) / (T - 2) for h in range(base.N_HEAD)]
        rows.append((one, two))
    return rows


def second_pass(model, ids):
    """The probability of each second-pass word after the one before it (positions 9 .. 11)."""
    with torch.no_grad():
        probs = torch.softmax(model(torch.tensor([ids]))[0], dim=-1)
    return [probs[i, ids[i + 1]].item() for i in range(9, len(ids) - 1)]


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    rng = random.Random(SEED)
    vocab, merges = tokenizer()
    ranks = {m: r for r, m in enumerate(merges)}
    eot = vocab["<|endoftext|>"]
    eval_ids = [eot] + encode(EVAL_TEXT, vocab, ranks)

    model = base.Llama(len(vocab))
    load_base(model)
    for b in model.layers:
        b.down.requires_grad_(False)  # attention-only, as minillama
    for layer, (one, two) in enumerate(looks_back(model, eval_ids)):
        print("before: layer %d one back %s  two back %s" % (
            layer, " ".join("%.3f" % v for v in one), " ".join("%.3f" % v for v in two)))
    print("before: second pass", " ".join("%.3f" % p for p in second_pass(model, eval_ids)))
    train(model, contexts(rng, vocab, ranks, eot, base.N_CTX, passage), eval_ids, STEPS)

    os.makedirs(OUT, exist_ok=True)
    write_safetensors(os.path.join(OUT, "model.safetensors"), model.tensors())
    with open(os.path.join(BASE, "config.json")) as f:
        write_config(OUT, json.load(f))
    shutil.copyfile(os.path.join(BASE, "tokenizer.json"), os.path.join(OUT, "tokenizer.json"))
    for layer, (one, two) in enumerate(looks_back(model, eval_ids)):
        print("after: layer %d one back %s  two back %s" % (
            layer, " ".join("%.3f" % v for v in one), " ".join("%.3f" % v for v in two)))
    print("after: second pass", " ".join("%.3f" % p for p in second_pass(model, eval_ids)))
    print("wrote", OUT)


if __name__ == "__main__":
    main()
