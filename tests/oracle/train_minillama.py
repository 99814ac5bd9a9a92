"""Trains minillama, the small Llama-style model that ships with attnscope (samples/models/minillama/).

attnscope's own code; Debian's python3-torch, from the top of the source tree:

    /usr/bin/python3 tests/oracle/train_minillama.py

(about 20 minutes on one core; seeded: on the same machine and torch it
writes the same files again).

minigpt's task (tests/oracle/train_minigpt.py: passages of random
three-letter words said two or three times, joined by <|endoftext|>) on
today's architecture, written with Hugging Face's LlamaForCausalLM names so
that attnscope reads it as it reads SmolLM2: RMSNorm, no position embedding
but rotary positions (rope_theta 10000) on queries and keys, grouped-query
attention (4 query heads sharing 2 key and value heads, head_dim 16),
a SwiGLU MLP, tied embeddings; 2 layers, hidden 64, context 64; with
attention_bias (biases on q, k, v and o, as Llama's config allows and
Qwen2's always has).  The biases matter here: RoPE turns a query's bias at
position i and a key's at j into a score that depends on i - j alone, the
content-free "look one back" a previous-token head needs; without them
(and without learned positions) 12,000 steps grew no such head.  As
minigpt's, the MLPs are zero (down_proj zero and not trained: an
attention-only transformer), so the heads do all the work.  The forward is
tests/oracle/llama_fixtures.py's (rotate-half RoPE, repeat_kv).

The tokenizer is minigpt's byte-level BPE (each word, with or without its
space, one token) written as a tokenizer.json the way Qwen's are: a Split
pre-tokenizer with Qwen's pattern, then ByteLevel without its own, and
<|endoftext|> an added special token.  At the end the script prints the
model map's previous-token and induction measures on a repeated sequence;
tests/check_model.c asserts them on the committed files.
"""
import json
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

OUT = os.path.join("samples", "models", "minillama")
N_LAYER, N_HEAD, N_KV, HEAD_DIM, N_EMBD, N_INNER, N_CTX = 2, 4, 2, 16, 64, 128, 64
assert N_HEAD == MINIGPT_HEADS  # (minigpt's head_map, through report, measures this many heads)
THETA, EPS = 10000.0, 1e-5
STEPS = 8000  # (minigpt's batch and learning rate: train_minigpt.train)
SEED = 1
QWEN_PATTERN = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")


def rms(x, w):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS))


INV_FREQ = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.int64).float() / HEAD_DIM))


def rotate(x):
    """x (B, heads, T, d) turned at positions 0 .. T-1 (apply_rotary_pos_emb)."""
    T = x.shape[2]
    angles = torch.arange(T).float()[:, None] * INV_FREQ[None, :]
    emb = torch.cat((angles, angles), dim=-1)
    half = HEAD_DIM // 2
    return x * emb.cos() + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * emb.sin()


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        C, Q, K = N_EMBD, N_HEAD * HEAD_DIM, N_KV * HEAD_DIM
        p = lambda *s: torch.nn.Parameter(torch.randn(*s) * 0.02)
        self.norm1 = torch.nn.Parameter(torch.ones(C))
        self.norm2 = torch.nn.Parameter(torch.ones(C))
        self.q, self.k, self.v, self.o = p(Q, C), p(K, C), p(K, C), p(C, Q)  # (out, in)
        self.qb, self.kb, self.vb = p(Q), p(K), p(K)
        self.ob = torch.nn.Parameter(torch.zeros(C))
        self.gate, self.up = p(N_INNER, C), p(N_INNER, C)
        self.down = torch.nn.Parameter(torch.zeros(C, N_INNER))

    def forward(self, x, keep=None):
        B, T, C = x.shape
        h = rms(x, self.norm1)
        q = (h @ self.q.T + self.qb).view(B, T, N_HEAD, HEAD_DIM).transpose(1, 2)
        k = (h @ self.k.T + self.kb).view(B, T, N_KV, HEAD_DIM).transpose(1, 2)
        v = (h @ self.v.T + self.vb).view(B, T, N_KV, HEAD_DIM).transpose(1, 2)
        q, k = rotate(q), rotate(k)
        k = k.repeat_interleave(N_HEAD // N_KV, dim=1)
        v = v.repeat_interleave(N_HEAD // N_KV, dim=1)
        att = (q @ k.transpose(-1, -2)) / HEAD_DIM ** 0.5
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = torch.softmax(att.masked_fill(~causal, float("-inf")), dim=-1)
        if keep is not None:
            keep.append(att.detach())
        x = x + (att @ v).transpose(1, 2).reshape(B, T, N_HEAD * HEAD_DIM) @ self.o.T + self.ob
        h = rms(x, self.norm2)
        return x + (F.silu(h @ self.gate.T) * (h @ self.up.T)) @ self.down.T


class Llama(torch.nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.embed = torch.nn.Parameter(torch.randn(vocab_size, N_EMBD) * 0.02)
        self.layers = torch.nn.ModuleList(Block() for _ in range(N_LAYER))
        self.norm = torch.nn.Parameter(torch.ones(N_EMBD))

    def forward(self, ids, keep=None):
        x = self.embed[ids]
        for b in self.layers:
            x = b(x, keep)
        return rms(x, self.norm) @ self.embed.T

    def named(self):
        """Every parameter under its Hugging Face name, in the file's order."""
        out = [("model.embed_tokens.weight", self.embed)]
        for i, b in enumerate(self.layers):
            p = "model.layers.%d." % i
            out += [(p + "input_layernorm.weight", b.norm1),
                    (p + "self_attn.q_proj.weight", b.q), (p + "self_attn.q_proj.bias", b.qb),
                    (p + "self_attn.k_proj.weight", b.k), (p + "self_attn.k_proj.bias", b.kb),
                    (p + "self_attn.v_proj.weight", b.v), (p + "self_attn.v_proj.bias", b.vb),
                    (p + "self_attn.o_proj.weight", b.o), (p + "self_attn.o_proj.bias", b.ob),
                    (p + "post_attention_layernorm.weight", b.norm2),
                    (p + "mlp.gate_proj.weight", b.gate), (p + "mlp.up_proj.weight", b.up),
                    (p + "mlp.down_proj.weight", b.down)]
        out += [("model.norm.weight", self.norm)]
        return out

    def tensors(self):
        return [(n, t.detach().clone().float().contiguous()) for n, t in self.named()]


def write_tokenizer_json(out, vocab, merges, eot):
    """minigpt's vocabulary and merges as a tokenizer.json with Qwen's pre-tokenizer."""
    model_vocab = {t: i for t, i in vocab.items() if t != "<|endoftext|>"}
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": eot, "content": "<|endoftext|>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False, "special": True}],
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN_PATTERN}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
             "use_regex": False}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                           "use_regex": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": False,
                  "byte_fallback": False, "ignore_merges": False, "vocab": model_vocab,
                  "merges": [[a, b] for a, b in merges]},
    }
    with open(os.path.join(out, "tokenizer.json"), "w") as f:
        json.dump(tok, f, ensure_ascii=False)
        f.write("\n")


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    rng = random.Random(SEED)
    vocab, merges = tokenizer()
    ranks = {m: r for r, m in enumerate(merges)}
    eot = vocab["<|endoftext|>"]
    context = contexts(rng, vocab, ranks, eot, N_CTX)

    model = Llama(len(vocab))
    for b in model.layers:
        b.down.requires_grad_(False)  # attention-only: the MLPs add nothing
    train(model, context, [eot] + encode(EVAL_TEXT, vocab, ranks), STEPS)

    os.makedirs(OUT, exist_ok=True)
    write_safetensors(os.path.join(OUT, "model.safetensors"), model.tensors())
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "hidden_size": N_EMBD, "intermediate_size": N_INNER,
              "num_hidden_layers": N_LAYER, "num_attention_heads": N_HEAD,
              "num_key_value_heads": N_KV, "head_dim": HEAD_DIM, "vocab_size": len(vocab),
              "max_position_embeddings": N_CTX, "rms_norm_eps": EPS, "rope_theta": THETA,
              "rope_scaling": None, "hidden_act": "silu", "attention_bias": True,
              "mlp_bias": False, "tie_word_embeddings": True, "bos_token_id": eot,
              "eos_token_id": eot, "torch_dtype": "float32"}
    write_config(OUT, config)
    write_tokenizer_json(OUT, vocab, merges, eot)
    report(model, [eot] + encode(EVAL_TEXT, vocab, ranks), OUT, len(vocab))


if __name__ == "__main__":
    main()
