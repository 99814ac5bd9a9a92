"""One small GPT-2 in every file format attnscope reads, and PyTorch's forward of it.

Writes tests/fixtures/formats/ for tests/check_formats.c:

  expected.txt      what a float32 PyTorch forward computes for IDS, every
                    stage of every layer (the names of attnscope's
                    decoder_layer_stages: norm1 q k v scores weights context
                    attn resid1 norm2 up act mlp resid2), then final and the
                    top next tokens; "case NAME" lines start each model's.
  hf/               config.json + model.safetensors, Hugging Face's names
                    (written byte by byte from the format's specification).
  openai/           OpenAI's TensorFlow checkpoint as chapter 5 of the book
                    downloads it: checkpoint, hparams.json, model.ckpt.index,
                    model.ckpt.data-00000-of-00001.  The index is written by
                    LevelDB's own leveldb::TableBuilder (tests/oracle/tf_index.cc)
                    with 256-byte blocks and a restart every 4 keys (so there are
                    several data blocks and restarts), no compression; its values
                    are BundleEntryProto messages serialised by python3-protobuf
                    from src/core/formats/tf_bundle.proto (compiled here by protoc);
                    each tensor's masked CRC-32C is computed here.
  openai-snappy/    the same checkpoint, its index Snappy-compressed by LevelDB.
  openai-shards/    the same tensors in three data files (num_shards 3), with a
                    step counter (global_step, DT_INT64) and a sliced variable
                    (model/sliced) beside them, as TensorFlow training leaves.
  openai-f16/       the model stored as DT_HALF (its own case in expected.txt:
                    the forward of the values as stored).
  torch-hf/         pytorch_model.bin: torch.save of the state dict under
                    Hugging Face's names (with the mask buffers older
                    transformers saved), and config.json.
  book*/            torch.save(model.state_dict(), ...) of the book's GPTModel
                    (restated here, chapter 4's names) holding the same model:
                    book/ (float32), book-protocol4/ (pickle protocol 4),
                    book-newer/ (the entries newer PyTorch versions add,
                    .format_version, byteorder, .storage_alignment,
                    .data/serialization_id, appended here with Python's
                    zipfile), book-big-endian/ (a byteorder of big, appended
                    likewise: to be refused), book-bf16/ (its own case),
                    book-tied/ (out_head and tok_emb one storage),
                    book-optimizer/ (chapter 5's model_and_optimizer.pth after an
                    AdamW step at lr 0), book-nobias/ (qkv_bias=False: its own
                    case, the queries' biases zero), book-classifier/ (chapter
                    6's out_head of 2 classes with a bias: its own case).
  views/            views.pth: a state dict of views of one storage (a 3x4 grid,
                    its transpose, its second row), read where contiguous and
                    refused by name where not.
  classifier-cli/   a classifier of random weights whose vocabulary is GPT-2's 256
                    byte tokens and 4 merges, with that tokenizer beside it, and
                    the same model as a language model (lm.pth), for tests/cli.sh.
  whole-module/     torch.save(model): a pickled module, to be refused.
  os-system/        a pickle whose loading would run os.system: to be refused
                    without running it.

The model's weights are drawn from torch.manual_seed(SEED); the three
float32 files of the same model (hf, openai, openai-*) must give
bit-identical stages, and each agrees with expected.txt to 1e-5.

attnscope's own code, never used by the build or by `make check`.  Run from
the top of the source tree with Debian's PyTorch, python3-protobuf,
protobuf-compiler, libleveldb-dev and g++:

    /usr/bin/python3 tests/oracle/format_fixtures.py
"""
import collections
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_fixtures import write_safetensors  # noqa: E402

ROOT = os.path.join("tests", "fixtures", "formats")
N_LAYER, N_HEAD, N_EMBD, VOCAB, N_CTX = 2, 2, 16, 64, 16
SEED = 25
IDS = [3, 17, 5, 5, 0, 21, 9, 63, 17]
TOP = 3
STAGES = ["norm1", "q", "k", "v", "scores", "weights", "context", "attn", "resid1", "norm2",
          "up", "act", "mlp", "resid2"]


# ----------------------------------------------------------------- the model

def draw_model():
    """GPT-2's tensors by role, float32, (in, out) as GPT-2's Conv1D keeps them."""
    gen = torch.Generator().manual_seed(SEED)
    C, Fw = N_EMBD, 4 * N_EMBD

    def d(*shape, scale=0.3):
        return torch.randn(*shape, generator=gen) * scale

    p = {"wte": d(VOCAB, C), "wpe": d(N_CTX, C)}
    for l in range(N_LAYER):
        p[l, "ln_1/g"] = 1.0 + d(C, scale=0.1)
        p[l, "ln_1/b"] = d(C, scale=0.1)
        p[l, "attn/c_attn/w"] = d(C, 3 * C)
        p[l, "attn/c_attn/b"] = d(3 * C, scale=0.1)
        p[l, "attn/c_proj/w"] = d(C, C)
        p[l, "attn/c_proj/b"] = d(C, scale=0.1)
        p[l, "ln_2/g"] = 1.0 + d(C, scale=0.1)
        p[l, "ln_2/b"] = d(C, scale=0.1)
        p[l, "mlp/c_fc/w"] = d(C, Fw)
        p[l, "mlp/c_fc/b"] = d(Fw, scale=0.1)
        p[l, "mlp/c_proj/w"] = d(Fw, C)
        p[l, "mlp/c_proj/b"] = d(C, scale=0.1)
    p["ln_f/g"] = 1.0 + d(C, scale=0.1)
    p["ln_f/b"] = d(C, scale=0.1)
    return p


def rounded(p, dtype):
    """The model as a file of dtype holds it, back in float32."""
    return {k: v.to(dtype).to(torch.float32) for k, v in p.items()}


def forward(p, ids, head=None):
    """GPT-2's forward in float32, every stage kept, as lines of expected.txt; head: a
    classifier's (weight, bias) in place of the tied vocabulary's."""
    n, C, H = len(ids), N_EMBD, N_HEAD
    hd = C // H
    fmt = lambda t: " ".join("%.9g" % e for e in t.flatten().tolist())
    lines = ["ids %d %s" % (n, " ".join(map(str, ids)))]
    x = p["wte"][torch.tensor(ids)] + p["wpe"][:n]
    lines.append("embed %s" % fmt(x))
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
    for l in range(N_LAYER):
        s = {}
        s["norm1"] = F.layer_norm(x, (C,), p[l, "ln_1/g"], p[l, "ln_1/b"], eps=1e-5)
        qkv = s["norm1"] @ p[l, "attn/c_attn/w"] + p[l, "attn/c_attn/b"]
        s["q"], s["k"], s["v"] = qkv.split(C, dim=1)
        heads = lambda t: t.reshape(n, H, hd).transpose(0, 1)
        s["scores"] = heads(s["q"]) @ heads(s["k"]).transpose(-1, -2)
        att = (s["scores"] / math.sqrt(hd)).masked_fill(~causal, float("-inf"))
        s["weights"] = torch.softmax(att, dim=-1)
        s["context"] = (s["weights"] @ heads(s["v"])).transpose(0, 1).reshape(n, C)
        s["attn"] = s["context"] @ p[l, "attn/c_proj/w"] + p[l, "attn/c_proj/b"]
        s["resid1"] = x + s["attn"]
        s["norm2"] = F.layer_norm(s["resid1"], (C,), p[l, "ln_2/g"], p[l, "ln_2/b"], eps=1e-5)
        s["up"] = s["norm2"] @ p[l, "mlp/c_fc/w"] + p[l, "mlp/c_fc/b"]
        u = s["up"]
        s["act"] = 0.5 * u * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * u ** 3)))
        s["mlp"] = s["act"] @ p[l, "mlp/c_proj/w"] + p[l, "mlp/c_proj/b"]
        s["resid2"] = s["resid1"] + s["mlp"]
        x = s["resid2"]
        for name in STAGES:
            lines.append("%s %d %s" % (name, l, fmt(s[name])))
    final = F.layer_norm(x, (C,), p["ln_f/g"], p["ln_f/b"], eps=1e-5)
    lines.append("final %s" % fmt(final))
    logits = final @ p["wte"].T if head is None else final @ head[0].T + head[1]
    k = min(TOP, logits.shape[-1])
    top = torch.topk(torch.softmax(logits, dim=-1), k, dim=-1)
    lines.append("top %d %s %s" % (k, " ".join(map(str, top.indices.flatten().tolist())),
                                   fmt(top.values)))
    return lines


# ----------------------------------------------------------------- Hugging Face's files

def hf_names(p):
    """(name, tensor) in Hugging Face's GPT-2 names."""
    out = [("wte.weight", p["wte"]), ("wpe.weight", p["wpe"])]
    for l in range(N_LAYER):
        for tf_name, hf in [("ln_1/g", "ln_1.weight"), ("ln_1/b", "ln_1.bias"),
                            ("attn/c_attn/w", "attn.c_attn.weight"), ("attn/c_attn/b", "attn.c_attn.bias"),
                            ("attn/c_proj/w", "attn.c_proj.weight"), ("attn/c_proj/b", "attn.c_proj.bias"),
                            ("ln_2/g", "ln_2.weight"), ("ln_2/b", "ln_2.bias"),
                            ("mlp/c_fc/w", "mlp.c_fc.weight"), ("mlp/c_fc/b", "mlp.c_fc.bias"),
                            ("mlp/c_proj/w", "mlp.c_proj.weight"), ("mlp/c_proj/b", "mlp.c_proj.bias")]:
            out.append(("h.%d.%s" % (l, hf), p[l, tf_name]))
    out += [("ln_f.weight", p["ln_f/g"]), ("ln_f.bias", p["ln_f/b"])]
    return out


def hf_config():
    return {"model_type": "gpt2", "n_layer": N_LAYER, "n_head": N_HEAD, "n_embd": N_EMBD,
            "vocab_size": VOCAB, "n_positions": N_CTX, "layer_norm_epsilon": 1e-5,
            "activation_function": "gelu_new", "n_inner": None}


def write_hf(d, p):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(hf_config(), f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(d, "model.safetensors"), hf_names(p))


# ----------------------------------------------------------------- OpenAI's TensorFlow checkpoint

def crc32c(data, crc=0):
    """CRC-32C (Castagnoli, reflected 0x82f63b78), a byte at a time."""
    table = crc32c.table
    c = crc ^ 0xFFFFFFFF
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


crc32c.table = _crc_table()
assert crc32c(b"123456789") == 0xE3069283  # the standard check value


def masked(crc):
    """LevelDB's and TensorFlow's mask of a stored CRC."""
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def bundle_module(tmp):
    """The BundleEntryProto classes, compiled by protoc from attnscope's tf_bundle.proto."""
    proto_dir = os.path.join("src", "core", "files")
    subprocess.run(["protoc", "--proto_path=" + proto_dir, "--python_out=" + tmp,
                    os.path.join(proto_dir, "tf_bundle.proto")], check=True)
    sys.path.insert(0, tmp)
    import tf_bundle_pb2  # noqa: E402
    return tf_bundle_pb2


def index_writer(tmp):
    exe = os.path.join(tmp, "tf_index")
    subprocess.run(["g++", "-O2", "-o", exe, os.path.join("tests", "oracle", "tf_index.cc"),
                    "-lleveldb"], check=True)
    return exe


DT = {torch.float32: 1, torch.float16: 19, torch.bfloat16: 14}


def openai_names(p):
    """(name, tensor) in OpenAI's names, the Conv1D weights [1, in, out] as they were saved."""
    out = [("model/wte", p["wte"]), ("model/wpe", p["wpe"])]
    for l in range(N_LAYER):
        for key in ["ln_1/g", "ln_1/b", "attn/c_attn/w", "attn/c_attn/b", "attn/c_proj/w",
                    "attn/c_proj/b", "ln_2/g", "ln_2/b", "mlp/c_fc/w", "mlp/c_fc/b",
                    "mlp/c_proj/w", "mlp/c_proj/b"]:
            t = p[l, key]
            out.append(("model/h%d/%s" % (l, key), t.unsqueeze(0) if key.endswith("/w") else t))
    out += [("model/ln_f/g", p["ln_f/g"]), ("model/ln_f/b", p["ln_f/b"])]
    return out


def odd_entries(pb, data):
    """What a TensorFlow checkpoint may hold beside the weights: a step counter in int64 and a
    variable saved in slices (its entry lists them); attnscope lists both, reads neither."""
    step = struct.pack("<q", 1000)
    e = pb.BundleEntryProto(dtype=9, shard_id=0, offset=len(data[0]), size=8,
                            crc32c=masked(crc32c(step)))
    data[0] += step
    sliced = pb.BundleEntryProto(dtype=1, shard_id=0, offset=0, size=0)
    sliced.shape.dim.add(size=4)
    sliced.slices.add().extent.add(start=0, length=2)
    return [(b"global_step", e.SerializeToString()), (b"model/sliced", sliced.SerializeToString())]


def write_bundle(d, named, hparams, pb, exe, dtype=torch.float32, shards=1, compression="none",
                 odd=False, crc_by_exe=False):
    """A TensorFlow checkpoint of the (name, tensor) pairs in d: the data files, the index
    (LevelDB's TableBuilder), `checkpoint` and hparams.json.  crc_by_exe: the CRCs computed by
    tf_index (for large models: Python is slow at it)."""
    os.makedirs(d, exist_ok=True)
    tensors = sorted(named, key=lambda nt: nt[0].encode())
    files = [open(os.path.join(d, "model.ckpt.data-%05d-of-%05d" % (s, shards)), "wb")
             for s in range(shards)]
    data = [bytearray() for _ in range(shards)]
    entries = odd_entries(pb, data) if odd else []
    for f, b in zip(files, data):
        f.write(b)
    sizes = [len(b) for b in data]
    pending = []
    for i, (name, t) in enumerate(tensors):
        s = i % shards
        raw = t.to(dtype).contiguous().view(torch.int16 if dtype != torch.float32 else torch.int32)
        raw = raw.numpy().astype("<i2" if dtype != torch.float32 else "<i4").tobytes()
        e = pb.BundleEntryProto(dtype=DT[dtype], shard_id=s, offset=sizes[s], size=len(raw))
        e.crc32c = 0 if crc_by_exe else masked(crc32c(raw))
        for n in t.shape:
            e.shape.dim.add(size=n)
        pending.append((name.encode(), e))
        files[s].write(raw)
        sizes[s] += len(raw)
    for f in files:
        f.close()
    if crc_by_exe:
        for s in range(shards):
            mine = [e for _, e in pending if e.shard_id == s]
            lines = "".join("%d %d\n" % (e.offset, e.size) for e in mine)
            out = subprocess.run([exe, "crc", os.path.join(d, "model.ckpt.data-%05d-of-%05d" % (s, shards))],
                                 input=lines.encode(), check=True, capture_output=True).stdout.split()
            for e, c in zip(mine, out):
                e.crc32c = int(c)
    entries += [(k, e.SerializeToString()) for k, e in pending]
    entries.sort(key=lambda kv: kv[0])
    header = pb.BundleHeaderProto(num_shards=shards, endianness=0)
    header.version.producer = 1
    stream = bytearray()
    for k, v in [(b"", header.SerializeToString())] + entries:
        stream += struct.pack("<I", len(k)) + k + struct.pack("<I", len(v)) + v
    subprocess.run([exe, os.path.join(d, "model.ckpt.index"), "256", "4", compression],
                   input=bytes(stream), check=True)
    with open(os.path.join(d, "checkpoint"), "w") as f:
        f.write('model_checkpoint_path: "model.ckpt"\nall_model_checkpoint_paths: "model.ckpt"\n')
    with open(os.path.join(d, "hparams.json"), "w") as f:
        json.dump(hparams, f, indent=2)
        f.write("\n")


def write_openai(d, p, pb, exe, dtype=torch.float32, shards=1, compression="none", odd=False):
    write_bundle(d, openai_names(p), {"n_vocab": VOCAB, "n_ctx": N_CTX, "n_embd": N_EMBD,
                                      "n_head": N_HEAD, "n_layer": N_LAYER},
                 pb, exe, dtype, shards, compression, odd)


# ----------------------------------------------------------------- the book's GPTModel and torch.save

class LayerNorm(torch.nn.Module):
    """The book's LayerNorm (chapter 4): scale and shift, the biased variance, eps 1e-5."""

    def __init__(self, d):
        super().__init__()
        self.eps = 1e-5
        self.scale = torch.nn.Parameter(torch.ones(d))
        self.shift = torch.nn.Parameter(torch.zeros(d))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.shift


class GELU(torch.nn.Module):
    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


class MultiHeadAttention(torch.nn.Module):
    """Chapter 3's MultiHeadAttention under the names the book's state dicts carry."""

    def __init__(self, d, ctx, heads, qkv_bias, dropout=0.0):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.dropout = torch.nn.Dropout(dropout)
        self.W_query = torch.nn.Linear(d, d, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d, d, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d, d, bias=qkv_bias)
        self.out_proj = torch.nn.Linear(d, d)
        self.register_buffer("mask", torch.triu(torch.ones(ctx, ctx), diagonal=1))

    def forward(self, x):
        b, n, d = x.shape
        split = lambda t: t.view(b, n, self.heads, self.hd).transpose(1, 2)
        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
        att = (q @ k.transpose(2, 3)).masked_fill(self.mask.bool()[:n, :n], -torch.inf)
        w = self.dropout(torch.softmax(att / self.hd ** 0.5, dim=-1))
        return self.out_proj((w @ v).transpose(1, 2).reshape(b, n, d))


class FeedForward(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), GELU(), torch.nn.Linear(4 * d, d))

    def forward(self, x):
        return self.layers(x)


class TransformerBlock(torch.nn.Module):
    def __init__(self, d, ctx, heads, qkv_bias, dropout=0.0):
        super().__init__()
        self.att = MultiHeadAttention(d, ctx, heads, qkv_bias, dropout)
        self.ff = FeedForward(d)
        self.norm1 = LayerNorm(d)
        self.norm2 = LayerNorm(d)
        self.drop_shortcut = torch.nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


class GPTModel(torch.nn.Module):
    """The book's GPTModel (chapter 4), restated: its state dict has the book's names."""

    def __init__(self, vocab, ctx, d, layers, heads, qkv_bias, dropout=0.0):
        super().__init__()
        self.tok_emb = torch.nn.Embedding(vocab, d)
        self.pos_emb = torch.nn.Embedding(ctx, d)
        self.drop_emb = torch.nn.Dropout(dropout)
        self.trf_blocks = torch.nn.Sequential(*[TransformerBlock(d, ctx, heads, qkv_bias, dropout)
                                                for _ in range(layers)])
        self.final_norm = LayerNorm(d)
        self.out_head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.drop_emb(self.tok_emb(ids) + self.pos_emb(torch.arange(ids.shape[1])))
        return self.out_head(self.final_norm(self.trf_blocks(x)))


def book_model(p, qkv_bias=True):
    """The GPT-2 of p as the book's GPTModel: the same function, nn.Linear's (out, in) weights."""
    C = N_EMBD
    m = GPTModel(VOCAB, N_CTX, C, N_LAYER, N_HEAD, qkv_bias)
    with torch.no_grad():
        m.tok_emb.weight.copy_(p["wte"])
        m.pos_emb.weight.copy_(p["wpe"])
        for l, b in enumerate(m.trf_blocks):
            b.norm1.scale.copy_(p[l, "ln_1/g"])
            b.norm1.shift.copy_(p[l, "ln_1/b"])
            for i, lin in enumerate([b.att.W_query, b.att.W_key, b.att.W_value]):
                lin.weight.copy_(p[l, "attn/c_attn/w"][:, i * C:(i + 1) * C].T)
                if qkv_bias:
                    lin.bias.copy_(p[l, "attn/c_attn/b"][i * C:(i + 1) * C])
            b.att.out_proj.weight.copy_(p[l, "attn/c_proj/w"].T)
            b.att.out_proj.bias.copy_(p[l, "attn/c_proj/b"])
            b.norm2.scale.copy_(p[l, "ln_2/g"])
            b.norm2.shift.copy_(p[l, "ln_2/b"])
            b.ff.layers[0].weight.copy_(p[l, "mlp/c_fc/w"].T)
            b.ff.layers[0].bias.copy_(p[l, "mlp/c_fc/b"])
            b.ff.layers[2].weight.copy_(p[l, "mlp/c_proj/w"].T)
            b.ff.layers[2].bias.copy_(p[l, "mlp/c_proj/b"])
        m.final_norm.scale.copy_(p["ln_f/g"])
        m.final_norm.shift.copy_(p["ln_f/b"])
        m.out_head.weight.copy_(p["wte"])
    return m.eval()


def check_module(m, p, head=None):
    """The module's own forward gives the functional forward's logits (the restatements agree)."""
    with torch.no_grad():
        got = m(torch.tensor([IDS]))[0]
        lines = forward(p, IDS, head)
    final = torch.tensor([float(x) for x in lines[-2].split()[1:]]).view(len(IDS), N_EMBD)
    want = final @ p["wte"].T if head is None else final @ head[0].T + head[1]
    assert torch.allclose(got, want, atol=1e-5), (got - want).abs().max()


class Shell:
    """What torch.save pickles to run a command when loaded: os.system by __reduce__."""

    def __reduce__(self):
        return (os.system, ("touch attnscope-was-here",))


def save(obj, d, name, **kw):
    os.makedirs(d, exist_ok=True)
    torch.save(obj, os.path.join(d, name), **kw)


def add_entries(path, entries):
    """Adds entries to a torch.save archive beside its own, as newer PyTorch versions write."""
    import zipfile
    with zipfile.ZipFile(path) as z:
        folder = [n for n in z.namelist() if n.endswith("/data.pkl")][0][:-len("data.pkl")]
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_STORED) as z:
        for name, data in entries:
            z.writestr(folder + name, data)


def write_torch(p):
    """torch.save's files: Hugging Face's pytorch_model.bin and the book's .pth files."""
    hf = os.path.join(ROOT, "torch-hf")
    sd = collections.OrderedDict((n, t.clone()) for n, t in hf_names(p))
    for l in range(N_LAYER):  # older transformers saved its masks as buffers
        sd["h.%d.attn.bias" % l] = torch.tril(torch.ones(N_CTX, N_CTX)).view(1, 1, N_CTX, N_CTX)
        sd["h.%d.attn.masked_bias" % l] = torch.tensor(-1e4)
    save(sd, hf, "pytorch_model.bin")
    with open(os.path.join(hf, "config.json"), "w") as f:
        json.dump(hf_config(), f, indent=2)
        f.write("\n")

    m = book_model(p)
    check_module(m, p)
    save(m.state_dict(), os.path.join(ROOT, "book"), "model.pth")
    save(m.state_dict(), os.path.join(ROOT, "book-protocol4"), "model.pth", pickle_protocol=4)
    save(m.state_dict(), os.path.join(ROOT, "book-newer"), "model.pth")
    add_entries(os.path.join(ROOT, "book-newer", "model.pth"),
                [(".format_version", "1"), ("byteorder", "little"), (".storage_alignment", "64"),
                 (".data/serialization_id", "0123456789")])
    save(m.state_dict(), os.path.join(ROOT, "book-big-endian"), "model.pth")
    add_entries(os.path.join(ROOT, "book-big-endian", "model.pth"), [("byteorder", "big")])
    save(m.to(torch.bfloat16).state_dict(), os.path.join(ROOT, "book-bf16"), "model.pth")

    tied = book_model(p)
    tied.out_head.weight = tied.tok_emb.weight  # one storage, two names
    save(tied.state_dict(), os.path.join(ROOT, "book-tied"), "model.pth")

    m = book_model(p)
    opt = torch.optim.AdamW(m.parameters(), lr=0.0, weight_decay=0.1)
    m(torch.tensor([IDS])).sum().backward()
    opt.step()  # lr 0: moments to save, the weights unchanged
    save({"model_state_dict": m.state_dict(), "optimizer_state_dict": opt.state_dict()},
         os.path.join(ROOT, "book-optimizer"), "model_and_optimizer.pth")

    nobias = book_model(p, qkv_bias=False)
    save(nobias.state_dict(), os.path.join(ROOT, "book-nobias"), "model.pth")

    gen = torch.Generator().manual_seed(SEED + 1)
    clf = book_model(p)
    clf.out_head = torch.nn.Linear(N_EMBD, 2)
    with torch.no_grad():
        clf.out_head.weight.copy_(torch.randn(2, N_EMBD, generator=gen) * 0.3)
        clf.out_head.bias.copy_(torch.randn(2, generator=gen) * 0.3)
    head = (clf.out_head.weight.detach().clone(), clf.out_head.bias.detach().clone())
    check_module(clf, p, head)
    save(clf.state_dict(), os.path.join(ROOT, "book-classifier"), "review_classifier.pth")

    grid = torch.arange(12.0).view(3, 4)
    save({"transposed": grid.t(), "row": grid[1], "whole": grid}, os.path.join(ROOT, "views"),
         "views.pth")
    save(book_model(p), os.path.join(ROOT, "whole-module"), "model.pth")
    save({"weights": Shell()}, os.path.join(ROOT, "os-system"), "model.pth")
    return head


def write_cli_classifier():
    """A classifier with a vocabulary of GPT-2's 256 byte tokens and the tokenizer beside it, for
    tests/cli.sh to run --print and --export on (random weights: shapes, not numbers, are checked)."""
    from gpt2_tiny_model import BYTE_CHARS
    d = os.path.join(ROOT, "classifier-cli")
    merges = [("A", "B"), ("C", "D"), ("e", "r"), ("t", "h")]
    torch.manual_seed(SEED + 2)
    m = GPTModel(256 + len(merges), N_CTX, N_EMBD, N_LAYER, N_HEAD, True)
    save(m.state_dict(), d, "lm.pth")  # the same model as a language model
    m.out_head = torch.nn.Linear(N_EMBD, 2)
    save(m.state_dict(), d, "review_classifier.pth")
    vocab = {BYTE_CHARS[b]: b for b in range(256)}
    for a, b in merges:
        vocab[a + b] = len(vocab)
    with open(os.path.join(d, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(d, "merges.txt"), "w") as f:
        f.write("#version: 0.2\n" + "".join("%s %s\n" % m for m in merges))


def nobias_params(p):
    q = dict(p)
    for l in range(N_LAYER):
        q[l, "attn/c_attn/b"] = torch.zeros(3 * N_EMBD)
    return q


# ----------------------------------------------------------------- all of it

def main():
    p = draw_model()
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    expected = ["case f32"] + forward(p, IDS)
    expected += ["case f16"] + forward(rounded(p, torch.float16), IDS)
    expected += ["case bf16"] + forward(rounded(p, torch.bfloat16), IDS)
    expected += ["case nobias"] + forward(nobias_params(p), IDS)
    write_hf(os.path.join(ROOT, "hf"), p)
    head = write_torch(p)
    write_cli_classifier()
    expected += ["case classifier"] + forward(p, IDS, head)
    with tempfile.TemporaryDirectory() as tmp:
        pb = bundle_module(tmp)
        exe = index_writer(tmp)
        write_openai(os.path.join(ROOT, "openai"), p, pb, exe)
        write_openai(os.path.join(ROOT, "openai-snappy"), p, pb, exe, compression="snappy")
        write_openai(os.path.join(ROOT, "openai-shards"), p, pb, exe, shards=3, odd=True)
        write_openai(os.path.join(ROOT, "openai-f16"), p, pb, exe, dtype=torch.float16)
    with open(os.path.join(ROOT, "expected.txt"), "w") as f:
        f.write("\n".join(expected) + "\n")
    print("wrote", ROOT)


if __name__ == "__main__":
    main()
