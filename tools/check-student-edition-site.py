#!/usr/bin/env python3
"""The student edition's site has no answer key (ctest docs.student-edition-site).

Exports the student edition (`gpulab export --student`, into a temporary folder outside
this tree, as the export requires), builds its site as its own `./gpulab docs` does
(docs/site/generate_pages.py, then Doxygen with this build's DOXYFILE, its paths of this
tree and build folder made the edition's; any Doxygen warning, such as a \\ref to a page
that is not there, fails), then checks:

  * the edition has none of the instructor-only pages' files (docs/instructors.md,
    docs/lab-plans.md) and its site none of their pages (answer_key.html, instructors.html,
    lab_plans.html) and no link to one: the edition's own tools/check-site-pages.py;
  * this tree's site (DOCS_BUILD/html, built by `./gpulab docs` before the tests) still has
    all three, linked from its index and the instructor's kit.

usage: check-student-edition-site.py GPULAB DOXYGEN DOXYFILE SOURCE DOCS_BUILD
"""
import os
import shutil
import subprocess
import sys
import tempfile

gpulab, doxygen, doxyfile, source, docs_build = sys.argv[1:6]
html = os.path.join(docs_build, "html")
work = tempfile.mkdtemp(prefix="gpulab-edition-site-")
tree, pages, edition_html = (os.path.join(work, name) for name in ("tree", "pages", "html"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "site"))
from markdown_filter import INSTRUCTOR_PAGES  # noqa: E402

problems = []


def run(argv, **kwargs):
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"check-student-edition-site: FAILED: {' '.join(argv)} exited with {done.returncode}:\n"
                 f"{done.stdout}{done.stderr}")
    return done.stdout


run([gpulab, "export", "--student", tree])
run([sys.executable, os.path.join(tree, "docs/site/generate_pages.py"), tree, pages])
# This build's Doxyfile, made the edition's: the build folder's paths first (it may lie in
# this tree), then this tree's.
text = open(doxyfile, encoding="utf-8").read()
text = text.replace(os.path.abspath(docs_build), "\0BUILD\0").replace(os.path.abspath(source), tree)
open(os.path.join(work, "Doxyfile"), "w", encoding="utf-8").write(text.replace("\0BUILD\0", work))
try:
    run([doxygen, os.path.join(work, "Doxyfile")], cwd=tree)
except SystemExit:
    log = os.path.join(work, "doxygen-warnings.log")
    print(open(log, encoding="utf-8").read() if os.path.exists(log) else "(no Doxygen log)")
    raise

for name, (file, _) in INSTRUCTOR_PAGES.items():
    if file and os.path.exists(os.path.join(tree, "docs", file)):
        problems.append(f"the edition has docs/{file}, an instructor-only page")
    if os.path.exists(os.path.join(pages, file or "answer-key.md")):
        problems.append(f"the edition's generated pages have {file or 'answer-key.md'}")
# The edition's own check, in its student-edition mode: no instructor-only page, no link to one.
print(run([sys.executable, os.path.join(tree, "tools/check-site-pages.py"), tree, edition_html]), end="")

# This tree's site keeps them.
index = os.path.join(html, "index.html")
if not os.path.isfile(index):
    problems.append(f"{index} is missing: build this tree's site first (./gpulab docs)")
else:
    for name in INSTRUCTOR_PAGES:
        if not os.path.isfile(os.path.join(html, f"{name}.html")):
            problems.append(f"this tree's site lacks {name}.html")
    if 'href="instructors.html' not in open(index, encoding="utf-8").read():
        problems.append("this tree's index does not link instructors.html")
    kit = os.path.join(html, "instructors.html")
    if os.path.isfile(kit) and 'href="answer_key.html' not in open(kit, encoding="utf-8").read():
        problems.append("this tree's instructors.html does not link answer_key.html")

for p in problems:
    print("check-student-edition-site:", p)
if problems:
    sys.exit(f"(the edition and its site: {work})")
shutil.rmtree(work, ignore_errors=True)
print(f"check-student-edition-site: the student edition's site has no {', '.join(f'{n}.html' for n in INSTRUCTOR_PAGES)} "
      "and links none; this tree's site has them")
