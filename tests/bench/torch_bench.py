#!/usr/bin/python3
"""PyTorch's side of attnscope's benchmark (tests/bench/run runs it).

    torch_bench.py book       print the chapter-3 MultiHeadAttention output (seed 123),
                              as a fresh process would: the workload-1 reference
    torch_bench.py gpt2 T N...     time GPT-2 small's forward with random weights on T
                                   threads at each N
    torch_bench.py forward T N...  time MultiHeadAttention's forward, d 768, 12 heads,
                                   causal, no dropout, in torch.no_grad(), on T threads
    torch_bench.py llama SHAPE T N...  time a Llama-style forward of SHAPE's sizes
                                   (smollm2-135m, qwen3-0.6b: tests/llama_random.h's
                                   table), random float32 weights, on T threads
    torch_bench.py gemma SHAPE T N...  the same for Gemma 3 270M's shape (gemma3-270m: every
                                   sixth layer full, the others sliding over 512 keys;
                                   gemma3-270m-full: every layer full)

T threads means OPENBLAS_NUM_THREADS=T, set before torch is imported:
Debian's torch does its matrix products in OpenBLAS, which ignores
torch.set_num_threads and otherwise uses every core (a "one-thread" run
that was in fact two).  torch's own threads (set_num_threads, and
OMP_NUM_THREADS) are $TORCH_INTRAOP, else T; on 2 cores the faster setting
is OpenBLAS on 2 and torch on 1 (both on 2 oversubscribe the cores), so
tests/bench/run measures both and keeps the faster.  Each line
also gives the median CPU time of the process per run, so a run on more
cores than it claims shows (CPU time near T x wall time, never more).

The class is attnscope's own restatement of the book's MultiHeadAttention
(the same modules in the same order and the same forward).  Lines are
"name<TAB>median_ms<TAB>min_ms<TAB>max_ms<TAB>median_cpu_ms".  Needs Debian's python3-torch;
OpenBLAS (libopenblas0-pthread) is the BLAS to measure against.
"""
import os
import sys
import time

if len(sys.argv) > 2:  # before torch loads OpenBLAS (llama: the threads come after the shape)
    _threads = sys.argv[3] if sys.argv[1] in ("llama", "gemma") else sys.argv[2]
    os.environ["OPENBLAS_NUM_THREADS"] = _threads
    os.environ["OMP_NUM_THREADS"] = os.environ.get("TORCH_INTRAOP", _threads)

import torch  # noqa: E402
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length),
                                                diagonal=1))

    def forward(self, x):
        b, n, _ = x.shape
        split = (b, n, self.num_heads, self.head_dim)
        keys = self.W_key(x).view(*split).transpose(1, 2)
        queries = self.W_query(x).view(*split).transpose(1, 2)
        values = self.W_value(x).view(*split).transpose(1, 2)
        scores = queries @ keys.transpose(2, 3)
        scores.masked_fill_(self.mask.bool()[:n, :n], -torch.inf)
        weights = self.dropout(torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1))
        context = (weights @ values).transpose(1, 2).contiguous().view(b, n, self.d_out)
        return self.out_proj(context)


def book():
    torch.manual_seed(123)
    inputs = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                           [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])
    mha = MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)
    print(mha(inputs.unsqueeze(0)))


def timed(name, work, warmup, reps):
    """Prints "name median min max cpu" in milliseconds of reps runs of work, after warmup runs."""
    times, cpu = [], []
    with torch.no_grad():
        for _ in range(warmup):
            work()
        for _ in range(reps):
            start, start_cpu = time.perf_counter(), time.process_time()
            work()
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    times.sort()
    cpu.sort()
    print("%s\t%.3f\t%.3f\t%.3f\t%.3f" % (name, times[len(times) // 2] * 1e3, times[0] * 1e3,
                                         times[-1] * 1e3, cpu[len(cpu) // 2] * 1e3))
    sys.stdout.flush()


def reps_for(n, small, large):
    return small if n <= 64 else max(3, large * 256 // n)


def forward():
    threads = int(sys.argv[2])
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    for n in map(int, sys.argv[3:]):
        torch.manual_seed(123)
        mha = MultiHeadAttention(768, 768, n, 0.0, num_heads=12).eval()
        x = torch.rand(1, n, 768)
        timed("torch_forward_%d_%d" % (threads, n), lambda: mha(x), 3, reps_for(n, 41, 21))


def gpt2():
    """GPT-2 small's forward (12 layers, d 768, 12 heads, vocabulary 50,257), random
    float32 weights, the same operations as tests/oracle/gpt2_fixtures.py, the
    probabilities of every next token and the top 5 per position."""
    import math
    import torch.nn.functional as F
    C, L, H, V = 768, 12, 12, 50257
    torch.manual_seed(1)
    w = lambda *shape: torch.randn(*shape) * 0.02
    wte, wpe = w(V, C), w(1024, C)
    blocks = [dict(g1=1 + w(C), b1=w(C), attn=w(C, 3 * C), attn_b=w(3 * C), proj=w(C, C),
                   proj_b=w(C), g2=1 + w(C), b2=w(C), fc=w(C, 4 * C), fc_b=w(4 * C),
                   fc2=w(4 * C, C), fc2_b=w(C)) for _ in range(L)]
    gf, bf = 1 + w(C), w(C)

    def run(ids):
        n = ids.shape[0]
        hd = C // H
        causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
        x = wte[ids] + wpe[:n]
        for b in blocks:
            h = F.layer_norm(x, (C,), b["g1"], b["b1"], 1e-5)
            q, k, v = (h @ b["attn"] + b["attn_b"]).split(C, dim=1)
            q, k, v = (t.view(n, H, hd).transpose(0, 1) for t in (q, k, v))
            att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
            att = torch.softmax(att.masked_fill(~causal, torch.finfo(torch.float32).min), dim=-1)
            x = x + (att @ v).transpose(0, 1).reshape(n, C) @ b["proj"] + b["proj_b"]
            h = F.layer_norm(x, (C,), b["g2"], b["b2"], 1e-5)
            f = F.gelu(h @ b["fc"] + b["fc_b"], approximate="tanh")
            x = x + f @ b["fc2"] + b["fc2_b"]
        probs = torch.softmax(F.layer_norm(x, (C,), gf, bf, 1e-5) @ wte.T, dim=-1)
        return torch.topk(probs, 5, dim=-1)

    threads = int(sys.argv[2])
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    for n in map(int, sys.argv[3:]):
        ids = torch.tensor([(i * 7919) % V for i in range(n)])
        timed("torch_gpt2_%d_%d" % (threads, n), lambda: run(ids), 1, reps_for(n, 9, 5))


# tests/llama_random.h's shapes: hidden, inner, layers, heads, key heads, head size, vocabulary,
# rope_theta, eps, QK-norm.
LLAMA_SHAPES = {
    "smollm2-135m": (576, 1536, 30, 9, 3, 64, 49152, 100000.0, 1e-5, False),
    "qwen3-0.6b": (1024, 3072, 28, 16, 8, 128, 151936, 1000000.0, 1e-6, True),
}


def llama():
    """A Llama-style forward (RMSNorm, RoPE, grouped keys, SwiGLU, QK-norm for Qwen3, tied
    embeddings), the operations of tests/oracle/llama_fixtures.py without its stage
    record; the top 5 next tokens of every position, as attnscope keeps them."""
    C, F_, L, H, KV, hd, V, theta, eps, qk = LLAMA_SHAPES[sys.argv[2]]
    torch.manual_seed(1)
    w = lambda *shape: (torch.rand(*shape) * 2 - 1) * 0.05
    emb = w(V, C)
    blocks = [dict(n1=1 + w(C), q=w(H * hd, C), k=w(KV * hd, C), v=w(KV * hd, C), o=w(C, H * hd),
                   qn=1 + w(hd), kn=1 + w(hd), n2=1 + w(C), g=w(F_, C), u=w(F_, C), d=w(C, F_))
              for _ in range(L)]
    nf = 1 + w(C)
    inv = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))

    def rms(x, g):
        return g * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def run(ids):
        n = ids.shape[0]
        ang = torch.arange(n).float()[:, None] * inv[None, :]
        emb2 = torch.cat((ang, ang), dim=-1)
        cos, sin = emb2.cos(), emb2.sin()
        rot = lambda t: t * cos + torch.cat((-t[..., hd // 2:], t[..., :hd // 2]), dim=-1) * sin
        causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
        x = emb[ids]
        for b in blocks:
            h = rms(x, b["n1"])
            q = (h @ b["q"].T).view(n, H, hd).transpose(0, 1)
            k = (h @ b["k"].T).view(n, KV, hd).transpose(0, 1)
            v = (h @ b["v"].T).view(n, KV, hd).transpose(0, 1)
            if qk:
                q, k = rms(q, b["qn"]), rms(k, b["kn"])
            q, k = rot(q), rot(k)
            k, v = k.repeat_interleave(H // KV, dim=0), v.repeat_interleave(H // KV, dim=0)
            att = torch.softmax(((q @ k.transpose(-1, -2)) / hd ** 0.5).masked_fill(~causal, float("-inf")), dim=-1)
            x = x + (att @ v).transpose(0, 1).reshape(n, H * hd) @ b["o"].T
            h = rms(x, b["n2"])
            x = x + (torch.nn.functional.silu(h @ b["g"].T) * (h @ b["u"].T)) @ b["d"].T
        probs = torch.softmax(rms(x, nf) @ emb.T, dim=-1)
        return torch.topk(probs, 5, dim=-1)

    threads = int(sys.argv[3])
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    for n in map(int, sys.argv[4:]):
        ids = torch.tensor([(i * 7919) % V for i in range(n)])
        timed("torch_%s_%d_%d" % (sys.argv[2], threads, n), lambda: run(ids), 1, reps_for(n, 7, 5))


def gemma():
    """Gemma 3's forward (tests/oracle/window_fixtures.py's steps: scaled embeddings, four
    RMSNorms a block by 1 + w, per-head QK-norm, RoPE of the layer's kind, the sliding layers'
    band as a mask over the n x n scores as Hugging Face's eager attention makes it, GeGLU,
    the tied head); the top 5 next tokens of every position, as attnscope keeps them."""
    C, F_, L, H, KV, hd, V = 640, 2048, 18, 4, 1, 256, 262144
    window = 0 if sys.argv[2].endswith("-full") else 512
    kinds = [window > 0 and (l + 1) % 6 != 0 for l in range(L)]
    eps = 1e-6
    torch.manual_seed(1)
    w = lambda *shape: (torch.rand(*shape) * 2 - 1) * 0.05
    emb = w(V, C)
    blocks = [dict(n=[w(C) for _ in range(4)], q=w(H * hd, C), k=w(KV * hd, C), v=w(KV * hd, C),
                   o=w(C, H * hd), qn=w(hd), kn=w(hd), g=w(F_, C), u=w(F_, C), d=w(C, F_))
              for _ in range(L)]
    nf = w(C)
    inv = {s: 1.0 / (t ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
           for s, t in ((True, 10000.0), (False, 1000000.0))}

    def rms(x, g):
        return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)) * (1.0 + g)

    def run(ids):
        n = ids.shape[0]
        rots = {}
        for s in (True, False):
            ang = torch.arange(n).float()[:, None] * inv[s][None, :]
            e = torch.cat((ang, ang), dim=-1)
            rots[s] = (e.cos(), e.sin())
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        masks = {False: j <= i, True: (j <= i) & (i - j < max(window, 1))}
        x = emb[ids] * torch.tensor(C ** 0.5)
        for b, s in zip(blocks, kinds):
            cos, sin = rots[s]
            rot = lambda t: t * cos + torch.cat((-t[..., hd // 2:], t[..., :hd // 2]), dim=-1) * sin
            h = rms(x, b["n"][0])
            q = rms((h @ b["q"].T).view(n, H, hd), b["qn"]).transpose(0, 1)
            k = rms((h @ b["k"].T).view(n, KV, hd), b["kn"]).transpose(0, 1)
            v = (h @ b["v"].T).view(n, KV, hd).transpose(0, 1)
            q, k = rot(q), rot(k)
            k, v = k.repeat_interleave(H // KV, dim=0), v.repeat_interleave(H // KV, dim=0)
            att = torch.softmax(((q @ k.transpose(-1, -2)) / hd ** 0.5).masked_fill(~masks[s], float("-inf")), dim=-1)
            x = x + rms((att @ v).transpose(0, 1).reshape(n, H * hd) @ b["o"].T, b["n"][1])
            h = rms(x, b["n"][2])
            m = (torch.nn.functional.gelu(h @ b["g"].T, approximate="tanh") * (h @ b["u"].T)) @ b["d"].T
            x = x + rms(m, b["n"][3])
        probs = torch.softmax(rms(x, nf) @ emb.T, dim=-1)
        return torch.topk(probs, 5, dim=-1)

    threads = int(sys.argv[3])
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    for n in map(int, sys.argv[4:]):
        ids = torch.tensor([(i * 7919) % V for i in range(n)])
        timed("torch_%s_%d_%d" % (sys.argv[2], threads, n), lambda: run(ids), 1, reps_for(n, 3, 1))


if __name__ == "__main__":
    {"book": book, "forward": forward, "gpt2": gpt2, "llama": llama, "gemma": gemma}[sys.argv[1]]()
