"""Trains minimoe, the small mixture of experts that ships with attnscope (samples/models/minimoe/).

attnscope's own code; Debian's python3-torch, from the top of the source tree:

    /usr/bin/python3 tests/oracle/train_minimoe.py

(a few minutes on one core; seeded: on the same machine and torch it writes
the same files again).

Qwen3-MoE's architecture (the book's ch05/11 bonus notebook; Hugging Face's
Qwen3MoeForCausalLM names, so attnscope reads it as it reads Qwen3-30B-A3B):
2 layers, hidden 64, 4 query heads of 16 sharing 2 key and value heads,
per-head QK-norm, rotary positions, RMSNorm, tied embeddings, and in every
layer a router over 4 experts (each a SwiGLU MLP of 64), each token sent
to its 2 likeliest, their probabilities divided by their sum
(norm_topk_prob).  The forward is tests/oracle/moe_fixtures.py's.

Its text gives the experts three kinds of token to specialise on, each
following a rule of its own: chains of words, each word followed by the
next in a fixed shuffled order of minigpt's 96 words; of digits, each
followed by the next (9 then 0); of punctuation, in the order , ; : . ! ?;
a chain of 3 to 8 tokens, then a chain of another kind.  Saying the next
token is a lookup from the token itself (the head is tied to the embedding,
so the lookup is the MLP's: the experts').  Training adds Hugging Face's
load-balancing loss (load_balancing_loss_func, router_aux_loss_coef 0.02)
so that the router uses every expert.

The tokenizer is GPT-2's byte-level BPE, its merges learned from that text
(each word, digit and mark with its space one token) and written as a
tokenizer.json with GPT-2's pre-tokenizer.  At the end the script prints,
for each layer, where each kind's tokens go (the share of each kind's
tokens whose first choice is each expert) on the evaluation text; the
lesson 20-which-expert says the numbers and make check checks them.
"""
import json
import os
import random
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_fixtures import write_safetensors  # noqa: E402
from gpt2_tiny_model import BYTE_CHARS, encode, learn_merges  # noqa: E402
from train_minigpt import WORDS, write_config  # noqa: E402

OUT = os.path.join("samples", "models", "minimoe")
N_LAYER, N_HEAD, N_KV, HEAD_DIM, N_EMBD, N_CTX = 2, 4, 2, 16, 64, 64
N_EXPERTS, TOP_K, D_EXPERT = 3, 1, 12
NORM_TOPK = False
THETA, EPS = 10000.0, 1e-6
AUX = 0.01
STEPS, BATCH, LR = 6000, 16, 3e-3
SEED = 1
DIGITS = [str(d) for d in range(10)]
MARKS = [",", ";", ":", ".", "!", "?"]


def kinds():
    """The three kinds' tokens in their orders (the words' shuffled once, seeded)."""
    words = list(WORDS)
    random.Random(7).shuffle(words)
    return {"word": words, "digit": DIGITS, "mark": MARKS}


def eval_text(orders):
    """The lesson's text: chains of each kind, as the rules run them."""
    w = orders["word"]
    return " ".join(w[0:3] + DIGITS[3:7] + MARKS[0:4] + w[10:13] + DIGITS[7:] + DIGITS[:1] +
                    MARKS[4:] + MARKS[:1] + w[20:22])


def chain(rng, order):
    at = rng.randrange(len(order))
    return [order[(at + i) % len(order)] for i in range(rng.randint(3, 8))]


def passage(rng, orders):
    out = []
    while len(out) < 3 * N_CTX:
        out += chain(rng, orders[rng.choice(list(orders))])
    return " ".join(out)


def tokenizer(orders):
    rng = random.Random(1)
    text = "\n".join(" " + passage(rng, orders) for _ in range(300))
    merges = learn_merges(text, 600)
    tokens = [BYTE_CHARS[b] for b in range(256)] + [a + b for a, b in merges] + ["<|endoftext|>"]
    return {t: i for i, t in enumerate(tokens)}, merges


def rms(x, w):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS))


INV_FREQ = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.int64).float() / HEAD_DIM))


def rotate(x):
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
        self.q_norm = torch.nn.Parameter(torch.ones(HEAD_DIM))
        self.k_norm = torch.nn.Parameter(torch.ones(HEAD_DIM))
        self.q, self.k, self.v, self.o = p(Q, C), p(K, C), p(K, C), p(C, Q)
        self.router = p(N_EXPERTS, C)
        self.gate = p(N_EXPERTS, D_EXPERT, C)
        self.up = p(N_EXPERTS, D_EXPERT, C)
        self.down = p(N_EXPERTS, C, D_EXPERT)

    def moe(self, h):
        """Qwen3MoeSparseMoeBlock: softmax, top k renormalised, each expert on its tokens."""
        B, T, C = h.shape
        x = h.reshape(-1, C)
        logits = x @ self.router.T
        probs = torch.softmax(logits, dim=-1)
        w, chosen = torch.topk(probs, TOP_K, dim=-1)
        if NORM_TOPK:
            w = w / w.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(x)
        for e in range(N_EXPERTS):
            rows, slot = torch.where(chosen == e)
            if rows.numel() == 0:
                continue
            y = (F.silu(x[rows] @ self.gate[e].T) * (x[rows] @ self.up[e].T)) @ self.down[e].T
            out = out.index_add(0, rows, y * w[rows, slot, None])
        return out.view(B, T, C), logits, chosen

    def forward(self, x, keep=None):
        B, T, C = x.shape
        h = rms(x, self.norm1)
        q = (h @ self.q.T).view(B, T, N_HEAD, HEAD_DIM)
        k = (h @ self.k.T).view(B, T, N_KV, HEAD_DIM)
        v = (h @ self.v.T).view(B, T, N_KV, HEAD_DIM).transpose(1, 2)
        q = rotate(rms(q, self.q_norm).transpose(1, 2))
        k = rotate(rms(k, self.k_norm).transpose(1, 2))
        k = k.repeat_interleave(N_HEAD // N_KV, dim=1)
        v = v.repeat_interleave(N_HEAD // N_KV, dim=1)
        att = (q @ k.transpose(-1, -2)) / HEAD_DIM ** 0.5
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = torch.softmax(att.masked_fill(~causal, float("-inf")), dim=-1)
        x = x + (att @ v).transpose(1, 2).reshape(B, T, N_HEAD * HEAD_DIM) @ self.o.T
        m, logits, chosen = self.moe(rms(x, self.norm2))
        if keep is not None:
            keep.append((logits.detach(), chosen.detach()))
        return x + m, logits, chosen


class MiniMoE(torch.nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.embed = torch.nn.Parameter(torch.randn(vocab_size, N_EMBD) * 0.02)
        self.layers = torch.nn.ModuleList(Block() for _ in range(N_LAYER))
        self.norm = torch.nn.Parameter(torch.ones(N_EMBD))

    def forward(self, ids, keep=None):
        x = self.embed[ids]
        routing = []
        for b in self.layers:
            x, logits, chosen = b(x, keep)
            routing.append((logits, chosen))
        return rms(x, self.norm) @ self.embed.T, routing

    def tensors(self):
        out = [("model.embed_tokens.weight", self.embed)]
        for i, b in enumerate(self.layers):
            p = "model.layers.%d." % i
            out += [(p + "input_layernorm.weight", b.norm1),
                    (p + "self_attn.q_proj.weight", b.q), (p + "self_attn.k_proj.weight", b.k),
                    (p + "self_attn.v_proj.weight", b.v), (p + "self_attn.o_proj.weight", b.o),
                    (p + "self_attn.q_norm.weight", b.q_norm),
                    (p + "self_attn.k_norm.weight", b.k_norm),
                    (p + "post_attention_layernorm.weight", b.norm2),
                    (p + "mlp.gate.weight", b.router)]
            for e in range(N_EXPERTS):
                ex = p + "mlp.experts.%d." % e
                out += [(ex + "gate_proj.weight", b.gate[e]), (ex + "up_proj.weight", b.up[e]),
                        (ex + "down_proj.weight", b.down[e])]
        out += [("model.norm.weight", self.norm)]
        return [(n, t.detach().clone().float().contiguous()) for n, t in out]


def balance(routing):
    """transformers' load_balancing_loss_func over every layer's router logits."""
    logits = torch.cat([l for l, _ in routing], dim=0)
    probs = torch.softmax(logits, dim=-1)
    _, chosen = torch.topk(probs, TOP_K, dim=-1)
    mask = F.one_hot(chosen, N_EXPERTS).float()
    return torch.sum(mask.mean(dim=0) * probs.mean(dim=0).unsqueeze(0)) * N_EXPERTS


def kind_of(vocab, orders):
    """token id -> its kind (the tokens with their space: ' 3', ' ,', ' cat')."""
    out = {}
    for name, order in orders.items():
        for t in order:
            out[vocab["".join(BYTE_CHARS[b] for b in (" " + t).encode())]] = name
    return out


def report(model, ids, kinds_of):
    """For each layer, each kind's tokens: the share whose first choice is each expert."""
    keep = []
    with torch.no_grad():
        model(torch.tensor([ids]), keep)
    for l, (logits, chosen) in enumerate(keep):
        counts = {}
        for i, t in enumerate(ids):
            k = kinds_of.get(t)
            if k is not None:
                counts.setdefault(k, [0] * N_EXPERTS)[int(chosen[i, 0])] += 1
        print("layer %d first choices: %s" % (l, "; ".join(
            "%s %s" % (k, " ".join("e%d:%d" % (e, c) for e, c in enumerate(v) if c))
            for k, v in sorted(counts.items()))))


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    rng = random.Random(SEED)
    orders = kinds()
    vocab, merges = tokenizer(orders)
    ranks = {m: r for r, m in enumerate(merges)}
    eot = vocab["<|endoftext|>"]
    kinds_of = kind_of(vocab, orders)
    text = eval_text(orders)
    print("the lesson's text:", text)
    eval_ids = encode(" " + text, vocab, ranks)
    wide_ids = encode(" " + passage(random.Random(99), orders), vocab, ranks)[:N_CTX]
    assert all(t in kinds_of for t in eval_ids), "the evaluation text's tokens are one kind each"

    def context():
        ids = encode(" " + passage(rng, orders), vocab, ranks)
        start = rng.randrange(len(ids) - N_CTX - 1)
        return ids[start: start + N_CTX + 1]

    model = MiniMoE(len(vocab))
    # Layer 0's attention adds nothing (its o_proj zero, not trained): its router reads each token
    # alone, and its experts are the first place the next token can be looked up.
    with torch.no_grad():
        model.layers[0].o.zero_()
    model.layers[0].o.requires_grad_(False)
    opt = torch.optim.AdamW([t for t in model.parameters() if t.requires_grad], lr=LR, weight_decay=0.0, betas=(0.9, 0.98))
    for step in range(STEPS):
        batch = torch.tensor([context() for _ in range(BATCH)])
        logits, routing = model(batch[:, :-1])
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
        loss = ce + AUX * balance(routing)
        opt.zero_grad()
        loss.backward()
        opt.step()
        for g in opt.param_groups:
            g["lr"] = LR * min(1.0, (step + 1) / 200)
        if step % 500 == 0 or step == STEPS - 1:
            print("step %5d loss %.3f" % (step, ce.item()), flush=True)
            report(model, eval_ids, kinds_of)
            report(model, wide_ids, kinds_of)

    os.makedirs(OUT, exist_ok=True)
    write_safetensors(os.path.join(OUT, "model.safetensors"), model.tensors())
    config = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
              "hidden_size": N_EMBD, "intermediate_size": D_EXPERT,
              "moe_intermediate_size": D_EXPERT, "num_hidden_layers": N_LAYER,
              "num_attention_heads": N_HEAD, "num_key_value_heads": N_KV, "head_dim": HEAD_DIM,
              "vocab_size": len(vocab), "max_position_embeddings": N_CTX, "rms_norm_eps": EPS,
              "rope_theta": THETA, "rope_scaling": None, "hidden_act": "silu",
              "attention_bias": False, "tie_word_embeddings": True, "use_sliding_window": False,
              "sliding_window": None, "num_experts": N_EXPERTS, "num_experts_per_tok": TOP_K,
              "norm_topk_prob": NORM_TOPK, "decoder_sparse_step": 1, "mlp_only_layers": [],
              "output_router_logits": False, "router_aux_loss_coef": AUX,
              "bos_token_id": eot, "eos_token_id": eot, "torch_dtype": "float32"}
    write_config(OUT, config)
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": eot, "content": "<|endoftext|>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": False,
                  "byte_fallback": False, "ignore_merges": False,
                  "vocab": {t: i for t, i in vocab.items() if t != "<|endoftext|>"},
                  "merges": [[a, b] for a, b in merges]},
    }
    with open(os.path.join(OUT, "tokenizer.json"), "w") as f:
        json.dump(tok, f, ensure_ascii=False)
        f.write("\n")
    report(model, eval_ids, kinds_of)
    print("wrote", OUT, "(%d tokens, %d parameters)" % (
        len(vocab), sum(p.numel() for p in model.parameters())))


if __name__ == "__main__":
    main()
