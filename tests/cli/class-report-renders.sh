#!/usr/bin/env bash
# The class report's HTML page (gpulab class report --html, docs/class.md) in headless
# Chromium, the way tools/check-site.sh checks the site: a console error (a script error, a
# failed load) fails, and so does a page rendered without its charts. The class: two
# students' progress files written here, the report without running the lessons (--no-truth).
#
#   tests/cli/class-report-renders.sh GPULAB SHOTS
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 GPULAB SHOTS" >&2; exit 2; }
gpulab="$1"; shots="$2"
command -v chromium >/dev/null || { echo "class-report-renders: chromium is missing: ./gpulab docs installs it" >&2; exit 2; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mkdir -p "$shots" "$work/ann" "$work/ben"
printf 'lesson 01 passed predictions 2/2 explained 2/2\nanswers 01 predicted 8 0 explained d b\n' >"$work/ann/.gpulab-progress"
printf 'lesson 01 started predictions 0/2\nanswers 01 predicted <b>4</b> 1 explained a -\nnot progress\n' >"$work/ben/.gpulab-progress"
GPULAB_STATE_DIR="$work/state" "$gpulab" class report --no-truth --html "$work/report.html" "$work/ann" "$work/ben" \
  >"$work/report.txt" || { echo "class-report-renders: gpulab class report failed:"; cat "$work/report.txt"; exit 1; }

page="file://$work/report.html"
browse=(chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run
        "--user-data-dir=$work/profile" --enable-logging=stderr --v=0 --virtual-time-budget=5000)
timeout 120 "${browse[@]}" --window-size=1000,1400 "--screenshot=$shots/class-report.png" "$page" >/dev/null 2>"$work/shot.log"
timeout 120 "${browse[@]}" --dump-dom "$page" >"$work/dom.html" 2>"$work/dom.log"
errors="$(grep -h 'CONSOLE' "$work/shot.log" "$work/dom.log" | sort -u)"
if [ -n "$errors" ]; then
  echo "class-report-renders: console errors:"; echo "$errors" | sed 's/^/  /'; exit 1
fi
[ -s "$shots/class-report.png" ] || { echo "class-report-renders: no screenshot"; exit 1; }
# Two charts per question of lesson 01 (a prediction and its explain question, twice),
# the typed <b> shown as text, never as markup.
charts="$(grep -o '<svg' "$work/dom.html" | wc -l)"
[ "$charts" -eq 4 ] || { echo "class-report-renders: $charts charts in the page, expected 4"; exit 1; }
grep -q '&lt;b&gt;4&lt;/b&gt;' "$work/dom.html" || { echo "class-report-renders: a typed answer was not escaped"; exit 1; }
grep -q '<b>4</b>' "$work/dom.html" && { echo "class-report-renders: a typed answer became markup"; exit 1; }
echo "class-report-renders: rendered with 4 charts, screenshot $shots/class-report.png"
