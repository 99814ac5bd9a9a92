#!/usr/bin/python3
"""Writes tests/golden/rng-vectors.txt: raw PyTorch random draws, as float bits.

Run by hand with Debian's python3-torch (a build without MKL):
    /usr/bin/python3 tests/oracle/make_rng_vectors.py > tests/golden/rng-vectors.txt
attnscope's tests read the file; they never need PyTorch.

Line formats (values are float32 bit patterns in hex):
    uniform SEED FROM TO N v...     torch.manual_seed(SEED); torch.empty(N).uniform_(FROM, TO)
    linear  SEED IN OUT BIAS v...   torch.manual_seed(SEED); nn.Linear(IN, OUT, BIAS):
                                    weight (row-major), then bias when BIAS is 1
    dropout SEED P N v...           torch.manual_seed(SEED); nn.Dropout(P) in training
                                    mode on x[i] = float32((i % 17 - 8) / 7)
"""
import struct

import torch


def bits(t):
    return " ".join("%08x" % struct.unpack("<I", struct.pack("<f", v))[0]
                    for v in t.flatten().tolist())


def main():
    print("# made by tests/oracle/make_rng_vectors.py with PyTorch %s "
          "(Debian python3-torch, built without MKL)" % torch.__version__)
    for seed, lo, hi, n in [(123, 0.0, 1.0, 500), (0, -1.0, 1.0, 500),
                            (789, -0.5773502691896258, 0.5773502691896258, 2000),
                            (2**32 + 7, -0.1, 0.3, 300), (4294967295, -3.0, 3.0, 300)]:
        torch.manual_seed(seed)
        x = torch.empty(n).uniform_(lo, hi)
        print("uniform %d %r %r %d %s" % (seed, lo, hi, n, bits(x)))
    for seed, fan_in, fan_out, bias in [(789, 3, 2, 0), (123, 6, 6, 1), (5, 768, 16, 1),
                                        (42, 10, 7, 1), (123, 2, 2, 1)]:
        torch.manual_seed(seed)
        layer = torch.nn.Linear(fan_in, fan_out, bias=bool(bias))
        vals = [layer.weight.detach()]
        if bias:
            vals.append(layer.bias.detach())
        print("linear %d %d %d %d %s" % (seed, fan_in, fan_out, bias,
                                         " ".join(bits(v) for v in vals)))
    for seed, p, n in [(123, 0.5, 36), (123, 0.1, 1000), (7, 0.9, 1000), (99, 0.25, 777)]:
        torch.manual_seed(seed)
        x = torch.tensor([(i % 17 - 8) / 7.0 for i in range(n)], dtype=torch.float32)
        drop = torch.nn.Dropout(p)
        drop.train()
        print("dropout %d %r %d %s" % (seed, p, n, bits(drop(x))))


if __name__ == "__main__":
    main()
