#!/usr/bin/env bash
# Benchmark: CI as it runs (`CI=true bash .ci/run`) on a clean clone of this checkout's HEAD
# with an empty compiler cache (target <= 25 min); prints every stage's time and the total.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
chmod 755 "$work"  # as a clone in a home folder: the shared-node tests act as another user
trap 'rm -rf "$work"' EXIT
git clone -q "$root" "$work/clone"
export CCACHE_DIR="$work/ccache"
start=$(date +%s)
rc=0
(cd "$work/clone" && CI=true bash .ci/run) >"$work/ci.log" 2>&1 || rc=$?
grep -E "^(ci|extra-checks): .*(took|done in)" "$work/ci.log" | sed 's/^/  /'
echo "CI: $(( $(date +%s) - start )) s in all, exit $rc"
[ "$rc" -eq 0 ] || tail -40 "$work/ci.log"
exit "$rc"
