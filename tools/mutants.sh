#!/usr/bin/env bash
# Mutation tests: every known wrong answer (tests/mutations/lessonNN/*.patch, a diff against
# the lesson's solution) must fail the lesson's checks. A mutant that passes means the
# checks are too weak; one that no longer applies or compiles means the patch is stale.
#
#   tools/mutants.sh [--build DIR] [--grading-dir DIR] [NN ...]    (default: every lesson)
#
# Each mutant is graded as a student's answer would be (`gpulab check all --root`), in one
# grading build folder, so only the mutated lesson is recompiled. Exit 0: every mutant
# caught; 1: one survived or is broken; 2: usage.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GPULAB_BUILD_DIR:-$root/build}"
grading=""
lessons=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --grading-dir) grading="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    [0-9][0-9]) lessons+=("$1"); shift ;;
    *) echo "mutants: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
build="$(cd "$build" && pwd)"
[ -x "$build/bin/gpulab" ] || { echo "mutants: $build/bin/gpulab is not built (./gpulab build)" >&2; exit 2; }
grading="${grading:-$build-grading-mutants}"
if [ ${#lessons[@]} -eq 0 ]; then
  for d in "$root"/tests/mutations/lesson[0-9][0-9]; do lessons+=("${d##*/lesson}"); done
fi

# The mutants' checkout: every lesson as solved, so a mutant's lesson is the only one wrong
# and the grading folder's set of lessons never changes (no reconfigure between mutants).
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mutant_root="$build/mutants"
rm -rf "$mutant_root"
mkdir -p "$mutant_root/lessons"
for dir in "$root"/solutions/[0-9][0-9]-*/; do
  name="$(basename "$dir")"
  mkdir -p "$mutant_root/lessons/$name"
  cp "$dir/main.cpp" "$mutant_root/lessons/$name/main.cpp"
done

caught=0 problems=0
for id in "${lessons[@]}"; do
  lesson_dir="$(cd "$root/solutions" && ls -d "$id"-*/ 2>/dev/null | head -1)"
  lesson_dir="${lesson_dir%/}"
  [ -n "$lesson_dir" ] || { echo "mutants: no lesson $id" >&2; exit 2; }
  patches=("$root"/tests/mutations/lesson"$id"/*.patch)
  if [ ! -e "${patches[0]}" ]; then
    echo "lesson $id: NO MUTANTS (tests/mutations/lesson$id/ has no .patch)"
    problems=$((problems + 1))
    continue
  fi
  solution="$root/solutions/$lesson_dir/main.cpp"
  target="$mutant_root/lessons/$lesson_dir/main.cpp"
  for patch_file in "${patches[@]}"; do
    name="lesson $id $(basename "$patch_file" .patch)"
    mistake="$(sed -n '1s/^# *//p' "$patch_file")"
    if ! patch -s -o "$target" "$solution" <"$patch_file" >"$work/patch.log" 2>&1; then
      echo "$name: STALE — the patch no longer applies to solutions/$lesson_dir/main.cpp"
      sed 's/^/    /' "$work/patch.log"
      problems=$((problems + 1))
      continue
    fi
    rc=0
    "$build/bin/gpulab" check all --root "$mutant_root" --build-dir "$grading" --lessons "$id" --no-placement --fail-fast \
      --timeout 120 --json "$work/grade.json" >"$work/grade.log" 2>&1 || rc=$?
    verdict="$(python3 - "$work/grade.json" <<'EOF' 2>/dev/null || echo "no-report"
import json, sys
lesson = json.load(open(sys.argv[1]))["lessons"][0]
failed = [c for c in lesson["checks"] if not c["ok"]]
first = failed[0] if failed else {"name": "", "expected": "", "observed": ""}
print(lesson["status"], "|", first["name"], "| expected:", first["expected"], "— observed:", first["observed"])
EOF
)"
    status="${verdict%% *}"
    if [ "$rc" -eq 1 ] && [ "$status" = "failed" ]; then
      caught=$((caught + 1))
      echo "$name: caught — $mistake"
      echo "    ${verdict#* | }"
    elif [ "$status" = "passed" ]; then
      problems=$((problems + 1))
      echo "$name: SURVIVED — the checks pass this wrong answer: $mistake"
    else
      problems=$((problems + 1))
      echo "$name: BROKEN — the mutant did not run to a verdict ($status, exit $rc); a mutant must compile and run"
      sed 's/^/    /' "$work/grade.log" | tail -20
    fi
  done
  cp "$solution" "$target"
done
echo "mutants: $caught caught, $problems survived or broken"
[ "$problems" -eq 0 ]
