#!/usr/bin/env bash
# Benchmark: how long a newcomer waits for the tutorial's first question (target <= 3 min on
# two cores): a clean clone of this checkout's HEAD, an empty compiler cache, the packages
# and the LibTorch wheel already in place (bench/fresh-test.sh times those), then
# `./gpulab start --no-watch` until it asks lesson 01's first prediction.
#   bench/first-question.sh [--keep]    (--keep: leave the clone, print its path)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
chmod 755 "$work"  # as a clone in a home folder: the shared-node tests act as another user
[ "${1:-}" = "--keep" ] || trap 'rm -rf "$work"' EXIT
git clone -q "$root" "$work/clone"
export CCACHE_DIR="$work/ccache"  # a newcomer's: empty
"$root/gpulab" setup >/dev/null 2>&1  # packages and the wheel: not what this measures
. "$root/bench/first-question-wait.sh"
seconds="$(seconds_to_first_question "$work/clone" "$work/out.log")" || exit 1
echo "first question of ./gpulab start from a clean clone, empty compiler cache: $seconds s (target <= 180 s)"
[ "${1:-}" = "--keep" ] && echo "clone: $work/clone" || true
