"""Tiny mixture-of-experts models (Qwen3-MoE, OLMoE, Mixtral) and PyTorch's forward of them.

For tests/models/check_architectures.c.

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
  - The expert knob (an experts_off section): the router's logit of each expert switched off
    set to -inf before the softmax, as masking router_logits in PyTorch would.
  - modeling_olmoe: OlmoeAttention norms the whole projection (q_norm of
    hidden_size, k_norm of the keys' width) before the heads are split and
    turned; OlmoeSparseMoeBlock as Qwen3-MoE's (norm_topk_prob false by
    default); every layer sparse; clip_qkv null (attnscope refuses it set).
  - modeling_mixtral: Llama's attention; MixtralSparseMoeBlock divides the
    top k by their sum always; experts w2(silu(w1 x) * w3 x) under
    block_sparse_moe; every layer sparse.

Cross-checked once against an independent implementation, the book's own (ch05/11's
standalone-qwen3-moe notebook: MoEFeedForward, top k of the logits then their softmax, which is
norm_topk_prob's renormalisation): its MoE layer run on qwen3-moe-sparse's weights and norm2
stages gave their mlp stages within 1.2e-7 (2026-11-28).

attnscope's own restatement, never used by the build or by `make check`.
Run from the top of the source tree with Debian's PyTorch:

    /usr/bin/python3 tests/oracle/moe_fixtures.py

Checked against an independent implementation: tests/oracle/crosscheck_gguf.py runs
llama.cpp on qwen3-moe-gguf, olmoe-gguf and mixtral-gguf and compares its next tokens with
expected.txt's (`make crosscheck`); the run of 2026-12-02 agreed to 3.0e-7.
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
         tied=False, theta=1000000.0, eps=1e-6,
         # (its knobs keep the scaling, as llama_fixtures.py's Qwen3 does: unscaled QK-normed
         # scores at T = 0.7 are so peaked that float32's rounding reaches 2e-5 by layer 2)
         knobs=(False, True, 0.7, [(0, 1), (2, 0)]), off=[(0, 0), (2, 2)]),
    # A Qwen3-MoE with every layer sparse and its weights renormalised: what llama.cpp's
    # qwen3moe computes, so that gguf_models.py converts it (qwen3-moe-gguf).
    dict(name="qwen3-moe-sparse", arch="qwen3_moe", L=2, H=4, KV=2, C=16, F=24, V=36, P=64,
         hd=8, E=4, K=2, FE=8, norm_topk=True, dense=[], dtype="F32", seed=24, tied=False,
         theta=1000000.0, eps=1e-6, knobs=(False, True, 0.7, [(0, 1)])),
    # OLMoE: QK-norm over the whole projection (modeling_olmoe: q_norm of hidden_size, k_norm of
    # the keys' width, before RoPE), every layer sparse, the chosen probabilities as they are.
    dict(name="olmoe", arch="olmoe", L=2, H=4, KV=4, C=16, F=24, V=36, P=64, hd=4, E=8, K=3,
         FE=10, norm_topk=False, dense=[], dtype="BF16", seed=22, tied=False, theta=10000.0,
         eps=1e-5),
    # Mixtral: Llama's attention (grouped keys, no QK-norm), every layer sparse, the chosen
    # probabilities always divided by their sum (MixtralSparseMoeBlock), block_sparse_moe's names.
    dict(name="mixtral", arch="mixtral", L=2, H=4, KV=2, C=16, F=20, V=36, P=64, hd=4, E=4, K=2,
         FE=20, norm_topk=True, dense=[], dtype="F32", seed=23, tied=True, theta=1000000.0,
         eps=1e-5),
]
KNOBS = (False, False, 0.7, [(0, 1), (1, 2)])
STAGES = ["norm1", "q_proj", "k_proj", "v", "q_normed", "k_normed", "q", "k", "scores",
          "scaled", "weights", "context", "attn", "resid1", "norm2", "gate", "up", "act",
          "router_logits", "router", "routed", "mlp", "resid2"]


def sparse(c, l):
    return l not in c["dense"] and c["E"] > 0 and (l + 1) % c.get("step", 1) == 0


def swiglu(h, g, u, d):
    return (torch.nn.functional.silu(h @ g.T) * (h @ u.T)) @ d.T


def moe(c, p, l, h, s, off=()):
    """Qwen3MoeSparseMoeBlock.forward on h (n, C), its stages into s; experts (l, e) in off
    switched off: their router logits set to -inf before the softmax."""
    n = h.shape[0]
    logits = h @ p[(l, "router")].T
    for (ol, oe) in off:
        if ol == l:
            logits[:, oe] = float("-inf")
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


def forward(c, p, ids, knobs, off=()):
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
        if c["arch"] == "qwen3_moe":
            qh = rms(q.view(n, H, hd).transpose(0, 1), p[(l, "q_norm")], eps)
            kh = rms(k.view(n, KV, hd).transpose(0, 1), p[(l, "k_norm")], eps)
        elif c["arch"] == "olmoe":
            qh = rms(q, p[(l, "q_norm")], eps).view(n, H, hd).transpose(0, 1)
            kh = rms(k, p[(l, "k_norm")], eps).view(n, KV, hd).transpose(0, 1)
        else:
            qh = q.view(n, H, hd).transpose(0, 1)
            kh = k.view(n, KV, hd).transpose(0, 1)
        vh = v.view(n, KV, hd).transpose(0, 1)
        if c["arch"] != "mixtral":
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
            m = moe(c, p, l, h, s, off)
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
        if c["arch"] == "qwen3_moe":
            put((l, "q_norm"), hf + "self_attn.q_norm.weight", gain(hd))
            put((l, "k_norm"), hf + "self_attn.k_norm.weight", gain(hd))
        elif c["arch"] == "olmoe":
            put((l, "q_norm"), hf + "self_attn.q_norm.weight", gain(H * hd))
            put((l, "k_norm"), hf + "self_attn.k_norm.weight", gain(KV * hd))
        put((l, "norm2"), hf + "post_attention_layernorm.weight", gain(C))
        if sparse(c, l):
            router = draw(gen, E, C, scale=0.5)
            if c.get("tie") and c["tie"][0] == l:
                router[c["tie"][2]] = router[c["tie"][1]]
            mix = c["arch"] == "mixtral"
            put((l, "router"), hf + ("block_sparse_moe.gate.weight" if mix else "mlp.gate.weight"),
                router)
            for e in range(E):
                ex = hf + ("block_sparse_moe.experts.%d." if mix else "mlp.experts.%d.") % e
                names = ("w1", "w3", "w2") if mix else ("gate_proj", "up_proj", "down_proj")
                put((l, e, "gate"), ex + names[0] + ".weight", draw(gen, FE, C))
                put((l, e, "up"), ex + names[1] + ".weight", draw(gen, FE, C))
                put((l, e, "down"), ex + names[2] + ".weight", draw(gen, C, FE))
        else:
            put((l, "gate"), hf + "mlp.gate_proj.weight", draw(gen, Fw, C))
            put((l, "up"), hf + "mlp.up_proj.weight", draw(gen, Fw, C))
            put((l, "down"), hf + "mlp.down_proj.weight", draw(gen, C, Fw))
    put("norm", "model.norm.weight", gain(C))
    if c["tied"]:
        p["head"] = p["embed"]
    else:
        put("head", "lm_head.weight", draw(gen, V, C))

    ids = [i % V for i in IDS]
    plain = forward(c, p, ids, (True, True, 1.0, []))
    lines = ["ids %d %s" % (len(ids), " ".join(map(str, ids))),
             "freq %d %s" % (hd // 2, numbers(plain["freq"]))]
    lines += lines_of(c, plain, True)
    knobs = c.get("knobs", KNOBS)
    knobs = (knobs[0], knobs[1], knobs[2], [a for a in knobs[3] if a[0] < L])
    lines.append("knobs %d %d %.9g %s" % (knobs[0], knobs[1], knobs[2],
                                          ",".join("%d.%d" % a for a in knobs[3])))
    lines += lines_of(c, forward(c, p, ids, knobs), False)
    if c.get("off"):
        # The expert knob: the model's own knobs, these experts switched off.
        lines.append("experts_off %s" % ",".join("%d.%d" % a for a in c["off"]))
        lines += lines_of(c, forward(c, p, ids, (True, True, 1.0, []), c["off"]), False)

    d = os.path.join(root, c["name"])
    os.makedirs(d, exist_ok=True)
    config = {"hidden_size": C, "num_hidden_layers": L, "num_attention_heads": H,
              "num_key_value_heads": KV, "vocab_size": V, "max_position_embeddings": c["P"],
              "rms_norm_eps": c["eps"], "rope_theta": c["theta"], "hidden_act": "silu",
              "tie_word_embeddings": c["tied"], "attention_bias": False,
              "num_experts_per_tok": c["K"], "output_router_logits": False,
              "router_aux_loss_coef": 0.001,
              "torch_dtype": {"F32": "float32", "BF16": "bfloat16"}[c["dtype"]]}
    if c["arch"] == "qwen3_moe":
        config.update({"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
                       "intermediate_size": Fw, "head_dim": hd, "use_sliding_window": False,
                       "sliding_window": None, "num_experts": E, "moe_intermediate_size": FE,
                       "norm_topk_prob": c["norm_topk"], "decoder_sparse_step": c.get("step", 1),
                       "mlp_only_layers": c["dense"]})
    elif c["arch"] == "olmoe":
        config.update({"architectures": ["OlmoeForCausalLM"], "model_type": "olmoe",
                       "intermediate_size": FE, "num_experts": E,
                       "norm_topk_prob": c["norm_topk"], "clip_qkv": None})
    else:
        config.update({"architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
                       "intermediate_size": FE, "num_local_experts": E, "sliding_window": None,
                       "router_jitter_noise": 0.0})
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
