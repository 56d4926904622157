#!/usr/bin/env bash
# Benchmark: a class server's shared compiler cache (docs/class-server.md). Two clean clones
# of this checkout's HEAD at different paths, as two students' home folders, share one
# group-writable ccache folder that starts empty: the first student's `./gpulab start
# --no-watch` fills it, the second's finds it warm. Prints each one's wait for lesson 01's
# first question, as bench/first-question.sh measures it. The packages and the LibTorch
# wheel are in place (one shared GPULAB_CACHE, as on the class server).
#   bench/shared-cache.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
# The class's cache: group-writable, set-group-ID, umask 002 (ccache's "Sharing a local cache").
install -d -m 2775 "$work/ccache"
export CCACHE_DIR="$work/ccache" CCACHE_UMASK=002
"$root/gpulab" setup >/dev/null 2>&1  # packages and the wheel: not what this measures
. "$root/bench/first-question-wait.sh"

first_question() {  # CLONE: seconds until `./gpulab start` in CLONE asks its first question
  git clone -q "$root" "$1"
  seconds_to_first_question "$1" "$1.log"
}

mkdir -p "$work/home/ada" "$work/students/bo"
cold="$(first_question "$work/home/ada/gpulab")"
echo "first student (empty shared cache): first question after $cold s"
ccache --zero-stats >/dev/null
warm="$(first_question "$work/students/bo/gpulab")"
warm_stats="$(ccache --print-stats | awk -F'\t' '$1=="direct_cache_hit"{h=$2} $1=="cache_miss"{m=$2} END{print h+0 " hits, " m+0 " misses"}')"
echo "second student (another path, the cache the first one filled): first question after $warm s"
echo "  the shared cache holds $(du -sh "$work/ccache" | cut -f1) after both; as the second student found it: $warm_stats"
