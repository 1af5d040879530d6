#!/usr/bin/env bash
# Lists the reason of each test the last ctest run in BUILD_DIR reported Skipped: ctest's summary
# names them ("The following tests did not run") but keeps their output, the reason, in its log.
#   tests/skip_reasons.sh [BUILD_DIR]      (default: build)
# A skipped case prints "skipped: <reason>" (tests/skip.hpp), a script "<name>: skipped: <reason>".
set -euo pipefail
log="${1:-build}/Testing/Temporary/LastTest.log"
[ -f "$log" ] || { echo "skip_reasons.sh: no $log (run ctest first)" >&2; exit 3; }
awk '
  /^[0-9]+\/[0-9]+ Test: / { name = $0; sub(/^[0-9]+\/[0-9]+ Test: /, "", name); next }
  /^<end of output>$/ { name = ""; next }
  name != "" && /^([A-Za-z0-9_.-]+: )?skipped: / {
    why = $0; sub(/^([A-Za-z0-9_.-]+: )?skipped: /, "", why)
    printf "skipped: %s: %s\n", name, why; n++; name = ""
  }
  END { if (n) printf "%d test(s) skipped\n", n }
' "$log"
