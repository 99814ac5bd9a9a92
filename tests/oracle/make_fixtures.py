#!/usr/bin/python3
"""Writes tests/golden/oracle/: PyTorch's stages for many configurations.

Run by hand with Debian's python3-torch from the top of the tree:
    /usr/bin/python3 tests/oracle/make_fixtures.py
Each case folder holds `args` (attnscope's command line, one argument per line,
with -e naming the case's vocabulary.csv), that vocabulary, and one CSV per
stage and parameter as PyTorch computed them (the --export layout).
tests/check_oracle.c runs attnscope's core on each case and compares.
"""
import os
import random
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_attention as ta  # noqa: E402

OUT = "tests/golden/oracle"
# Large cases keep a few stages only, so the fixtures stay small.
LARGE_KEEP = ("context", "output", "weights.h0", "dropped.h0")


def write_case(name, knobs, vocab, sentence, keep=None, source=None, source_vocab=None):
    """One case; source (a list of words) makes it cross-attention, source_vocab its own CSV."""
    folder = os.path.join(OUT, name)
    os.makedirs(folder)
    ta.write_vocab(os.path.join(folder, "vocabulary.csv"), vocab)
    args = ["-e", "vocabulary.csv", "-s", " ".join(sentence)]
    source_emb = None
    if source is not None:
        args += ["--source", " ".join(source)]
        if source_vocab is not None:
            ta.write_vocab(os.path.join(folder, "source-vocabulary.csv"), source_vocab)
            args += ["--source-embeddings", "source-vocabulary.csv"]
        source_emb = ta.embed(source_vocab or vocab, source)
    with open(os.path.join(folder, "args"), "w") as f:
        for a in args + knobs.args():
            f.write(a + "\n")
    stages = ta.run(knobs, ta.embed(vocab, sentence), source_emb)
    for stage, m in stages.items():
        if keep is not None and stage not in keep:
            continue
        if source is not None and stage in ("source", "keys", "values"):
            labels = source
        elif m.shape[0] == len(sentence):
            labels = sentence
        else:
            labels = ["r%d" % i for i in range(m.shape[0])]
        ta.write_matrix(os.path.join(folder, stage + ".csv"), m, labels)


def split_d_in_case(rng, i, variant, most_per_head):
    """Case i of a class whose heads split d_in (notes, nn-mha): up to 4 heads of up to
    most_per_head columns, masks, dropout (every third), positions of both kinds."""
    knobs, vocab, sentence = ta.random_case(rng, n_max=14, d_max=4)
    knobs.variant = variant
    knobs.heads = rng.randint(1, 4)
    d_in = knobs.heads * rng.randint(1, most_per_head)
    vocab = {w: [round(rng.uniform(-1, 1), 4) for _ in range(d_in)] for w in vocab}
    knobs.mask = rng.choice(["none", "none", "causal"])
    if i % 3 == 0:
        knobs.dropout, knobs.train = 0.5, True
    knobs.positional = i % 4 == 1
    knobs.learned = i % 8 == 1
    return knobs, vocab, sentence


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    blas = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    with open(os.path.join(OUT, "README"), "w") as f:
        f.write("Made by tests/oracle/make_fixtures.py with PyTorch %s (Debian python3-torch,\n"
                "built without MKL), BLAS %s.\n"
                "Do not edit: run the script again.\n" % (torch.__version__, blas))
    rng = random.Random(20261122)
    for i in range(40):
        knobs, vocab, sentence = ta.random_case(rng)
        write_case("random%02d-%s" % (i, knobs.variant), knobs, vocab, sentence)
    # Wider and longer: every variant at d_in 64, n 48; then n 200 for two variants.
    for j, variant in enumerate(ta.VARIANTS):
        knobs, vocab, sentence = ta.random_case(rng, n_max=48, d_max=64)
        knobs.variant = variant
        knobs.heads = 4
        knobs.d_out = 16
        vocab = {w: [round(rng.uniform(-1, 1), 4) for _ in range(64)] for w in vocab}
        sentence = [rng.choice(list(vocab)) for _ in range(48)]
        write_case("wide%d-%s" % (j, variant), knobs, vocab, sentence, keep=LARGE_KEEP)
    for variant, p in (("mha", 0.1), ("wrapper", 0.0)):
        knobs = ta.Knobs(variant=variant, d_out=24, heads=3, seed=rng.randrange(2 ** 64),
                         dropout=p, qkv_bias=True)
        vocab = {"t%d" % i: [round(rng.uniform(-1, 1), 4) for _ in range(32)] for i in range(50)}
        sentence = [rng.choice(list(vocab)) for _ in range(200)]
        write_case("long-%s" % variant, knobs, vocab, sentence, keep=("context", "output"))
    # The learned positional embedding (nn.Embedding(n, d_in) after the weights): every variant,
    # tables under 16 values (randn's pairs) and over (its blocks of 16), with dropout after it.
    lrng = random.Random(20261123)
    for i in range(12):
        knobs, vocab, sentence = ta.random_case(lrng, n_max=12, d_max=6)
        knobs.variant = ta.VARIANTS[i % len(ta.VARIANTS)]
        if knobs.variant == "mha":
            knobs.d_out = knobs.heads * max(1, knobs.d_out // knobs.heads)
        knobs.positional = True
        knobs.learned = True
        if i % 3 == 0:
            knobs.dropout, knobs.train = 0.5, True
        write_case("learned%02d-%s" % (i, knobs.variant), knobs, vocab, sentence)
    # The lecture notes' MultiHeadAttention: heads dividing d_in, with and without dropout (on
    # its output), masks, scaling, temperatures and positions of both kinds; then a wide one.
    nrng = random.Random(20261124)
    for i in range(12):
        write_case("notes%02d" % i, *split_d_in_case(nrng, i, "notes", 3))
    knobs, vocab, sentence = ta.random_case(nrng, n_max=48, d_max=4)
    knobs.variant, knobs.heads, knobs.mask = "notes", 4, "none"
    knobs.dropout, knobs.train = 0.1, True
    vocab = {w: [round(nrng.uniform(-1, 1), 4) for _ in range(64)] for w in vocab}
    sentence = [nrng.choice(list(vocab)) for _ in range(48)]
    write_case("wide-notes", knobs, vocab, sentence, keep=LARGE_KEEP + ("output_dropped",))
    # torch.nn.MultiheadAttention (self-attention here): its heads split d_in, its in_proj by
    # xavier_uniform_ after out_proj's draws; the weights averaged as the module returns them.
    mrng = random.Random(20261125)
    for i in range(12):
        write_case("nnmha%02d" % i, *split_d_in_case(mrng, i, "nn-mha", 4))
    # Cross-attention: queries from the sentence, keys and values from a source of another
    # length, for every variant with weights; half with a second vocabulary of the same width.
    xrng = random.Random(20261126)
    for i in range(14):
        knobs, vocab, sentence = ta.random_case(xrng, n_max=9, d_max=4)
        knobs.variant = ta.ALL_VARIANTS[1 + i % (len(ta.ALL_VARIANTS) - 1)]
        knobs.heads = xrng.randint(1, 3)
        d_in = knobs.heads * xrng.randint(1, 3)
        if knobs.variant == "mha":
            knobs.d_out = knobs.heads * xrng.randint(1, 3)
        vocab = {w: [round(xrng.uniform(-1, 1), 4) for _ in range(d_in)] for w in vocab}
        knobs.mask = "none"
        knobs.learned = False
        knobs.positional = i % 4 == 2
        if i % 3 == 0:
            knobs.dropout, knobs.train = 0.5, True
        source_vocab = None
        if i % 2 == 1:
            source_vocab = {"s%d" % j: [round(xrng.uniform(-1, 1), 4) for _ in range(d_in)]
                            for j in range(xrng.randint(1, 6))}
        words = list(source_vocab or vocab)
        source = [xrng.choice(words) for _ in range(xrng.randint(1, 11))]
        write_case("cross%02d-%s" % (i, knobs.variant), knobs, vocab, sentence, source=source,
                   source_vocab=source_vocab)


if __name__ == "__main__":
    main()
