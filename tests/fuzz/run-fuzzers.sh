#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz/*_fuzz.cpp, clang, -DGPULAB_FUZZ=ON) and runs
# each for a bounded time from its seeds, then prints executions per harness. Fails when a
# harness crashes, printing the input that did it (replay: build-fuzz/bin/<harness> <file>).
#
#   tests/fuzz/run-fuzzers.sh [SECONDS_EACH [HARNESS...]]   (default: 30 s, every harness: what CI runs)
#
# GPULAB_FUZZ_BUILD_DIR (default build-fuzz) is the build folder; inputs that found new
# coverage collect in its corpus/<name>/, the seeds in tests/fuzz/corpus/<name>/ stay as
# they are. Needs clang and its libFuzzer runtime: installed here when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
SECONDS_EACH="${1:-30}"
shift $(($# > 0 ? 1 : 0))
BUILD="${GPULAB_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
WERROR=OFF
[ "${CI:-}" = "true" ] && WERROR=ON

say() { printf 'fuzz: %s\n' "$*" >&2; }

# clang and compiler-rt (libFuzzer, the sanitizer runtimes), beyond ./gpulab setup's list.
need_apt=()
for p in clang libclang-rt-dev cmake ninja-build nlohmann-json3-dev catch2 libfmt-dev libpugixml-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$p")
done
if [ "${#need_apt[@]}" -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  say "installing ${need_apt[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

harnesses=("$@")
if [ "${#harnesses[@]}" -eq 0 ]; then
  for source in tests/fuzz/*_fuzz.cpp; do harnesses+=("$(basename "$source" .cpp)"); done
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DGPULAB_FUZZ=ON -DGPULAB_WERROR="$WERROR" \
     -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1" >"$log" 2>&1 ||
   ! cmake --build "$BUILD" --target "${harnesses[@]}" >>"$log" 2>&1; then
  grep -v '^\[' "$log" | tail -n 60 >&2
  say "building the harnesses failed"
  exit 1
fi

symbolizer="$(command -v llvm-symbolizer || ls /usr/lib/llvm-*/bin/llvm-symbolizer 2>/dev/null | tail -n 1 || true)"
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"

# One harness: its run, then one summary line in $BUILD/<name>.summary (and .crashed).
fuzz_one() {
  local harness="$1" name="${1%_fuzz}"
  local corpus="$BUILD/corpus/$name" artifacts="$BUILD/artifacts/$name"
  mkdir -p "$corpus" "$artifacts"
  local args=(-max_total_time="$SECONDS_EACH" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048
              -artifact_prefix="$artifacts/")
  [ -f "tests/fuzz/$name.dict" ] && args+=(-dict="tests/fuzz/$name.dict")
  local seeds=()
  [ -d "tests/fuzz/corpus/$name" ] && seeds=("tests/fuzz/corpus/$name")
  local run_log="$BUILD/$name.log" status=0
  rm -f "$BUILD/$name.crashed"
  "$BUILD/bin/$harness" "${args[@]}" "$corpus" "${seeds[@]}" >"$run_log" 2>&1 || status=$?
  final_stat() { sed -n "s/^stat::$1: *//p" "$run_log" | tail -n 1; }
  local execs rate added cov line
  execs="$(final_stat number_of_executed_units)"
  rate="$(final_stat average_exec_per_sec)"
  added="$(final_stat new_units_added)"
  cov="$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' "$run_log" | tail -n 1)"
  line="$(printf '%-18s %12s execs %8s exec/s  %6s edges  %5s new inputs' "$harness" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${added:-?}")"
  if [ "$status" -ne 0 ]; then
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$run_log" | head -n 5 >&2 || true
    local reproducer
    reproducer="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$run_log" | tail -n 1)"
    line="$line  CRASHED (exit $status): reproducer ${reproducer:-none written}; log $run_log"
    touch "$BUILD/$name.crashed"
  fi
  printf '%s\n' "$line" >"$BUILD/$name.summary"
}

# Each harness is one process on one core: as many at a time as there are cores
# (GPULAB_FUZZ_JOBS to change it).
jobs_max="${GPULAB_FUZZ_JOBS:-$(nproc)}"
say "${#harnesses[@]} harnesses, ${SECONDS_EACH} s each, ${jobs_max} at a time"
running=0
for harness in "${harnesses[@]}"; do
  if [ "$running" -ge "$jobs_max" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$harness" &
  running=$((running + 1))
done
wait || true

failed=0
summary=()
for harness in "${harnesses[@]}"; do
  name="${harness%_fuzz}"
  summary+=("$(cat "$BUILD/$name.summary" 2>/dev/null || echo "$harness: no summary (the run did not finish)")")
  if [ -f "$BUILD/$name.crashed" ] || [ ! -f "$BUILD/$name.summary" ]; then failed=1; fi
done

printf '%s\n' "${summary[@]}"
if [ "$failed" -ne 0 ]; then
  say "a harness crashed: replay with $BUILD/bin/<harness> <reproducer>, then make the input a unit test"
  exit 1
fi
