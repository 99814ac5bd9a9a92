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
    normal  SEED MEAN STD N...      torch.manual_seed(SEED); then for each N, in turn,
            -- v...                 torch.empty(N).normal_(MEAN, STD): all their values
    normal-digest SEED MEAN STD N   torch.manual_seed(SEED); torch.empty(N).normal_(MEAN,
            -- H                    STD), too many values to list: H is the 64-bit FNV-1a
                                    hash of their bit patterns' bytes, little-endian, in order
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
    # randn's two kernels: 16 or more elements (blocks of 16, the tail drawn again) and fewer
    # (double pairs, the second kept for the next call).
    for seed, mean, std, sizes in [(123, 0.0, 1.0, [16]), (1, 0.0, 1.0, [32]), (7, 0.0, 1.0, [40]),
                                   (42, 0.0, 1.0, [1000]), (3, 0.0, 1.0, [17]),
                                   (5, 0.3, 2.5, [64, 23]), (123, 0.0, 1.0, [5]),
                                   (9, 0.0, 1.0, [3, 4, 1, 16, 2]), (11, -1.5, 0.25, [7, 9, 33]),
                                   (2**32 + 7, 0.0, 1.0, [6, 18])]:
        torch.manual_seed(seed)
        vals = [torch.empty(n).normal_(mean, std) for n in sizes]
        print("normal %d %r %r %s -- %s" % (seed, mean, std, " ".join(str(n) for n in sizes),
                                            " ".join(bits(v) for v in vals)))
    # Many draws, hashed: one in several thousand of randn's values depends on which of
    # its kernel's products the compiler fused, which a few thousand listed values miss.
    for seed, mean, std, n in [(1, 0.0, 1.0, 100003), (33, 0.0, 1.0, 100003),
                               (7, 0.5, 2.0, 65536)]:
        torch.manual_seed(seed)
        x = torch.empty(n).normal_(mean, std)
        h = 0xcbf29ce484222325
        for byte in struct.pack("<%df" % n, *x.tolist()):
            h = ((h ^ byte) * 0x100000001b3) & 0xffffffffffffffff
        print("normal-digest %d %r %r %d -- %016x" % (seed, mean, std, n, h))
    for seed, p, n in [(123, 0.5, 36), (123, 0.1, 1000), (7, 0.9, 1000), (99, 0.25, 777)]:
        torch.manual_seed(seed)
        x = torch.tensor([(i % 17 - 8) / 7.0 for i in range(n)], dtype=torch.float32)
        drop = torch.nn.Dropout(p)
        drop.train()
        print("dropout %d %r %d %s" % (seed, p, n, bits(drop(x))))


if __name__ == "__main__":
    main()
