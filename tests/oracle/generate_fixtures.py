#!/usr/bin/python3
"""Writes tests/fixtures/generate/cases.txt: the tokens PyTorch writes with the book's generate.

Run by hand from the top of the source tree with Debian's python3-torch:
    /usr/bin/python3 tests/oracle/generate_fixtures.py
attnscope's tests (tests/models/check_generate.c) read the file; they never need PyTorch.

The book's generate (chapter 5, section 5.3), restated below as `generate`:
each step runs the model over the last context_size tokens (idx[:, -context_size:],
no cache), takes the last position's logits, cuts them with top-k
(torch.topk, torch.where(logits < min_val, -inf)), and either takes
torch.argmax (temperature 0) or divides by the temperature, cuts with
Hugging Face's TopPLogitsWarper when top_p < 1 (beyond the book; restated in
sample_fixtures.py), and draws with torch.multinomial(softmax(logits), 1);
a chosen eos_id stops it unwritten.  torch.manual_seed(seed) is set once
before the first step, as the book's examples do.

The models, float32 forwards of the files attnscope reads:
  chapter5      samples/models/chapter5/model.pth in the book's GPTModel
                (format_fixtures.GPTModel, its own module), eval mode;
  GPT-2         Hugging Face GPT-2 folders (tests/fixtures/gpt2/tiny,
                samples/models/minigpt), Hugging Face's GPT-2 semantics (as
                gpt2_fixtures.py computes them);
  Llama, Qwen   samples/models/minillama and tests/fixtures/decoders's Llama,
                Qwen2 and Qwen3 folders (llama_fixtures.forward's computation).

One case per three lines:

    case NAME MODEL HEADS TEMP TOPK TOPP SEED EOS COUNT -- PROMPT_IDS
    ids WRITTEN_IDS                    (fewer than COUNT when EOS stopped it)
    margin M1 M2 ...                   per step: how far the choice was from the
                                       next best, relative: greedy (l1 - l2) / |l1|
                                       of the two largest logits, sampling
                                       (r1 - r2) / r1 of the two largest p / q

MODEL is a path from the top of the tree, HEADS the --heads a bare .pth needs
(0: none), EOS -1 for none.  A float32 forward elsewhere (attnscope's) may
choose otherwise only where a margin is within its rounding, about 1e-6.
"""
import json
import os
import struct
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from format_fixtures import GPTModel  # noqa: E402
from llama_fixtures import forward as llama_forward  # noqa: E402
from sample_fixtures import top_p_cut  # noqa: E402

# The book's prompt, "Every effort moves you", in GPT-2's ids (tiktoken's "gpt2").
BOOK_PROMPT = [6109, 3626, 6100, 345]


def read_safetensors(path):
    """name -> float32 tensor, from a file as gpt2_fixtures.write_safetensors writes them."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    base = 8 + n
    dtypes = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        lo, hi = e["data_offsets"]
        raw = bytearray(data[base + lo:base + hi])
        t = torch.frombuffer(raw, dtype=dtypes[e["dtype"]]).reshape(e["shape"])
        out[name] = t.float()
    return out


def chapter5_model():
    m = GPTModel(50257, 64, 16, 2, 2, False)
    m.load_state_dict(torch.load("samples/models/chapter5/model.pth"))
    m.eval()
    return lambda ids: m(torch.tensor([ids]))[0, -1].detach(), 64


def gpt2_folder(folder):
    """Hugging Face's GPT-2 (Conv1D (in, out) weights), as gpt2_fixtures.py computes it."""
    with open(os.path.join(folder, "config.json")) as f:
        c = json.load(f)
    t = read_safetensors(os.path.join(folder, "model.safetensors"))
    pre = "transformer." if "transformer.wte.weight" in t else ""
    L, H, C = c["n_layer"], c["n_head"], c["n_embd"]
    hd = C // H
    head = t.get("lm_head.weight", t[pre + "wte.weight"])

    def run(ids):
        n = len(ids)
        x = t[pre + "wte.weight"][torch.tensor(ids)] + t[pre + "wpe.weight"][:n]
        causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
        for l in range(L):
            b = pre + "h.%d." % l
            h = F.layer_norm(x, (C,), t[b + "ln_1.weight"], t[b + "ln_1.bias"], eps=1e-5)
            q, k, v = (h @ t[b + "attn.c_attn.weight"] + t[b + "attn.c_attn.bias"]).split(C, dim=1)
            q, k, v = (z.view(n, H, hd).transpose(0, 1) for z in (q, k, v))
            att = (q @ k.transpose(-1, -2)) / (hd ** 0.5)
            att = torch.softmax(att.masked_fill(~causal, float("-inf")), dim=-1)
            ctx = (att @ v).transpose(0, 1).reshape(n, C)
            x = x + ctx @ t[b + "attn.c_proj.weight"] + t[b + "attn.c_proj.bias"]
            h = F.layer_norm(x, (C,), t[b + "ln_2.weight"], t[b + "ln_2.bias"], eps=1e-5)
            f = h @ t[b + "mlp.c_fc.weight"] + t[b + "mlp.c_fc.bias"]
            f = 0.5 * f * (1.0 + torch.tanh((2.0 / torch.pi) ** 0.5 * (f + 0.044715 * torch.pow(f, 3.0))))
            x = x + f @ t[b + "mlp.c_proj.weight"] + t[b + "mlp.c_proj.bias"]
        final = F.layer_norm(x, (C,), t[pre + "ln_f.weight"], t[pre + "ln_f.bias"], eps=1e-5)
        return final[-1] @ head.T

    return run, c["n_positions"]


def llama_folder(folder):
    """A Llama, Qwen2 or Qwen3 folder, through llama_fixtures.forward's computation."""
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    c = {"L": cfg["num_hidden_layers"], "H": cfg["num_attention_heads"],
         "KV": cfg["num_key_value_heads"], "C": cfg["hidden_size"], "arch": cfg["model_type"],
         "eps": cfg["rms_norm_eps"], "theta": cfg["rope_theta"], "P": cfg["max_position_embeddings"],
         "scaling": cfg.get("rope_scaling")}
    c["hd"] = cfg.get("head_dim") or c["C"] // c["H"]
    t = read_safetensors(os.path.join(folder, "model.safetensors"))
    p = {"embed": t["model.embed_tokens.weight"], "norm": t["model.norm.weight"]}
    p["head"] = t.get("lm_head.weight", p["embed"])
    roles = {"q": "self_attn.q_proj", "k": "self_attn.k_proj", "v": "self_attn.v_proj",
             "o": "self_attn.o_proj", "q_norm": "self_attn.q_norm", "k_norm": "self_attn.k_norm",
             "norm1": "input_layernorm", "norm2": "post_attention_layernorm",
             "gate": "mlp.gate_proj", "up": "mlp.up_proj", "down": "mlp.down_proj"}
    for l in range(c["L"]):
        for key, hf in roles.items():
            for suffix, tail in (("", ".weight"), ("_b", ".bias")):
                full = "model.layers.%d.%s%s" % (l, hf, tail)
                if full in t:
                    p[(l, key + suffix)] = t[full]

    def run(ids):
        out = llama_forward(c, p, ids, (True, True, 1.0, []))
        return out["final"][-1] @ p["head"].T

    return run, c["P"]


def generate(model, context, prompt, count, temperature, top_k, top_p, seed, eos):
    """The book's generate, one token at a time; also each step's margin."""
    torch.manual_seed(seed)
    ids, margins = list(prompt), []
    for _ in range(count):
        with torch.no_grad():
            logits = model(ids[-context:]).view(1, -1)
        if top_k > 0:
            top_logits, _ = torch.topk(logits, top_k)
            logits = torch.where(logits < top_logits[:, -1], torch.tensor(float("-inf")), logits)
        if temperature > 0.0:
            logits = logits / temperature
            if top_p < 1.0:
                logits = top_p_cut(logits, top_p)
            probs = torch.softmax(logits, dim=-1)
            # torch.multinomial(probs, 1), its exponentials kept to say the margin.
            state = torch.get_rng_state()
            q = torch.empty_like(probs).exponential_(1)
            torch.set_rng_state(state)
            nxt = torch.multinomial(probs, num_samples=1)
            best = torch.topk((probs / q).flatten(), 2).values.tolist()
            assert (probs / q).argmax().item() == nxt.item(), "multinomial is not argmax(p / q)"
        else:
            nxt = torch.argmax(logits, dim=-1, keepdim=True)
            best = torch.topk(logits.flatten(), 2).values.tolist()
        margins.append((best[0] - best[1]) / abs(best[0]) if best[0] != 0 else 0.0)
        if nxt.item() == eos:
            break
        ids.append(nxt.item())
    return ids[len(prompt):], margins


CASES = [
    # name, model, heads, temperature, top_k, top_p, seed, eos, count, prompt
    ("chapter5-greedy", "chapter5", 2, 0.0, 0, 1.0, 123, -1, 80, BOOK_PROMPT),
    ("chapter5-t0.1", "chapter5", 2, 0.1, 0, 1.0, 123, -1, 30, BOOK_PROMPT),
    ("chapter5-t1", "chapter5", 2, 1.0, 0, 1.0, 123, -1, 30, BOOK_PROMPT),
    ("chapter5-t5", "chapter5", 2, 5.0, 0, 1.0, 123, -1, 30, BOOK_PROMPT),
    ("chapter5-k3", "chapter5", 2, 1.0, 3, 1.0, 123, -1, 30, BOOK_PROMPT),
    ("chapter5-k25-t1.4", "chapter5", 2, 1.4, 25, 1.0, 123, -1, 90, BOOK_PROMPT),
    ("chapter5-p0.9", "chapter5", 2, 1.0, 0, 0.9, 7, -1, 30, BOOK_PROMPT),
    ("chapter5-eos", "chapter5", 2, 1.0, 0, 1.0, 123, 13, 40, BOOK_PROMPT),
    ("chapter5-seed-0", "chapter5", 2, 0.8, 40, 0.95, 0, -1, 30, BOOK_PROMPT),
    # Hugging Face GPT-2 folders: a tiny one past its context of 24, and minigpt's induction.
    ("gpt2-tiny-greedy", "tests/fixtures/gpt2/tiny", 0, 0.0, 0, 1.0, 123, -1, 30, [116, 256, 267]),
    ("gpt2-tiny-t1", "tests/fixtures/gpt2/tiny", 0, 1.0, 0, 1.0, 1, -1, 30, [116, 256, 267]),
    ("gpt2-tiny-k5", "tests/fixtures/gpt2/tiny", 0, 0.8, 5, 1.0, 2, -1, 30, [116, 256, 267]),
    ("minigpt-greedy", "samples/models/minigpt", 0, 0.0, 0, 1.0, 123, -1, 20,
     [519, 483, 398, 397, 366, 414, 429, 398]),
    ("minigpt-eos", "samples/models/minigpt", 0, 1.0, 0, 1.0, 123, 519, 70,
     [519, 483, 398, 397, 366, 414, 429, 398]),
    ("minigpt-t1", "samples/models/minigpt", 0, 1.0, 0, 1.0, 123, -1, 70,
     [519, 483, 398, 397, 366, 414, 429, 398]),
    ("minillama-greedy", "samples/models/minillama", 0, 0.0, 0, 1.0, 123, -1, 20,
     [483, 398, 397, 366, 414, 483, 398]),
    ("minillama-k3", "samples/models/minillama", 0, 1.0, 3, 1.0, 42, -1, 70,
     [483, 398, 397, 366, 414, 483, 398]),
    ("llama-gqa-greedy", "tests/fixtures/decoders/llama-gqa", 0, 0.0, 0, 1.0, 123, -1, 20, [3, 17, 5]),
    ("llama-gqa-t1", "tests/fixtures/decoders/llama-gqa", 0, 1.0, 0, 1.0, 123, -1, 20, [3, 17, 5]),
    ("qwen2-k4", "tests/fixtures/decoders/qwen2", 0, 0.7, 4, 1.0, 5, -1, 20, [3, 17, 5, 9]),
    ("qwen3-greedy", "tests/fixtures/decoders/qwen3", 0, 0.0, 0, 1.0, 123, -1, 20, [2, 30]),
    ("qwen3-p", "tests/fixtures/decoders/qwen3", 0, 1.2, 0, 0.8, 9, -1, 20, [2, 30]),
]


def main():
    models = {}
    lines = ["# made by tests/oracle/generate_fixtures.py with PyTorch %s "
             "(Debian python3-torch, built without MKL, AVX2 kernels)" % torch.__version__]
    for name, where, heads, temp, top_k, top_p, seed, eos, count, prompt in CASES:
        if where not in models:
            if where == "chapter5":
                models[where] = chapter5_model()
            elif "gpt" in where:
                models[where] = gpt2_folder(where)
            else:
                models[where] = llama_folder(where)
        model, context = models[where]
        path = "samples/models/chapter5/model.pth" if where == "chapter5" else where
        written, margins = generate(model, context, prompt, count, temp, top_k, top_p, seed, eos)
        lines.append("case %s %s %d %r %d %r %d %d %d -- %s" % (
            name, path, heads, temp, top_k, top_p, seed, eos, count, " ".join(map(str, prompt))))
        lines.append("ids " + " ".join(map(str, written)))
        lines.append("margin " + " ".join("%.3g" % m for m in margins))
    os.makedirs(os.path.join("tests", "fixtures", "generate"), exist_ok=True)
    with open(os.path.join("tests", "fixtures", "generate", "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote tests/fixtures/generate/cases.txt: %d cases" % len(CASES))


if __name__ == "__main__":
    main()
