"""A tiny GPT-2 with its own tokenizer, and PyTorch's forward of it, for
tests/check_model.c and tests/cli.sh (attnscope --model).

Writes tests/fixtures/gpt2/tiny/:
  vocab.json, merges.txt   a byte-level BPE vocabulary in GPT-2's file formats:
                           the 256 byte tokens in GPT-2's byte-to-character
                           order, MERGES merges learned below from CORPUS (our
                           own sentences), then <|endoftext|>
  config.json, model.safetensors
                           2 layers, 2 heads, n_embd 16, random F32 weights
                           (Hugging Face's names; drawn from torch.manual_seed(7))
  expected.txt             for SENTENCE and each case of CASES (the knobs a
                           trained model keeps: the mask, the scaling, the
                           temperature, and <|endoftext|> first), lines
                               case NAME causal scaled temperature bos [L.H ...]
                                    (the last: heads ablated, their context
                                    zeroed before c_proj)
                               config {...}        (only for a case run with another
                                                    config.json: the whole of it)
                               ids N i0 i1 ...
                               STAGE L values...   (every stage of every layer:
                                                    ln1 q k v scores weights context
                                                    attn resid1 ln2 fc gelu mlp resid2;
                                                    scores, weights and resid2 only
                                                    for the cases that change a knob)
                               lens L ids... probabilities...  (the logit lens at the last
                                                    position: layer L's stream through
                                                    ln_f and wte, its 3 likeliest tokens)
                               final values...
                               top K ids... probabilities...

The tokenizer is GPT-2's algorithm restated for ASCII text (its pattern with
\\p{L} and \\p{N} narrowed to ASCII letters and digits, which is exact for the
ASCII sentence below); the forward is Hugging Face's GPT-2 computation in
float32.  attnscope's own code, never used by the build or by `make check`.
Run from the top of the source tree with Debian's PyTorch:

    /usr/bin/python3 tests/oracle/gpt2_tiny_model.py
"""
import collections
import json
import math
import os
import re
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_fixtures import write_safetensors  # noqa: E402  (the format, written byte by byte)

CORPUS = """The cat sat on the mat. The dog sat on the log. A cat and a dog met on the
road, and the cat said that the dog was slow. The dog said that the cat was loud.
They walked to the river and the river was cold. Then the cat went home and the dog
went home, and the road was quiet again. It is the end of the story, and the start
of another one: the cat and the dog will meet again tomorrow on the same road."""
MERGES = 60
SENTENCE = "The cat sat on the mat, and the dog sat on the log."
CASES = [
    # name, causal, scaled, temperature, bos, ablated (layer, head) pairs, config.json changes
    ("gpt2", True, True, 1.0, False, (), {}),
    ("no-mask", False, True, 1.0, False, (), {}),
    ("no-scale", True, False, 1.0, False, (), {}),
    ("temperature", True, True, 2.5, False, (), {}),
    ("bos", True, True, 1.0, True, (), {}),
    ("ablate", True, True, 1.0, False, ((0, 1), (1, 0)), {}),
    # GPT-2's config keys that change attention (Hugging Face's GPT2Attention._attn):
    # scale_attn_weights false divides by nothing, scale_attn_by_inverse_layer_idx by layer + 1.
    ("config-unscaled", True, True, 1.0, False, (), {"scale_attn_weights": False}),
    ("config-by-layer", True, True, 1.0, False, (), {"scale_attn_by_inverse_layer_idx": True}),
    ("config-by-layer-only", True, True, 2.0, False, (),
     {"scale_attn_weights": False, "scale_attn_by_inverse_layer_idx": True}),
]
N_LAYER, N_HEAD, N_EMBD, N_POSITIONS, TOP = 2, 2, 16, 24, 4
PATTERN = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")


def byte_chars():
    """GPT-2's byte -> character table: printable bytes stand for themselves."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars = {}
    extra = 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


BYTE_CHARS = byte_chars()


def spell(piece):
    return "".join(BYTE_CHARS[b] for b in piece.encode("utf-8"))


def learn_merges(text, count):
    words = collections.Counter(tuple(spell(p)) for p in PATTERN.findall(text))
    merges = []
    for _ in range(count):
        pairs = collections.Counter()
        for w, n in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += n
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        merges.append(best)
        merged = collections.Counter()
        for w, n in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged[tuple(out)] += n
        words = merged
    return merges


def encode(text, vocab, ranks):
    ids = []
    for piece in PATTERN.findall(text):
        word = list(spell(piece))
        while len(word) > 1:
            pairs = [(ranks.get((a, b), 1 << 30), i) for i, (a, b) in enumerate(zip(word, word[1:]))]
            rank, i = min(pairs)
            if rank == 1 << 30:
                break
            word = word[:i] + [word[i] + word[i + 1]] + word[i + 2:]
        ids.extend(vocab[t] for t in word)
    return ids


def write_tokenizer(folder, vocab, merges):
    """vocab.json and merges.txt, as Hugging Face writes GPT-2's."""
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write("%s %s\n" % (a, b))


def numbers(t):
    return " ".join("%.8g" % e for e in t.flatten().tolist())


def forward(p, ids, causal, scaled, temperature, lines, every_stage, ablated=(), config=None):
    n, C, H = len(ids), N_EMBD, N_HEAD
    hd = C // H
    config = config or {}
    x = p["wte"][torch.tensor(ids)] + p["wpe"][:n]
    keep = torch.tril(torch.ones(n, n, dtype=torch.bool)) if causal else torch.ones(n, n, dtype=torch.bool)
    root = math.sqrt(hd) if config.get("scale_attn_weights", True) else 1.0
    for l in range(N_LAYER):
        by_layer = (l + 1) if config.get("scale_attn_by_inverse_layer_idx", False) else 1
        divisor = (root * by_layer if scaled else 1.0) * temperature
        out = {}
        h = F.layer_norm(x, (C,), p[(l, "ln1_g")], p[(l, "ln1_b")], eps=1e-5)
        out["ln1"] = h
        qkv = h @ p[(l, "c_attn")] + p[(l, "c_attn_b")]
        q, k, v = qkv.split(C, dim=1)
        out["q"], out["k"], out["v"] = q, k, v
        qh = q.view(n, H, hd).transpose(0, 1)
        kh = k.view(n, H, hd).transpose(0, 1)
        vh = v.view(n, H, hd).transpose(0, 1)
        scores = qh @ kh.transpose(-1, -2)
        out["scores"] = scores
        att = (scores / torch.tensor(divisor, dtype=torch.float32)).masked_fill(~keep, float("-inf"))
        att = torch.softmax(att, dim=-1)
        out["weights"] = att
        ctx_h = att @ vh
        for (al, ah) in ablated:
            if al == l:
                ctx_h[ah] = 0.0
        ctx = ctx_h.transpose(0, 1).reshape(n, C)
        out["context"] = ctx
        a = ctx @ p[(l, "proj")] + p[(l, "proj_b")]
        out["attn"] = a
        x = x + a
        out["resid1"] = x
        h = F.layer_norm(x, (C,), p[(l, "ln2_g")], p[(l, "ln2_b")], eps=1e-5)
        out["ln2"] = h
        f = h @ p[(l, "fc")] + p[(l, "fc_b")]
        out["fc"] = f
        g = 0.5 * f * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (f + 0.044715 * torch.pow(f, 3.0))))
        out["gelu"] = g
        m = g @ p[(l, "fc2")] + p[(l, "fc2_b")]
        out["mlp"] = m
        x = x + m
        out["resid2"] = x
        for name in ("ln1", "q", "k", "v", "scores", "weights", "context", "attn", "resid1", "ln2",
                     "fc", "gelu", "mlp", "resid2"):
            if every_stage or name in ("scores", "weights", "resid2"):
                lines.append("%s %d %s" % (name, l, numbers(out[name])))
        # The logit lens at the last position: this layer's stream through ln_f and wte.
        lens = torch.softmax(F.layer_norm(x[-1], (C,), p["lnf_g"], p["lnf_b"], eps=1e-5) @ p["wte"].T, dim=-1)
        top_l = torch.topk(lens, 3)
        lines.append("lens %d %s %s" % (l, " ".join(map(str, top_l.indices.tolist())), numbers(top_l.values)))
    final = F.layer_norm(x, (C,), p["lnf_g"], p["lnf_b"], eps=1e-5)
    lines.append("final %s" % numbers(final))
    probs = torch.softmax(final @ p["wte"].T, dim=-1)
    top = torch.topk(probs, TOP, dim=-1)
    lines.append("top %d %s %s" % (TOP, " ".join(map(str, top.indices.flatten().tolist())),
                                   numbers(top.values)))


def main():
    d = os.path.join("tests", "fixtures", "gpt2", "tiny")
    os.makedirs(d, exist_ok=True)
    merges = learn_merges(CORPUS, MERGES)
    tokens = [BYTE_CHARS[b] for b in range(256)] + [a + b for a, b in merges] + ["<|endoftext|>"]
    vocab = {t: i for i, t in enumerate(tokens)}
    ranks = {m: r for r, m in enumerate(merges)}
    write_tokenizer(d, vocab, merges)

    gen = torch.Generator().manual_seed(7)
    C, V = N_EMBD, len(tokens)

    def draw(*shape, scale=0.3):
        return torch.randn(*shape, generator=gen) * scale

    p, out = {}, []

    def put(key, name, t):
        p[key] = t
        out.append((name, t))

    put("wte", "wte.weight", draw(V, C))
    put("wpe", "wpe.weight", draw(N_POSITIONS, C))
    for l in range(N_LAYER):
        b = "h.%d." % l
        put((l, "ln1_g"), b + "ln_1.weight", 1.0 + draw(C, scale=0.1))
        put((l, "ln1_b"), b + "ln_1.bias", draw(C, scale=0.1))
        put((l, "c_attn"), b + "attn.c_attn.weight", draw(C, 3 * C))
        put((l, "c_attn_b"), b + "attn.c_attn.bias", draw(3 * C, scale=0.1))
        put((l, "proj"), b + "attn.c_proj.weight", draw(C, C))
        put((l, "proj_b"), b + "attn.c_proj.bias", draw(C, scale=0.1))
        put((l, "ln2_g"), b + "ln_2.weight", 1.0 + draw(C, scale=0.1))
        put((l, "ln2_b"), b + "ln_2.bias", draw(C, scale=0.1))
        put((l, "fc"), b + "mlp.c_fc.weight", draw(C, 4 * C))
        put((l, "fc_b"), b + "mlp.c_fc.bias", draw(4 * C, scale=0.1))
        put((l, "fc2"), b + "mlp.c_proj.weight", draw(4 * C, C))
        put((l, "fc2_b"), b + "mlp.c_proj.bias", draw(C, scale=0.1))
    put("lnf_g", "ln_f.weight", 1.0 + draw(C, scale=0.1))
    put("lnf_b", "ln_f.bias", draw(C, scale=0.1))
    write_safetensors(os.path.join(d, "model.safetensors"), out)
    config = {"model_type": "gpt2", "n_layer": N_LAYER, "n_head": N_HEAD, "n_embd": N_EMBD,
              "vocab_size": V, "n_positions": N_POSITIONS, "layer_norm_epsilon": 1e-5,
              "activation_function": "gelu_new", "n_inner": None}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")

    lines = ["sentence %s" % SENTENCE]
    for name, causal, scaled, temperature, bos, ablated, changes in CASES:
        ids = ([vocab["<|endoftext|>"]] if bos else []) + encode(SENTENCE, vocab, ranks)
        lines.append("case %s %d %d %.9g %d%s" % (name, causal, scaled, temperature, bos,
                                                  "".join(" %d.%d" % a for a in ablated)))
        if changes:
            # The whole config.json the case is run with: check_model writes it beside the weights.
            lines.append("config %s" % json.dumps(dict(config, **changes), separators=(",", ":")))
        lines.append("ids %d %s" % (len(ids), " ".join(map(str, ids))))
        forward(p, ids, causal, scaled, temperature, lines, name in ("gpt2", "bos"), ablated, changes)
    with open(os.path.join(d, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", d, "(%d tokens, %d merges)" % (V, len(merges)))


if __name__ == "__main__":
    main()
