#!/usr/bin/env bash
# ctest ci/report_dom: the trends site as a browser reads it. `atlas-bench report` over a generated
# store (tests/ci/synthetic_store.py: 2 machine classes x 12 commits, a planted +10 % counted step
# with a stored regression verdict on cpu-a, cpu-b flat), then headless Chromium's --dump-dom of
# three pages, checked as DOM (Python's html.parser over what the browser serialised):
#   - index: the drift verdict (1 metric drifted), the drifted metric listed once;
#   - cpu-a's instructions page: one chart (svg.plot) per metric, 12 points, both axes labelled,
#     the x axis naming the first and last commit, the step as one line.step.worse, the stored
#     verdict as one path.marker.regression, the drift paragraph saying "regression +10.00%";
#   - cpu-b's: the same chart with 12 points, no step, no marker, drift "same" (--level-window 5:
#     the flat line's start and level now are 5 commits each).
# And no console message or script error from any page (Chromium's log). Skipped (exit 77) where
# chromium (Debian package chromium, tools/install-deps.sh --browser) or python3 is missing.
#   tests/ci/report_dom_test.sh [SOURCE_DIR]
# Environment: ATLAS_BENCH_EXE (ctest sets it); CHROMIUM (default: chromium on PATH).
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
bench=${ATLAS_BENCH_EXE:-$src/build/tools/atlas-bench}
[ -x "$bench" ] || { echo "FAIL: no atlas-bench at $bench"; exit 1; }
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$chromium" ] ||
  { echo "report_dom: skipped: chromium is not installed (Debian package chromium, tools/install-deps.sh --browser)"; exit 77; }
command -v python3 >/dev/null || { echo "report_dom: skipped: python3 is not installed"; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$src/tests/ci/synthetic_store.py" "$work/store" > /dev/null
rc=0
"$bench" report --store "$work/store" --baselines "$work/no-baselines" --no-git --level-window 5 --out "$work/site" > "$work/report.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: report exited $rc, wanted 1 (the planted drift)"; cat "$work/report.log"; exit 1; }
a_page=$(find "$work/site/cpu-a" -name instructions.html)
b_page=$(find "$work/site/cpu-b" -name instructions.html)
if [ -z "$a_page" ] || [ -z "$b_page" ]; then echo "FAIL: no instructions pages"; find "$work/site"; exit 1; fi

# The three pages at once, each browser with a profile of its own (one profile cannot be shared).
dump() {
  "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile-$1" \
    --enable-logging=stderr --v=0 --dump-dom "file://$2" > "$work/$1.dom" 2> "$work/$1.log"
}
dump index "$work/site/index.html" & p1=$!
dump a "$a_page" & p2=$!
dump b "$b_page" & p3=$!
for p in $p1 $p2 $p3; do wait "$p" || { echo "FAIL: chromium exited $?"; cat "$work"/*.log; exit 1; }; done

python3 - "$work" <<'PY'
import html.parser
import re
import sys

work = sys.argv[1]
fails = []


class Dom(html.parser.HTMLParser):
    """Elements as (tag, attrs, text inside), in document order."""

    def __init__(self, text):
        super().__init__()
        self.elements, self.open = [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        e = [tag, dict(attrs), ""]
        self.elements.append(e)
        if tag not in ("meta", "br", "img", "input", "link"):
            self.open.append(e)

    def handle_startendtag(self, tag, attrs):
        self.elements.append([tag, dict(attrs), ""])

    def handle_endtag(self, tag):
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i][0] == tag:
                del self.open[i:]
                break

    def handle_data(self, data):
        for e in self.open:
            e[2] += data

    def find(self, tag, cls=None, **attrs):
        out = []
        for t, a, text in self.elements:
            if t != tag or (cls and cls not in a.get("class", "").split()):
                continue
            if all(a.get(k.replace("_", "-")) == v for k, v in attrs.items()):
                out.append((a, text))
        return out


def expect(page, what, got, want):
    if got != want:
        fails.append(f"{page}: {what}: {got!r}, expected {want!r}")


def load(name):
    with open(f"{work}/{name}.dom", encoding="utf-8") as f:
        text = f.read()
    if "<html" not in text:
        fails.append(f"{name}: chromium dumped no document")
    return Dom(text)


index = load("index")
result = index.find("p", id="result")
expect("index", "the result paragraph", [t.strip() for _, t in result], ["1 metrics drifted past their tolerance"])
expect("index", "its class", [a.get("class") for a, _ in result], ["regression"])
expect("index", "drifted metrics listed", [t for _, t in index.find("li") if "instructions/per_token" in t and "cpu-a" in t].__len__(), 1)
expect("index", "machine classes linked", sorted(a["href"] for a, _ in index.find("a") if a.get("href", "").endswith("/index.html")),
       ["cpu-a/index.html", "cpu-b/index.html"])

for name, stepped in (("a", True), ("b", False)):
    page = f"cpu-{name} instructions"
    dom = load(name)
    plots = dom.find("svg", "plot")
    expect(page, "charts (svg.plot)", len(plots), 1)
    expect(page, "the chart's metric", [a.get("data-metric") for a, _ in plots], ["instructions/per_token"])
    expect(page, "the chart's points (data-points)", [a.get("data-points") for a, _ in plots], ["12"])
    expect(page, "points drawn (circle.point)", len(dom.find("circle", "point")), 12)
    expect(page, "y axis label", [t for _, t in dom.find("text", "axis-label-y")], ["instructions/per_token (count)"])
    expect(page, "x axis label", len(dom.find("text", "axis-label-x")), 1)
    xs = [t for a, t in dom.find("text") if re.fullmatch(r"a0000\d\d", t)]
    expect(page, "first and last commit on the x axis", (xs[:1], xs[-1:]), (["a000000"], ["a000011"]))
    expect(page, "steps (line.step.worse)", len(dom.find("line", "worse")), 1 if stepped else 0)
    expect(page, "stored regression markers", len(dom.find("path", "regression")), 1 if stepped else 0)
    drift = [t for _, t in dom.find("p") if t.startswith("drift: ")]
    want = "drift: regression +10.00%" if stepped else "drift: same"
    if len(drift) != 1 or not drift[0].startswith(want):
        fails.append(f"{page}: drift paragraph {drift!r}, expected one starting {want!r}")

for name in ("index", "a", "b"):
    with open(f"{work}/{name}.log", encoding="utf-8", errors="replace") as f:
        log = f.read()
    bad = [line for line in log.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    if bad:
        fails.append(f"{name}: the browser logged {bad[:3]}")

for f in fails:
    print("FAIL:", f)
if not fails:
    print("report_dom: index, cpu-a and cpu-b pages checked in headless Chromium")
sys.exit(1 if fails else 0)
PY
