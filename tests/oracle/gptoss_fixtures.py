"""Tiny gpt-oss models and PyTorch's forward of them.

For tests/models/check_architectures.c.

Writes tests/fixtures/decoders/CASE/ as moe_fixtures.py does (config.json,
model.safetensors, the tiny tokenizer.json, expected.txt with every stage of
every layer, the router's three lines for each layer) and, for the
attention sinks, one line more for each layer:

    sink L count values     (H, n) the part of each row's softmax its head's
                            sink took (dropped with it)

and a section "sinks_off" with the sinks switched off (their logits -inf:
every row's weights sum to 1 again).

Which line of behaviour each step follows (transformers' modeling_gpt_oss,
2025-26; read through the search tool's copy of huggingface/transformers):
  - GptOssRMSNorm: in float32, weight * (x * rsqrt(mean(x^2) + eps)).
  - GptOssAttention: q_proj, k_proj, v_proj, o_proj with biases
    (attention_bias); RoPE with _apply_rotary_emb (first half, second half:
    rotate_half's sum), cos and sin of the frequencies alone, times YaRN's
    attention factor; one rotary embedding for every layer (the sliding
    layers' too).
  - eager_attention_forward: scores times scaling (head_dim ** -0.5), the
    causal (or sliding-window) mask added, the head's sink appended as a
    last column, the row's max subtracted, softmax, the sink's column
    dropped: the weights.
  - layer_types: sliding_attention where (i + 1) % 2 (GptOssConfig's
    default), sliding_window keys.
  - GptOssTopKRouter: logits = x W^T + b; torch.topk of the logits; softmax
    over those k; scattered into (n, E).
  - GptOssExperts (the training branch: only the chosen experts, in
    increasing expert order, index_add_): gate_up = x @ gate_up_proj[e] +
    bias; gate = even columns, up = odd; gate clamped above at limit, up at
    +-limit; (up + 1) * gate * sigmoid(gate * alpha); @ down_proj[e] + bias;
    times the token's weight.
  - The hub checkpoint's MXFP4 (transformers' integrations/mxfp4.py,
    convert_moe_packed_tensors): NAME_blocks (E, out, G, 16) and
    NAME_scales (E, out, G); value 2j of a block the low nibble of byte j,
    2j + 1 its high one, each an e2m1 code (FP4_VALUES), times 2^(scale -
    127); (E, out, in) transposed to (E, in, out).
  - _compute_yarn_parameters with truncate false: the correction range's
    bounds not rounded.
Cross-checked once against an independent implementation, llama.cpp's (no book notebook
builds gpt-oss): tests/oracle/crosscheck_gptoss.py runs attnscope and libllama on one gpt-oss
GGUF, every top-5 next token the same and their probabilities within 6.2e-7 with the experts
in float32 (2026-11-28).

The "router" line is attnscope's own display: the softmax over every
expert's logit (gpt-oss's weights are the softmax over the chosen k, the
"routed" line).

attnscope's own restatement, never used by the build or by `make check`.
Run from the top of the source tree with Debian's PyTorch:

    /usr/bin/python3 tests/oracle/gptoss_fixtures.py
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_fixtures import stored  # noqa: E402
from llama_fixtures import draw, numbers, rms, write_folder, IDS, TOP  # noqa: E402
from window_fixtures import yarn_freq  # noqa: E402

S, F = "sliding_attention", "full_attention"
CASES = [
    # Float experts (gate_up_proj in -> out, interleaved), a window of 3 on layers 0 and 2, YaRN
    # stretching 32 times over 4 positions, a clamp low enough to bite (0.6).
    # (its weights drawn small, 0.2: four layers of float32 rounding, YaRN's factor squared on
    # every score, stay well inside 1e-5)
    dict(name="gpt-oss", L=4, H=4, KV=2, C=32, hd=8, E=4, K=2, FE=16, V=36, P=128, window=3,
         dtype="F32", mxfp4=False, seed=31, limit=0.6, eps=1e-5, theta=150000.0, scale=0.2,
         knobs=(False, True, 0.8, [(0, 1), (3, 2)]), off=[(1, 0), (2, 3)]),
    # The hub checkpoint's layout: the experts in MXFP4 blocks and scales, the rest bfloat16.
    dict(name="gpt-oss-mxfp4", L=2, H=4, KV=1, C=64, hd=16, E=4, K=2, FE=32, V=36, P=128,
         window=4, dtype="BF16", mxfp4=True, seed=32, limit=7.0, eps=1e-5, theta=150000.0,
         scale=0.15,
         knobs=(True, False, 1.0, [(1, 0)])),
]
KNOBS = (False, False, 0.7, [(0, 1)])
STAGES = ["norm1", "q_proj", "k_proj", "v", "q", "k", "scores", "scaled", "weights", "sink",
          "context", "attn", "resid1", "norm2", "router_logits", "router", "routed", "mlp",
          "resid2"]
FP4_VALUES = [+0.0, +0.5, +1.0, +1.5, +2.0, +3.0, +4.0, +6.0,
              -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]
YARN = dict(rope_type="yarn", factor=32.0, beta_fast=32.0, beta_slow=1.0, truncate=False,
            original_max_position_embeddings=4)


def yarn(c):
    """_compute_yarn_parameters (truncate false): the frequencies and the attention factor."""
    return yarn_freq(c["theta"], c["hd"], YARN, c["P"])


def rotate(x, freq, factor):
    """x (heads, n, d): _apply_rotary_emb with cos and sin of (n, d/2), times the factor."""
    n = x.shape[1]
    angles = torch.arange(n).float()[:, None] * freq[None, :]
    cos, sin = angles.cos() * factor, angles.sin() * factor
    first, second = torch.chunk(x, 2, dim=-1)
    return torch.cat((first * cos - second * sin, second * cos + first * sin), dim=-1)


def kinds(c):
    return [S if (i + 1) % 2 else F for i in range(c["L"])]


def attention(c, p, l, h, s, knobs, mask, freq, sinks_on):
    causal, scaled, temperature, ablated = knobs
    n, H, KV, hd = h.shape[0], c["H"], c["KV"], c["hd"]
    q = h @ p[(l, "q")].T + p[(l, "q_b")]
    k = h @ p[(l, "k")].T + p[(l, "k_b")]
    v = h @ p[(l, "v")].T + p[(l, "v_b")]
    s["q_proj"], s["k_proj"], s["v"] = q, k, v
    qh, kh = q.view(n, H, hd).transpose(0, 1), k.view(n, KV, hd).transpose(0, 1)
    vh = v.view(n, KV, hd).transpose(0, 1)
    inv, factor = freq
    qh, kh = rotate(qh, inv, factor), rotate(kh, inv, factor)
    s["q"] = qh.transpose(0, 1).reshape(n, H * hd)
    s["k"] = kh.transpose(0, 1).reshape(n, KV * hd)
    g = H // KV
    kh, vh = kh.repeat_interleave(g, dim=0), vh.repeat_interleave(g, dim=0)
    scores = qh @ kh.transpose(-1, -2)
    s["scores"] = scores
    # (attnscope divides by the root and the temperature; with hd 8 or 16 the root is exact)
    sc = scores / ((math.sqrt(hd) if scaled else 1.0) * temperature)
    sc = sc.masked_fill(~mask[kinds(c)[l]], float("-inf"))
    s["scaled"] = sc
    sink = p[(l, "sinks")] if sinks_on else torch.full((H,), float("-inf"))
    combined = torch.cat([sc, sink.reshape(H, 1, 1).expand(H, n, 1)], dim=-1)
    combined = combined - combined.max(dim=-1, keepdim=True).values
    probs = torch.softmax(combined, dim=-1)
    w = probs[..., :-1]
    s["weights"] = w
    s["sink"] = probs[..., -1] if sinks_on else torch.zeros(H, n)
    ctx = w @ vh
    for (al, ah) in ablated:
        if al == l:
            ctx[ah] = 0.0
    ctx = ctx.transpose(0, 1).reshape(n, H * hd)
    s["context"] = ctx
    return ctx @ p[(l, "o")].T + p[(l, "o_b")]


def experts(c, p, l, h, s, off=()):
    """GptOssTopKRouter and GptOssExperts (the chosen experts only, in expert order)."""
    n, E, K, limit = h.shape[0], c["E"], c["K"], c["limit"]
    logits = h @ p[(l, "router")].T + p[(l, "router_b")]
    for (ol, oe) in off:
        if ol == l:
            logits[:, oe] = float("-inf")
    top, chosen = torch.topk(logits, K, dim=-1)
    top = torch.softmax(top, dim=1, dtype=top.dtype)
    routed = torch.zeros_like(logits).scatter_(1, chosen, top)
    out = torch.zeros(n, c["C"])
    mask = torch.nn.functional.one_hot(chosen, num_classes=E).permute(2, 1, 0)
    for e in range(E):
        _, token = torch.where(mask[e])
        if token.numel() == 0:
            continue
        gate_up = h[token] @ p[(l, "gate_up")][e] + p[(l, "gate_up_b")][e]
        gate, up = gate_up[..., ::2], gate_up[..., 1::2]
        gate = gate.clamp(min=None, max=limit)
        up = up.clamp(min=-limit, max=limit)
        glu = gate * torch.sigmoid(gate * 1.702)
        y = ((up + 1) * glu) @ p[(l, "down")][e] + p[(l, "down_b")][e]
        out.index_add_(0, token, y * routed[token, e, None])
    s["router_logits"], s["router"], s["routed"] = logits, torch.softmax(logits, dim=1), routed
    return out


def forward(c, p, ids, knobs, off=(), sinks_on=True):
    n = len(ids)
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    if knobs[0]:
        mask = {F: j <= i, S: (j <= i) & (i - j < c["window"])}
    else:
        every = torch.ones(n, n, dtype=torch.bool)
        mask = {F: every, S: every}
    freq = yarn(c)
    out = {"freq": freq[0]}
    x = p["embed"][torch.tensor(ids)]
    out["embed"] = x
    for l in range(c["L"]):
        s = {}
        h = rms(x, p[(l, "norm1")], c["eps"])
        s["norm1"] = h
        a = attention(c, p, l, h, s, knobs, mask, freq, sinks_on)
        s["attn"] = a
        x = x + a
        s["resid1"] = x
        h = rms(x, p[(l, "norm2")], c["eps"])
        s["norm2"] = h
        m = experts(c, p, l, h, s, off)
        s["mlp"] = m
        x = x + m
        s["resid2"] = x
        out[l] = s
    final = rms(x, p["norm"], c["eps"])
    out["final"] = final
    out["top"] = torch.topk(torch.softmax(final @ p["head"].T, dim=-1), TOP, dim=-1)
    return out


def lines_of(c, out, stages_too):
    lines = ["embed %s" % numbers(out["embed"])] if stages_too else []
    for l in range(c["L"]):
        for name in STAGES if stages_too else ["weights", "sink", "context", "routed", "resid2"]:
            t = out[l][name]
            lines.append("%s %d %d %s" % (name, l, t.numel(), numbers(t)))
    lines.append("final %s" % numbers(out["final"]))
    top = out["top"]
    lines.append("top %d %s %s" % (TOP, " ".join(map(str, top.indices.flatten().tolist())),
                                   numbers(top.values)))
    return lines


def mxfp4(gen, E, rows, cols):
    """Random MXFP4 blocks and scales of (E, rows, cols), and their float32 values (E, cols,
    rows) as convert_moe_packed_tensors makes them."""
    G = cols // 32
    blocks = torch.randint(0, 256, (E, rows, G, 16), generator=gen, dtype=torch.int64)
    scales = torch.randint(116, 121, (E, rows, G), generator=gen, dtype=torch.int64)
    lut = torch.tensor(FP4_VALUES, dtype=torch.float32)
    lo, hi = lut[blocks & 0x0F], lut[blocks >> 4]
    vals = torch.stack((lo, hi), dim=-1).reshape(E, rows, G, 32)
    vals = torch.ldexp(vals, (scales - 127)[..., None].float())
    vals = vals.reshape(E, rows, cols).transpose(1, 2).contiguous()
    return blocks.to(torch.uint8), scales.to(torch.uint8), vals


def make_case(root, c):
    gen = torch.Generator().manual_seed(c["seed"])
    L, H, KV, C, V, hd, E, FE = c["L"], c["H"], c["KV"], c["C"], c["V"], c["hd"], c["E"], c["FE"]
    tensors = []
    p = {}

    def put(key, name, t):
        s, f32 = stored(t, c["dtype"] if t.dim() >= 2 else "F32")
        tensors.append((name, s))
        p[key] = f32

    def gain(k):
        return 1.0 + draw(gen, k, scale=0.1)

    put("embed", "model.embed_tokens.weight", draw(gen, V, C))
    for l in range(L):
        hf = "model.layers.%d." % l
        put((l, "norm1"), hf + "input_layernorm.weight", gain(C))
        for key, rows, cols in (("q", H * hd, C), ("k", KV * hd, C), ("v", KV * hd, C),
                                ("o", C, H * hd)):
            put((l, key), hf + "self_attn.%s_proj.weight" % key,
                draw(gen, rows, cols, scale=c.get("scale", 0.3)))
            put((l, key + "_b"), hf + "self_attn.%s_proj.bias" % key, draw(gen, rows, scale=0.1))
        put((l, "sinks"), hf + "self_attn.sinks", draw(gen, H, scale=1.5))
        put((l, "norm2"), hf + "post_attention_layernorm.weight", gain(C))
        put((l, "router"), hf + "mlp.router.weight", draw(gen, E, C, scale=0.5))
        put((l, "router_b"), hf + "mlp.router.bias", draw(gen, E, scale=0.2))
        ex = hf + "mlp.experts."
        if c["mxfp4"]:
            for key, rows, cols in (("gate_up", 2 * FE, C), ("down", C, FE)):
                blocks, scales, vals = mxfp4(gen, E, rows, cols)
                tensors.append((ex + key + "_proj_blocks", blocks))
                tensors.append((ex + key + "_proj_scales", scales))
                p[(l, key)] = vals
        else:
            put((l, "gate_up"), ex + "gate_up_proj", draw(gen, E, C, 2 * FE, scale=c.get("scale", 0.3)))
            put((l, "down"), ex + "down_proj", draw(gen, E, FE, C, scale=c.get("scale", 0.3)))
        # (the biases are float32 in either: bfloat16 would round them the same way both sides)
        p[(l, "gate_up_b")] = draw(gen, E, 2 * FE, scale=0.1)
        tensors.append((ex + "gate_up_proj_bias", p[(l, "gate_up_b")]))
        p[(l, "down_b")] = draw(gen, E, C, scale=0.1)
        tensors.append((ex + "down_proj_bias", p[(l, "down_b")]))
    put("norm", "model.norm.weight", gain(C))
    put("head", "lm_head.weight", draw(gen, V, C))

    ids = [i % V for i in IDS]
    plain = forward(c, p, ids, (True, True, 1.0, []))
    lines = ["ids %d %s" % (len(ids), " ".join(map(str, ids))),
             "freq %d %s" % (hd // 2, numbers(plain["freq"])),
             "freq_local %d %s" % (hd // 2, numbers(plain["freq"]))]
    lines += lines_of(c, plain, True)
    knobs = c.get("knobs", KNOBS)
    lines.append("knobs %d %d %.9g %s" % (knobs[0], knobs[1], knobs[2],
                                          ",".join("%d.%d" % a for a in knobs[3])))
    lines += lines_of(c, forward(c, p, ids, knobs), False)
    if c.get("off"):
        lines.append("experts_off %s" % ",".join("%d.%d" % a for a in c["off"]))
        lines += lines_of(c, forward(c, p, ids, (True, True, 1.0, []), c["off"]), False)
    lines.append("sinks_off")
    lines += lines_of(c, forward(c, p, ids, (True, True, 1.0, []), sinks_on=False), False)

    d = os.path.join(root, c["name"])
    os.makedirs(d, exist_ok=True)
    config = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
              "hidden_size": C, "num_hidden_layers": L, "num_attention_heads": H,
              "num_key_value_heads": KV, "head_dim": hd, "vocab_size": V,
              "max_position_embeddings": c["P"], "rms_norm_eps": c["eps"],
              "rope_theta": c["theta"], "rope_scaling": YARN, "hidden_act": "silu",
              "tie_word_embeddings": False, "attention_bias": True, "attention_dropout": 0.0,
              "num_local_experts": E, "num_experts_per_tok": c["K"], "intermediate_size": FE,
              "swiglu_limit": c["limit"], "sliding_window": c["window"],
              "layer_types": kinds(c), "output_router_logits": False,
              "router_aux_loss_coef": 0.9,
              "torch_dtype": {"F32": "float32", "BF16": "bfloat16"}[c["dtype"]]}
    if c["mxfp4"]:
        config["quantization_config"] = {"quant_method": "mxfp4",
                                         "modules_to_not_convert": ["model.layers.*.self_attn",
                                                                    "model.layers.*.mlp.router",
                                                                    "model.embed_tokens",
                                                                    "lm_head"]}
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
