#!/usr/bin/env bash
# gpulab's tests built and run against Catch2 3, the Catch2 of Ubuntu 24.04 (GitHub's
# ubuntu-latest, where GitHub Classroom grades), on a machine whose own Catch2 is 2
# (Debian 12). The default build uses the system's Catch2, 2 or 3 (CMakeLists.txt).
#
#   tools/check-catch2-3.sh [BUILD_DIR]     # default build-catch2-3
#
# 1. Catch2 3: the system's when it is 3; else Catch2 built from its source into
#    CATCH2_3_PREFIX (default $GPULAB_CACHE/catch2-3.7.1; once, later runs reuse it). The
#    source is, in order: CATCH2_3_SOURCE (a folder or a .tar.gz of any Catch2 3),
#    $GPULAB_CACHE/catch2_3.7.1.orig.tar.gz, or Debian 13's source package of Catch2 (catch2
#    3.7.1), fetched by apt-get from the mirror this machine's apt already uses, into the
#    cache, and checked by its SHA-256.
# 2. A build folder of gpulab configured against it (-DCMAKE_PREFIX_PATH), which builds the
#    unit tests, lesson 01's and 04's checks, the CLI and those lessons' programs.
# 3. Runs: every unit test; CTest's discovery of them (Catch2 3's own catch_discover_tests);
#    `gpulab check` of lessons 01 and 04 against the solution (passes) and the exercise
#    (fails, with the checks' own "expected … — observed …": Catch2 3's XML report read by
#    gpulab's parser); `check all --junit` (Catch2 3's JUnit report merged).
# Each step prints how long it took. Needs ./gpulab setup's packages and LibTorch (it
# fetches the wheel like ./gpulab setup when missing).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build-catch2-3}"
VERSION=3.7.1
SHA256=c991b247a1a0d7bb9c39aa35faf0fe9e19764213f28ffba3109388e62ee0269c  # catch2_3.7.1.orig.tar.gz
CACHE="${GPULAB_CACHE:-$HOME/.cache/gpulab}"
JOBS="${GPULAB_CI_JOBS:-$(nproc 2>/dev/null || echo 2)}"
CXX_COMPILER="${CXX:-clang++}"
command -v "$CXX_COMPILER" >/dev/null || CXX_COMPILER=g++

say() { printf 'check-catch2-3: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
STEP_T0=$SECONDS
step() { STEP_T0=$SECONDS; say "== $*"; }
took() { say "   took $((SECONDS - STEP_T0)) s"; }
quietly() {  # quietly <log> <command...>: the log's end only when it fails
  local log="$1"; shift
  "$@" >"$log" 2>&1 || { grep -v '^\[' "$log" | tail -n 60 >&2; die "failed: $* (log: $log)"; }
}

system_catch2_3() {  # the system's Catch2 CMake package, when it is Catch2 3
  local f
  for f in /usr/lib/cmake/Catch2/Catch2ConfigVersion.cmake /usr/lib/*/cmake/Catch2/Catch2ConfigVersion.cmake \
           /usr/share/cmake/Catch2/Catch2ConfigVersion.cmake; do
    [ -f "$f" ] && grep -q 'PACKAGE_VERSION "3\.' "$f" && return 0
  done
  return 1
}

# Debian 13's source of Catch2 3, by apt-get with a configuration of its own (this machine's
# sources and lists are left as they are), from the Debian mirror apt uses here.
fetch_debian_source() {
  local tarball="$1" mirror work
  command -v apt-get >/dev/null || die "no Catch2 3 source: set CATCH2_3_SOURCE to its folder or .tar.gz"
  mirror="$(apt-get indextargets --format '$(REPO_URI)' 'Target-Of: deb' 2>/dev/null |
            grep -v -- '-security' | grep '/debian/$' | head -n 1)" || true
  [ -n "$mirror" ] || die "found no Debian mirror in apt's sources: set CATCH2_3_SOURCE to Catch2 3's folder or .tar.gz"
  work="$(mktemp -d)"
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" >"$work/sources.list"
  local apt=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o APT::Sandbox::User=root)
  say "fetching Debian 13's source package of Catch2 $VERSION (about 1.2 MB, once)"
  quietly "$work/apt.log" apt-get "${apt[@]}" update
  (cd "$work/src" && quietly "$work/apt.log" apt-get "${apt[@]}" source --download-only "catch2=$VERSION-0.5")
  mkdir -p "$(dirname "$tarball")"
  mv "$work/src/catch2_$VERSION.orig.tar.gz" "$tarball.tmp"
  rm -rf "$work"
  echo "$SHA256  $tarball.tmp" | sha256sum --check --quiet || { rm -f "$tarball.tmp"; die "the Catch2 source's SHA-256 is not $SHA256"; }
  mv "$tarball.tmp" "$tarball"
}

# Catch2 3 built from source into $PREFIX, with the project's compiler and C++ standard (its
# std::string_view support is decided by the standard it is compiled with).
build_catch2() {
  local prefix="$1" src work
  work="$(mktemp -d)"
  if [ -n "${CATCH2_3_SOURCE:-}" ] && [ -d "$CATCH2_3_SOURCE" ]; then
    src="$CATCH2_3_SOURCE"
  else
    local tarball="${CATCH2_3_SOURCE:-$CACHE/catch2_$VERSION.orig.tar.gz}"
    [ -f "$tarball" ] || fetch_debian_source "$tarball"
    tar -xzf "$tarball" -C "$work"
    src="$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)"
  fi
  grep -qE '^ *VERSION 3\.[0-9]+\.[0-9]+' "$src/CMakeLists.txt" || die "$src is not Catch2 3's source"
  local launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  quietly "$work/configure.log" cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_CXX_COMPILER="$CXX_COMPILER" \
    "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DBUILD_TESTING=OFF -DCATCH_INSTALL_DOCS=OFF -DCMAKE_INSTALL_PREFIX="$prefix.tmp"
  quietly "$work/build.log" cmake --build "$work/build" -j "$JOBS"
  rm -rf "$prefix.tmp"
  quietly "$work/install.log" cmake --install "$work/build"
  rm -rf "$prefix" && mv "$prefix.tmp" "$prefix"
  rm -rf "$work"
}

# ---- 1. Catch2 3
PREFIX_ARGS=()
if [ -z "${CATCH2_3_PREFIX:-}" ] && system_catch2_3; then
  say "the system's Catch2 is 3: using it"
else
  PREFIX="${CATCH2_3_PREFIX:-$CACHE/catch2-$VERSION}"
  if [ ! -f "$PREFIX/lib/cmake/Catch2/Catch2Config.cmake" ]; then
    step "Catch2 3 from source into $PREFIX"
    build_catch2 "$PREFIX"
    took
  fi
  PREFIX_ARGS=(-DCMAKE_PREFIX_PATH="$PREFIX")
fi

# ---- 2. gpulab against it
step "configure $BUILD against Catch2 3"
LIBTORCH="$("$ROOT/tools/fetch-libtorch2.sh")"
mkdir -p "$BUILD"
quietly "$BUILD/configure.log" cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER="$CXX_COMPILER" \
  -DGPULAB_BACKEND=sim -DLIBTORCH_PREFIX="$LIBTORCH" -DGPULAB_WERROR=ON "${PREFIX_ARGS[@]}"
grep -q "gpulab: Catch2 3\." "$BUILD/configure.log" || { cat "$BUILD/configure.log" >&2; die "CMake did not take Catch2 3"; }
grep "gpulab: Catch2" "$BUILD/configure.log" >&2
took

step "build the unit tests, lessons 01 and 04 (checks, exercise, solution) and the CLI"
quietly "$BUILD/build.log" cmake --build "$BUILD" -j "$JOBS" --target unit_tests gpulab_cli \
  lesson01-checks lesson-01 solution-01 lesson04-checks lesson-04 solution-04
took

# ---- 3. run
step "the unit tests (Catch2 3's runner), and CTest's discovery of them"
"$BUILD/bin/unit_tests" | tail -n 2
discovered="$(cd "$BUILD" && ctest -N -L '^unit$' | sed -n 's/^Total Tests: //p')"
[ "${discovered:-0}" -gt 100 ] || die "CTest found ${discovered:-no} unit tests in $BUILD"
say "   CTest discovered $discovered unit tests"
took

step "gpulab check against Catch2 3's XML reports"
cd "$ROOT"
for lesson in 01 04; do
  "$BUILD/bin/gpulab" check "$lesson" --solution >"$BUILD/check-$lesson-solution.txt" 2>&1 ||
    { cat "$BUILD/check-$lesson-solution.txt" >&2; die "lesson $lesson's solution did not pass"; }
  rc=0; "$BUILD/bin/gpulab" check "$lesson" >"$BUILD/check-$lesson-exercise.txt" 2>&1 || rc=$?
  [ "$rc" = 1 ] && grep -q "expected: .* — observed: " "$BUILD/check-$lesson-exercise.txt" ||
    { cat "$BUILD/check-$lesson-exercise.txt" >&2; die "lesson $lesson's exercise: exit $rc, not a failed check read off the report"; }
  say "   lesson $lesson: the solution passes; the exercise fails: $(grep -m1 -o 'expected: .*' "$BUILD/check-$lesson-exercise.txt" | cut -c1-100)"
done
"$BUILD/bin/gpulab" check all --solution --no-placement --lessons 01,04 --junit "$BUILD/junit.xml" >"$BUILD/check-all.txt" 2>&1 ||
  { cat "$BUILD/check-all.txt" >&2; die "check all --solution failed"; }
python3 - "$BUILD/junit.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
suites = ET.parse(sys.argv[1]).getroot().findall("testsuite")
cases = [c for s in suites for c in s.findall("testcase")]
assert len(suites) == 2 and len(cases) >= 2, (len(suites), len(cases))
assert not any(c.find("failure") is not None for c in cases), "a failure in the solutions' JUnit"
print(f"check-catch2-3:    check all --junit: {len(suites)} suites, {len(cases)} test cases, none failed", file=sys.stderr)
PY
took
say "passed: gpulab's tests build and run against Catch2 3 (in ${SECONDS} s)"
