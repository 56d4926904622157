#!/usr/bin/env python3
"""The built site has a page for every lesson and an entry for every claim (ctest
docs.every-lesson-and-claim-has-its-page). What must be there is read from the sources —
lessons/manifest.json and docs/article-claims.md — not from the page generator, so a lesson
or claim the generator drops is caught. The index must link every lesson page, the article
companion and the reference pages; no page links an absolute path, shows a code span
Doxygen misread, or puts markup in a navigation title. The instructor's tree's site has the
instructor's kit and its answer key; a student edition's (ROOT has student-edition.conf,
docs/student-edition.md) has no solution on its lesson pages, none of the instructor-only
pages (docs/site/markdown_filter.py's INSTRUCTOR_PAGES) and no link to one.

usage: check-site-pages.py ROOT HTML_DIR
       check-site-pages.py --break-a-copy ROOT HTML_DIR WORK   # self-test: a copy with one
           # claim's entry gone, a misread code span and a title with markup must fail
"""
import json
import os
import re
import shutil
import sys
from html import unescape

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "site"))
from markdown_filter import INSTRUCTOR_PAGES, is_student_edition  # noqa: E402

if sys.argv[1] == "--break-a-copy":
    root, source, work = sys.argv[2:5]
    html = os.path.join(work, "html")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, html)

    def edit(name, old, new):
        path = os.path.join(html, name)
        text = open(path, encoding="utf-8").read()
        if old not in text:
            sys.exit(f"check-site-pages: cannot break {name}: it lacks {old!r}")
        open(path, "w", encoding="utf-8").write(text.replace(old, new, 1))

    edit("article_companion.html", 'id="claim_A1_1"', 'id="claim_gone"')
    edit("lesson01.html", "</body>", "<p>&lsquo;model.cuda('cuda:&rsquo;)`</p></body>")
    edit("navtreedata.js", "[ ", '[ "Starting a job: <tt>gpulab launch</tt>", null, null ], [ ')
else:
    root, html = sys.argv[1], sys.argv[2]
problems = []
student_edition = is_student_edition(root)


def page(name):
    path = os.path.join(html, name)
    if not os.path.isfile(path):
        problems.append(f"{name} is missing (is the site built? ./gpulab docs)")
        return ""
    return open(path, encoding="utf-8").read()


manifest = json.load(open(os.path.join(root, "lessons/manifest.json"), encoding="utf-8"))
claims = re.findall(r"^### (A\d\.\d)\s*$", open(os.path.join(root, "docs/article-claims.md"),
                                                  encoding="utf-8").read(), re.M)
cited = {c for lesson in manifest["lessons"] for c in lesson.get("claims", [])}
if not claims:
    problems.append("docs/article-claims.md lists no claims")

index = page("index.html")
for required in ("article_companion.html", "how_cuda_picks.html", "reference.html", "lessons.html"):
    page(required)
    if f'href="{required}' not in index:
        problems.append(f"index.html does not link {required}")

for lesson in manifest["lessons"]:
    name = f"lesson{lesson['id']}.html"
    text = page(name)
    if f'href="{name}' not in index:
        problems.append(f"index.html does not link {name}")
    if text:
        title = lesson["title"].replace("`", "")
        plain = unescape(re.sub(r"<[^>]+>", "", text))
        if title not in plain:
            problems.append(f"{name} lacks the lesson's title '{title}'")
        for part in ("The exercise", "The checks", "TEST_CASE") + (() if student_edition else ("The solution",)):
            if part not in plain:
                problems.append(f"{name} lacks '{part}'")
        if student_edition and "The solution" in plain:
            problems.append(f"{name} shows a solution in the student edition")

# The instructor's kit: its pages, and the answer key's entry for every lesson; in a student
# edition only the pages a class may see, and no instructor-only page nor a link to one.
for required in ("learning_objectives.html", "rules_card.html", "class_server.html", "grading.html"):
    page(required)
instructor_only = [f"{name}.html" for name in INSTRUCTOR_PAGES] + \
    [f"md_docs_{f.replace('-', '_').replace('.md', '')}.html" for f, _ in INSTRUCTOR_PAGES.values() if f]
if student_edition:
    for name in instructor_only:
        if os.path.exists(os.path.join(html, name)):
            problems.append(f"{name} is in the student edition's site (an instructor-only page)")
    # A link (href="…", or the navigation's "…" in JavaScript) to one of their pages or files.
    linked = re.compile(r'(?<=["/])(' + "|".join(re.escape(n) for n in instructor_only) + "|" +
                        "|".join(re.escape(f) for f, _ in INSTRUCTOR_PAGES.values() if f) + r')(?=[#"])')
    for name in sorted(os.listdir(html)) if os.path.isdir(html) else []:
        if name.endswith((".html", ".js")):
            for target in linked.findall(open(os.path.join(html, name), encoding="utf-8").read()):
                problems.append(f"{name} links {target}, an instructor-only page the student edition lacks")
else:
    for required in ("instructors.html", "lab_plans.html"):
        page(required)
    answers = page("answer_key.html")
    for lesson in manifest["lessons"]:
        if answers and f'id="answers_{lesson["id"]}"' not in answers:
            problems.append(f"answer_key.html has no entry for lesson {lesson['id']}")
    for name in ("instructors.html", "answer_key.html"):
        if f'href="{name}' not in index:
            problems.append(f"index.html does not link {name}")

companion = page("article_companion.html")
for claim in sorted(set(claims) | cited):
    anchor = "claim_" + claim.replace(".", "_")
    if companion and f'id="{anchor}"' not in companion:
        problems.append(f"article_companion.html has no entry for {claim}")

# A backtick left in a page's text is a code span Doxygen misread (`a'b` reads as a
# quotation, docs/site/markdown_filter.py): the reader sees "‘model.cuda('cuda:’ + …`".
# Pages written in Markdown only; code listings and API pages show backticks legitimately.
MARKDOWN_PAGES = re.compile(r"^(index|lesson\d\d|md_.*|[a-z_]+)\.html$")
API_PAGES = re.compile(r"_8|^(class|struct|namespace|dir_|functions|globals|files|annotated|hierarchy)")
if os.path.isdir(html):
    for name in sorted(os.listdir(html)):
        if not MARKDOWN_PAGES.match(name) or API_PAGES.search(name):
            continue
        text = open(os.path.join(html, name), encoding="utf-8").read()
        text = re.sub(r'<div class="fragment">.*?</div><!-- fragment -->', "", text, flags=re.S)
        text = re.sub(r"<(pre|code|script)\b.*?</\1>", "", text, flags=re.S)
        for line in unescape(re.sub(r"<[^>]+>", "", text)).splitlines():
            if "`" in line:
                problems.append(f"{name} shows a stray backtick (a misread code span): {line.strip()[:100]}")

# The navigation tree sets its titles as text: markup in a title is shown as it is.
for name in sorted(n for n in os.listdir(html) if n.startswith("navtree") and n.endswith(".js")) \
        if os.path.isdir(html) else []:
    for title in re.findall(r'\[ *"((?:[^"\\]|\\.)*)"', open(os.path.join(html, name), encoding="utf-8").read()):
        if re.search(r"</?[a-z]+>", title):
            problems.append(f"{name}: the navigation shows markup in the title '{title}'")

# A link to an absolute path works on this machine only, never on a served copy.
if os.path.isdir(html):
    for name in sorted(os.listdir(html)):
        if name.endswith(".html"):
            for target in re.findall(r'href="((?:/|file:)[^"]*)"', open(os.path.join(html, name), encoding="utf-8").read()):
                problems.append(f"{name} links an absolute path: {target}")

for p in problems:
    print("check-site-pages:", p)
if problems:
    sys.exit(1)
print(f"check-site-pages: {len(manifest['lessons'])} lesson pages and {len(set(claims) | cited)} claims, "
      "all linked from the index" + ("; no instructor-only page (student edition)" if student_edition else
                                     "; the instructor's kit and its answer key"))
