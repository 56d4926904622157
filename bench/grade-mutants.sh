#!/usr/bin/env bash
# Benchmark: grading a lesson's known wrong answers on the built tree, as after an
# instructor writes or changes them: their sources are written anew and compiled with the
# compiler cache off (a real compile each), then checked. Prints the time per mutant.
#   bench/grade-mutants.sh [NN]    (default 04)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GPULAB_BUILD_DIR:-$root/build}"
lesson="${1:-04}"
count=$(ls "$root"/tests/mutations/lesson"$lesson"/*.patch | wc -l)
rm -rf "$build/mutants/$lesson"
start=$(date +%s%N)
CCACHE_DISABLE=1 "$build/bin/gpulab" dev mutants "$lesson" >/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
per=$(( ms / count ))
echo "grading lesson $lesson's $count mutants (compiled anew, checked $(nproc) at a time): $((ms / 1000)).$(printf '%03d' $((ms % 1000))) s, $((per / 1000)).$(printf '%03d' $((per % 1000))) s per mutant"
