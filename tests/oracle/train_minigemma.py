"""Trains minigemma, the small Gemma-3-style model with sliding windows that ships with attnscope
(samples/models/minigemma/).

attnscope's own code; Debian's python3-torch, from the top of the source tree:

    /usr/bin/python3 tests/oracle/train_minigemma.py

(about 20 minutes on one core; seeded: on the same machine and torch it
writes the same files again).

minigpt's task (tests/oracle/train_minigpt.py: passages of 3 to 12 random
three-letter words said two or three times, joined by <|endoftext|>) on
Gemma 3's architecture, written with Hugging Face's Gemma3ForCausalLM names
(model_type gemma3_text) so that attnscope reads it as it reads
google/gemma-3-270m: embeddings times sqrt(hidden), RMSNorm by (1 + w),
four norms a block, per-head QK-norm, rotary positions, scores divided by
sqrt(query_pre_attn_scalar), grouped-query attention (4 query heads sharing
2 key and value heads, head_dim 16), a GeGLU MLP, tied embeddings; 2 layers,
hidden 64, context 64.  Layer 0 slides: each query sees only the last 4
tokens (sliding_window 4, RoPE base 10000); layer 1 is full (RoPE base
1,000,000).  A copy of a passage is up to 12 words after the word it
repeats, three times the window: only the full layer can reach back that
far, so the induction head must grow there, fed by a previous-token head in
the sliding layer (the window is plenty for that).  As minillama's, the
attention has biases (with RoPE, what lets a head "look one back" without
learned positions) and the MLPs are zero (down_proj zero and not trained:
an attention-only transformer, the heads do all the work).  The forward
follows tests/oracle/window_fixtures.py's restatement of modeling_gemma3.

The tokenizer is minillama's (minigpt's byte-level BPE in a tokenizer.json
as Qwen's are).  At the end the script prints the model map's
previous-token and induction measures on a repeated sequence;
tests/models/check_model.c asserts them on the committed files.
"""
import os
import random
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_fixtures import write_safetensors  # noqa: E402
from gpt2_tiny_model import encode  # noqa: E402
from train_minigpt import (  # noqa: E402
    EVAL_TEXT, N_HEAD as MINIGPT_HEADS, contexts, report, tokenizer, train, write_config)
from train_minillama import write_tokenizer_json  # noqa: E402

OUT = os.path.join("samples", "models", "minigemma")
N_LAYER, N_HEAD, N_KV, HEAD_DIM, N_EMBD, N_INNER, N_CTX = 2, 4, 2, 16, 64, 128, 64
assert N_HEAD == MINIGPT_HEADS  # (minigpt's head_map, through report, measures this many heads)
WINDOW = 4
TYPES = ["sliding_attention", "full_attention"]
# query_pre_attn_scalar 1, not the head size: QK-norm holds each head's queries and keys to a
# root mean square of about 1, so divided by sqrt(16) no score could pass about 4 and no head
# grew sharp (8,000 steps: the best previous-token head at 0.13); undivided they reach 16.
LOCAL_THETA, THETA, EPS, SCALAR = 10000.0, 1000000.0, 1e-6, 1.0
STEPS = 8000  # (minigpt's batch and learning rate: train_minigpt.train)
SEED = 1


def norm(x, w):
    """Gemma3RMSNorm: x / rms(x), times (1 + w)."""
    return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)) * (1.0 + w)


def inv_freq(theta):
    return 1.0 / (theta ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.int64).float() / HEAD_DIM))


def rotate(x, freq):
    """x (B, heads, T, d) turned at positions 0 .. T-1 (apply_rotary_pos_emb)."""
    T = x.shape[2]
    angles = torch.arange(T).float()[:, None] * freq[None, :]
    emb = torch.cat((angles, angles), dim=-1)
    half = HEAD_DIM // 2
    return x * emb.cos() + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * emb.sin()


class Block(torch.nn.Module):
    def __init__(self, kind):
        super().__init__()
        C, Q, K = N_EMBD, N_HEAD * HEAD_DIM, N_KV * HEAD_DIM
        p = lambda *s: torch.nn.Parameter(torch.randn(*s) * 0.02)
        z = lambda n: torch.nn.Parameter(torch.zeros(n))  # (1 + w: w = 0 scales by 1)
        self.kind = kind
        self.norms = torch.nn.ParameterList([z(C) for _ in range(4)])  # in, post-attn, pre-ff, post-ff
        self.q_norm, self.k_norm = z(HEAD_DIM), z(HEAD_DIM)
        self.q, self.k, self.v, self.o = p(Q, C), p(K, C), p(K, C), p(C, Q)  # (out, in)
        self.qb, self.kb, self.vb = p(Q), p(K), p(K)
        self.ob = z(C)
        self.gate, self.up = p(N_INNER, C), p(N_INNER, C)
        self.down = torch.nn.Parameter(torch.zeros(C, N_INNER))

    def forward(self, x, keep=None):
        B, T, C = x.shape
        sliding = self.kind == "sliding_attention"
        h = norm(x, self.norms[0])
        q = (h @ self.q.T + self.qb).view(B, T, N_HEAD, HEAD_DIM)
        k = (h @ self.k.T + self.kb).view(B, T, N_KV, HEAD_DIM)
        v = (h @ self.v.T + self.vb).view(B, T, N_KV, HEAD_DIM).transpose(1, 2)
        q = norm(q, self.q_norm).transpose(1, 2)
        k = norm(k, self.k_norm).transpose(1, 2)
        freq = inv_freq(LOCAL_THETA if sliding else THETA)
        q, k = rotate(q, freq), rotate(k, freq)
        k = k.repeat_interleave(N_HEAD // N_KV, dim=1)
        v = v.repeat_interleave(N_HEAD // N_KV, dim=1)
        att = (q @ k.transpose(-1, -2)) / SCALAR ** 0.5
        i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
        seen = (j <= i) & (i - j < WINDOW) if sliding else j <= i
        att = torch.softmax(att.masked_fill(~seen, float("-inf")), dim=-1)
        if keep is not None:
            keep.append(att.detach())
        a = (att @ v).transpose(1, 2).reshape(B, T, N_HEAD * HEAD_DIM) @ self.o.T + self.ob
        x = x + norm(a, self.norms[1])
        h = norm(x, self.norms[2])
        m = (F.gelu(h @ self.gate.T, approximate="tanh") * (h @ self.up.T)) @ self.down.T
        return x + norm(m, self.norms[3])


class Gemma(torch.nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.embed = torch.nn.Parameter(torch.randn(vocab_size, N_EMBD) * 0.02)
        self.layers = torch.nn.ModuleList(Block(kind) for kind in TYPES)
        self.norm = torch.nn.Parameter(torch.zeros(N_EMBD))

    def forward(self, ids, keep=None):
        x = self.embed[ids] * torch.tensor(N_EMBD ** 0.5, dtype=torch.float32)
        for b in self.layers:
            x = b(x, keep)
        return norm(x, self.norm) @ self.embed.T

    def tensors(self):
        out = [("model.embed_tokens.weight", self.embed)]
        names = ["input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                 "post_feedforward_layernorm"]
        for i, b in enumerate(self.layers):
            p = "model.layers.%d." % i
            out += [(p + names[n] + ".weight", b.norms[n]) for n in range(4)]
            out += [(p + "self_attn.q_proj.weight", b.q), (p + "self_attn.q_proj.bias", b.qb),
                    (p + "self_attn.k_proj.weight", b.k), (p + "self_attn.k_proj.bias", b.kb),
                    (p + "self_attn.v_proj.weight", b.v), (p + "self_attn.v_proj.bias", b.vb),
                    (p + "self_attn.o_proj.weight", b.o), (p + "self_attn.o_proj.bias", b.ob),
                    (p + "self_attn.q_norm.weight", b.q_norm),
                    (p + "self_attn.k_norm.weight", b.k_norm),
                    (p + "mlp.gate_proj.weight", b.gate), (p + "mlp.up_proj.weight", b.up),
                    (p + "mlp.down_proj.weight", b.down)]
        out += [("model.norm.weight", self.norm)]
        return [(n, t.detach().clone().float().contiguous()) for n, t in out]


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    rng = random.Random(SEED)
    vocab, merges = tokenizer()
    ranks = {m: r for r, m in enumerate(merges)}
    eot = vocab["<|endoftext|>"]
    context = contexts(rng, vocab, ranks, eot, N_CTX)

    model = Gemma(len(vocab))
    for b in model.layers:
        b.down.requires_grad_(False)  # attention-only: the MLPs add nothing
    train(model, context, [eot] + encode(EVAL_TEXT, vocab, ranks), STEPS)

    os.makedirs(OUT, exist_ok=True)
    write_safetensors(os.path.join(OUT, "model.safetensors"), model.tensors())
    config = {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
              "hidden_size": N_EMBD, "intermediate_size": N_INNER,
              "num_hidden_layers": N_LAYER, "num_attention_heads": N_HEAD,
              "num_key_value_heads": N_KV, "head_dim": HEAD_DIM, "vocab_size": len(vocab),
              "max_position_embeddings": N_CTX, "rms_norm_eps": EPS, "rope_theta": THETA,
              "rope_local_base_freq": LOCAL_THETA, "rope_scaling": None,
              "sliding_window": WINDOW, "layer_types": TYPES,
              "query_pre_attn_scalar": SCALAR, "hidden_activation": "gelu_pytorch_tanh",
              "attention_bias": True, "attn_logit_softcapping": None,
              "final_logit_softcapping": None, "tie_word_embeddings": True,
              "bos_token_id": eot, "eos_token_id": eot, "torch_dtype": "float32"}
    write_config(OUT, config)
    write_tokenizer_json(OUT, vocab, merges, eot)
    report(model, [eot] + encode(EVAL_TEXT, vocab, ranks), OUT, len(vocab))


if __name__ == "__main__":
    main()
