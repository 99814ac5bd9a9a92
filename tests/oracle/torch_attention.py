"""PyTorch reference for attnscope: the chapter-3 classes, every stage recorded.

This is attnscope's own restatement of the book's classes (same modules, built
in the same order, so torch.manual_seed(seed) gives the same parameters),
extended with attnscope's knobs (mask on/off, scaling on/off, temperature,
dropout for every variant, positional encoding).  Used by make_fixtures.py and
sweep.py; never by the build or by `make check`.

Run with Debian's PyTorch: /usr/bin/python3 (apt-get install python3-torch).
"""
import math
import random

import torch
import torch.nn.functional as F
from torch import nn

# The book's classes (random_case draws among these, so older fixtures stay as they were made).
VARIANTS = ["simple", "v1", "v2", "causal", "wrapper", "mha"]
# And the lecture notes' MultiHeadAttention (seed 004's mha.py), and PyTorch's own class.
ALL_VARIANTS = VARIANTS + ["notes", "nn-mha"]


class Knobs:
    """One configuration, spelled as attnscope's command line spells it."""

    def __init__(self, variant="mha", d_out=2, heads=2, seed=123, dropout=0.0, train=True,
                 mask=None, scale=None, qkv_bias=False, temperature=1.0, positional=False,
                 learned=False):
        self.variant = variant
        self.d_out = d_out
        self.heads = heads
        self.seed = seed
        self.dropout = dropout
        self.train = train
        self.mask = mask if mask is not None else (
            "causal" if variant in ("causal", "wrapper", "mha") else "none")
        self.scale = scale if scale is not None else variant != "simple"
        self.qkv_bias = qkv_bias
        self.temperature = temperature
        self.positional = positional
        self.learned = learned  # with positional: nn.Embedding(n, d_in) after the weights

    def args(self):
        a = ["--variant", self.variant, "--d-out", str(self.d_out), "--heads", str(self.heads),
             "--seed", str(self.seed), "--dropout", repr(self.dropout), "--mask", self.mask,
             "--temperature", repr(self.temperature)]
        a.append("--scale" if self.scale else "--no-scale")
        if not self.train:
            a.append("--eval")
        if self.qkv_bias:
            a.append("--qkv-bias")
        if self.positional:
            a.append("--learned-positional" if self.learned else "--positional")
        return a


class Head(nn.Module):
    """One attention head over given projections (None: the inputs themselves)."""

    def __init__(self, knobs, d_in, d_out, kind):
        super().__init__()
        self.knobs = knobs
        self.kind = kind
        if kind == "rand":      # SelfAttention_v1: three torch.rand(d_in, d_out)
            self.W_query = nn.Parameter(torch.rand(d_in, d_out))
            self.W_key = nn.Parameter(torch.rand(d_in, d_out))
            self.W_value = nn.Parameter(torch.rand(d_in, d_out))
        elif kind == "linear":  # SelfAttention_v2, CausalAttention: three nn.Linear
            self.W_query = nn.Linear(d_in, d_out, bias=knobs.qkv_bias)
            self.W_key = nn.Linear(d_in, d_out, bias=knobs.qkv_bias)
            self.W_value = nn.Linear(d_in, d_out, bias=knobs.qkv_bias)
        self.dropout = nn.Dropout(knobs.dropout)

    def project(self, x, xs):
        """Q from x, K and V from xs (x itself, or the source sentence across sentences)."""
        if self.kind == "rand":
            return x @ self.W_query, xs @ self.W_key, xs @ self.W_value
        if self.kind == "linear":
            return self.W_query(x), self.W_key(xs), self.W_value(xs)
        return x, xs, xs


def attend(knobs, q, k, v, dropout, rec):
    """scores -> masked -> scaled -> weights -> dropped -> context, per head (leading dim).

    dropout None: the class drops nothing here (the notes' class drops its output)."""
    n = q.shape[-2]
    d_k = k.shape[-1]
    scores = q @ k.transpose(-2, -1)
    masked = scores.clone()
    if knobs.mask == "causal":
        masked.masked_fill_(torch.triu(torch.ones(n, n), diagonal=1).bool(), -torch.inf)
    divisor = (d_k ** 0.5 if knobs.scale else 1.0) * knobs.temperature
    scaled = masked / divisor
    weights = torch.softmax(scaled, dim=-1)
    rec.setdefault("scores", []).append(scores)
    rec.setdefault("masked", []).append(masked)
    rec.setdefault("scaled", []).append(scaled)
    rec.setdefault("weights", []).append(weights)
    if dropout is None:
        return weights @ v
    dropped = dropout(weights)
    rec.setdefault("dropped", []).append(dropped)
    return dropped @ v


def positional_encoding(n, d):
    pe = torch.zeros(n, d, dtype=torch.float64)
    for pos in range(n):
        for j in range(d):
            angle = pos / 10000 ** ((j - j % 2) / d)
            pe[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return pe.float()


def run(knobs, embeddings, source=None):
    """Every stage of attnscope's pipeline, as float32 tensors keyed by export name.

    source: the source sentence's embeddings for cross-attention (keys and values from it)."""
    x = embeddings.clone()
    if knobs.positional and not knobs.learned:
        x = x + positional_encoding(x.shape[0], x.shape[1])
    xs = None
    if source is not None:
        xs = source.clone()
        if knobs.positional:
            xs = xs + positional_encoding(xs.shape[0], xs.shape[1])
    d_in = x.shape[1]
    torch.manual_seed(knobs.seed)
    rec = {}
    out = {"inputs": x}
    if xs is not None:
        out["source"] = xs
    params = {}

    def kv(x):
        return x if xs is None else xs

    def learned_positions(x):
        # The model's nn.Embedding(n, d_in), made after its attention module, before the forward.
        if not (knobs.positional and knobs.learned):
            return x
        pos = nn.Embedding(x.shape[0], x.shape[1]).weight.detach()
        out["positional"] = pos
        x = x + pos
        out["inputs"] = x
        return x

    with torch.no_grad():
        if knobs.variant in ("simple", "v1", "v2", "causal"):
            kind = {"simple": None, "v1": "rand"}.get(knobs.variant, "linear")
            head = Head(knobs, d_in, knobs.d_out, kind)
            head.train(knobs.train)
            x = learned_positions(x)
            q, k, v = head.project(x, kv(x))
            out["queries"], out["keys"], out["values"] = q, k, v
            out["context"] = attend(knobs, q, k, v, head.dropout, rec)
            params = dict(head.named_parameters())
        elif knobs.variant == "wrapper":
            heads = nn.ModuleList([Head(knobs, d_in, knobs.d_out, "linear")
                                   for _ in range(knobs.heads)])
            heads.train(knobs.train)
            x = learned_positions(x)
            qs, ks, vs, cs = [], [], [], []
            for h in heads:  # each head runs its whole forward before the next
                q, k, v = h.project(x, kv(x))
                qs.append(q)
                ks.append(k)
                vs.append(v)
                cs.append(attend(knobs, q, k, v, h.dropout, rec))
            out["queries"] = torch.cat(qs, -1)
            out["keys"] = torch.cat(ks, -1)
            out["values"] = torch.cat(vs, -1)
            out["context"] = torch.cat(cs, -1)
            params = {"heads." + name: p for name, p in heads.named_parameters()}
        elif knobs.variant == "notes":
            # The lecture notes' class (seed 004, mha.py), restated: nn.Dropout first (no
            # parameters), then ModuleLists of biased per-head nn.Linear(d_model, d_model //
            # heads) for Q, then K, then V, then mha_linear(d_model, d_model); d_model = d_in.
            hd = d_in // knobs.heads
            notes = nn.Module()
            notes.dropout = nn.Dropout(knobs.dropout)
            for role in ("Qs", "Ks", "Vs"):
                setattr(notes, "linear_" + role,
                        nn.ModuleList([nn.Linear(d_in, hd) for _ in range(knobs.heads)]))
            notes.mha_linear = nn.Linear(d_in, d_in)
            notes.train(knobs.train)
            x = learned_positions(x)
            qs = [lin(x) for lin in notes.linear_Qs]
            ks = [lin(kv(x)) for lin in notes.linear_Ks]
            vs = [lin(kv(x)) for lin in notes.linear_Vs]
            cs = [attend(knobs, q, k, v, None, rec) for q, k, v in zip(qs, ks, vs)]
            out["queries"] = torch.cat(qs, -1)
            out["keys"] = torch.cat(ks, -1)
            out["values"] = torch.cat(vs, -1)
            out["context"] = torch.cat(cs, -1)
            out["output"] = notes.mha_linear(out["context"])
            out["output_dropped"] = notes.dropout(out["output"])
            params = dict(notes.named_parameters())
        elif knobs.variant == "nn-mha":
            # torch.nn.MultiheadAttention(E, H) itself; its stages restated (as attnscope keeps
            # them: scores, then / sqrt(head_dim)) and checked against the module's own forward.
            E, H = d_in, knobs.heads
            hd = E // H
            mha = nn.MultiheadAttention(E, H, dropout=knobs.dropout)
            mha.train(knobs.train)
            x = learned_positions(x)
            n = x.shape[0]
            state = torch.get_rng_state()
            W, b = mha.in_proj_weight, mha.in_proj_bias
            q = F.linear(x, W[:E], b[:E])
            k = F.linear(kv(x), W[E:2 * E], b[E:2 * E])
            v = F.linear(kv(x), W[2 * E:], b[2 * E:])
            out["queries"], out["keys"], out["values"] = q, k, v
            split = [t.view(t.shape[0], H, hd).transpose(0, 1) for t in (q, k, v)]
            drop = lambda w: F.dropout(w, p=knobs.dropout, training=knobs.train)  # noqa: E731
            ctx = attend(knobs, split[0], split[1], split[2], drop, rec)
            out["context"] = ctx.transpose(0, 1).contiguous().view(n, E)
            out["output"] = mha.out_proj(out["context"])
            dropped = rec["dropped"][0]
            out["averaged"] = dropped.unsqueeze(0).sum(dim=1)[0] / H
            # The module's own forward, from the same generator state, must agree.
            torch.set_rng_state(state)
            mask = None
            if knobs.mask == "causal":
                mask = torch.triu(torch.ones(n, n), diagonal=1).bool()
            if knobs.scale and knobs.temperature == 1.0:
                got, got_w = mha(x, kv(x), kv(x), attn_mask=mask, need_weights=True,
                                 average_attn_weights=False)
                assert torch.allclose(got, out["output"], atol=1e-5), "nn-mha output"
                assert torch.allclose(got_w, dropped, atol=1e-5), "nn-mha weights"
            params = dict(mha.named_parameters())
        else:
            mha = nn.Module()
            mha.W_query = nn.Linear(d_in, knobs.d_out, bias=knobs.qkv_bias)
            mha.W_key = nn.Linear(d_in, knobs.d_out, bias=knobs.qkv_bias)
            mha.W_value = nn.Linear(d_in, knobs.d_out, bias=knobs.qkv_bias)
            mha.out_proj = nn.Linear(knobs.d_out, knobs.d_out)
            mha.dropout = nn.Dropout(knobs.dropout)
            mha.train(knobs.train)
            x = learned_positions(x)
            n, hd = x.shape[0], knobs.d_out // knobs.heads
            q, k, v = mha.W_query(x), mha.W_key(kv(x)), mha.W_value(kv(x))
            out["queries"], out["keys"], out["values"] = q, k, v
            split = [t.view(t.shape[0], knobs.heads, hd).transpose(0, 1) for t in (q, k, v)]
            ctx = attend(knobs, split[0], split[1], split[2], mha.dropout, rec)
            out["context"] = ctx.transpose(0, 1).contiguous().view(n, knobs.d_out)
            out["output"] = mha.out_proj(out["context"])
            params = dict(mha.named_parameters())
        if "output" not in out:
            out["output"] = out["context"]
        for name, parts in rec.items():
            stacked = torch.cat([p.reshape(-1, p.shape[-2], p.shape[-1]) for p in parts])
            for h in range(stacked.shape[0]):
                out["%s.h%d" % (name, h)] = stacked[h]
    for name, p in params.items():
        out[name] = p.detach().reshape(1, -1) if p.dim() == 1 else p.detach()
    return out


def random_case(rng, n_max=16, d_max=12):
    """A random configuration, vocabulary and sentence."""
    variant = rng.choice(VARIANTS)
    heads = rng.randint(1, 4)
    d_out = heads * rng.randint(1, 4) if variant == "mha" else rng.randint(1, 6)
    d_in = rng.randint(1, d_max)
    dropout = rng.choice([0.0, 0.0, 0.1, 0.5, 0.3])
    knobs = Knobs(variant=variant, d_out=d_out, heads=heads, seed=rng.randrange(2 ** 64),
                  dropout=dropout, train=rng.random() < 0.8,
                  mask=rng.choice([None, None, "causal", "none"]),
                  scale=rng.choice([None, None, True, False]), qkv_bias=rng.random() < 0.4,
                  temperature=rng.choice([1.0, 1.0, 0.7, 2.5]), positional=rng.random() < 0.25)
    words = ["w%d" % i for i in range(rng.randint(1, 10))]
    vocab = {w: [round(rng.uniform(-1, 1), 4) for _ in range(d_in)] for w in words}
    sentence = [rng.choice(words) for _ in range(rng.randint(1, n_max))]
    return knobs, vocab, sentence


def embed(vocab, sentence):
    return torch.tensor([vocab[w] for w in sentence], dtype=torch.float32)


def write_vocab(path, vocab):
    d = len(next(iter(vocab.values())))
    with open(path, "w") as f:
        f.write("token," + ",".join("d%d" % j for j in range(d)) + "\n")
        for w, vec in vocab.items():
            f.write(w + "," + ",".join(repr(x) for x in vec) + "\n")


def fmt(x):
    if x == -math.inf:
        return "-inf"
    if math.isnan(x):
        return "nan"
    return "%.9g" % x


def write_matrix(path, m, row_labels):
    m = m.reshape(m.shape[0], -1) if m.dim() == 2 else m.reshape(1, -1)
    with open(path, "w") as f:
        f.write("," + ",".join("d%d" % j for j in range(m.shape[1])) + "\n")
        for i, row in enumerate(m.tolist()):
            f.write(row_labels[i] + "," + ",".join(fmt(v) for v in row) + "\n")


__all__ = ["Knobs", "run", "random_case", "embed", "write_vocab", "write_matrix", "VARIANTS",
           "ALL_VARIANTS"]

if __name__ == "__main__":
    k = Knobs()
    book = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                         [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])
    print(run(k, book)["output"])
