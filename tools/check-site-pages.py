#!/usr/bin/env python3
"""The built site has a page for every lesson and an entry for every claim (ctest
docs.every-lesson-and-claim-has-its-page). What must be there is read from the sources —
lessons/manifest.json and docs/article-claims.md — not from the page generator, so a lesson
or claim the generator drops is caught. The index must link every lesson page, the article
companion and the reference pages; no page links an absolute path.

usage: check-site-pages.py ROOT HTML_DIR
"""
import json
import os
import re
import sys
from html import unescape

root, html = sys.argv[1], sys.argv[2]
problems = []


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
        for part in ("The exercise", "The solution", "The checks", "TEST_CASE"):
            if part not in plain:
                problems.append(f"{name} lacks '{part}'")

companion = page("article_companion.html")
for claim in sorted(set(claims) | cited):
    anchor = "claim_" + claim.replace(".", "_")
    if companion and f'id="{anchor}"' not in companion:
        problems.append(f"article_companion.html has no entry for {claim}")

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
      "all linked from the index")
