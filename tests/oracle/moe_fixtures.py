"""Tiny mixture-of-experts models and PyTorch's forward of them, for check_architectures.c.

Writes tests/fixtures/decoders/CASE/ as llama_fixtures.py does (config.json,
model.safetensors, the tiny tokenizer.json, expected.txt with every stage
of every layer), for the mixture-of-experts architectures, and three lines
more for each sparse layer:

    router_logits L count values     (n, E) the router's logits
    router L count values            (n, E) their softmax
    routed L count values            (n, E) the weight each expert's output was
                                     multiplied by (0 for an expert not chosen)

A dense layer among the sparse ones (mlp_only_layers) has gate, up and act
lines as a Llama's; a sparse one has none.

Which line of behaviour each step follows (transformers 4.5x,
modeling_qwen3_moe):
  - Attention, QK-norm, RoPE, the norms: as Qwen3 (llama_fixtures.py).
  - Qwen3MoeDecoderLayer.__init__: layer i is sparse when i is not in
    mlp_only_layers, num_experts > 0 and (i + 1) % decoder_sparse_step == 0;
    otherwise a Qwen3MoeMLP of intermediate_size.
  - Qwen3MoeSparseMoeBlock.forward: router_logits = gate(x) (no bias);
    routing_weights = softmax(router_logits, dim=1, dtype=float32); the
    top_k of them (torch.topk); divided by their sum when norm_topk_prob;
    then for each expert hit, in increasing expert order, its
    down(silu(gate(x)) * up(x)) of moe_intermediate_size times the token's
    weight, index_add_ into zeros.

attnscope's own restatement, never used by the build or by `make check`.
Run from the top of the source tree with Debian's PyTorch:

    /usr/bin/python3 tests/oracle/moe_fixtures.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_fixtures import stored  # noqa: E402
from llama_fixtures import (draw, frequencies, numbers, rms, rotate,  # noqa: E402
                            write_folder, IDS, TOP)

CASES = [
    # Qwen3-MoE: 6 experts, 2 chosen and renormalised; layer 1 dense (mlp_only_layers); in
    # layer 2 experts 1 and 3 have the same router row, so every token's two probabilities
    # tie and torch.topk decides which comes first.
    dict(name="qwen3-moe", arch="qwen3_moe", L=3, H=4, KV=2, C=16, F=24, V=36, P=64, hd=8,
         E=6, K=2, FE=12, norm_topk=True, dense=[1], tie=(2, 1, 3), dtype="F32", seed=21,
         tied=False, theta=1000000.0, eps=1e-6),
]
KNOBS = (False, False, 0.7, [(0, 1), (2, 0)])
STAGES = ["norm1", "q_proj", "k_proj", "v", "q_normed", "k_normed", "q", "k", "scores",
          "scaled", "weights", "context", "attn", "resid1", "norm2", "gate", "up", "act",
          "router_logits", "router", "routed", "mlp", "resid2"]


def sparse(c, l):
    return l not in c["dense"] and c["E"] > 0 and (l + 1) % c.get("step", 1) == 0


def swiglu(h, g, u, d):
    return (torch.nn.functional.silu(h @ g.T) * (h @ u.T)) @ d.T


def moe(c, p, l, h, s):
    """Qwen3MoeSparseMoeBlock.forward on h (n, C), its stages into s."""
    n = h.shape[0]
    logits = h @ p[(l, "router")].T
    probs = torch.softmax(logits, dim=1, dtype=torch.float)
    weights, chosen = torch.topk(probs, c["K"], dim=-1)
    if c["norm_topk"]:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    out = torch.zeros(n, c["C"])
    routed = torch.zeros(n, c["E"])
    mask = torch.nn.functional.one_hot(chosen, num_classes=c["E"]).permute(2, 1, 0)
    for e in range(c["E"]):
        idx, top_x = torch.where(mask[e])
        if top_x.numel() == 0:
            continue
        y = swiglu(h[top_x], p[(l, e, "gate")], p[(l, e, "up")], p[(l, e, "down")])
        y = y * weights[top_x, idx, None]
        out.index_add_(0, top_x, y)
        routed[top_x, e] = weights[top_x, idx]
    s["router_logits"], s["router"], s["routed"] = logits, probs, routed
    return out


def forward(c, p, ids, knobs):
    causal, scaled, temperature, ablated = knobs
    L, H, KV, hd = c["L"], c["H"], c["KV"], c["hd"]
    eps = c["eps"]
    n = len(ids)
    freq = frequencies(c)
    out = {"freq": freq}
    x = p["embed"][torch.tensor(ids)]
    out["embed"] = x
    mask = torch.tril(torch.ones(n, n, dtype=torch.bool)) if causal else torch.ones(n, n, dtype=torch.bool)
    for l in range(L):
        s = {}
        h = rms(x, p[(l, "norm1")], eps)
        s["norm1"] = h
        q, k, v = h @ p[(l, "q")].T, h @ p[(l, "k")].T, h @ p[(l, "v")].T
        s["q_proj"], s["k_proj"], s["v"] = q, k, v
        qh = rms(q.view(n, H, hd).transpose(0, 1), p[(l, "q_norm")], eps)
        kh = rms(k.view(n, KV, hd).transpose(0, 1), p[(l, "k_norm")], eps)
        vh = v.view(n, KV, hd).transpose(0, 1)
        s["q_normed"] = qh.transpose(0, 1).reshape(n, H * hd)
        s["k_normed"] = kh.transpose(0, 1).reshape(n, KV * hd)
        qh, kh = rotate(qh, freq), rotate(kh, freq)
        s["q"] = qh.transpose(0, 1).reshape(n, H * hd)
        s["k"] = kh.transpose(0, 1).reshape(n, KV * hd)
        g = H // KV
        kh, vh = kh.repeat_interleave(g, dim=0), vh.repeat_interleave(g, dim=0)
        scores = qh @ kh.transpose(-1, -2)
        s["scores"] = scores
        divisor = ((hd ** 0.5) if scaled else 1.0) * temperature
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
        a = ctx @ p[(l, "o")].T
        s["attn"] = a
        x = x + a
        s["resid1"] = x
        h = rms(x, p[(l, "norm2")], eps)
        s["norm2"] = h
        if sparse(c, l):
            m = moe(c, p, l, h, s)
        else:
            gate, up = h @ p[(l, "gate")].T, h @ p[(l, "up")].T
            act = torch.nn.functional.silu(gate) * up
            s["gate"], s["up"], s["act"] = gate, up, act
            m = act @ p[(l, "down")].T
        s["mlp"] = m
        x = x + m
        s["resid2"] = x
        out[l] = s
    final = rms(x, p["norm"], eps)
    out["final"] = final
    probs = torch.softmax(final @ p["head"].T, dim=-1)
    out["top"] = torch.topk(probs, TOP, dim=-1)
    return out


def lines_of(c, out, stages_too):
    lines = ["embed %s" % numbers(out["embed"])] if stages_too else []
    for l in range(c["L"]):
        for name in STAGES if stages_too else ["weights", "context", "routed", "resid2"]:
            if name in out[l]:
                t = out[l][name]
                lines.append("%s %d %d %s" % (name, l, t.numel(), numbers(t)))
    lines.append("final %s" % numbers(out["final"]))
    top = out["top"]
    lines.append("top %d %s %s" % (TOP, " ".join(map(str, top.indices.flatten().tolist())),
                                   numbers(top.values)))
    return lines


def make_case(root, c):
    gen = torch.Generator().manual_seed(c["seed"])
    L, H, KV, C, Fw, V, hd = c["L"], c["H"], c["KV"], c["C"], c["F"], c["V"], c["hd"]
    E, FE = c["E"], c["FE"]
    tensors = []
    p = {}

    def put(key, name, t):
        s, f32 = stored(t, c["dtype"])
        tensors.append((name, s))
        p[key] = f32

    def gain(k):
        return 1.0 + draw(gen, k, scale=0.1)

    put("embed", "model.embed_tokens.weight", draw(gen, V, C))
    for l in range(L):
        hf = "model.layers.%d." % l
        put((l, "norm1"), hf + "input_layernorm.weight", gain(C))
        put((l, "q"), hf + "self_attn.q_proj.weight", draw(gen, H * hd, C))
        put((l, "k"), hf + "self_attn.k_proj.weight", draw(gen, KV * hd, C))
        put((l, "v"), hf + "self_attn.v_proj.weight", draw(gen, KV * hd, C))
        put((l, "o"), hf + "self_attn.o_proj.weight", draw(gen, C, H * hd))
        put((l, "q_norm"), hf + "self_attn.q_norm.weight", gain(hd))
        put((l, "k_norm"), hf + "self_attn.k_norm.weight", gain(hd))
        put((l, "norm2"), hf + "post_attention_layernorm.weight", gain(C))
        if sparse(c, l):
            router = draw(gen, E, C, scale=0.5)
            if c.get("tie") and c["tie"][0] == l:
                router[c["tie"][2]] = router[c["tie"][1]]
            put((l, "router"), hf + "mlp.gate.weight", router)
            for e in range(E):
                ex = hf + "mlp.experts.%d." % e
                put((l, e, "gate"), ex + "gate_proj.weight", draw(gen, FE, C))
                put((l, e, "up"), ex + "up_proj.weight", draw(gen, FE, C))
                put((l, e, "down"), ex + "down_proj.weight", draw(gen, C, FE))
        else:
            put((l, "gate"), hf + "mlp.gate_proj.weight", draw(gen, Fw, C))
            put((l, "up"), hf + "mlp.up_proj.weight", draw(gen, Fw, C))
            put((l, "down"), hf + "mlp.down_proj.weight", draw(gen, C, Fw))
    put("norm", "model.norm.weight", gain(C))
    put("head", "lm_head.weight", draw(gen, V, C))

    ids = [i % V for i in IDS]
    plain = forward(c, p, ids, (True, True, 1.0, []))
    lines = ["ids %d %s" % (len(ids), " ".join(map(str, ids))),
             "freq %d %s" % (hd // 2, numbers(plain["freq"]))]
    lines += lines_of(c, plain, True)
    knobs = (KNOBS[0], KNOBS[1], KNOBS[2], [a for a in KNOBS[3] if a[0] < L])
    lines.append("knobs %d %d %.9g %s" % (knobs[0], knobs[1], knobs[2],
                                          ",".join("%d.%d" % a for a in knobs[3])))
    lines += lines_of(c, forward(c, p, ids, knobs), False)

    d = os.path.join(root, c["name"])
    os.makedirs(d, exist_ok=True)
    config = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
              "hidden_size": C, "intermediate_size": Fw, "num_hidden_layers": L,
              "num_attention_heads": H, "num_key_value_heads": KV, "head_dim": hd,
              "vocab_size": V, "max_position_embeddings": c["P"], "rms_norm_eps": c["eps"],
              "rope_theta": c["theta"], "hidden_act": "silu", "tie_word_embeddings": c["tied"],
              "attention_bias": False, "use_sliding_window": False, "sliding_window": None,
              "num_experts": E, "num_experts_per_tok": c["K"], "moe_intermediate_size": FE,
              "norm_topk_prob": c["norm_topk"], "decoder_sparse_step": c.get("step", 1),
              "mlp_only_layers": c["dense"], "output_router_logits": False,
              "router_aux_loss_coef": 0.001,
              "torch_dtype": {"F32": "float32", "BF16": "bfloat16"}[c["dtype"]]}
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
