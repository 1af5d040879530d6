#!/usr/bin/env python3
"""Compares two logits files written by bench_logits (ours) and llama_logits (llama.cpp): float32
[positions][vocab], the same token ids fed to both (teacher forcing on our greedy tokens).

  compare_logits.py OURS THEIRS VOCAB LABEL [MAX_MEDIAN_REL] [MARGIN] [report]

Per position: relative L2 of llama.cpp's logits against ours, and whether llama.cpp's argmax
equals ours. A step counts as decided when our top-2 margin exceeds MARGIN (default 1e-3): a
near-tie may flip on float summation order in either implementation. Prints one summary line
(median and worst relative L2, positions over the limit, argmax agreement); exit 1 when the
median relative L2 exceeds MAX_MEDIAN_REL (default 1e-3) or a decided step differs, unless the
last argument is "report" (quantized files: both sides round differently, figures only).
The limit is on the median, with the worst printed: single positions can move more when one
implementation's path differs (see docs/PERF.md, 2026-12-01: llama.cpp's single-token decode at
one position of one prompt disagrees with its own prefill of the same tokens by 5e-2).
"""
import math
import struct
import sys


def rows(path, vocab):
    data = open(path, "rb").read()
    n = len(data) // (4 * vocab)
    if n * 4 * vocab != len(data):
        sys.exit(f"{path}: {len(data)} bytes is not a whole number of {vocab}-float rows")
    return [struct.unpack_from(f"<{vocab}f", data, 4 * vocab * i) for i in range(n)]


def main():
    ours_path, theirs_path, vocab, label = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    max_rel = float(sys.argv[5]) if len(sys.argv) > 5 else 1e-3
    margin = float(sys.argv[6]) if len(sys.argv) > 6 else 1e-3
    report_only = len(sys.argv) > 7 and sys.argv[7] == "report"
    ours, theirs = rows(ours_path, vocab), rows(theirs_path, vocab)
    if len(ours) != len(theirs):
        sys.exit(f"{label}: {len(ours)} positions of ours, {len(theirs)} of llama.cpp's")
    rels, decided, agreed, equal_all = [], 0, 0, 0
    for a, b in zip(ours, theirs):
        num = sum((x - y) ** 2 for x, y in zip(a, b))
        den = sum(x * x for x in a)
        rels.append(math.sqrt(num / den))
        top = sorted(range(vocab), key=lambda i: -a[i])[:2]
        mine = top[0]
        other = max(range(vocab), key=lambda i: b[i])
        equal_all += mine == other
        if a[top[0]] - a[top[1]] > margin:
            decided += 1
            agreed += mine == other
    rels_sorted = sorted(rels)
    median = rels_sorted[len(rels) // 2]
    ok = median <= max_rel and agreed == decided
    over = sum(r > max_rel for r in rels)
    verdict = "report only" if report_only else ("PASS" if ok else "FAIL")
    print(f"{label}: {len(rels)} positions, logits rel L2 vs ours: first {rels[0]:.2e}, median {median:.2e}, max {max(rels):.2e}, "
          f"{over} over {max_rel:g}; greedy argmax equal {equal_all}/{len(rels)}, on decided steps (our margin > {margin:g}) "
          f"{agreed}/{decided} -> {verdict}")
    sys.exit(0 if ok or report_only else 1)


if __name__ == "__main__":
    main()
