#!/usr/bin/env bash
# Installs the Debian packages atlas-bench builds against, only those missing (root, apt-get).
# --fuzz adds clang-16 and its libFuzzer/sanitizer runtimes, needed only by `make fuzz`.
# --browser adds Chromium for the trends site's DOM check (ctest ci/report_dom, Skipped without
# it): 122 MB to download, about 300 MB installed, 37 s on the 2-core box (2026-12-03), so not
# by default.
set -euo pipefail
pkgs=(cmake ninja-build g++ make git pkg-config nlohmann-json3-dev libcli11-dev doctest-dev
      libbenchmark-dev libcurl4-openssl-dev libssl-dev libcpp-httplib-dev curl ccache
      valgrind  # valgrind: the instructions suite counts instructions under callgrind
      jq shellcheck python3-yaml)  # the CI scripts (tools/ci/) and their checks: 3.1 MB to download
for a in "$@"; do
  case $a in
    --fuzz) pkgs+=(clang-16 libclang-rt-16-dev) ;;
    --browser) pkgs+=(chromium) ;;
    *) echo "install-deps: unknown option $a (--fuzz, --browser)" >&2; exit 3 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node/npm run the tokenizer oracle tests; the machine image may ship its own Node.js.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
