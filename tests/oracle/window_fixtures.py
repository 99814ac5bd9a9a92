"""Tiny Gemma 3 and Olmo 3 models and PyTorch's forward of them, for tests/models/check_architectures.c.

Writes tests/fixtures/decoders/CASE/ for each case below, as llama_fixtures.py
does for Llama, Qwen2 and Qwen3 (the same expected.txt lines; see there),
with two stages more: attn_normed and mlp_normed, the norms of attention's
and the MLP's outputs before their residual adds.  The texts are longer than
the windows, so that the sliding layers' bands are in every fixture.

Which line of behaviour each step follows (transformers' modeling_gemma3 and
modeling_olmo3, 4.5x, and transformers 5's rope_parameters by layer type):
  - Gemma3TextScaledWordEmbedding: embed_tokens(ids) * embed_scale, a float32
    tensor of hidden_size ** 0.5.
  - Gemma3RMSNorm: x * rsqrt(mean(x^2) + eps), times (1 + weight), in float32.
  - Gemma3DecoderLayer: input_layernorm, attention, post_attention_layernorm,
    residual; pre_feedforward_layernorm, MLP, post_feedforward_layernorm,
    residual.
  - Gemma3Attention: q_norm / k_norm over each head's head_dim before RoPE;
    scaling = query_pre_attn_scalar ** -0.5 (divided here by its root, as
    llama_fixtures divides by sqrt(head_dim): the same to a unit in the last
    place); a sliding layer's mask hides key j from query i unless
    i - sliding_window < j <= i (masking_utils.sliding_window_causal_mask).
  - Gemma3RotaryEmbedding: the full layers with rope_theta and rope_scaling
    (linear: inv_freq / factor), the sliding layers with rope_local_base_freq
    unscaled (rotary_emb_local).
  - Gemma3MLP: down_proj(gelu_pytorch_tanh(gate_proj(x)) * up_proj(x)).
  - Gemma 2 (modeling_gemma2): Gemma 3 without q_norm and k_norm, every other layer sliding
    (layer 0 first), one rotary embedding for all layers, and eager_attention_forward's
    softcap: the scaled scores divided by attn_logit_softcapping, tanh, times it, before the
    mask is added.
  - Gemma3ForCausalLM: logits through the tied embedding, then
    final_logit_softcapping: tanh(logits / cap) * cap when set.
  - Olmo3Attention (Olmo2Attention): q_norm over the whole q_proj output
    (num_heads * head_dim), k_norm over k_proj's, before the heads are split
    and turned.
  - Olmo2DecoderLayer: no norm before attention or the MLP; each one's output
    normed (post_attention_layernorm, post_feedforward_layernorm) before its
    residual add.  Olmo2RMSNorm: weight * (x * rsqrt(mean(x^2) + eps)).
  - Olmo3 RoPE: the full layers with rope_scaling (YaRN:
    modeling_rope_utils._compute_yarn_parameters, cos and sin times its
    attention factor), the sliding layers with the default rotation
    (Olmo3Model's rotary embedding by layer type).

The book's from-scratch notebooks (rasbt/LLMs-from-scratch ch05/12_gemma3,
ch05/13_olmo3) agree with these steps, but for one: its Olmo 3 turns every
layer with YaRN, where Hugging Face's turns the sliding layers without it.

attnscope's own restatement, never used by the build or by `make check`.
Run from the top of the source tree with Debian's PyTorch:

    /usr/bin/python3 tests/oracle/window_fixtures.py

Checked against two independent implementations (`make crosscheck`): the book's own Gemma 3
and Olmo 3 notebooks (tests/oracle/crosscheck_window.py, logits within 5.6e-6), and
llama.cpp on gemma3-gguf (tests/oracle/crosscheck_gguf.py, within 3.6e-5: its GELU is a
table of half-precision values).
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_fixtures import stored  # noqa: E402
from llama_fixtures import draw, numbers, rms, write_folder  # noqa: E402

S, F = "sliding_attention", "full_attention"
CASES = [
    # Gemma 3 as the 270M is made (one key head, heads wider than hidden / heads, every sixth
    # layer full), small: a window of 3 over 9 tokens, the third layer full, Gemma 3 4B's linear
    # stretch on the full layers, query_pre_attn_scalar unlike the head size.
    dict(name="gemma3-window", arch="gemma3", L=4, H=4, KV=1, C=32, hd=16, F=48, V=40, P=256,
         dtype="BF16", seed=21, tied=True, theta=1000000.0, local=10000.0, eps=1e-6,
         window=3, types=[S, S, F, S], scalar=24.0,
         scaling=dict(rope_type="linear", factor=4.0), knobs=(True, False, 0.8, [(0, 1), (3, 0)])),
    # 80 tokens, past a block of 64 queries, a window of 20: the blocked attention's band.
    dict(name="gemma3-long", arch="gemma3", L=2, H=2, KV=1, C=16, hd=8, F=24, V=40, P=128,
         dtype="F32", seed=22, tied=True, theta=1000000.0, local=10000.0, eps=1e-6,
         window=20, types=[S, F], scalar=8.0, long=True, knobs=(True, True, 0.9, [(1, 1)])),
    # An older config: sliding_window_pattern instead of layer_types, the logits capped, every
    # query head its own key head, the head untied.
    dict(name="gemma3-pattern", arch="gemma3", L=3, H=2, KV=2, C=16, hd=8, F=24, V=40, P=64,
         dtype="F32", seed=23, tied=False, theta=1000000.0, local=10000.0, eps=1e-6,
         window=4, pattern=3, scalar=8.0, softcap=3.0),
    # Olmo 3 7B's RoPE (YaRN, factor 8 over an original context of max / 8, its attention
    # factor), grouped keys, post-norm, every fourth layer full.  Its knobs keep the scaling
    # (unscaled at T = 0.7 its QK-normed scores, stretched by YaRN's 1.21 squared, are so peaked
    # that float32's rounding on both sides grows past 1e-5 in the last layer).
    dict(name="olmo3-yarn", arch="olmo3", L=4, H=4, KV=2, C=32, hd=8, F=40, V=40, P=256,
         dtype="BF16", seed=24, tied=False, theta=500000.0, eps=1e-6, window=4,
         types=None, scaling=dict(rope_type="yarn", factor=8.0, original_max_position_embeddings=32,
                                  attention_factor=1.2079441541679836, beta_fast=32.0,
                                  beta_slow=1.0), knobs=(False, True, 0.8, [(0, 1), (3, 0)])),
    # transformers 5's spelling: rope_parameters by layer type, YaRN's attention factor left to
    # its default (0.1 ln(factor) + 1), every query head its own key head.
    # Gemma 2 (modeling_gemma2): no QK-norm, every other layer sliding (its default, no
    # layer_types), one RoPE base, the scores capped before the mask (attn_logit_softcapping 2:
    # low enough to bite these scores) and the logits capped too.
    dict(name="gemma2-capped", arch="gemma2", L=3, H=4, KV=2, C=32, hd=8, F=48, V=40, P=64,
         dtype="F32", seed=26, tied=True, theta=10000.0, eps=1e-6, window=3, types=None,
         scalar=8.0, attn_cap=2.0, softcap=5.0, knobs=(True, False, 0.8, [(1, 2)])),
    dict(name="olmo3-params", arch="olmo3", L=2, H=2, KV=2, C=16, hd=8, F=24, V=40, P=64,
         dtype="F32", seed=25, tied=False, theta=500000.0, eps=1e-6, window=3, types=[S, F],
         by_kind=True, scaling=dict(rope_type="yarn", factor=4.0, original_max_position_embeddings=16)),
]
IDS = [3, 17, 5, 5, 0, 21, 9, 30, 2]
LONG_IDS = [(7 * i + 3) % 40 for i in range(80)]
TOP = 3
KNOBS = (False, False, 0.7, [(0, 1), (1, 0)])
STAGES = ["norm1", "q_proj", "k_proj", "v", "q_normed", "k_normed", "q", "k", "scores",
          "scaled", "weights", "context", "attn", "attn_normed", "resid1", "norm2", "gate", "up",
          "act", "mlp", "mlp_normed", "resid2"]


def gemma_rms(x, w, eps):
    """Gemma3RMSNorm: the norm in float32, times (1 + weight)."""
    return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)) * (1.0 + w)


def default_freq(theta, d):
    return 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))


def yarn_freq(theta, d, sc, max_positions):
    """_compute_yarn_parameters: the frequencies and the attention factor (the correction range's
    bounds rounded outwards unless sc says truncate false, as gpt-oss's does)."""
    factor = sc["factor"]
    original = sc.get("original_max_position_embeddings", max_positions)
    attention = sc.get("attention_factor")
    if attention is None:
        attention = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    beta_fast, beta_slow = sc.get("beta_fast", 32.0), sc.get("beta_slow", 1.0)

    def dim(rot):
        return (d * math.log(original / (rot * 2 * math.pi))) / (2 * math.log(theta))

    low, high = dim(beta_fast), dim(beta_slow)
    if sc.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    pos = theta ** (torch.arange(0, d, 2).float() / d)
    extrapolation, interpolation = 1.0 / pos, 1.0 / (factor * pos)
    ramp = torch.clamp((torch.arange(d // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    keep = 1 - ramp
    return interpolation * (1 - keep) + extrapolation * keep, attention


def frequencies(c):
    """(full layers' frequencies, their cos/sin factor), the sliding layers' frequencies."""
    d, sc = c["hd"], c.get("scaling")
    local = default_freq(c.get("local", c["theta"]), d)
    if sc is None:
        return default_freq(c["theta"], d), 1.0, local
    if sc["rope_type"] == "linear":
        return default_freq(c["theta"], d) / sc["factor"], 1.0, local
    freq, attention = yarn_freq(c["theta"], d, sc, c["P"])
    return freq, attention, local


def rotate(x, freq, factor):
    n = x.shape[1]
    angles = torch.arange(n).float()[:, None] * freq[None, :]
    emb = torch.cat((angles, angles), dim=-1)
    cos, sin = emb.cos() * factor, emb.sin() * factor
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin


def layer_types(c):
    if c.get("types"):
        return c["types"]
    pattern = c.get("pattern", {"gemma3": 6, "gemma2": 2}.get(c["arch"], 4))
    return [S if (i + 1) % pattern else F for i in range(c["L"])]


def attention(c, p, l, h, s, knobs, mask, freqs):
    causal, scaled, temperature, ablated = knobs
    gemma = c["arch"] in ("gemma3", "gemma2")
    n, H, KV, hd, eps = h.shape[0], c["H"], c["KV"], c["hd"], c["eps"]
    lin = lambda t, key: t @ p[(l, key)].T
    q, k, v = lin(h, "q"), lin(h, "k"), lin(h, "v")
    s["q_proj"], s["k_proj"], s["v"] = q, k, v
    if c["arch"] == "gemma2":
        qh, kh = q.view(n, H, hd).transpose(0, 1), k.view(n, KV, hd).transpose(0, 1)
    elif gemma:
        qh = gemma_rms(q.view(n, H, hd), p[(l, "q_norm")], eps).transpose(0, 1)
        kh = gemma_rms(k.view(n, KV, hd), p[(l, "k_norm")], eps).transpose(0, 1)
    else:
        qh = rms(q, p[(l, "q_norm")], eps).view(n, H, hd).transpose(0, 1)
        kh = rms(k, p[(l, "k_norm")], eps).view(n, KV, hd).transpose(0, 1)
    if c["arch"] != "gemma2":
        s["q_normed"] = qh.transpose(0, 1).reshape(n, H * hd)
        s["k_normed"] = kh.transpose(0, 1).reshape(n, KV * hd)
    vh = v.view(n, KV, hd).transpose(0, 1)
    full, factor, local = freqs
    sliding = layer_types(c)[l] == S
    qh = rotate(qh, local if sliding else full, 1.0 if sliding else factor)
    kh = rotate(kh, local if sliding else full, 1.0 if sliding else factor)
    s["q"] = qh.transpose(0, 1).reshape(n, H * hd)
    s["k"] = kh.transpose(0, 1).reshape(n, KV * hd)
    g = H // KV
    kh, vh = kh.repeat_interleave(g, dim=0), vh.repeat_interleave(g, dim=0)
    scores = qh @ kh.transpose(-1, -2)
    s["scores"] = scores
    root = math.sqrt(c["scalar"]) if gemma else math.sqrt(hd)
    seen = mask[S if sliding else F]
    sc = scores / ((root if scaled else 1.0) * temperature)
    if c.get("attn_cap"):  # (eager_attention_forward: capped, then the mask added)
        sc = torch.tanh(sc / c["attn_cap"]) * c["attn_cap"]
    sc = sc.masked_fill(~seen, float("-inf"))
    s["scaled"] = sc
    w = torch.softmax(sc, dim=-1)
    s["weights"] = w
    ctx = w @ vh
    for (al, ah) in ablated:
        if al == l:
            ctx[ah] = 0.0
    ctx = ctx.transpose(0, 1).reshape(n, H * hd)
    s["context"] = ctx
    return lin(ctx, "o")


def forward(c, p, ids, knobs):
    causal = knobs[0]
    gemma = c["arch"] in ("gemma3", "gemma2")
    norm = (lambda x, w: gemma_rms(x, w, c["eps"])) if gemma else (lambda x, w: rms(x, w, c["eps"]))
    n = len(ids)
    freqs = frequencies(c)
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    if causal:
        mask = {F: j <= i, S: (j <= i) & (i - j < c["window"])}
    else:  # (the causal knob off lifts the whole mask, the window's band too)
        everything = torch.ones(n, n, dtype=torch.bool)
        mask = {F: everything, S: everything}
    out = {}
    x = p["embed"][torch.tensor(ids)]
    if gemma:
        x = x * torch.tensor(c["C"] ** 0.5, dtype=torch.float32)
    out["embed"] = x
    for l in range(c["L"]):
        s = {}
        h = x
        if gemma:
            h = norm(x, p[(l, "norm1")])
            s["norm1"] = h
        a = attention(c, p, l, h, s, knobs, mask, freqs)
        s["attn"] = a
        a = norm(a, p[(l, "attn_post")])
        s["attn_normed"] = a
        x = x + a
        s["resid1"] = x
        h = x
        if gemma:
            h = norm(x, p[(l, "norm2")])
            s["norm2"] = h
        gate, up = h @ p[(l, "gate")].T, h @ p[(l, "up")].T
        if gemma:
            act = torch.nn.functional.gelu(gate, approximate="tanh") * up
        else:
            act = torch.nn.functional.silu(gate) * up
        s["gate"], s["up"], s["act"] = gate, up, act
        m = act @ p[(l, "down")].T
        s["mlp"] = m
        m = norm(m, p[(l, "mlp_post")])
        s["mlp_normed"] = m
        x = x + m
        s["resid2"] = x
        out[l] = s
    final = norm(x, p["norm"])
    out["final"] = final
    logits = final @ p["head"].T
    if c.get("softcap"):
        logits = torch.tanh(logits / c["softcap"]) * c["softcap"]
    out["top"] = torch.topk(torch.softmax(logits, dim=-1), TOP, dim=-1)
    out["freq"] = freqs[0]
    out["freq_local"] = freqs[2]
    return out


# What the long text's fixture keeps of every layer (its other stages are checked by the short ones).
LONG_STAGES = ["q", "k", "weights", "context", "resid2"]


def lines_of(c, out, stages_too):
    lines = ["embed %s" % numbers(out["embed"])] if stages_too else []
    for l in range(c["L"]):
        for name in (LONG_STAGES if c.get("long") else STAGES) if stages_too else ["weights", "context", "resid2"]:
            if name in out[l]:
                t = out[l][name]
                lines.append("%s %d %d %s" % (name, l, t.numel(), numbers(t)))
    lines.append("final %s" % numbers(out["final"]))
    top = out["top"]
    lines.append("top %d %s %s" % (TOP, " ".join(map(str, top.indices.flatten().tolist())),
                                   numbers(top.values)))
    return lines


def weights(c, gen):
    L, H, KV, C, Fw, V, hd = c["L"], c["H"], c["KV"], c["C"], c["F"], c["V"], c["hd"]
    gemma = c["arch"] in ("gemma3", "gemma2")
    tensors, p = [], {}

    def put(key, name, t):
        s, f32 = stored(t, c["dtype"])
        tensors.append((name, s))
        p[key] = f32

    # Gemma's norms store w of (1 + w): drawn around 0; Olmo's around 1.  Olmo's matrices
    # smaller: with no norm before them, 0.3 grows its MLP's outputs to 100 by the third layer,
    # where float32's rounding of a sum is 1e-5 of its small elements.
    gain = (lambda n: draw(gen, n, scale=0.1)) if gemma else (lambda n: 1.0 + draw(gen, n, scale=0.1))
    scale = 0.3 if gemma else 0.15
    put("embed", "model.embed_tokens.weight", draw(gen, V, C))
    for l in range(L):
        hf = "model.layers.%d." % l
        if gemma:
            put((l, "norm1"), hf + "input_layernorm.weight", gain(C))
        for key, name, rows in (("q", "q_proj", H * hd), ("k", "k_proj", KV * hd), ("v", "v_proj", KV * hd)):
            put((l, key), hf + "self_attn.%s.weight" % name, draw(gen, rows, C, scale=scale))
        put((l, "o"), hf + "self_attn.o_proj.weight", draw(gen, C, H * hd, scale=scale))
        if c["arch"] != "gemma2":
            put((l, "q_norm"), hf + "self_attn.q_norm.weight", gain(hd if gemma else H * hd))
            put((l, "k_norm"), hf + "self_attn.k_norm.weight", gain(hd if gemma else KV * hd))
        put((l, "attn_post"), hf + "post_attention_layernorm.weight", gain(C))
        if gemma:
            put((l, "norm2"), hf + "pre_feedforward_layernorm.weight", gain(C))
        put((l, "mlp_post"), hf + "post_feedforward_layernorm.weight", gain(C))
        for key, name, shape in (("gate", "gate_proj", (Fw, C)), ("up", "up_proj", (Fw, C)),
                                 ("down", "down_proj", (C, Fw))):
            put((l, key), hf + "mlp.%s.weight" % name, draw(gen, *shape, scale=scale))
    put("norm", "model.norm.weight", gain(C))
    if c["tied"]:
        p["head"] = p["embed"]
    else:
        put("head", "lm_head.weight", draw(gen, V, C))
    return tensors, p


def config_of(c):
    gemma = c["arch"] in ("gemma3", "gemma2")
    config = {"architectures": [{"gemma3": "Gemma3ForCausalLM", "gemma2": "Gemma2ForCausalLM",
                                 "olmo3": "Olmo3ForCausalLM"}[c["arch"]]],
              "model_type": {"gemma3": "gemma3_text"}.get(c["arch"], c["arch"]),
              "hidden_size": c["C"],
              "intermediate_size": c["F"], "num_hidden_layers": c["L"],
              "num_attention_heads": c["H"], "num_key_value_heads": c["KV"],
              "vocab_size": c["V"], "max_position_embeddings": c["P"], "rms_norm_eps": c["eps"],
              "rope_theta": c["theta"], "sliding_window": c["window"], "attention_bias": False,
              "tie_word_embeddings": c["tied"],
              "torch_dtype": {"F32": "float32", "BF16": "bfloat16"}[c["dtype"]]}
    if c.get("types"):
        config["layer_types"] = c["types"]
    if c["arch"] == "gemma2":
        config.update({"head_dim": c["hd"], "hidden_activation": "gelu_pytorch_tanh",
                       "query_pre_attn_scalar": c["scalar"],
                       "attn_logit_softcapping": c["attn_cap"],
                       "final_logit_softcapping": c["softcap"]})
    elif gemma:
        config.update({"head_dim": c["hd"], "hidden_activation": "gelu_pytorch_tanh",
                       "query_pre_attn_scalar": c["scalar"], "rope_local_base_freq": c["local"],
                       "rope_scaling": c.get("scaling"), "attn_logit_softcapping": None,
                       "final_logit_softcapping": c.get("softcap"),
                       "use_bidirectional_attention": False})
        if c.get("pattern"):
            config["sliding_window_pattern"] = c["pattern"]
    else:
        config["hidden_act"] = "silu"
        if c.get("by_kind"):
            del config["rope_theta"]
            config["rope_parameters"] = {
                F: dict(c["scaling"], rope_theta=c["theta"]),
                S: {"rope_type": "default", "rope_theta": c["theta"]}}
        else:
            config["rope_scaling"] = c.get("scaling")
    return config


def make_case(root, c):
    gen = torch.Generator().manual_seed(c["seed"])
    tensors, p = weights(c, gen)
    ids = [i % c["V"] for i in (LONG_IDS if c.get("long") else IDS)]
    plain = forward(c, p, ids, (True, True, 1.0, []))
    lines = ["ids %d %s" % (len(ids), " ".join(map(str, ids))),
             "freq %d %s" % (c["hd"] // 2, numbers(plain["freq"])),
             "freq_local %d %s" % (c["hd"] // 2, numbers(plain["freq_local"]))]
    lines += lines_of(c, plain, True)
    knobs = c.get("knobs", KNOBS)
    knobs = (knobs[0], knobs[1], knobs[2], [a for a in knobs[3] if a[0] < c["L"]])
    lines.append("knobs %d %d %.9g %s" % (knobs[0], knobs[1], knobs[2],
                                          ",".join("%d.%d" % a for a in knobs[3])))
    lines += lines_of(c, forward(c, p, ids, knobs), False)
    d = os.path.join(root, c["name"])
    os.makedirs(d, exist_ok=True)
    write_folder(d, config_of(c), tensors)
    with open(os.path.join(d, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    root = os.path.join("tests", "fixtures", "decoders")
    for case in CASES:
        make_case(root, dict(case))
        print("wrote", os.path.join(root, case["name"]))


if __name__ == "__main__":
    main()
