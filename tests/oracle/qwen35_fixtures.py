"""Tiny Qwen3.5 models and PyTorch's forward of them, for tests/models/check_qwen35.c.

Writes tests/fixtures/decoders/CASE/ for each case below: config.json as
Hugging Face writes one (flat, Qwen3_5ForCausalLM; or the whole model's,
Qwen3_5ForConditionalGeneration, with text_config and a vision_config), the
weights in model.safetensors (the nested one's under model.language_model.,
with a vision tower's model.visual.* and a multi-token head's mtp.* beside
them, which a text forward never reads), the tiny tokenizer.json, and
expected.txt in llama_fixtures.py's lines:

    ids N i0 i1 ...
    kinds L k0 k1 ...                 1 where a layer is Gated DeltaNet, 0 full attention
    embed N*C values
    STAGE L count values              every stage of every layer (GDN_STAGES or FULL_STAGES,
                                      then BLOCK_STAGES)
    effective L count values          a DeltaNet layer's (Hv, n, n) effective attention M
    final N*C values
    top K N*K ids, then N*K probabilities

Which line of behaviour each step follows (transformers' modeling_qwen3_5.py,
read through the search tool's copy of huggingface/transformers, 2026-12):
  - Qwen3_5RMSNorm: in float32, x * rsqrt(mean(x^2) + eps) * (1 + w): the
    input, post-attention, final, q and k norms.
  - Qwen3_5RMSNormGated: x * rsqrt(mean(x^2) + eps), times w (plain), times
    silu(z), each value head's.
  - Qwen3_5GatedDeltaNet: mixed = in_proj_qkv(x); F.conv1d over time, groups
    = channels, padding taps - 1, the first n outputs, silu; split q | k | v;
    beta = sigmoid(in_proj_b(x)); g = -exp(A_log) * softplus(in_proj_a(x) +
    dt_bias); q and k l2norm'ed (x * rsqrt(sum(x^2) + 1e-6)); q / sqrt(k_dim);
    value head j reads key head j // (v_heads / k_heads) (repeat_interleave);
    torch_recurrent_gated_delta_rule: S *= exp(g); mem = (S * k).sum over
    k_dim; S += k (beta (v - mem)); o = (S * q).sum over k_dim; the gated
    norm; out_proj.
  - Qwen3_5Attention: q_proj viewed (n, H, 2 d) and chunked: query | gate;
    q_norm, k_norm per head; RoPE on the first rope_dim = int(d *
    partial_rotary_factor) columns (inv_freq over rope_dim, rotate_half of
    those columns, the rest passed through); eager attention (scaling d^-0.5,
    causal mask, softmax float32); the context times sigmoid(gate); o_proj.
  - Qwen3_5DecoderLayer: x + mixer(input_layernorm(x)), then + mlp(norm2).
  - mrope: text positions are the same in all three sections, so each
    section's angles are RoPE's (the interleaving moves nothing).

The effective attention is attnscope's own reading of a DeltaNet layer:
M[t, s] = beta_s k_s^T P(s, t) q_t with P(s, t) the product over r in (s, t]
of e^(g_r) (I - beta_r k_r k_r^T), so that o_t = sum_s M[t, s] v_s.  The
script checks that identity against the recurrence (to 1e-5) before it
writes anything: two forms of the same layer agreeing.

attnscope's own restatement, never used by the build or by `make check`.
Run from the top of the source tree with Debian's PyTorch:

    /usr/bin/python3 tests/oracle/qwen35_fixtures.py [CASE ...]
"""
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_fixtures import stored, write_safetensors  # noqa: E402
from llama_fixtures import numbers, tiny_tokenizer  # noqa: E402

CASES = [
    # Flat: layer_types given, as many files have them; value heads as many as key heads.
    dict(name="qwen35", nested=False, L=4, H=2, KV=1, C=32, F=48, V=36, P=256, hd=16,
         kh=2, vh=2, dk=8, dv=8, taps=4, seed=41, tied=True, types=True),
    # Nested (the whole model's config): the kinds from full_attention_interval, two value
    # heads to a key head, more value heads than attention heads (as Qwen3.5-0.8B's 16 to
    # 8), an untied head, vision and MTP tensors beside the text model's.
    dict(name="qwen35-vl", nested=True, L=4, H=2, KV=1, C=32, F=40, V=36, P=256, hd=8,
         kh=2, vh=4, dk=8, dv=4, taps=4, seed=42, tied=False, types=False),
    # Flat, its kinds not three to one (layer_types says), two value heads to a key head of
    # the same width (as Qwen3.5's files have them, and llama.cpp's reader requires), and a
    # whole multi-token-prediction layer beside: tests/oracle/gguf_models.py converts it to
    # qwen35-gguf as llama.cpp does.
    dict(name="qwen35-gqa", nested=False, L=4, H=4, KV=2, C=32, F=48, V=36, P=256, hd=16,
         kh=2, vh=4, dk=8, dv=8, taps=4, seed=43, tied=False, types=True, kinds=[1, 0, 1, 0],
         mtp=True),
    # Qwen3.5-MoE's whole model (Qwen3_5MoeForConditionalGeneration, as Qwen3.6-35B-A3B
    # ships): every MLP a mixture of E experts, K a token, their projections stacked as the
    # hub's files keep them (gate_up_proj, down_proj), a shared expert behind a sigmoid gate,
    # no intermediate_size; layer 0's router rows for experts 1 and 2 equal (a tie).
    dict(name="qwen35-moe", nested=True, L=4, H=2, KV=1, C=32, F=0, V=36, P=256, hd=16,
         kh=2, vh=4, dk=8, dv=8, taps=4, seed=44, tied=False, types=True, kinds=[1, 1, 1, 0],
         moe=dict(E=4, K=2, FE=16, FS=24)),
    # Qwen3-Next (Qwen3NextForCausalLM, flat): the same layers with each DeltaNet layer's
    # projections fused as its files keep them (in_proj_qkvz, in_proj_ba: grouped per key
    # head), one tensor an expert, and layer 1 dense (mlp_only_layers), an MLP of
    # intermediate_size.
    dict(name="qwen3-next", nested=False, L=4, H=2, KV=1, C=32, F=40, V=36, P=256, hd=16,
         kh=2, vh=4, dk=8, dv=8, taps=4, seed=45, tied=False, types=False, fused=True,
         dense=[1], moe=dict(E=4, K=2, FE=16, FS=24)),
    # Qwen3-Next with every MLP a mixture, as Qwen3-Next-80B-A3B's are and llama.cpp's
    # qwen3next requires, and no tie between experts (llama.cpp breaks one its own way):
    # tests/oracle/gguf_models.py converts it to qwen3next-gguf.
    dict(name="qwen3-next-moe", nested=False, L=4, H=2, KV=1, C=32, F=40, V=36, P=256, hd=16,
         kh=2, vh=4, dk=8, dv=8, taps=4, seed=46, tied=False, types=False, fused=True,
         dense=[], tie=False, moe=dict(E=4, K=2, FE=16, FS=24)),
]
IDS = [3, 17, 5, 5, 0, 21, 9, 30, 2, 11, 8]
TOP = 3
EPS = 1e-6
THETA = 10000000.0
GDN_STAGES = ["norm1", "gdn_mixed", "gdn_conv", "gdn_q", "gdn_k", "gdn_z", "gdn_beta",
              "gdn_decay", "gdn_out", "gdn_normed"]
FULL_STAGES = ["norm1", "q_proj", "q_gate", "k_proj", "v", "q_normed", "k_normed", "q", "k",
               "weights", "context", "gated"]
BLOCK_STAGES = ["attn", "resid1", "norm2", "gate", "up", "act", "mlp", "resid2"]
MOE_STAGES = ["attn", "resid1", "norm2", "router_logits", "router", "routed", "shared_gate",
              "shared", "mlp", "resid2"]


def rms1(x, w, eps=EPS):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + w)


def l2(x):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + 1e-6)


def rotate_part(x, freq, rot):
    """x (heads, n, d): its first rot columns turned at positions 0 .. n-1."""
    n = x.shape[1]
    angles = torch.arange(n).float()[:, None] * freq[None, :]
    emb = torch.cat((angles, angles), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    xr, rest = x[..., :rot], x[..., rot:]
    half = rot // 2
    turned = torch.cat((-xr[..., half:], xr[..., :half]), dim=-1)
    return torch.cat((xr * cos + turned * sin, rest), dim=-1)


def deltanet(c, p, l, h, s):
    n = h.shape[0]
    kh, vh, dk, dv, taps = c["kh"], c["vh"], c["dk"], c["dv"], c["taps"]
    Kq, Vw = kh * dk, vh * dv
    mixed = h @ p[(l, "qkv")].T
    s["gdn_mixed"] = mixed
    conv = torch.nn.functional.conv1d(mixed.T[None], p[(l, "conv")], padding=taps - 1,
                                      groups=2 * Kq + Vw)[0, :, :n].T
    conv = torch.nn.functional.silu(conv)
    s["gdn_conv"] = conv
    q = l2(conv[:, :Kq].reshape(n, kh, dk))
    k = l2(conv[:, Kq:2 * Kq].reshape(n, kh, dk))
    v = conv[:, 2 * Kq:].reshape(n, vh, dv)
    q = q / (dk ** 0.5)
    s["gdn_q"], s["gdn_k"] = q.reshape(n, Kq), k.reshape(n, Kq)
    z = h @ p[(l, "z")].T
    s["gdn_z"] = z
    beta = torch.sigmoid(h @ p[(l, "b")].T)
    g = -p[(l, "A_log")].exp() * torch.nn.functional.softplus(h @ p[(l, "a")].T + p[(l, "dt_bias")])
    s["gdn_beta"], s["gdn_decay"] = beta, g
    per = vh // kh
    qv, kv = q.repeat_interleave(per, dim=1), k.repeat_interleave(per, dim=1)
    o = torch.zeros(n, vh, dv)
    S = torch.zeros(vh, dk, dv)
    for t in range(n):
        S = S * g[t].exp()[:, None, None]
        mem = (S * kv[t][:, :, None]).sum(dim=-2)
        delta = (v[t] - mem) * beta[t][:, None]
        S = S + kv[t][:, :, None] * delta[:, None, :]
        o[t] = (S * qv[t][:, :, None]).sum(dim=-2)
    s["gdn_out"] = o.reshape(n, Vw)
    # The effective attention, from the products of the updates (float64, then compared).
    M = torch.zeros(vh, n, n, dtype=torch.float64)
    for j in range(vh):
        qd, kd = qv[:, j].double(), kv[:, j].double()
        bd, gd = beta[:, j].double(), g[:, j].double()
        for t in range(n):
            r = qd[t].clone()  # P(s, t) q_t, built from t down to s
            for src in range(t, -1, -1):
                M[j, t, src] = bd[src] * (kd[src] @ r)
                r = gd[src].exp() * (r - bd[src] * kd[src] * (kd[src] @ r))
    back = torch.einsum("jts,sjd->tjd", M, v.double())
    assert (back - o.double()).abs().max() < 1e-5, "the effective attention does not give o"
    s["effective"] = M.float()
    normed = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + EPS) * p[(l, "gnorm")]
    normed = normed * torch.nn.functional.silu(z.reshape(n, vh, dv))
    s["gdn_normed"] = normed.reshape(n, Vw)
    return s["gdn_normed"] @ p[(l, "out")].T


def attention(c, p, l, h, s, freq):
    n = h.shape[0]
    H, KV, d = c["H"], c["KV"], c["hd"]
    rot = int(d * 0.25)
    both = (h @ p[(l, "q")].T).view(n, H, 2 * d)
    q, gate = both[..., :d], both[..., d:]
    s["q_proj"], s["q_gate"] = q.reshape(n, H * d), gate.reshape(n, H * d)
    k = h @ p[(l, "k")].T
    v = h @ p[(l, "v")].T
    s["k_proj"], s["v"] = k, v
    qh = rms1(q.transpose(0, 1), p[(l, "q_norm")])
    kh = rms1(k.view(n, KV, d).transpose(0, 1), p[(l, "k_norm")])
    s["q_normed"] = qh.transpose(0, 1).reshape(n, H * d)
    s["k_normed"] = kh.transpose(0, 1).reshape(n, KV * d)
    qh, kh = rotate_part(qh, freq, rot), rotate_part(kh, freq, rot)
    s["q"], s["k"] = qh.transpose(0, 1).reshape(n, H * d), kh.transpose(0, 1).reshape(n, KV * d)
    g = H // KV
    kr = kh.repeat_interleave(g, dim=0)
    vr = v.view(n, KV, d).transpose(0, 1).repeat_interleave(g, dim=0)
    mask = torch.tril(torch.ones(n, n, dtype=torch.bool))
    sc = (qh @ kr.transpose(-1, -2) * d ** -0.5).masked_fill(~mask, float("-inf"))
    w = torch.softmax(sc, dim=-1)
    s["weights"] = w
    ctx = (w @ vr).transpose(0, 1).reshape(n, H * d)
    s["context"] = ctx
    s["gated"] = ctx * torch.sigmoid(gate.reshape(n, H * d))
    return s["gated"] @ p[(l, "o")].T


def mixture(c, p, l, h, s):
    """Qwen3_5MoeSparseMoeBlock: the shared expert, the router (softmax, top k, divided by
    their sum), each chosen expert in increasing order added by index_add_, then the shared
    expert's output times sigmoid(shared_expert_gate(x)) added to their sum."""
    m = c["moe"]
    n, silu = h.shape[0], torch.nn.functional.silu
    shared = (silu(h @ p[(l, "sh_gate")].T) * (h @ p[(l, "sh_up")].T)) @ p[(l, "sh_down")].T
    logits = h @ p[(l, "router")].T
    probs = torch.softmax(logits, dtype=torch.float, dim=-1)
    top, chosen = torch.topk(probs, m["K"], dim=-1)
    top = top / top.sum(dim=-1, keepdim=True)
    s["router_logits"], s["router"] = logits, probs
    s["routed"] = torch.zeros(n, m["E"]).scatter(1, chosen, top)
    out = torch.zeros(n, c["C"])
    for e in range(m["E"]):
        pos, tok = torch.where((chosen == e).T)
        if len(tok) == 0:
            continue
        gate, up = torch.nn.functional.linear(h[tok], p[(l, "gate_up")][e]).chunk(2, dim=-1)
        y = torch.nn.functional.linear(silu(gate) * up, p[(l, "experts_down")][e])
        out.index_add_(0, tok, y * top[tok, pos, None])
    s["shared_gate"] = torch.sigmoid(h @ p[(l, "sh_router")].T)
    s["shared"] = s["shared_gate"] * shared
    return out + s["shared"]


def forward(c, p, ids):
    rot = int(c["hd"] * 0.25)
    freq = 1.0 / (THETA ** (torch.arange(0, rot, 2, dtype=torch.int64).float() / rot))
    out = {}
    x = p["embed"][torch.tensor(ids)]
    out["embed"] = x
    for l in range(c["L"]):
        s = {}
        h = rms1(x, p[(l, "norm1")])
        s["norm1"] = h
        a = deltanet(c, p, l, h, s) if kinds(c)[l] else attention(c, p, l, h, s, freq)
        s["attn"] = a
        x = x + a
        s["resid1"] = x
        h = rms1(x, p[(l, "norm2")])
        s["norm2"] = h
        if "moe" in c and l not in c.get("dense", []):
            s["mlp"] = mixture(c, p, l, h, s)
        else:
            gate, up = h @ p[(l, "gate")].T, h @ p[(l, "up")].T
            s["gate"], s["up"] = gate, up
            s["act"] = torch.nn.functional.silu(gate) * up
            s["mlp"] = s["act"] @ p[(l, "down")].T
        x = x + s["mlp"]
        s["resid2"] = x
        out[l] = s
    out["final"] = rms1(x, p["norm"])
    out["top"] = torch.topk(torch.softmax(out["final"] @ p["head"].T, dim=-1), TOP, dim=-1)
    return out


def kinds(c):
    """1 for a Gated DeltaNet layer: the case's own, else three of them to one full layer."""
    if "kinds" in c:
        return list(c["kinds"])
    return [1 if (i + 1) % 4 else 0 for i in range(c["L"])]


def fuse(tensors, la, kh, per, dk, dv):
    """A layer's in_proj_qkv, in_proj_z, in_proj_b and in_proj_a (already in tensors) as
    Qwen3-Next keeps them: in_proj_qkvz, each key head's q, k, then its value heads' v and z;
    in_proj_ba, each key head's value heads' b, then their a (the inverse of
    Qwen3NextGatedDeltaNet.fix_query_key_value_ordering)."""
    t = dict(tensors)
    qkv, z = t[la + "in_proj_qkv.weight"], t[la + "in_proj_z.weight"]
    b, a = t[la + "in_proj_b.weight"], t[la + "in_proj_a.weight"]
    Kq, pv = kh * dk, per * dv
    rows, ba = [], []
    for h in range(kh):
        rows += [qkv[h * dk:(h + 1) * dk], qkv[Kq + h * dk:Kq + (h + 1) * dk],
                 qkv[2 * Kq + h * pv:2 * Kq + (h + 1) * pv], z[h * pv:(h + 1) * pv]]
        ba += [b[h * per:(h + 1) * per], a[h * per:(h + 1) * per]]
    keep = [(n, x) for n, x in tensors if n not in (la + "in_proj_qkv.weight",
            la + "in_proj_z.weight", la + "in_proj_b.weight", la + "in_proj_a.weight")]
    tensors[:] = keep + [(la + "in_proj_qkvz.weight", torch.cat(rows).contiguous()),
                         (la + "in_proj_ba.weight", torch.cat(ba).contiguous())]


def make_case(root, c):
    gen = torch.Generator().manual_seed(c["seed"])
    L, H, KV, C, F, V, d = c["L"], c["H"], c["KV"], c["C"], c["F"], c["V"], c["hd"]
    kh, vh, dk, dv, taps = c["kh"], c["vh"], c["dk"], c["dv"], c["taps"]
    D = 2 * kh * dk + vh * dv
    pre = "model.language_model." if c["nested"] else "model."
    tensors, p = [], {}

    def put(key, name, t, dtype="BF16"):
        s, f32 = stored(t, dtype)
        tensors.append((name, s))
        p[key] = f32

    def draw(*shape, scale=None):
        # (a linear's weights 0.6 / sqrt(its inputs): the stream stays near 1 through the
        # layers, where float32's rounding is below 1e-5)
        scale = scale if scale is not None else 0.6 / math.sqrt(shape[-1])
        return torch.randn(*shape, generator=gen) * scale

    put("embed", pre + "embed_tokens.weight", draw(V, C, scale=0.5))
    for l in range(L):
        at = pre + "layers.%d." % l
        put((l, "norm1"), at + "input_layernorm.weight", draw(C, scale=0.2))
        put((l, "norm2"), at + "post_attention_layernorm.weight", draw(C, scale=0.2))
        if kinds(c)[l]:
            la = at + "linear_attn."
            put((l, "qkv"), la + "in_proj_qkv.weight", draw(D, C))
            put((l, "z"), la + "in_proj_z.weight", draw(vh * dv, C))
            put((l, "b"), la + "in_proj_b.weight", draw(vh, C))
            put((l, "a"), la + "in_proj_a.weight", draw(vh, C))
            put((l, "conv"), la + "conv1d.weight", draw(D, 1, taps, scale=0.5))
            # (A_log as the hub's files keep it, float32; A from 0.5 to 8 as its init draws)
            put((l, "A_log"), la + "A_log", torch.rand(vh, generator=gen).mul(7.5).add(0.5).log(),
                "F32")
            put((l, "dt_bias"), la + "dt_bias", draw(vh, scale=0.5))
            put((l, "gnorm"), la + "norm.weight", 1.0 + draw(dv, scale=0.2))
            put((l, "out"), la + "out_proj.weight", draw(C, vh * dv))
            if c.get("fused"):
                fuse(tensors, la, kh, vh // kh, dk, dv)
        else:
            sa = at + "self_attn."
            put((l, "q"), sa + "q_proj.weight", draw(2 * H * d, C))
            put((l, "k"), sa + "k_proj.weight", draw(KV * d, C))
            put((l, "v"), sa + "v_proj.weight", draw(KV * d, C))
            put((l, "o"), sa + "o_proj.weight", draw(C, H * d))
            put((l, "q_norm"), sa + "q_norm.weight", draw(d, scale=0.2))
            put((l, "k_norm"), sa + "k_norm.weight", draw(d, scale=0.2))
        if "moe" in c and l not in c.get("dense", []):
            m = c["moe"]
            E, FE, FS = m["E"], m["FE"], m["FS"]
            router = draw(E, C, scale=0.5)
            if l == 0 and c.get("tie", True):
                router[2] = router[1]  # (a tie between two experts' probabilities)
            put((l, "router"), at + "mlp.gate.weight", router)
            put((l, "gate_up"), at + "mlp.experts.gate_up_proj", draw(E, 2 * FE, C))
            put((l, "experts_down"), at + "mlp.experts.down_proj", draw(E, C, FE))
            if c.get("fused"):  # (one tensor an expert, as Qwen3-Next's files keep them)
                gu, dn = tensors[-2][1], tensors[-1][1]
                del tensors[-2:]
                for e in range(E):
                    ex = at + "mlp.experts.%d." % e
                    tensors += [(ex + "gate_proj.weight", gu[e, :FE].contiguous()),
                                (ex + "up_proj.weight", gu[e, FE:].contiguous()),
                                (ex + "down_proj.weight", dn[e].contiguous())]
            put((l, "sh_gate"), at + "mlp.shared_expert.gate_proj.weight", draw(FS, C))
            put((l, "sh_up"), at + "mlp.shared_expert.up_proj.weight", draw(FS, C))
            put((l, "sh_down"), at + "mlp.shared_expert.down_proj.weight", draw(C, FS))
            put((l, "sh_router"), at + "mlp.shared_expert_gate.weight", draw(1, C, scale=0.5))
        else:
            put((l, "gate"), at + "mlp.gate_proj.weight", draw(F, C))
            put((l, "up"), at + "mlp.up_proj.weight", draw(F, C))
            put((l, "down"), at + "mlp.down_proj.weight", draw(C, F))
    put("norm", pre + "norm.weight", draw(C, scale=0.2))
    if c["tied"]:
        p["head"] = p["embed"]
    else:
        put("head", "lm_head.weight", draw(V, C, scale=0.5))
    if c["nested"]:  # what a text forward leaves alone
        tensors.append(("model.visual.patch_embed.proj.weight", draw(8, 3, 2, 2, 2)))
        tensors.append(("model.visual.blocks.0.attn.qkv.weight", draw(24, 8)))
        tensors.append(("mtp.fc.weight", draw(C, 2 * C)))
        tensors.append(("mtp.layers.0.input_layernorm.weight", draw(C)))
    if c.get("mtp"):  # a whole MTP layer, as the hub's files have one (never read by a forward)
        for name, shape in (("fc.weight", (C, 2 * C)), ("pre_fc_norm_embedding.weight", (C,)),
                            ("pre_fc_norm_hidden.weight", (C,)), ("norm.weight", (C,)),
                            ("layers.0.input_layernorm.weight", (C,)),
                            ("layers.0.post_attention_layernorm.weight", (C,)),
                            ("layers.0.self_attn.q_proj.weight", (2 * H * d, C)),
                            ("layers.0.self_attn.k_proj.weight", (KV * d, C)),
                            ("layers.0.self_attn.v_proj.weight", (KV * d, C)),
                            ("layers.0.self_attn.o_proj.weight", (C, H * d)),
                            ("layers.0.self_attn.q_norm.weight", (d,)),
                            ("layers.0.self_attn.k_norm.weight", (d,)),
                            ("layers.0.mlp.gate_proj.weight", (F, C)),
                            ("layers.0.mlp.up_proj.weight", (F, C)),
                            ("layers.0.mlp.down_proj.weight", (C, F))):
            tensors.append(("mtp." + name, draw(*shape, scale=0.2)))
    text = {
        "model_type": "qwen3_5_text", "vocab_size": V, "hidden_size": C,
        "intermediate_size": F, "num_hidden_layers": L, "num_attention_heads": H,
        "num_key_value_heads": KV, "head_dim": d, "hidden_act": "silu",
        "max_position_embeddings": c["P"], "rms_norm_eps": EPS, "attention_bias": False,
        "attn_output_gate": True, "linear_conv_kernel_dim": taps, "linear_key_head_dim": dk,
        "linear_value_head_dim": dv, "linear_num_key_heads": kh, "linear_num_value_heads": vh,
        "tie_word_embeddings": c["tied"], "mtp_num_hidden_layers": 1,
        "rope_parameters": {"mrope_interleaved": True, "mrope_section": [1, 1, 0],
                            "rope_type": "default", "rope_theta": THETA,
                            "partial_rotary_factor": 0.25},
        "eos_token_id": 1,
    }
    if "moe" in c:  # (Qwen3_5MoeTextConfig has no intermediate_size)
        m = c["moe"]
        del text["intermediate_size"]
        text.update(model_type="qwen3_5_moe_text", num_experts=m["E"], num_experts_per_tok=m["K"],
                    moe_intermediate_size=m["FE"], shared_expert_intermediate_size=m["FS"],
                    router_aux_loss_coef=0.001)
    if c.get("fused"):  # (Qwen3NextConfig's keys, as Qwen3-Next-80B-A3B's config.json has them)
        del text["rope_parameters"], text["mtp_num_hidden_layers"], text["attn_output_gate"]
        text.update(model_type="qwen3_next", intermediate_size=c["F"], decoder_sparse_step=1,
                    mlp_only_layers=c["dense"], norm_topk_prob=True, rope_theta=THETA,
                    partial_rotary_factor=0.25)
    if c["types"]:
        text["layer_types"] = ["linear_attention" if k else "full_attention" for k in kinds(c)]
    else:
        text["full_attention_interval"] = 4
    if c["nested"] and "moe" in c:
        config = {"architectures": ["Qwen3_5MoeForConditionalGeneration"],
                  "model_type": "qwen3_5_moe", "tie_word_embeddings": c["tied"],
                  "text_config": text,
                  "vision_config": {"model_type": "qwen3_5_moe", "depth": 1, "hidden_size": 8,
                                    "num_heads": 2, "out_hidden_size": C},
                  "image_token_id": 33, "video_token_id": 34}
    elif c["nested"]:
        config = {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
                  "tie_word_embeddings": c["tied"], "text_config": text,
                  "vision_config": {"model_type": "qwen3_5", "depth": 1, "hidden_size": 8,
                                    "num_heads": 2, "out_hidden_size": C},
                  "image_token_id": 33, "video_token_id": 34}
    else:
        config = dict(text, architectures=["Qwen3NextForCausalLM" if c.get("fused")
                                           else "Qwen3_5ForCausalLM"])
    d_ = os.path.join(root, c["name"])
    os.makedirs(d_, exist_ok=True)
    with open(os.path.join(d_, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(d_, "model.safetensors"), tensors)
    with open(os.path.join(d_, "tokenizer.json"), "w") as f:
        json.dump(tiny_tokenizer(), f, ensure_ascii=False)
        f.write("\n")
    out = forward(c, p, IDS)
    lines = ["ids %d %s" % (len(IDS), " ".join(map(str, IDS))),
             "kinds %d %s" % (L, " ".join(map(str, kinds(c)))),
             "embed %s" % numbers(out["embed"])]
    for l in range(L):
        names = ((GDN_STAGES + ["effective"] if kinds(c)[l] else FULL_STAGES) +
                 (MOE_STAGES if "moe" in c and l not in c.get("dense", []) else BLOCK_STAGES))
        for name in names:
            t = out[l][name]
            lines.append("%s %d %d %s" % (name, l, t.numel(), numbers(t)))
    lines.append("final %s" % numbers(out["final"]))
    top = out["top"]
    lines.append("top %d %s %s" % (TOP, " ".join(map(str, top.indices.flatten().tolist())),
                                   numbers(top.values)))
    with open(os.path.join(d_, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    torch.set_num_threads(1)
    root = os.path.join("tests", "fixtures", "decoders")
    for c in CASES:  # (the cases named, or all)
        if sys.argv[1:] and c["name"] not in sys.argv[1:]:
            continue
        make_case(root, c)
        print("wrote", os.path.join(root, c["name"]))


if __name__ == "__main__":
    main()
