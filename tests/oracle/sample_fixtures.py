#!/usr/bin/python3
"""Writes tests/golden/sample-draws.txt: the tokens PyTorch chooses from rows of logits.

Run by hand with Debian's python3-torch (built without MKL, AVX2 kernels):
    /usr/bin/python3 tests/oracle/sample_fixtures.py > tests/golden/sample-draws.txt
attnscope's tests (tests/models/check_sample.c) read the file; they never need PyTorch.

Each case draws a row of logits, torch.manual_seed(LSEED); torch.randn(N) * SCALE
(rounded to whole numbers when ROUND is 1, so that many logits tie), then
seeds the generator again with DSEED and chooses DRAWS tokens from that row,
one after another, as the book's generate chooses the next token (chapter 5,
section 5.3): torch.topk's k-th logit and torch.where(logits < it, -inf)
when TOPK > 0; when TEMP > 0 the logits divided by it, Hugging Face's
TopPLogitsWarper when TOPP < 1 (restated below), torch.softmax and
torch.multinomial(probs, 1); when TEMP is 0, torch.argmax.  One line each:

    case N LSEED SCALE ROUND TEMP TOPK TOPP DSEED DRAWS -- id:probbits ...

where probbits is the float32 bit pattern, in hex, of the chosen token's
probability in the row it was drawn from (greedy: the softmax of the cut
logits at temperature 1), and then

    after id:probbits

the token the same generator draws next at temperature 1 without cuts: the
generator's state after the case (greedy draws nothing from it; a draw
takes one exponential per vocabulary entry).

Last, whole rows of torch.softmax, every probability's bits:

    softmax N LSEED SCALE CUT -- probbits ...

of torch.randn(N) * SCALE after torch.manual_seed(LSEED), every third
logit -inf when CUT is 1.

Top-p cases have no tied logits: torch.sort (not stable) orders equal
logits as std::sort leaves them, and where equal logits straddle the cut
attnscope cuts the lower ids first (doc/random-numbers.md).
"""
import struct

import torch


def bits(v):
    return "%08x" % struct.unpack("<I", struct.pack("<f", v))[0]


def top_p_cut(logits, top_p):
    """Hugging Face's TopPLogitsWarper (transformers 4.5x), min_tokens_to_keep 1."""
    sorted_logits, sorted_indices = torch.sort(logits, descending=False)
    cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    remove = cumulative <= (1 - top_p)
    remove[..., -1:] = 0
    remove = remove.scatter(1, sorted_indices, remove)
    return logits.masked_fill(remove, float("-inf"))


def choose(logits, temperature, top_k, top_p):
    """One step of the book's generate on a (1, N) row; returns (id, its probability)."""
    if top_k > 0:
        top_logits, _ = torch.topk(logits, top_k)
        min_val = top_logits[:, -1]
        logits = torch.where(logits < min_val, torch.tensor(float("-inf")), logits)
    if temperature > 0.0:
        logits = logits / temperature
        if top_p < 1.0:
            logits = top_p_cut(logits, top_p)
        probs = torch.softmax(logits, dim=-1)
        idx = torch.multinomial(probs, num_samples=1)
    else:
        probs = torch.softmax(logits, dim=-1)
        idx = torch.argmax(logits, dim=-1, keepdim=True)
    i = idx.item()
    return i, probs[0, i].item()


CASES = [
    # N, LSEED, SCALE, ROUND, TEMP, TOPK, TOPP, DSEED, DRAWS
    (50257, 1, 4.0, 0, 0.0, 0, 1.0, 123, 3),
    (50257, 1, 4.0, 0, 1.0, 0, 1.0, 123, 25),
    (50257, 2, 4.0, 0, 1.4, 0, 1.0, 123, 25),
    (50257, 3, 4.0, 0, 0.1, 0, 1.0, 123, 10),
    (50257, 4, 2.0, 0, 5.0, 0, 1.0, 123, 25),
    (50257, 5, 4.0, 0, 1.4, 25, 1.0, 123, 25),
    (50257, 6, 4.0, 0, 1.0, 3, 1.0, 7, 25),
    (50257, 7, 4.0, 0, 0.0, 3, 1.0, 123, 2),
    (50257, 8, 4.0, 0, 1.0, 0, 0.9, 123, 25),
    (50257, 9, 3.0, 0, 0.7, 50, 0.5, 42, 25),
    (50257, 10, 8.0, 1, 1.0, 5, 1.0, 123, 25),
    (50257, 11, 8.0, 1, 0.0, 0, 1.0, 123, 2),
    (50257, 12, 8.0, 1, 2.0, 40, 1.0, 123, 25),
    (50257, 12, 8.0, 0, 2.0, 0, 0.8, 123, 25),
    (151936, 13, 4.0, 0, 0.6, 20, 0.95, 123, 10),
    (151936, 14, 4.0, 0, 1.0, 0, 1.0, 4294967295, 10),
    (1000, 15, 1.0, 0, 1.0, 1, 1.0, 123, 5),
    (1000, 16, 0.5, 0, 3.0, 1000, 1.0, 0, 25),
    (37, 17, 2.0, 0, 1.0, 0, 1.0, 123, 25),
    (37, 18, 2.0, 0, 1.0, 0, 0.3, 123, 25),
    (8, 19, 0.0, 0, 1.0, 0, 1.0, 123, 25),
]

SOFTMAX_ROWS = [
    # N, LSEED, SCALE, CUT
    (8, 31, 1.0, 0),
    (515, 32, 4.0, 0),
    (1001, 33, 30.0, 0),
    (203, 34, 4.0, 1),
]


def main():
    print("# made by tests/oracle/sample_fixtures.py with PyTorch %s "
          "(Debian python3-torch, built without MKL, AVX2 kernels)" % torch.__version__)
    for n, lseed, scale, rounded, temp, top_k, top_p, dseed, draws in CASES:
        torch.manual_seed(lseed)
        logits = (torch.randn(n) * scale).view(1, n)
        if rounded:
            logits = torch.round(logits)
        torch.manual_seed(dseed)
        out = []
        for _ in range(draws):
            i, p = choose(logits.clone(), temp, top_k, top_p)
            out.append("%d:%s" % (i, bits(p)))
        print("case %d %d %r %d %r %d %r %d %d -- %s" % (n, lseed, scale, rounded, temp, top_k,
                                                        top_p, dseed, draws, " ".join(out)))
        i, p = choose(logits.clone(), 1.0, 0, 1.0)
        print("after %d:%s" % (i, bits(p)))
    # Whole rows of torch.softmax, every probability's bits: the exponentials
    # and the sum a draw's probabilities come from, to the last bit (spreads
    # past 87 reach the subnormal results; CUT: every third logit -inf).
    for n, lseed, scale, cut in SOFTMAX_ROWS:
        torch.manual_seed(lseed)
        logits = torch.randn(n) * scale
        if cut:
            logits[::3] = float("-inf")
        probs = torch.softmax(logits.view(1, n), dim=-1)[0]
        print("softmax %d %d %r %d -- %s" % (n, lseed, scale, cut,
                                             " ".join(bits(v) for v in probs.tolist())))


if __name__ == "__main__":
    main()
