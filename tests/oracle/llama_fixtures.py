"""Tiny Llama-style models and PyTorch's forward of them, for tests/check_architectures.c.

Writes tests/fixtures/decoders/CASE/ for each case below: a config.json as
Hugging Face writes one for the architecture, the weights under Hugging
Face's names in a model.safetensors (gpt2_fixtures.write_safetensors) or
under the book's names (rasbt's ch05/07 Llama 3.2 and ch05/11 Qwen3
notebooks: tok_emb, trf_blocks.N.att.W_query, ff.fc1 ...) in a model.pth
that torch.save writes, and expected.txt: every stage of every layer that a
float32 forward with Hugging Face's semantics computes for fixed token ids,
one line each:

    ids N i0 i1 ...
    freq D/2 values                   RoPE's frequencies (after llama3's stretch)
    embed N*C values
    STAGE L count values              for every layer L and STAGE in STAGES
    final N*C values
    top K N*K ids, then N*K probabilities
    knobs causal scaled temperature ablated     then the same lines under those knobs

Which line of behaviour each step follows (transformers 4.5x):
  - RMSNorm: modeling_llama.LlamaRMSNorm.forward: variance = x.pow(2).mean(-1),
    x * rsqrt(variance + eps), then weight * x (float32 throughout here).
  - RoPE: LlamaRotaryEmbedding: inv_freq = 1 / base^(arange(0, d, 2).float() / d)
    (modeling_rope_utils._compute_default_rope_parameters), llama3's stretch
    (_compute_llama3_parameters), freqs = position * inv_freq in float32,
    emb = cat(freqs, freqs); apply_rotary_pos_emb: q cos + rotate_half(q) sin,
    rotate_half(x) = cat(-x2, x1).
  - GQA: repeat_kv: key/value head j serves query heads j*g .. j*g+g-1.
  - Attention: eager_attention_forward: q k^T * head_dim^-0.5 (divided here,
    as the book does), the causal mask, softmax in float32, weights @ v, o_proj.
  - Qwen2: q/k/v projections with biases, o_proj without (modeling_qwen2).
  - Qwen3: q_norm / k_norm, an RMSNorm over each head's head_dim, applied after
    the projection and before RoPE (modeling_qwen3.Qwen3Attention.forward);
    head_dim from the config, not hidden / heads.
  - MLP: down_proj(silu(gate_proj(x)) * up_proj(x)) (LlamaMLP).
  - Llama's attention_bias / mlp_bias put biases on q, k, v, o / gate, up, down.

attnscope's own restatement, never used by the build or by `make check`.
Run from the top of the source tree with Debian's PyTorch:

    /usr/bin/python3 tests/oracle/llama_fixtures.py

Checked against an independent implementation: tests/oracle/crosscheck_gguf.py runs
llama.cpp on these fixtures as GGUF files (llama-gguf, llama3-gguf, qwen2-gguf, qwen3-gguf,
qwen3-q-gguf) and compares its next tokens with expected.txt's (`make crosscheck`); the
run of 2026-12-02 agreed to 2.3e-7.
"""
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_fixtures import stored, write_safetensors  # noqa: E402

# name, architecture, sizes, options
CASES = [
    dict(name="llama-gqa", arch="llama", L=2, H=4, KV=2, C=16, F=24, V=40, P=128, dtype="F32",
         seed=11, tied=True, theta=10000.0),
    # Llama 3's stretch with a head of 8: frequencies kept (wavelength 6.3 < 64/4), blended
    # (63, between 16 and 64) and divided (628, 6283); 80 tokens, past one block of 64 queries.
    dict(name="llama3-scaled", arch="llama", L=1, H=2, KV=1, C=16, F=20, V=48, P=256,
         dtype="BF16", seed=12, tied=False, theta=10000.0, bias=True,
         scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                      original_max_position_embeddings=64), long=True),
    dict(name="qwen2", arch="qwen2", L=2, H=6, KV=2, C=24, F=32, V=44, P=64, dtype="BF16",
         seed=13, tied=False, theta=1000000.0, eps=1e-6),
    # Qwen3's knobs keep the scaling: its QK-normed scores unscaled at T = 0.7 are so peaked
    # that float32's rounding (both sides') grows to 2e-5 by the third layer.
    dict(name="qwen3", arch="qwen3", L=3, H=4, KV=2, C=16, F=24, V=36, P=64, hd=8, dtype="BF16",
         seed=14, tied=True, theta=1000000.0, eps=1e-6, knobs=(False, True, 0.7, [(0, 1), (2, 3)])),
    dict(name="qwen3-book", arch="qwen3", L=2, H=4, KV=2, C=16, F=24, V=36, P=64, hd=8,
         dtype="BF16", seed=15, tied=False, theta=1000000.0, eps=1e-6, book=True),
    # The book's Llama 3.2 names (nn.RMSNorm's "weight"), its config.json beside it: a
    # Llama 3.2 of another width than 1B's or 3B's.
    dict(name="llama-book", arch="llama", L=2, H=4, KV=2, C=16, F=24, V=36, P=64,
         dtype="BF16", seed=16, tied=False, theta=500000.0, book=True, book_config=True,
         scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                      original_max_position_embeddings=8192)),
]
IDS = [3, 17, 5, 5, 0, 21, 9, 30, 2]
# A text longer than a block of 64 queries, so that the blocked attention is checked too.
LONG_IDS = [(7 * i + 3) % 40 for i in range(80)]
TOP = 3
KNOBS = (False, False, 0.7, [(0, 1), (1, 0)])   # no mask, no scaling, T = 0.7, two heads ablated
# (a case's own "knobs" replace these)
STAGES = ["norm1", "q_proj", "k_proj", "v", "q_normed", "k_normed", "q", "k", "scores",
          "scaled", "weights", "context", "attn", "resid1", "norm2", "gate", "up", "act", "mlp",
          "resid2"]


def draw(gen, *shape, scale=0.3):
    return torch.randn(*shape, generator=gen) * scale


def rms(x, w, eps):
    var = x.pow(2).mean(-1, keepdim=True)
    return w * (x * torch.rsqrt(var + eps))


def frequencies(c):
    d = c["hd"]
    inv = 1.0 / (c["theta"] ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    sc = c.get("scaling")
    if sc is None:
        return inv
    factor, low, high = sc["factor"], sc["low_freq_factor"], sc["high_freq_factor"]
    old = sc["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    wavelen = 2 * math.pi / inv
    stretched = torch.where(wavelen > low_wavelen, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * stretched / factor + smooth * stretched
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, stretched)


def rotate(x, freq):
    """x (heads, n, d) turned at positions 0 .. n-1, as apply_rotary_pos_emb."""
    n = x.shape[1]
    angles = torch.arange(n).float()[:, None] * freq[None, :]
    emb = torch.cat((angles, angles), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


def forward(c, p, ids, knobs):
    causal, scaled, temperature, ablated = knobs
    L, H, KV, C, hd = c["L"], c["H"], c["KV"], c["C"], c["hd"]
    eps = c.get("eps", 1e-5)
    n = len(ids)
    freq = frequencies(c)
    out = {}
    x = p["embed"][torch.tensor(ids)]
    out["embed"] = x
    mask = torch.tril(torch.ones(n, n, dtype=torch.bool)) if causal else torch.ones(n, n, dtype=torch.bool)

    def lin(h, key, l):
        y = h @ p[(l, key)].T
        return y + p[(l, key + "_b")] if (l, key + "_b") in p else y

    for l in range(L):
        s = {}
        h = rms(x, p[(l, "norm1")], eps)
        s["norm1"] = h
        q, k, v = lin(h, "q", l), lin(h, "k", l), lin(h, "v", l)
        s["q_proj"], s["k_proj"], s["v"] = q, k, v
        qh = q.view(n, H, hd).transpose(0, 1)
        kh = k.view(n, KV, hd).transpose(0, 1)
        vh = v.view(n, KV, hd).transpose(0, 1)
        if c["arch"] == "qwen3":
            qh = rms(qh, p[(l, "q_norm")], eps)
            kh = rms(kh, p[(l, "k_norm")], eps)
            s["q_normed"] = qh.transpose(0, 1).reshape(n, H * hd)
            s["k_normed"] = kh.transpose(0, 1).reshape(n, KV * hd)
        qh, kh = rotate(qh, freq), rotate(kh, freq)
        s["q"] = qh.transpose(0, 1).reshape(n, H * hd)
        s["k"] = kh.transpose(0, 1).reshape(n, KV * hd)
        g = H // KV
        kh, vh = kh.repeat_interleave(g, dim=0), vh.repeat_interleave(g, dim=0)
        scores = qh @ kh.transpose(-1, -2)
        s["scores"] = scores
        divisor = (math.sqrt(hd) if scaled else 1.0) * temperature
        sc = scores.masked_fill(~mask, float("-inf")) / divisor
        s["scaled"] = sc
        w = torch.softmax(sc, dim=-1)
        s["weights"] = w
        ctx = w @ vh
        for (al, ah) in ablated:
            if al == l:
                ctx[ah] = 0.0
        ctx = ctx.transpose(0, 1).reshape(n, H * hd)
        s["context"] = ctx
        a = lin(ctx, "o", l)
        s["attn"] = a
        x = x + a
        s["resid1"] = x
        h = rms(x, p[(l, "norm2")], eps)
        s["norm2"] = h
        gate, up = lin(h, "gate", l), lin(h, "up", l)
        act = torch.nn.functional.silu(gate) * up
        s["gate"], s["up"], s["act"] = gate, up, act
        m = lin(act, "down", l)
        s["mlp"] = m
        x = x + m
        s["resid2"] = x
        out[l] = s
    final = rms(x, p["norm"], eps)
    out["final"] = final
    probs = torch.softmax(final @ p["head"].T, dim=-1)
    out["top"] = torch.topk(probs, TOP, dim=-1)
    out["freq"] = freq
    return out


def numbers(t):
    return " ".join("%.9g" % e for e in t.flatten().tolist())


def lines_of(c, out, stages_too):
    lines = ["embed %s" % numbers(out["embed"])] if stages_too else []
    for l in range(c["L"]):
        for name in STAGES if stages_too else ["weights", "context", "resid2"]:
            # (the long text's scores and scaled scores: its weights say as much, in less room)
            if name in out[l] and not (c.get("long") and name in ("scores", "scaled")):
                t = out[l][name]
                lines.append("%s %d %d %s" % (name, l, t.numel(), numbers(t)))
    lines.append("final %s" % numbers(out["final"]))
    top = out["top"]
    lines.append("top %d %s %s" % (TOP, " ".join(map(str, top.indices.flatten().tolist())),
                                   numbers(top.values)))
    return lines


# A tiny tokenizer.json for the fixtures' small vocabularies (36 tokens, the smallest V): a BPE
# over characters as SentencePiece-style models have it (a space is "\u2581", prepended to the
# text; a character it lacks is <unk>), so that the front ends can run the models on text.
TINY_VOCAB = (["<unk>", "\u2581"] + [chr(c) for c in range(ord("a"), ord("z") + 1)] +
              ["\u2581t", "th", "\u2581th", "he", "\u2581the", ".", "in", "er"])
TINY_MERGES = [["t", "h"], ["\u2581", "th"], ["\u2581th", "e"], ["\u2581", "t"], ["h", "e"],
               ["i", "n"], ["e", "r"]]


def tiny_tokenizer():
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
        "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "fuse_unk": False,
                  "byte_fallback": False, "ignore_merges": False,
                  "vocab": {t: i for i, t in enumerate(TINY_VOCAB)}, "merges": TINY_MERGES},
    }


def write_folder(d, config, tensors):
    """A Hugging Face folder: config.json, model.safetensors, the tiny tokenizer.json."""
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(d, "model.safetensors"), tensors)
    with open(os.path.join(d, "tokenizer.json"), "w") as f:
        json.dump(tiny_tokenizer(), f, ensure_ascii=False)
        f.write("\n")


def make_case(root, c):
    gen = torch.Generator().manual_seed(c["seed"])
    c.setdefault("hd", c["C"] // c["H"])
    L, H, KV, C, Fw, V, hd = c["L"], c["H"], c["KV"], c["C"], c["F"], c["V"], c["hd"]
    book = c.get("book", False)
    qkv_bias = c["arch"] == "qwen2" or c.get("bias", False)
    out_bias = c.get("bias", False)
    mlp_bias = c.get("bias", False)
    tensors = []
    p = {}

    def put(key, hf, bk, t):
        s, f32 = stored(t, c["dtype"])
        tensors.append((bk if book else hf, s))
        p[key] = f32

    put("embed", "model.embed_tokens.weight", "tok_emb.weight", draw(gen, V, C))
    for l in range(L):
        hf = "model.layers.%d." % l
        bk = "trf_blocks.%d." % l
        gain = lambda n: 1.0 + draw(gen, n, scale=0.1)
        norm = "weight" if c["arch"] == "llama" else "scale"  # (nn.RMSNorm's, or the book's own)
        put((l, "norm1"), hf + "input_layernorm.weight", bk + "norm1." + norm, gain(C))
        for key, name, bname, rows in (("q", "q_proj", "W_query", H * hd), ("k", "k_proj", "W_key", KV * hd),
                                       ("v", "v_proj", "W_value", KV * hd)):
            put((l, key), hf + "self_attn.%s.weight" % name, bk + "att.%s.weight" % bname,
                draw(gen, rows, C))
            if qkv_bias:
                put((l, key + "_b"), hf + "self_attn.%s.bias" % name, bk + "att.%s.bias" % bname,
                    draw(gen, rows, scale=0.1))
        put((l, "o"), hf + "self_attn.o_proj.weight", bk + "att.out_proj.weight", draw(gen, C, H * hd))
        if out_bias:
            put((l, "o_b"), hf + "self_attn.o_proj.bias", bk + "att.out_proj.bias", draw(gen, C, scale=0.1))
        if c["arch"] == "qwen3":
            put((l, "q_norm"), hf + "self_attn.q_norm.weight", bk + "att.q_norm.scale", gain(hd))
            put((l, "k_norm"), hf + "self_attn.k_norm.weight", bk + "att.k_norm.scale", gain(hd))
        put((l, "norm2"), hf + "post_attention_layernorm.weight", bk + "norm2." + norm, gain(C))
        for key, name, bname, shape in (("gate", "gate_proj", "fc1", (Fw, C)), ("up", "up_proj", "fc2", (Fw, C)),
                                        ("down", "down_proj", "fc3", (C, Fw))):
            put((l, key), hf + "mlp.%s.weight" % name, bk + "ff.%s.weight" % bname, draw(gen, *shape))
            if mlp_bias:
                put((l, key + "_b"), hf + "mlp.%s.bias" % name, bk + "ff.%s.bias" % bname,
                    draw(gen, shape[0], scale=0.1))
    put("norm", "model.norm.weight", "final_norm." + ("weight" if c["arch"] == "llama" else "scale"),
        1.0 + draw(gen, C, scale=0.1))
    if c["tied"]:
        p["head"] = p["embed"]
    else:
        put("head", "lm_head.weight", "out_head.weight", draw(gen, V, C))

    ids = LONG_IDS if c.get("long") else IDS
    ids = [i % V for i in ids]
    plain = forward(c, p, ids, (True, True, 1.0, []))
    lines = ["ids %d %s" % (len(ids), " ".join(map(str, ids))),
             "freq %d %s" % (hd // 2, numbers(plain["freq"]))]
    lines += lines_of(c, plain, True)
    knobs = c.get("knobs", KNOBS)
    knobs = (knobs[0], knobs[1], knobs[2], [a for a in knobs[3] if a[0] < c["L"]])
    causal, scaled, temperature, ablated = knobs
    lines.append("knobs %d %d %.9g %s" % (causal, scaled, temperature,
                                          ",".join("%d.%d" % a for a in ablated)))
    lines += lines_of(c, forward(c, p, ids, knobs), False)

    d = os.path.join(root, c["name"])
    os.makedirs(d, exist_ok=True)
    arch = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}
    config = {"architectures": [arch[c["arch"]]], "model_type": c["arch"], "hidden_size": C,
              "intermediate_size": Fw, "num_hidden_layers": L, "num_attention_heads": H,
              "num_key_value_heads": KV, "vocab_size": V, "max_position_embeddings": c["P"],
              "rms_norm_eps": c.get("eps", 1e-5), "rope_theta": c["theta"], "hidden_act": "silu",
              "tie_word_embeddings": c["tied"], "torch_dtype": {"F32": "float32", "BF16": "bfloat16"}[c["dtype"]]}
    if c["arch"] == "llama":
        config["attention_bias"] = c.get("bias", False)
        config["mlp_bias"] = c.get("bias", False)
        config["rope_scaling"] = c.get("scaling")
    if c["arch"] in ("qwen2", "qwen3"):
        config["use_sliding_window"] = False
        config["sliding_window"] = None if c["arch"] == "qwen3" else 4096
        config["max_window_layers"] = L
    if c["arch"] == "qwen3":
        config["head_dim"] = hd
        config["attention_bias"] = False
    for stale in ("model.safetensors", "model.pth", "config.json", "tokenizer.json"):
        if os.path.exists(os.path.join(d, stale)):
            os.remove(os.path.join(d, stale))
    if book:
        # The book's notebooks save model.state_dict() with torch.save; no config.json beside it
        # (but for a width the book's settings do not cover).
        torch.save({name: t for name, t in tensors}, os.path.join(d, "model.pth"))
        if c.get("book_config"):
            with open(os.path.join(d, "config.json"), "w") as f:
                json.dump(config, f, indent=2)
                f.write("\n")
    else:
        write_folder(d, config, tensors)
    with open(os.path.join(d, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    root = os.path.join("tests", "fixtures", "decoders")
    for case in CASES:
        make_case(root, dict(case))
        print("wrote", os.path.join(root, case["name"]))


if __name__ == "__main__":
    main()
