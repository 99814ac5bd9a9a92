"""Trains miniqwen35, the small Qwen3.5-style hybrid that ships with attnscope
(samples/models/miniqwen35/): three Gated DeltaNet layers to one full layer.

attnscope's own code; Debian's python3-torch, from the top of the source tree:

    /usr/bin/python3 tests/oracle/train_miniqwen35.py

(about 100 minutes on one core of a 2-core AMD EPYC, 1.2 s a step; seeded:
on the same machine and torch it writes the same files again).  Its run of
2026-12-04 wrote the shipped samples/models/miniqwen35/ (loss 2.10 at the
last step, near what the task allows: a passage's first copy cannot be
predicted).  The map it printed is attnscope's --stage heads to 4 decimals;
tests/models/check_model.c asserts layer 1's induction (0.3055, 0.2957) and
that the copying is that DeltaNet layer's: with its four value heads
ablated the repeat's next word falls from 0.986 to 0.040, with the full
layer's four heads ablated it stays at 0.948.  Lesson 22 walks through it.

minigpt's task (tests/oracle/train_minigpt.py: passages of 3 to 12 random
three-letter words said two or three times, joined by <|endoftext|>) on
Qwen3.5's architecture, written with Hugging Face's Qwen3_5ForCausalLM names
(model_type qwen3_5_text), so that attnscope reads it as it reads
Qwen/Qwen3.5-0.8B: layers 0 to 2 are Gated DeltaNet (2 key heads of 16, 4
value heads of 16, a causal convolution of 4 taps), layer 3 is full
attention with an output gate (4 query heads of 16 sharing 2 key and value
heads, RoPE on the first quarter of each head); every RMSNorm scales by
1 + w but the gated norm's, which scales by w; 64 wide, a context of 64,
tied embeddings.  As minigemma's, the MLPs are zero (down_proj zero and not
trained): the mixers do all the work.

The DeltaNet layers are trained in their parallel form: with G the running
sum of the decays g, D[t, s] = e^(G_t - G_s) for s <= t, A the strictly lower
beta_t (k_t . k_s) D[t, s] and U = (I + A)^-1 diag(beta) V, the reads are
o = (Q K^T * D) U, what the recurrence S = e^g S; S += k (beta (v - S^T k))^T;
o = S^T q gives (the script checks the two against each other on the
evaluation text before writing anything).  Their effective attention is
M = (Q K^T * D) (I + A)^-1 diag(beta), o_t = sum_s M[t, s] v_s.

At the end it prints the model map's measures (headmap.h) on the
evaluation text: for a DeltaNet head on each query's shares of |M|, for the
full layer's heads on their softmax weights; tests/models/check_model.c
asserts them on the committed files.
"""
import math
import os
import random
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_fixtures import write_safetensors  # noqa: E402
from gpt2_tiny_model import encode  # noqa: E402
import train_minigpt  # noqa: E402
from train_minigpt import EVAL_TEXT, contexts, tokenizer, train, write_config  # noqa: E402
from train_minillama import write_tokenizer_json  # noqa: E402

OUT = os.path.join("samples", "models", "miniqwen35")
N_EMBD, N_INNER, N_CTX = 64, 128, 64
KINDS = [1, 1, 1, 0]  # 1: Gated DeltaNet, 0: full attention (full_attention_interval 4)
N_HEAD, N_KV, HEAD_DIM = 4, 2, 16
K_HEADS, V_HEADS, K_DIM, V_DIM, TAPS = 2, 4, 16, 16, 4
ROT = HEAD_DIM // 4  # (partial_rotary_factor 0.25)
THETA, EPS = 10000.0, 1e-6
STEPS = 5000  # (minigpt's batch and learning rate: train_minigpt.train)
SEED = 1


def rms(x, w, plus_one=True):
    """Qwen3_5RMSNorm (x / rms(x) times 1 + w), or the gated norm's plain w."""
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)
    return y * (1.0 + w) if plus_one else y * w


def l2(x):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + 1e-6)


def rotate_part(x, freq):
    """x (B, heads, T, d): its first ROT columns turned at positions 0 .. T-1."""
    T = x.shape[2]
    angles = torch.arange(T).float()[:, None] * freq[None, :]
    emb = torch.cat((angles, angles), dim=-1)
    xr, rest = x[..., :ROT], x[..., ROT:]
    half = ROT // 2
    turned = torch.cat((-xr[..., half:], xr[..., :half]), dim=-1)
    return torch.cat((xr * emb.cos() + turned * emb.sin(), rest), dim=-1)


def param(*shape, scale=0.02):
    return torch.nn.Parameter(torch.randn(*shape) * scale)


class DeltaNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        C, Kq, Vw = N_EMBD, K_HEADS * K_DIM, V_HEADS * V_DIM
        self.qkv, self.z = param(2 * Kq + Vw, C), param(Vw, C)
        self.b, self.a = param(V_HEADS, C), param(V_HEADS, C)
        self.conv = param(2 * Kq + Vw, 1, TAPS, scale=0.3)
        # (A from 1 to 16 and dt_bias as the reference implementation draws them, near it)
        self.A_log = torch.nn.Parameter(torch.empty(V_HEADS).uniform_(1, 16).log())
        self.dt_bias = torch.nn.Parameter(torch.rand(V_HEADS).mul(math.log(0.1) - math.log(0.001))
                                          .add(math.log(0.001)).exp().expm1().log())
        self.norm = torch.nn.Parameter(torch.ones(V_DIM))
        self.out = param(C, Vw)

    def parts(self, h):
        """q, k (B, Hv, T, dk) per value head, v (B, Hv, T, dv), beta and g (B, Hv, T), z."""
        B, T, _ = h.shape
        Kq = K_HEADS * K_DIM
        mixed = h @ self.qkv.T
        conv = F.conv1d(mixed.transpose(1, 2), self.conv, padding=TAPS - 1,
                        groups=mixed.shape[-1])[..., :T]
        conv = F.silu(conv).transpose(1, 2)
        q = l2(conv[..., :Kq].reshape(B, T, K_HEADS, K_DIM)) / K_DIM ** 0.5
        k = l2(conv[..., Kq:2 * Kq].reshape(B, T, K_HEADS, K_DIM))
        v = conv[..., 2 * Kq:].reshape(B, T, V_HEADS, V_DIM)
        per = V_HEADS // K_HEADS  # (value head j reads key head j // per)
        q = q.repeat_interleave(per, dim=2).transpose(1, 2)
        k = k.repeat_interleave(per, dim=2).transpose(1, 2)
        beta = torch.sigmoid(h @ self.b.T).transpose(1, 2)
        g = (-self.A_log.exp() * F.softplus(h @ self.a.T + self.dt_bias)).transpose(1, 2)
        return q, k, v.transpose(1, 2), beta, g, h @ self.z.T

    def effective(self, q, k, beta, g):
        """M (B, Hv, T, T): o = M v."""
        T = q.shape[2]
        G = g.cumsum(-1)
        lower = torch.tril(torch.ones(T, T, dtype=torch.bool))
        diff = (G[..., :, None] - G[..., None, :]).masked_fill(~lower, float("-inf"))
        D = diff.exp()
        strict = torch.tril(torch.ones(T, T, dtype=torch.bool), -1)
        A = (beta[..., :, None] * (k @ k.transpose(-1, -2)) * D).masked_fill(~strict, 0.0)
        eye = torch.eye(T).expand_as(A)
        inv = torch.linalg.solve_triangular(eye + A, eye, upper=False, unitriangular=True)
        return ((q @ k.transpose(-1, -2)) * D) @ inv * beta[..., None, :]

    def forward(self, h, keep=None):
        B, T, _ = h.shape
        q, k, v, beta, g, z = self.parts(h)
        M = self.effective(q, k, beta, g)
        if keep is not None:
            keep.append(("deltanet", M.detach(), g.detach()))
        o = (M @ v).transpose(1, 2)  # (B, T, Hv, dv)
        y = rms(o, self.norm, plus_one=False) * F.silu(z.view(B, T, V_HEADS, V_DIM))
        return y.reshape(B, T, V_HEADS * V_DIM) @ self.out.T

    def recurrent(self, h):
        """The same reads by the recurrence, token by token (the check of the parallel form)."""
        q, k, v, beta, g, _ = self.parts(h)
        B, Hv, T, _ = q.shape
        S = torch.zeros(B, Hv, K_DIM, V_DIM)
        out = []
        for t in range(T):
            S = S * g[..., t].exp()[..., None, None]
            mem = (S * k[:, :, t, :, None]).sum(-2)
            delta = (v[:, :, t] - mem) * beta[..., t, None]
            S = S + k[:, :, t, :, None] * delta[..., None, :]
            out.append((S * q[:, :, t, :, None]).sum(-2))
        return torch.stack(out, dim=2)


class Full(torch.nn.Module):
    def __init__(self):
        super().__init__()
        C, Q, K = N_EMBD, N_HEAD * HEAD_DIM, N_KV * HEAD_DIM
        self.q, self.k, self.v, self.o = param(2 * Q, C), param(K, C), param(K, C), param(C, Q)
        self.q_norm = torch.nn.Parameter(torch.zeros(HEAD_DIM))
        self.k_norm = torch.nn.Parameter(torch.zeros(HEAD_DIM))

    def forward(self, h, keep=None):
        B, T, _ = h.shape
        d = HEAD_DIM
        both = (h @ self.q.T).view(B, T, N_HEAD, 2 * d)
        q, gate = both[..., :d], both[..., d:]
        k = (h @ self.k.T).view(B, T, N_KV, d)
        v = (h @ self.v.T).view(B, T, N_KV, d).transpose(1, 2)
        q = rms(q, self.q_norm).transpose(1, 2)
        k = rms(k, self.k_norm).transpose(1, 2)
        freq = 1.0 / (THETA ** (torch.arange(0, ROT, 2, dtype=torch.int64).float() / ROT))
        q, k = rotate_part(q, freq), rotate_part(k, freq)
        k = k.repeat_interleave(N_HEAD // N_KV, dim=1)
        v = v.repeat_interleave(N_HEAD // N_KV, dim=1)
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        w = torch.softmax((q @ k.transpose(-1, -2) * d ** -0.5).masked_fill(~mask, float("-inf")),
                          dim=-1)
        if keep is not None:
            keep.append(("attention", w.detach(), None))
        ctx = (w @ v).transpose(1, 2).reshape(B, T, N_HEAD * d)
        return (ctx * torch.sigmoid(gate.reshape(B, T, N_HEAD * d))) @ self.o.T


class Block(torch.nn.Module):
    def __init__(self, deltanet):
        super().__init__()
        C = N_EMBD
        self.deltanet = deltanet
        self.mixer = DeltaNet() if deltanet else Full()
        self.norm1 = torch.nn.Parameter(torch.zeros(C))
        self.norm2 = torch.nn.Parameter(torch.zeros(C))
        self.gate, self.up = param(N_INNER, C), param(N_INNER, C)
        self.down = torch.nn.Parameter(torch.zeros(C, N_INNER))

    def forward(self, x, keep=None):
        x = x + self.mixer(rms(x, self.norm1), keep)
        h = rms(x, self.norm2)
        return x + (F.silu(h @ self.gate.T) * (h @ self.up.T)) @ self.down.T


class Hybrid(torch.nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.embed = param(vocab_size, N_EMBD)
        self.layers = torch.nn.ModuleList(Block(k == 1) for k in KINDS)
        self.norm = torch.nn.Parameter(torch.zeros(N_EMBD))

    def forward(self, ids, keep=None):
        x = self.embed[ids]
        for b in self.layers:
            x = b(x, keep)
        return rms(x, self.norm) @ self.embed.T

    def tensors(self):
        out = [("model.embed_tokens.weight", self.embed)]
        for i, b in enumerate(self.layers):
            p = "model.layers.%d." % i
            out += [(p + "input_layernorm.weight", b.norm1),
                    (p + "post_attention_layernorm.weight", b.norm2)]
            m = b.mixer
            if b.deltanet:
                la = p + "linear_attn."
                out += [(la + "in_proj_qkv.weight", m.qkv), (la + "in_proj_z.weight", m.z),
                        (la + "in_proj_b.weight", m.b), (la + "in_proj_a.weight", m.a),
                        (la + "conv1d.weight", m.conv), (la + "A_log", m.A_log),
                        (la + "dt_bias", m.dt_bias), (la + "norm.weight", m.norm),
                        (la + "out_proj.weight", m.out)]
            else:
                sa = p + "self_attn."
                out += [(sa + "q_proj.weight", m.q), (sa + "k_proj.weight", m.k),
                        (sa + "v_proj.weight", m.v), (sa + "o_proj.weight", m.o),
                        (sa + "q_norm.weight", m.q_norm), (sa + "k_norm.weight", m.k_norm)]
            out += [(p + "mlp.gate_proj.weight", b.gate), (p + "mlp.up_proj.weight", b.up),
                    (p + "mlp.down_proj.weight", b.down)]
        out += [("model.norm.weight", self.norm)]
        return [(n, t.detach().clone().float().contiguous()) for n, t in out]


def head_map(model, ids):
    """headmap.h's measures per layer and head: shares of |M| or softmax weights."""
    keep = []
    with torch.no_grad():
        model(torch.tensor([ids]), keep)
    T = len(ids)
    rows = []
    for kind, w, g in keep:
        w = w[0].double()
        if kind == "deltanet":
            w = w.abs() / w.abs().sum(-1, keepdim=True)
        heads = w.shape[0]
        m = {"previous": [], "self": [], "induction": [], "reach": [], "memory": []}
        for h in range(heads):
            a = w[h]
            m["previous"].append(sum(a[i, i - 1].item() for i in range(1, T)) / (T - 1))
            m["self"].append(sum(a[i, i].item() for i in range(1, T)) / (T - 1))
            m["reach"].append(sum(sum(a[i, j].item() * (i - j) for j in range(i))
                                  for i in range(1, T)) / (T - 1))
            total, count = 0.0, 0
            for i in range(T):
                after = {j + 1 for j in range(i) if ids[j] == ids[i]}
                if after:
                    total += sum(a[i, j].item() for j in after)
                    count += 1
            m["induction"].append(total / count)
            m["memory"].append(math.log(2.0) / (-g[0, h].double().mean().item())
                               if g is not None else float("nan"))
        rows.append(m)
    return rows


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    rng = random.Random(SEED)
    vocab, merges = tokenizer()
    ranks = {m: r for r, m in enumerate(merges)}
    eot = vocab["<|endoftext|>"]
    context = contexts(rng, vocab, ranks, eot, N_CTX)
    eval_ids = [eot] + encode(EVAL_TEXT, vocab, ranks)

    model = Hybrid(len(vocab))
    for b in model.layers:
        b.down.requires_grad_(False)  # the mixers alone: the MLPs add nothing
    # (train()'s progress lines: the best previous-token head of layer 2, induction of layer 3)
    train_minigpt.head_map = lambda m, ids: [(r["previous"], r["induction"])
                                             for r in head_map(m, ids)][-2:]
    train(model, context, eval_ids, STEPS)

    with torch.no_grad():  # the parallel form against the recurrence, every DeltaNet layer
        x = model.embed[torch.tensor([eval_ids])]
        for b in model.layers:
            h = rms(x, b.norm1)
            if b.deltanet:
                q, k, v, beta, g, _ = b.mixer.parts(h)
                par = b.mixer.effective(q, k, beta, g) @ v
                gap = (par - b.mixer.recurrent(h)).abs().max().item()
                assert gap < 1e-4, "the parallel form is %g from the recurrence" % gap
            x = b(x)

    os.makedirs(OUT, exist_ok=True)
    write_safetensors(os.path.join(OUT, "model.safetensors"), model.tensors())
    config = {"architectures": ["Qwen3_5ForCausalLM"], "model_type": "qwen3_5_text",
              "vocab_size": len(vocab), "hidden_size": N_EMBD, "intermediate_size": N_INNER,
              "num_hidden_layers": len(KINDS), "num_attention_heads": N_HEAD,
              "num_key_value_heads": N_KV, "head_dim": HEAD_DIM, "hidden_act": "silu",
              "max_position_embeddings": N_CTX, "rms_norm_eps": EPS, "attention_bias": False,
              "attn_output_gate": True, "linear_conv_kernel_dim": TAPS,
              "linear_key_head_dim": K_DIM, "linear_value_head_dim": V_DIM,
              "linear_num_key_heads": K_HEADS, "linear_num_value_heads": V_HEADS,
              "layer_types": ["linear_attention" if k else "full_attention" for k in KINDS],
              "full_attention_interval": 4, "tie_word_embeddings": True,
              "rope_parameters": {"rope_type": "default", "rope_theta": THETA,
                                  "partial_rotary_factor": 0.25},
              "bos_token_id": eot, "eos_token_id": eot, "torch_dtype": "float32"}
    write_config(OUT, config)
    write_tokenizer_json(OUT, vocab, merges, eot)
    for layer, m in enumerate(head_map(model, eval_ids)):
        for name in ("previous", "self", "induction", "reach", "memory"):
            print("layer %d %s %s" % (layer, name, " ".join("%.4f" % v for v in m[name])))
    print("wrote", OUT, "(%d tokens, %d parameters)" % (
        len(vocab), sum(p.numel() for p in model.parameters())))


if __name__ == "__main__":
    main()
