#!/usr/bin/env bash
# A benchmark of the gate itself: how often the timed judgement against the
# merge-base cries wolf on unchanged code, and how often it catches a planted slowdown of 5% of
# the decode time per token. Runs `atlas-bench gate --timed-only` N times per kind, the two kinds
# alternating (unchanged, planted, unchanged, ...) so both see the same box, optionally with
# single-threaded CPU burners beside it, and prints a table of exit codes with the targets
# (exit 1 <= 2.5% and exit 2 <= 10% unchanged; exit 1 >= 95% planted).
#
#   tools/gate-proof.sh [-n RUNS_PER_KIND] [-p PERCENT] [-d DELAY_US] [-l BURNERS] [-m JOBS] [-o OUT_DIR]
#                       [-b ATLAS_BENCH] [-- extra gate args]
#   tools/gate-proof.sh -s OUT_DIR      # the table of the runs so far (a proof stopped early)
#
# -p: the planted slowdown as a percent of decode time per token (default 5): the delay is
#     calibrated from the base side's us_per_token in the first unchanged run; -d overrides it.
# -l: start this many `sha256sum /dev/zero` burners (one core each) for the whole proof.
# -m: a neighbour job doing real compile work for the whole proof: `cmake --build -j JOBS` of
#     this checkout's own tree (a CPU-only build folder in OUT_DIR, ccache off, cleaned and
#     rebuilt in a loop), pinned with taskset to the last JOBS cores (-m 1 on 2 cores: core 1).
#     Its configure runs before the first gate run. After the table, the replayed error rates
#     (`atlas-bench gate-resample`, 5000 replays per kind) on the rounds the proof recorded.
# Each run's line goes to OUT_DIR/runs.tsv (kind, exit, wall s, rounds, change %, MDE %, verdict,
# load average); the table goes to stdout and OUT_DIR/summary.txt. Run from the checkout root
# after `make build`; the first run builds the merge-base (cached, its time on its own line).
set -euo pipefail

runs=40 percent=5 delay="" burners=0 neighbour_jobs=0 out="" bench="build/tools/atlas-bench" summary_only=""
while getopts "n:p:d:l:m:o:b:s:" opt; do
  case $opt in
    n) runs=$OPTARG ;; p) percent=$OPTARG ;; d) delay=$OPTARG ;; l) burners=$OPTARG ;; m) neighbour_jobs=$OPTARG ;;
    o) out=$OPTARG ;; b) bench=$OPTARG ;; s) summary_only=$OPTARG ;;
    *) sed -n '2,25p' "$0"; exit 3 ;;
  esac
done
shift $((OPTIND - 1))
summarize() {
python3 - "$1" <<'PY'
import csv, math, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))

def binom_cdf(k, n, p):
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))

def clopper_pearson(k, n, conf=0.95):
    """Exact two-sided interval of a binomial proportion (Clopper & Pearson 1934), by bisection."""
    a = (1 - conf) / 2
    def solve(f):
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) else (lo, mid)
        return (lo + hi) / 2
    lower = 0.0 if k == 0 else solve(lambda p: 1 - binom_cdf(k - 1, n, p) < a)
    upper = 1.0 if k == n else solve(lambda p: binom_cdf(k, n, p) > a)
    return lower, upper

print("\n%-10s %5s %6s %6s %6s %8s %8s %9s %7s %11s %12s %12s" % ("kind", "runs", "exit0", "exit1", "exit2", "exit1 %",
      "exit2 %", "median s", "max s", "mean rounds", "median chg%", "median load"))
for kind, target in (("unchanged", "target: exit1 <= 2.5%, exit2 <= 10%"), ("planted", "target: exit1 >= 95%")):
    rs = [r for r in rows if r["kind"] == kind]
    if not rs:
        continue
    n = len(rs)
    c = {e: sum(r["exit"] == str(e) for r in rs) for e in (0, 1, 2, 3)}
    chg = [float(r["change_pct"]) for r in rs if r["change_pct"] not in ("-", "")]
    rounds = [float(r["rounds"]) for r in rs if r["rounds"] not in ("-", "")]
    walls = [float(r["wall_s"]) for r in rs]
    print("%-10s %5d %6d %6d %6d %7.1f%% %7.1f%% %9.1f %7.1f %11s %12s %12.2f   %s" % (
        kind, n, c[0], c[1], c[2], 100 * c[1] / n, 100 * c[2] / n, statistics.median(walls), max(walls),
        "%.1f" % statistics.mean(rounds) if rounds else "-",
        "%.2f" % statistics.median(chg) if chg else "-", statistics.median(float(r["load1"]) for r in rs), target))
    for e in (1, 2):
        lo, hi = clopper_pearson(c[e], n)
        print("%-10s   exit %d: %d/%d = %.1f%%, 95%% interval (Clopper-Pearson) %.1f%% - %.1f%%" % (
            "", e, c[e], n, 100 * c[e] / n, 100 * lo, 100 * hi))
    if c[3]:
        print("  %d runs exited 3 (usage/input error): see the .err files" % c[3])
PY
}
if [ -n "$summary_only" ]; then summarize "$summary_only/runs.tsv"; exit 0; fi
extra=("$@")
[ -x "$bench" ] || { echo "gate-proof: $bench is not built (make build)" >&2; exit 3; }
out=${out:-gate-proof-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
store="$out/store"
tsv="$out/runs.tsv"
printf 'kind\texit\twall_s\trounds\tchange_pct\tmde_pct\tverdict\tload1\tdelay_us\n' > "$tsv"

burner_pids=()
cleanup() {
  # The neighbour loop runs in its own process group (setsid): stop the whole group (its compilers).
  for p in "${burner_pids[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
for ((i = 0; i < burners; i++)); do
  sha256sum /dev/zero >/dev/null 2>&1 &
  burner_pids+=($!)
done
if [ "$neighbour_jobs" -gt 0 ]; then
  nb="$out/neighbour-build"
  last=$(($(nproc) - 1)) first=$(($(nproc) - neighbour_jobs))
  [ "$first" -ge 0 ] || first=0
  cores="$first-$last"
  echo "gate-proof: neighbour: cmake --build -j $neighbour_jobs of this tree (ccache off) in a loop, pinned to cores $cores; configuring $nb"
  cmake -S . -B "$nb" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATLAS_CUDA=OFF -DBUILD_TESTING=OFF >"$out/neighbour.log" 2>&1
  setsid bash -c "while :; do CCACHE_DISABLE=1 taskset -c $cores cmake --build '$nb' -j $neighbour_jobs --target atlas_engine atlas_records atlas_gates >>'$out/neighbour.log' 2>&1; cmake --build '$nb' --target clean >/dev/null 2>&1; echo \"\$(date -u +%T) neighbour build cycle done\" >>'$out/neighbour-cycles.txt'; done" &
  burner_pids+=($!)
fi

# Reads the newest record in the store: rounds, us_per_token change %, MDE %, verdict.
summary_of_last_record() {
  python3 - "$store" <<'PY'
import glob, json, os, sys
files = sorted(glob.glob(os.path.join(sys.argv[1], "**", "*.json"), recursive=True), key=os.path.getmtime)
if not files:
    print("-\t-\t-\tno-record"); sys.exit()
t = json.load(open(files[-1])).get("verdicts", {}).get("timed", {})
o = t.get("outcome") or {}
# the decode metric the gate judges: us_per_token, or its wait-corrected form (records of either)
v = next((v for v in o.get("verdicts", []) if v["metric"].startswith("decode-anatomy/us_per_token")), None)
if v is None:
    print("-\t-\t-\t" + (t.get("skipped_reason") or "no-verdict").replace("\t", " ")[:80]); sys.exit()
p = v["paired"]
fmt = lambda x: "-" if x is None else "%.2f" % (100 * x)
# The base side's us_per_token: the judged rounds' median, else (every round disturbed) the median
# of the base values the record keeps for every round.
base = v.get("base_median")
if not base:
    vals = sorted(r["values"][v["metric"]]["base"] for r in o.get("rounds", []) if v["metric"] in r.get("values", {}))
    base = vals[len(vals) // 2] if vals else None
print("%d\t%s\t%s\t%s\t%s" % (len(o.get("rounds", [])), fmt(p.get("change")), fmt(p.get("mde")), v["verdict"].replace(" ", "-"),
      "%.2f" % base if base else "-"))
PY
}

one_run() {  # kind delay -> appends a line, echoes the exit code
  local kind=$1 d=$2 t0 t1 rc load
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(date +%s.%N)
  set +e
  if [ "$d" = "0" ]; then
    "$bench" gate --timed-only --store "$store" "${extra[@]}" >"$out/last-$kind.out" 2>"$out/last-$kind.err"
  else
    "$bench" gate --timed-only --store "$store" --inject-decode-delay-us "$d" "${extra[@]}" \
      >"$out/last-$kind.out" 2>"$out/last-$kind.err"
  fi
  rc=$?
  set -e
  t1=$(date +%s.%N)
  local s
  s=$(summary_of_last_record)
  printf '%s\t%d\t%.1f\t%s\t%s\t%s\n' "$kind" "$rc" "$(echo "$t1 - $t0" | bc)" "$(echo "$s" | cut -f1-4)" "$load" "$d" >> "$tsv"
  grep -h "^merge-base build" "$out/last-$kind.out" | head -1 >> "$out/build-lines.txt" || true
  if [ "$kind" = unchanged ]; then  # the A/A runs' records feed the resampled error rates
    mkdir -p "$out/aa-records"
    newest=$(find "$store" -name '*.json' -newermt "@${t0%.*}" -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -1 | cut -d' ' -f2-)
    if [ -n "$newest" ]; then cp "$newest" "$out/aa-records/"; fi
  fi
  echo "$rc"
}

echo "gate-proof: $runs runs per kind, planted ${delay:-$percent% of decode time} per token, $burners burner(s) and a make -j$neighbour_jobs neighbour beside (0: none), $(nproc) cores, $(date -u +%FT%TZ)"
for ((i = 1; i <= runs; i++)); do
  rc=$(one_run unchanged 0)
  if [ -z "$delay" ]; then
    base=$(summary_of_last_record | cut -f5)
    if [ "$base" = "-" ]; then
      echo "gate-proof: the first unchanged run gave no us_per_token (exit $rc): see $out/last-unchanged.out" >&2
      exit 3
    fi
    delay=$(python3 -c "print(round($base * $percent / 100, 3))")
    echo "gate-proof: base us_per_token $base us -> planted delay $delay us per token ($percent%)"
  fi
  rc2=$(one_run planted "$delay")
  echo "run $i: unchanged exit $rc, planted exit $rc2  (load1 $(cut -d' ' -f1 /proc/loadavg))"
done

summarize "$tsv" | tee "$out/summary.txt"
cycles=0  # no file: no cycle finished (the redirection, not wc, would fail and print an error)
[ -f "$out/neighbour-cycles.txt" ] && cycles=$(wc -l <"$out/neighbour-cycles.txt")
echo "neighbour build cycles completed: $cycles" | tee -a "$out/summary.txt"
# The rule's error rates from thousands of replays on the rounds recorded here (the unchanged
# runs' rounds: A/A by construction; the planted runs' head values carry the delay).
"$bench" gate-resample --runs 5000 --planted-pct "$percent" "$out/aa-records" 2>&1 | tee -a "$out/summary.txt" || true
echo "runs: $tsv"
