#!/usr/bin/env bash
# Benchmark: grading a class on the built tree, as an instructor does after a lab. N student
# trees (default 4) are written anew, each with every lesson's file: half finished (the
# solutions: every check runs to its end) and half as shipped (the exercises). Nothing of
# theirs is in any cache: each student's 20 files are compiled in its box. Prints the wall
# time and the time per student (target: one student alone, `bench/class-grade.sh 1`, under 60 s
# on two idle cores; a class, under 60 s per student).
#   bench/class-grade.sh [N [JOBS]]    (default 4 students, as many at once as cores)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GPULAB_BUILD_DIR:-$root/build}"
count="${1:-4}"
jobs="${2:-$(nproc)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for i in $(seq 1 "$count"); do
  tree="$work/class/student-$i"
  mkdir -p "$tree"
  cp -r "$root/lessons" "$tree/lessons"
  if [ $((i % 2)) -eq 1 ]; then
    for solution in "$root"/solutions/*/; do cp "$solution/main.cpp" "$tree/lessons/$(basename "$solution")/main.cpp"; done
  fi
  # A line of its own: the files differ from every other student's, as real ones do.
  for file in "$tree"/lessons/*/main.cpp; do echo "// student $i" >>"$file"; done
done
# The class's programs (checks, CLI) are built before the clock starts: once per class.
"$build/bin/gpulab" class grade --lessons 01 -o "$work/warm" "$work/class/student-1" >/dev/null || true
start=$(date +%s%N)
status=0
GPULAB_STATE_DIR="$work/state" "$build/bin/gpulab" class grade --jobs "$jobs" -o "$work/grades" "$work"/class/* >"$work/log" || status=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
per=$(( ms / count ))
graded=$(grep -c '"status": "graded"' "$work/grades/class.json" || true)
echo "grading a class of $count (20 lessons each, $jobs at a time, $(nproc) cores): $((ms / 1000)).$(printf '%03d' $((ms % 1000))) s, $((per / 1000)).$(printf '%03d' $((per % 1000))) s per student ($graded of $count graded)"
[ "$status" -eq 0 ] || { cat "$work/log" >&2; exit "$status"; }
[ "$per" -lt 60000 ] || { echo "class-grade: over the 60 s per student target" >&2; exit 1; }
