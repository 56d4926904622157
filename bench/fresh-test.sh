#!/usr/bin/env bash
# Benchmark: the README's test command as a newcomer meets it (target <= 12 min on two
# cores, set-up included): a clean clone of this checkout's HEAD, an empty compiler cache,
# then `./gpulab setup`, `./gpulab build` and `./gpulab test`, each timed.
#   bench/fresh-test.sh [--full] [--with-download]
#     --full:           `./gpulab test --full` (CI's)
#     --with-download:  an empty LibTorch cache too, so set-up includes the wheel's download
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
full="" download=0
for a in "$@"; do
  case "$a" in
    --full) full=--full ;;
    --with-download) download=1 ;;
    *) echo "fresh-test: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
work="$(mktemp -d)"
chmod 755 "$work"  # as a clone in a home folder: the shared-node tests act as another user
trap 'rm -rf "$work"' EXIT
git clone -q "$root" "$work/clone"
export CCACHE_DIR="$work/ccache"
[ "$download" = 1 ] && export GPULAB_CACHE="$work/libtorch-cache"
cd "$work/clone"
total=$(date +%s)
step() {  # step NAME COMMAND...: runs it, prints its seconds
  local t=$(date +%s) rc=0
  "${@:2}" >"$work/$1.log" 2>&1 || rc=$?
  echo "  $1: $(( $(date +%s) - t )) s$([ $rc -ne 0 ] && echo " (FAILED, exit $rc; last lines below)")"
  [ $rc -eq 0 ] || { tail -30 "$work/$1.log"; exit "$rc"; }
}
step setup ./gpulab setup
step build ./gpulab build
step test ./gpulab test $full
grep -E "tests passed|Total Test time" "$work/test.log" | sed 's/^/  /'
echo "fresh ./gpulab test $full: $(( $(date +%s) - total )) s from a clean clone (set-up $([ $download = 1 ] && echo "with" || echo "without") the wheel's download)"
