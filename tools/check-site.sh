#!/usr/bin/env bash
# Checks the built reference site the way a reader meets it (ctest docs.site-links-and-browser):
#   1. Debian's linkchecker follows every local link and anchor, starting from every page;
#      external URLs are listed, never fetched (CI has no network).
#   2. Headless Chromium renders the index, the first lesson's page and the article
#      companion; a console error (a script error, a failed load) fails, and so does a page
#      whose navigation tree the scripts did not build. Screenshots go to SHOTS, for CI to keep.
#
#   tools/check-site.sh HTML_DIR SHOTS
#   tools/check-site.sh --break-a-copy HTML_DIR WORK   # a copy with a broken link and a script
#                                                       # error, checked: must fail (self-test)
set -uo pipefail

if [ "${1:-}" = "--break-a-copy" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --break-a-copy HTML_DIR WORK" >&2; exit 2; }
  rm -rf "$3" && mkdir -p "$3" && cp -r "$2" "$3/html" || exit 2
  sed -i 's|</body>|<a href="no-such-page.html">x</a><script>no_such_function();</script></body>|' "$3/html/index.html"
  exec "$0" "$3/html" "$3/screenshots"
fi
[ $# -eq 2 ] || { echo "usage: $0 HTML_DIR SHOTS" >&2; exit 2; }
html="$(realpath "$1")"; shots="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for tool in linkchecker chromium; do
  command -v "$tool" >/dev/null || { echo "check-site: $tool is missing: ./gpulab docs installs it" >&2; exit 2; }
done
[ -f "$html/index.html" ] || { echo "check-site: no site in $html: run ./gpulab docs" >&2; exit 2; }
mkdir -p "$shots"
failures=()
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

# 1. Links. linkchecker drops root's privileges to `nobody`, which must be able to read
# the site: a world-readable copy when run as root.
site="$html"
if [ "$(id -u)" -eq 0 ]; then
  site="$work/site"; cp -r "$html" "$site"; chmod -R a+rX "$work"
fi
cat >"$work/linkcheckerrc" <<'EOF'
[checking]
threads=2
[filtering]
checkextern=0
[AnchorCheck]
EOF
chmod a+r "$work/linkcheckerrc"
# Every page is a start: the menus are drawn by scripts, so some pages have no static link.
starts=(); for f in "$site"/*.html; do starts+=("file://$f"); done
linkchecker --no-status --no-warnings -f "$work/linkcheckerrc" "${starts[@]}" >"$work/links.txt" 2>&1
links_rc=$?
summary="$(grep -E 'links? in [0-9]+ URLs? checked' "$work/links.txt" | tail -1)"
echo "check-site: linkchecker: ${summary:-no summary}"
if [ $links_rc -ne 0 ]; then
  grep -E '^(URL|Parent URL|Result)' "$work/links.txt" | sed 's/^/  /' | head -30
  failures+=("broken links")
fi

# 2. The browser. The first lesson of the manifest stands for every lesson page.
first_lesson="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["lessons"][0]["id"])' \
  "$root/lessons/manifest.json")"
bad_pages=(); unrendered=()
for name in index "lesson$first_lesson" article_companion; do
  page="file://$html/$name.html"
  browse=(chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run
          "--user-data-dir=$work/profile-$name" --enable-logging=stderr --v=0 --virtual-time-budget=5000)
  timeout 120 "${browse[@]}" --window-size=1280,1000 "--screenshot=$shots/$name.png" "$page" \
    >/dev/null 2>"$work/$name.shot.log"
  timeout 120 "${browse[@]}" --dump-dom "$page" >"$work/$name.dom" 2>"$work/$name.dom.log"
  errors="$(grep -h 'CONSOLE' "$work/$name.shot.log" "$work/$name.dom.log" | sort -u)"
  if [ -n "$errors" ]; then
    echo "check-site: console errors on $name.html:"; echo "$errors" | sed 's/^/  /'
    bad_pages+=("$name.html")
  elif [ ! -s "$shots/$name.png" ]; then
    echo "check-site: no screenshot of $name.html"; unrendered+=("$name.html")
  elif ! grep -q 'id="nav-tree-contents"' "$work/$name.dom" || ! grep -q 'class="contents"' "$work/$name.dom"; then
    echo "check-site: $name.html rendered without its contents or navigation tree"; unrendered+=("$name.html")
  else
    echo "check-site: $name.html rendered, screenshot $shots/$name.png"
  fi
done
[ ${#bad_pages[@]} -gt 0 ] && failures+=("console errors on ${bad_pages[*]}")
[ ${#unrendered[@]} -gt 0 ] && failures+=("not rendered: ${unrendered[*]}")

if [ ${#failures[@]} -gt 0 ]; then
  (IFS=';'; echo "check-site: FAILED: ${failures[*]}" | sed 's/;/; /g')
  exit 1
fi
echo "check-site: passed"
