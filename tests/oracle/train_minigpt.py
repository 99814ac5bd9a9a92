"""Trains minigpt, the small GPT-2 that ships with attnscope (samples/models/minigpt/).

attnscope's own code; Debian's python3-torch, from the top of the source tree:

    /usr/bin/python3 tests/oracle/train_minigpt.py

(about 20 minutes on one core; seeded: on the same machine and torch it
writes the same files again).

The model is GPT-2's architecture with Hugging Face's tensor names (2
layers, 4 heads, n_embd 64, context 64, tied embeddings, gelu_new), so
attnscope reads it as it reads GPT-2 small.  Its data is text this script
generates, no corpus: 96 common three-letter English words (a list written
here), in passages joined by <|endoftext|>, each a random sequence of 3-12
words said two or three times ("cat map sun cat map sun").  The first time
through, nothing predicts the next word; in the repeats, everything does,
for a model that looks back for the word's earlier place and copies what
followed it.  That is the task on which transformers grow induction heads,
and with them the previous-token heads they are built on.  The MLPs stay
zero (an attention-only transformer, as in the papers that first described
these heads, in GPT-2's layout).

The tokenizer is GPT-2's byte-level BPE with merges learned here from the
words (each word, with or without its leading space, is one token),
written as vocab.json and merges.txt.  At the end the script prints the
model map's previous-token and induction measures on a repeated sequence;
tests/check_model.c asserts them on the committed files.
"""
import json
import math
import os
import random
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_fixtures import write_safetensors  # noqa: E402
from gpt2_tiny_model import BYTE_CHARS, encode, learn_merges, write_tokenizer  # noqa: E402

OUT = os.path.join("samples", "models", "minigpt")
N_LAYER, N_HEAD, N_EMBD, N_CTX = 2, 4, 64, 64
STEPS, BATCH, LR = 12000, 32, 1e-3
SEED = 1
EVAL_TEXT = "cat map sun red fox ink owl jam cat map sun red fox ink owl jam"
EVAL_TEXT = "cat map sun red fox ink owl jam cat map sun red fox ink owl jam"
WORDS = """ant ape arm art axe bag bat bed bee box boy bus cab cap car cat cow cup
day dog ear egg elf elk end eye fan fig fin fir fox fun gem gum hat hen hog hut
ice ink jam jar jet jug key kid kit leg lid lip log man map mat mix mop mud net
nut oak oar owl pan pea pen pet pie pig pin pit pot ram rat red rib rod rug sea
sky son sun tea ten tin toe top toy tub van web wig yak yam zoo""".split()
assert len(WORDS) == len(set(WORDS)) and all(len(w) == 3 for w in WORDS)


def tokenizer():
    """GPT-2's byte-level BPE, its merges learned from lines of random words."""
    rng = random.Random(1)
    lines = [" ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(3000)]
    merges = learn_merges("\n".join(lines), 4 * len(WORDS) + 60)
    tokens = [BYTE_CHARS[b] for b in range(256)] + [a + b for a, b in merges] + ["<|endoftext|>"]
    return {t: i for i, t in enumerate(tokens)}, merges


def passage(rng):
    seq = [rng.choice(WORDS) for _ in range(rng.randint(3, 12))]
    return " ".join(seq * rng.choice([2, 3]))


def contexts(rng, vocab, ranks, eot, n_ctx, make=passage):
    """What train() draws from: n_ctx + 1 ids of passages (make(rng)'s, by default this
    task's), each after <|endoftext|>."""
    def context():
        ids = []
        while len(ids) < n_ctx + 1:
            ids += [eot] + encode(make(rng), vocab, ranks)
        return ids[: n_ctx + 1]
    return context


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        C = N_EMBD
        self.ln_1 = torch.nn.LayerNorm(C)
        self.ln_2 = torch.nn.LayerNorm(C)
        # Conv1D's layout, as GPT-2 stores it: (in, out).
        self.c_attn = torch.nn.Parameter(torch.randn(C, 3 * C) * 0.02)
        self.c_attn_b = torch.nn.Parameter(torch.zeros(3 * C))
        self.c_proj = torch.nn.Parameter(torch.randn(C, C) * 0.02)
        self.c_proj_b = torch.nn.Parameter(torch.zeros(C))
        self.c_fc = torch.nn.Parameter(torch.randn(C, 4 * C) * 0.02)
        self.c_fc_b = torch.nn.Parameter(torch.zeros(4 * C))
        self.mlp_proj = torch.nn.Parameter(torch.randn(4 * C, C) * 0.02)
        self.mlp_proj_b = torch.nn.Parameter(torch.zeros(C))

    def forward(self, x, keep=None):
        B, T, C = x.shape
        hd = C // N_HEAD
        q, k, v = (self.ln_1(x) @ self.c_attn + self.c_attn_b).split(C, dim=2)
        q, k, v = (t.view(B, T, N_HEAD, hd).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = torch.softmax(att.masked_fill(~causal, float("-inf")), dim=-1)
        if keep is not None:
            keep.append(att.detach())
        x = x + (att @ v).transpose(1, 2).reshape(B, T, C) @ self.c_proj + self.c_proj_b
        h = self.ln_2(x) @ self.c_fc + self.c_fc_b
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h ** 3)))
        return x + h @ self.mlp_proj + self.mlp_proj_b


class GPT(torch.nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.wte = torch.nn.Parameter(torch.randn(vocab_size, N_EMBD) * 0.02)
        self.wpe = torch.nn.Parameter(torch.randn(N_CTX, N_EMBD) * 0.01)
        self.h = torch.nn.ModuleList(Block() for _ in range(N_LAYER))
        self.ln_f = torch.nn.LayerNorm(N_EMBD)

    def forward(self, ids, keep=None):
        x = self.wte[ids] + self.wpe[: ids.shape[1]]
        for b in self.h:
            x = b(x, keep)
        return self.ln_f(x) @ self.wte.T

    def tensors(self):
        out = [("wte.weight", self.wte), ("wpe.weight", self.wpe)]
        for i, b in enumerate(self.h):
            p = "h.%d." % i
            out += [(p + "ln_1.weight", b.ln_1.weight), (p + "ln_1.bias", b.ln_1.bias),
                    (p + "attn.c_attn.weight", b.c_attn), (p + "attn.c_attn.bias", b.c_attn_b),
                    (p + "attn.c_proj.weight", b.c_proj), (p + "attn.c_proj.bias", b.c_proj_b),
                    (p + "ln_2.weight", b.ln_2.weight), (p + "ln_2.bias", b.ln_2.bias),
                    (p + "mlp.c_fc.weight", b.c_fc), (p + "mlp.c_fc.bias", b.c_fc_b),
                    (p + "mlp.c_proj.weight", b.mlp_proj), (p + "mlp.c_proj.bias", b.mlp_proj_b)]
        out += [("ln_f.weight", self.ln_f.weight), ("ln_f.bias", self.ln_f.bias)]
        return [(n, t.detach().clone().float().contiguous()) for n, t in out]


def head_map(model, ids):
    """headmap.h's previous and induction measures, per layer and head."""
    keep = []
    with torch.no_grad():
        model(torch.tensor([ids]), keep)
    T = len(ids)
    rows = []
    for att in keep:
        a = att[0]
        prev = [sum(a[h, i, i - 1].item() for i in range(1, T)) / (T - 1) for h in range(N_HEAD)]
        ind = []
        for h in range(N_HEAD):
            total, count = 0.0, 0
            for i in range(T):
                after = {j + 1 for j in range(i) if ids[j] == ids[i]}
                if after:
                    total += sum(a[h, i, j].item() for j in after)
                    count += 1
            ind.append(total / count)
        rows.append((prev, ind))
    return rows


def write_config(out, config):
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")


def report(model, eval_ids, out, vocab_size):
    """What the trained heads do on the evaluation text (the numbers the C tests assert)."""
    for layer, (prev, ind) in enumerate(head_map(model, eval_ids)):
        print("layer %d previous %s" % (layer, " ".join("%.3f" % v for v in prev)))
        print("layer %d induction %s" % (layer, " ".join("%.3f" % v for v in ind)))
    print("wrote", out, "(%d tokens, %d parameters)" % (vocab_size, sum(p.numel() for p in model.parameters())))


def train(model, context, eval_ids, steps):
    """AdamW on the parameters that require grad, next-token cross-entropy on batches of
    context(), a 200-step warmup; every 1000 steps the heads' measures on eval_ids."""
    trained = [t for t in model.parameters() if t.requires_grad]
    opt = torch.optim.AdamW(trained, lr=LR, weight_decay=0.0, betas=(0.9, 0.98))
    for step in range(steps):
        batch = torch.tensor([context() for _ in range(BATCH)])
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        for g in opt.param_groups:
            g["lr"] = LR * min(1.0, (step + 1) / 200)
        if step % 1000 == 0 or step == steps - 1:
            heads = head_map(model, eval_ids)
            print("step %5d loss %.3f  previous %.2f  induction %.2f" % (
                step, loss.item(), max(heads[0][0]), max(heads[1][1])), flush=True)


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    rng = random.Random(SEED)
    vocab, merges = tokenizer()
    ranks = {m: r for r, m in enumerate(merges)}
    for w in WORDS:
        assert len(encode(w, vocab, ranks)) == 1 and len(encode(" " + w, vocab, ranks)) == 1, w
    eot = vocab["<|endoftext|>"]
    context = contexts(rng, vocab, ranks, eot, N_CTX)

    model = GPT(len(vocab))
    # Attention-only: the MLPs are zero and not trained, so each block adds only attention.
    for b in model.h:
        for t in (b.c_fc, b.c_fc_b, b.mlp_proj, b.mlp_proj_b):
            with torch.no_grad():
                t.zero_()
            t.requires_grad_(False)
    train(model, context, [eot] + encode(EVAL_TEXT, vocab, ranks), STEPS)

    os.makedirs(OUT, exist_ok=True)
    write_safetensors(os.path.join(OUT, "model.safetensors"), model.tensors())
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": N_LAYER,
              "n_head": N_HEAD, "n_embd": N_EMBD, "vocab_size": len(vocab), "n_positions": N_CTX,
              "n_ctx": N_CTX, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new",
              "n_inner": None, "bos_token_id": eot, "eos_token_id": eot}
    write_config(OUT, config)
    write_tokenizer(OUT, vocab, merges)
    report(model, [eot] + encode(EVAL_TEXT, vocab, ranks), OUT, len(vocab))


if __name__ == "__main__":
    main()
