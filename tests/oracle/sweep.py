#!/usr/bin/python3
"""Compares attnscope with PyTorch on random configurations, live.

Run by hand from the top of a built tree (needs Debian's python3-torch):
    /usr/bin/python3 tests/oracle/sweep.py [CASES] [--big]
Each case writes a random vocabulary and sentence, runs
`./attnscope --export`, runs the same configuration through
torch_attention.run(), and compares every stage and parameter.  --big adds
GPT-2-sized cases (d 768, 12 heads, n up to 1024; context and output only).
Prints the worst difference, scaled as |a - b| / max(1, |b|); exits 1 above 1e-5.
"""
import csv
import math
import os
import random
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_attention as ta  # noqa: E402

TOL = 1e-5


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return [[float(v) for v in row[1:]] for row in rows[1:]]


def compare(name, mine, theirs):
    worst = 0.0
    theirs = theirs.reshape(len(mine), -1).tolist()
    for i, row in enumerate(mine):
        for j, a in enumerate(row):
            b = theirs[i][j]
            if math.isinf(b) or math.isinf(a):
                if a != b:
                    raise SystemExit("%s[%d][%d]: attnscope %r, PyTorch %r" % (name, i, j, a, b))
                continue
            worst = max(worst, abs(a - b) / max(1.0, abs(b)))
    return worst


def one(binary, knobs, vocab, sentence, stages=None):
    with tempfile.TemporaryDirectory() as tmp:
        ta.write_vocab(os.path.join(tmp, "v.csv"), vocab)
        cmd = [binary, "--export", os.path.join(tmp, "out"), "-e", os.path.join(tmp, "v.csv"),
               "-s", " ".join(sentence)] + knobs.args()
        for s in stages or []:
            cmd += ["--stage", s]
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
        ref = ta.run(knobs, ta.embed(vocab, sentence))
        worst = 0.0
        files = 0
        for name, t in ref.items():
            if stages and name not in stages:
                continue
            path = os.path.join(tmp, "out", name + ".csv")
            worst = max(worst, compare(name, read_csv(path), t))
            files += 1
        return worst, files


def main():
    cases = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 200
    big = "--big" in sys.argv
    rng = random.Random(int(os.environ.get("SWEEP_SEED", "1")))
    torch.set_num_threads(1)
    worst = 0.0
    files = 0
    for i in range(cases):
        knobs, vocab, sentence = ta.random_case(rng, n_max=64, d_max=48)
        w, f = one("./attnscope", knobs, vocab, sentence)
        worst, files = max(worst, w), files + f
    print("%d random cases, %d stage files: worst scaled difference %.3g" % (cases, files, worst))
    if big:
        for n in (6, 64, 256, 1024):
            for variant in ("mha", "wrapper"):
                knobs = ta.Knobs(variant=variant, d_out=768 if variant == "mha" else 64,
                                 heads=12, seed=rng.randrange(2 ** 64), qkv_bias=True,
                                 dropout=0.1)
                vocab = {"t%d" % k: [round(rng.uniform(-1, 1), 4) for _ in range(768)]
                         for k in range(40)}
                sentence = [rng.choice(list(vocab)) for _ in range(n)]
                w, f = one("./attnscope", knobs, vocab, sentence,
                           stages=["context", "output", "weights.h11"])
                print("  %s n=%d d=768 heads=12: worst %.3g" % (variant, n, w))
                worst, files = max(worst, w), files + f
    print("overall worst scaled difference %.3g (tolerance %g)" % (worst, TOL))
    sys.exit(0 if worst <= TOL else 1)


if __name__ == "__main__":
    main()
