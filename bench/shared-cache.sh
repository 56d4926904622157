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
question="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["lessons"][0]["predictions"][0]["question"][:40])' "$root/lessons/manifest.json")"
"$root/gpulab" setup >/dev/null 2>&1  # packages and the wheel: not what this measures

first_question() {  # CLONE: seconds until `./gpulab start` in CLONE asks its first question
  local clone="$1" log="$1.log" fifo="$1.answers" tutor start ms
  git clone -q "$root" "$clone"
  mkfifo "$fifo"
  exec 3<>"$fifo"
  start=$(date +%s%N)
  ( cd "$clone" && GPULAB_STATE_DIR="$clone.state" exec setsid ./gpulab start --no-watch ) <"$fifo" >"$log" 2>&1 &
  tutor=$!
  until grep -qF "$question" "$log" 2>/dev/null; do
    kill -0 "$tutor" 2>/dev/null || { echo "shared-cache: ./gpulab start in $clone ended before its first question:" >&2; tail -20 "$log" >&2; exit 1; }
    sleep 0.2
  done
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  kill -- -"$tutor" 2>/dev/null || kill "$tutor" 2>/dev/null || true
  wait "$tutor" 2>/dev/null || true
  exec 3>&-
  echo "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
}

mkdir -p "$work/home/ada" "$work/students/bo"
cold="$(first_question "$work/home/ada/gpulab")"
echo "first student (empty shared cache): first question after $cold s"
ccache --zero-stats >/dev/null
warm="$(first_question "$work/students/bo/gpulab")"
warm_stats="$(ccache --print-stats | awk -F'\t' '$1=="direct_cache_hit"{h=$2} $1=="cache_miss"{m=$2} END{print h+0 " hits, " m+0 " misses"}')"
echo "second student (another path, the cache the first one filled): first question after $warm s"
echo "  the shared cache holds $(du -sh "$work/ccache" | cut -f1) after both; as the second student found it: $warm_stats"
