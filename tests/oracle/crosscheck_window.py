"""Cross-checks window_fixtures.py's restatement against the book's own from-scratch models.

The book's bonus notebooks (rasbt/LLMs-from-scratch ch05/12_gemma3/standalone-gemma3.ipynb
and ch05/13_olmo3/standalone-olmo3.ipynb) build Gemma 3 and Olmo 3 in PyTorch and load
Hugging Face's weights by name.  This script runs their model classes (their code cells,
executed from the notebook as the book ships it) on the weights of each fixture case and
compares their logits with the restatement's, in float32.  Where a notebook lacks a part a
case has (Gemma: linear RoPE scaling, capped logits, untied head; Olmo: a sliding layer
without YaRN, which Hugging Face's modeling_olmo3 computes and the notebook does not), the
part is left out on both sides and the message says so.

Oracle code: never built by make or CI.  With the repository fetched (the `fetch' tool):

    /usr/bin/python3 tests/oracle/crosscheck_window.py /path/to/LLMs-from-scratch
"""
import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import window_fixtures as wf  # noqa: E402


def notebook(repo, path, stop):
    """The notebook's code cells up to (not including) the first that contains stop."""
    text = subprocess.run(["git", "-C", repo, "show", "HEAD:" + path], check=True,
                          capture_output=True, text=True).stdout
    ns = {}
    for cell in json.loads(text)["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] != "code" or src.startswith(("# pip", "from importlib")):
            continue
        if stop in src:
            break
        if src.startswith(("class ", "def ", "import torch", "import math")):
            try:
                exec(src, ns)
            except NameError:  # (a cell that also runs what it defines, on a model of its own)
                pass
    return ns


def book_config(c):
    gemma = c["arch"] == "gemma3"
    cfg = {"vocab_size": c["V"], "context_length": 256, "emb_dim": c["C"], "n_heads": c["H"],
           "n_layers": c["L"], "hidden_dim": c["F"], "head_dim": c["hd"],
           "sliding_window": c["window"], "layer_types": wf.layer_types(c),
           "dtype": torch.float32}
    if gemma:
        cfg.update({"qk_norm": True, "n_kv_groups": c["KV"], "rope_local_base": c["local"],
                    "rope_base": c["theta"], "query_pre_attn_scalar": c["scalar"]})
    else:
        sc = c.get("scaling") or {"rope_type": "default", "factor": 1.0}
        af = sc.get("attention_factor")
        cfg.update({"n_kv_heads": c["KV"], "attention_bias": False, "rope_base": c["theta"],
                    "rope_type": sc["rope_type"], "rope_factor": sc.get("factor", 1.0),
                    "rope_orig_max": sc.get("original_max_position_embeddings", c["P"]),
                    "rope_attention_factor": af if af is not None else 0.1 * torch.log(torch.tensor(sc["factor"])).item() + 1.0,
                    "beta_fast": 32.0, "beta_slow": 1.0, "rms_norm_eps": c["eps"]})
    return cfg


def check(ns, c, note):
    gen = torch.Generator().manual_seed(c["seed"])
    tensors, p = wf.weights(c, gen)
    params = {name: t.float() for name, t in tensors}
    if c["tied"]:
        params["lm_head.weight"] = params["model.embed_tokens.weight"]
    gemma = c["arch"] == "gemma3"
    cfg = book_config(c)
    model = (ns["Gemma3Model"] if gemma else ns["Olmo3Model"])(cfg)
    (ns["load_weights_into_gemma"] if gemma else ns["load_weights_into_olmo"])(model, cfg, params)
    ids = [i % c["V"] for i in (wf.LONG_IDS if c.get("long") else wf.IDS)]
    with torch.no_grad():
        book = model(torch.tensor([ids]))[0]
    ours = wf.forward(c, p, ids, (True, True, 1.0, []))
    logits = ours["final"] @ p["head"].T
    if c.get("softcap"):
        logits = torch.tanh(logits / c["softcap"]) * c["softcap"]
    diff = ((book - logits).abs() / logits.abs().clamp(min=1)).max().item()
    print("%-14s %-48s logits differ by %.2e%s" % (c["name"], note, diff,
                                                    "" if diff < 1e-5 else "  <-- MORE THAN 1e-5"))
    return diff < 1e-5


def main():
    repo = sys.argv[1]
    gemma = notebook(repo, "ch05/12_gemma3/standalone-gemma3.ipynb", "# Uncomment")
    olmo = notebook(repo, "ch05/13_olmo3/standalone-olmo3.ipynb", "import json")
    ok = True
    for case in wf.CASES:
        c = dict(case)
        if c["arch"] == "gemma2":  # (the book builds no Gemma 2)
            continue
        if c["arch"] == "gemma3":
            dropped = [k for k in ("scaling", "softcap") if c.pop(k, None) is not None]
            if not c["tied"]:
                c["tied"] = True
                dropped.append("the untied head")
            ok &= check(gemma, c, "the book's Gemma3Model" + (
                " (without %s)" % ", ".join(dropped) if dropped else ""))
        else:
            # The book turns every layer with YaRN; Hugging Face only the full ones.
            full = dict(c, types=[wf.F] * c["L"])
            ok &= check(olmo, full, "the book's Olmo3Model, every layer full")
            plain = dict(c)
            plain.pop("scaling", None)
            ok &= check(olmo, plain, "the book's Olmo3Model, sliding layers, no YaRN")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
