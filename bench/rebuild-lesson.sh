#!/usr/bin/env bash
# Benchmark: how long a learner waits after editing one lesson file (target <= 6 s).
# Touches the lesson source and times the incremental rebuild of its program, 3 times.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GPULAB_BUILD_DIR:-$root/build}"
lesson="${1:-04}"
target="lesson-$lesson"
source="$(ls "$root"/lessons/"$lesson"-*/main.cpp)"
cmake --build "$build" --target "$target" >/dev/null
best=""
for _ in 1 2 3; do
  touch "$source"
  start=$(date +%s%N)
  cmake --build "$build" --target "$target" >/dev/null
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "  rebuild $target: $ms ms"
  if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
done
echo "best rebuild of $target after an edit: $((best / 1000)).$(printf '%03d' $((best % 1000))) s (target <= 6 s)"
