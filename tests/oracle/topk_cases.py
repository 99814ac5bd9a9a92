"""torch.topk's choices on rows full of ties, for tests/kernels/check_topk.c.

Writes tests/fixtures/topk/cases.txt, one case a line:

    n k v0 v1 ... v(n-1) i0 i1 ... i(k-1)

the values small whole numbers (so most rows hold ties, and some hold a NaN)
and the indices torch.topk(row, k) returns on the CPU (float32, largest,
sorted).  Sizes cover both of its paths: std::nth_element then std::sort
(k * 64 > n) and std::partial_sort (k * 64 <= n), rows shorter than 4 and
longer than 16 sorted elements.

attnscope's own, never used by the build or by `make check`.  Run from the
top of the source tree with Debian's PyTorch:

    /usr/bin/python3 tests/oracle/topk_cases.py
"""
import os

import torch

gen = torch.Generator().manual_seed(52)
lines = []
for n, k in [(2, 1), (3, 2), (4, 2), (5, 3), (6, 2), (8, 2), (8, 8), (16, 4), (32, 4), (40, 20),
             (64, 1), (64, 6), (64, 8), (128, 1), (128, 2), (128, 8), (160, 3), (256, 2),
             (256, 4), (300, 33)]:
    for rep in range(6):
        levels = 1 + rep  # 1: every value equal; more: fewer ties
        row = torch.randint(0, levels + 1, (n,), generator=gen).float()
        if rep == 5:
            row[torch.randint(0, n, (1,), generator=gen)] = float("nan")
        idx = torch.topk(row, k).indices.tolist()
        vals = " ".join("nan" if v != v else "%g" % v for v in row.tolist())
        lines.append("%d %d %s %s" % (n, k, vals, " ".join(map(str, idx))))
path = os.path.join("tests", "fixtures", "topk", "cases.txt")
with open(path, "w") as f:
    f.write("\n".join(lines) + "\n")
print("wrote", path, len(lines), "cases")
