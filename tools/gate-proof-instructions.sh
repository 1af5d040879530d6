#!/usr/bin/env bash
# A benchmark of the gate's instruction-count judgement: the `instructions` suite
# (callgrind, docs/metrics.md) judged against the committed BASELINE, N times on unchanged code
# and N times with `--inject-decode-work W` (W extra loop iterations per decoded token), the two
# kinds alternating. Counts are deterministic, so the box's load must not matter: every planted
# run must exit 1 on instructions/instructions_per_decode_token and every unchanged run exit 0.
# Only the instructions suite runs (a gate config that is pr.json with suites = [instructions],
# and a copy of the class's pr BASELINE holding only its instructions/* metrics and identity),
# one process at a time; the timed judgement is off (--no-timed).
#
#   tools/gate-proof-instructions.sh [-n RUNS_PER_KIND] [-w WORK] [-o OUT_DIR] [-b ATLAS_BENCH]
#                                    [-m MACHINE_CLASS]
#
# Each run's line goes to OUT_DIR/runs.tsv (kind, exit, wall s, instructions per decode token:
# baseline, candidate, delta %, verdict, load average); the table to stdout and OUT_DIR/summary.txt.
set -euo pipefail

runs=40 work=1000 out="" bench="build/tools/atlas-bench" class="cpu-$(nproc)c-$(uname -m)"
while getopts "n:w:o:b:m:" opt; do
  case $opt in
    n) runs=$OPTARG ;; w) work=$OPTARG ;; o) out=$OPTARG ;; b) bench=$OPTARG ;; m) class=$OPTARG ;;
    *) sed -n '2,15p' "$0"; exit 3 ;;
  esac
done
[ -x "$bench" ] || { echo "gate-proof-instructions: $bench is not built (make build)" >&2; exit 3; }
src="baselines/$class/pr.BASELINE.json"
[ -f "$src" ] || { echo "gate-proof-instructions: no $src (run from the checkout root)" >&2; exit 3; }
out=${out:-gate-proof-instructions-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out/baselines/$class"
store="$out/store"
tsv="$out/runs.tsv"

python3 - "$src" "$out/baselines/$class/pr.BASELINE.json" gates/config/pr.json "$out/gate.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
b["metrics"] = {k: v for k, v in b["metrics"].items() if k.startswith("instructions/")}
b["identity"]["suites"] = {k: v for k, v in b["identity"]["suites"].items() if k == "instructions"}
json.dump(b, open(sys.argv[2], "w"), indent=2)
c = json.load(open(sys.argv[3]))
c["suites"] = ["instructions"]
json.dump(c, open(sys.argv[4], "w"), indent=2)
PY
printf 'kind\texit\twall_s\tbaseline\tcandidate\tdelta_pct\tverdict\tload1\n' > "$tsv"

last_record_line() {
  python3 - "$store" <<'PY'
import glob, json, os, sys
files = sorted(glob.glob(os.path.join(sys.argv[1], "**", "*.json"), recursive=True), key=os.path.getmtime)
if not files:
    print("-\t-\t-\tno-record"); sys.exit()
vs = json.load(open(files[-1])).get("verdicts", {}).get("verdicts", [])
v = next((v for v in vs if v["metric"] == "instructions/instructions_per_decode_token"), None)
if v is None:
    print("-\t-\t-\tno-verdict"); sys.exit()
f = lambda x: "-" if x is None else "%.4f" % x
print("%s\t%s\t%s\t%s" % (f(v["baseline"]), f(v["candidate"]), f(v["delta_pct"]), v["verdict"]))
PY
}

one_run() {  # kind work -> appends a line, echoes the exit code
  local kind=$1 w=$2 t0 t1 rc load
  load=$(cut -d' ' -f1 /proc/loadavg)
  local args=(gate --no-timed --config "$out/gate.json" --baselines-dir "$out/baselines" --machine-class "$class"
              --store "$store")
  [ "$w" = "0" ] || args+=(--inject-decode-work "$w")
  t0=$(date +%s.%N)
  set +e
  "$bench" "${args[@]}" >"$out/last-$kind.out" 2>"$out/last-$kind.err"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  printf '%s\t%d\t%.1f\t%s\t%s\n' "$kind" "$rc" "$(echo "$t1 - $t0" | bc)" "$(last_record_line)" "$load" >> "$tsv"
  echo "$rc"
}

echo "gate-proof-instructions: $runs runs per kind, --inject-decode-work $work, class $class, $(nproc) cores, $(date -u +%FT%TZ)"
for ((i = 1; i <= runs; i++)); do
  rc=$(one_run unchanged 0)
  rc2=$(one_run planted "$work")
  echo "run $i: unchanged exit $rc, planted exit $rc2  (load1 $(cut -d' ' -f1 /proc/loadavg))"
done

python3 - "$tsv" <<'PY' | tee "$out/summary.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print("\n%-10s %5s %6s %6s %6s %9s %7s %14s %12s %12s" % ("kind", "runs", "exit0", "exit1", "exit2", "median s",
      "max s", "delta % range", "load1 range", "verdicts"))
for kind, target in (("unchanged", "target: all exit 0"), ("planted", "target: all exit 1")):
    rs = [r for r in rows if r["kind"] == kind]
    if not rs:
        continue
    c = {e: sum(r["exit"] == str(e) for r in rs) for e in (0, 1, 2, 3)}
    d = [float(r["delta_pct"]) for r in rs if r["delta_pct"] != "-"]
    loads = [float(r["load1"]) for r in rs]
    walls = [float(r["wall_s"]) for r in rs]
    verdicts = sorted(set(r["verdict"] for r in rs))
    print("%-10s %5d %6d %6d %6d %9.1f %7.1f %14s %12s %12s   %s" % (
        kind, len(rs), c[0], c[1], c[2], statistics.median(walls), max(walls),
        "%+.3f..%+.3f" % (min(d), max(d)) if d else "-", "%.1f-%.1f" % (min(loads), max(loads)), ",".join(verdicts), target))
PY
echo "runs: $tsv"
