#!/usr/bin/env python3
"""A small generated record store for the report's browser check (tests/ci/report_dom_test.sh).

    tests/ci/synthetic_store.py STORE

Two machine classes (cpu-a, cpu-b) x 12 commits of the nightly gate, each record with one timed
metric (decode-anatomy/us_per_token, us, 10 samples with 2 % seeded noise) and one counted metric
(instructions/per_token). On cpu-a the counted metric steps from 1000 to 1100 at commit 6 (+10 %:
a step, and a drift past its 0 tolerance) and the record of commit 6 carries a stored gate
verdict `regression` for it; cpu-b stays flat. Commit i is a<i zero-padded>..., started i minutes
after 2026-01-01 00:00 UTC (the report orders by record time with --no-git). Prints the number of
records written. The shape is the one records/record_io.cpp reads (docs/record-schema.md).
"""
import json
import os
import random
import sys

COMMITS = 12
STEP_AT = 6


def sha(i):
    return "a%06d%033d" % (i, 0)


def record(machine_class, i, rng):
    counted = 1100 if machine_class == "cpu-a" and i >= STEP_AT else 1000
    level = 100.0
    verdicts = {}
    if machine_class == "cpu-a" and i == STEP_AT:
        verdicts = {"overall": "regression", "reasons": ["instructions/per_token regressed"],
                    "verdicts": [{"metric": "instructions/per_token", "verdict": "regression"}]}
    t = "2026-01-01T%02d:%02d:00Z" % (i // 60, i % 60)
    return {
        "schema_version": 1,
        "run_id": "run-%s-%s" % (machine_class, i),
        "start_utc": t,
        "end_utc": t,
        "gate_or_suite": "nightly",
        "git": {"commit": sha(i), "branch": "main", "dirty": False, "diff_sha256": ""},
        "build": {"compiler": "gcc 12", "flags": "-O3", "build_type": "Release"},
        "machine": {"cpu_model": "Test CPU " + machine_class, "cores": 2, "memory_bytes": 1 << 33, "gpu_count": 0,
                    "machine_class": machine_class, "hostname": "synthetic"},
        "model": {"path": "models/m.bin", "format": "llama2c", "architecture": "llama", "parameter_count": 1000,
                  "sha256": "f" * 64},
        "data_assets": {},
        "config": {},
        "endpoint": None,
        "quiet_box": {"before": {"quiet": True}},
        "suites": {
            "decode-anatomy": {"name": "decode-anatomy", "config": {}, "details": {}, "metrics": {
                "us_per_token": {"unit": "us", "better": "lower", "kind": "timed",
                                 "samples": [round(level * rng.lognormvariate(0, 0.02), 4) for _ in range(10)]}}},
            "instructions": {"name": "instructions", "config": {}, "details": {}, "metrics": {
                "per_token": {"unit": "count", "better": "lower", "kind": "counted", "samples": [counted]}}},
        },
        "verdicts": verdicts,
        "valid": True,
    }


def main():
    store = sys.argv[1]
    rng = random.Random(1)
    n = 0
    for mc in ("cpu-a", "cpu-b"):
        for i in range(COMMITS):
            folder = os.path.join(store, mc, sha(i))
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, "nightly-20260101T%02d%02d00Z.json" % (i // 60, i % 60)), "w") as f:
                json.dump(record(mc, i, rng), f)
            n += 1
    print(n)


if __name__ == "__main__":
    main()
