#!/usr/bin/env bash
# Time the README's first command (install + demo) on a fresh clone with empty caches,
# next to the same install done with plain pip. Timings are printed, never asserted.
#   bash benchmarks/fresh_install.sh            # both
#   bash benchmarks/fresh_install.sh uv         # only the README command
#   bash benchmarks/fresh_install.sh tests      # the README's second command (bash .ci/run) instead
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
WHICH="${1:-both}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

run() {  # name, command, a line its output must have
  local dir="$WORK/$1"
  git clone -q "$REPO" "$dir"
  local start end
  start=$(date +%s.%N)
  (cd "$dir" && HOME="$WORK/home-$1" UV_CACHE_DIR="$WORK/uvcache-$1" PIP_NO_CACHE_DIR=1 bash -c "$2") >"$WORK/$1.log" 2>&1 \
    || { echo "$1 failed:"; tail -20 "$WORK/$1.log"; exit 1; }
  end=$(date +%s.%N)
  grep -q "$3" "$WORK/$1.log" || { echo "$1: no line with '$3' in its output"; exit 1; }
  printf "| %-40s | %7s s |\n" "$1" "$(python3 -c "print(f'{$end - $start:.1f}')")"
}

README_CMD="$(grep -m1 -E '^python3 -m venv .venv && .*lifecycle-memory demo$' "$REPO/README.md")"
echo "| fresh clone, empty caches                | wall      |"
echo "|------------------------------------------|-----------|"
if [ "$WHICH" = "tests" ]; then
  run "README second command (bash .ci/run)" "bash .ci/run" " passed"
  grep " passed" "$WORK/README second command (bash .ci/run).log" | tail -1
  exit 0
fi
if [ "$WHICH" != "pip" ]; then run "README command (uv)" "$README_CMD" "VS Code"; fi
if [ "$WHICH" != "uv" ]; then
  run "same with plain pip" "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/lifecycle-memory demo" "VS Code"
fi
