#!/usr/bin/env python3
"""Writes the reference site's generated pages into OUT (run by the `docs` target).

Nothing here is per lesson or per claim: the lesson pages come from lessons/manifest.json
and each lesson's README.md, exercise, solution and checks; the article companion from
docs/article-claims.md (one entry per claim) and the manifest's "claims" arrays. So the
site has no second copy of anything, and a changed lesson or claim shows on the next build.

In a student edition (docs/student-edition.md) the site is the students': no solution on
the lesson pages, no answer key, and the index's lines marked @INSTRUCTORS@ give way to
those marked @STUDENTS@ (docs/site/markdown_filter.py unlinks the instructor-only pages).

usage: generate_pages.py ROOT OUT
"""
import json
import os
import re
import sys

from markdown_filter import is_student_edition

VERDICTS = {  # docs/article-claims.md's verdict words, as the companion shows them
    "true": "true",
    "false": "false",
    "pytorch-1.4": "true only for PyTorch 1.4",
    "profile": "depends on the profile",
}
FIELDS = ("article", "verdict", "truth", "see", "sources")
BEYOND = "## Beyond the article"  # docs/article-claims.md's last section: no claims, one note per lesson


def fail(message):
    sys.exit("generate_pages.py: " + message)


def anchor(claim_id):  # Doxygen anchors take no dots: A1.1 -> claim_A1_1
    return "claim_" + claim_id.replace(".", "_")


def read_claims(path):
    """docs/article-claims.md: '## A1 — title' groups, '### A1.1' entries, '- **field:**'."""
    groups, claim, field = [], None, None
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if line.startswith(BEYOND):  # lessons past the article: prose, shown as written
            break
        if m := re.match(r"^## (A\d) — (.*)$", line):
            groups.append({"id": m[1], "title": m[2], "claims": []})
            claim = field = None
        elif line.startswith("## "):  # a section of no claims ("## Beyond the article") ends the last one
            claim = field = None
        elif m := re.match(r"^### (A\d\.\d)\s*$", line):
            if not groups or not m[1].startswith(groups[-1]["id"] + "."):
                fail(f"{path}:{number}: {m[1]} is outside its group")
            claim = {"id": m[1]}
            groups[-1]["claims"].append(claim)
            field = None
        elif claim is not None and (m := re.match(r"^- \*\*(\w+):\*\* (.*)$", line)):
            field = m[1]
            if field not in FIELDS:
                fail(f"{path}:{number}: unknown field '{field}' (known: {', '.join(FIELDS)})")
            claim[field] = m[2]
        elif claim is not None and field and line.startswith("  ") and line.strip():
            claim[field] += " " + line.strip()
        elif line.strip() and claim is not None:
            field = None
    claims = [c for g in groups for c in g["claims"]]
    for c in claims:
        for f in ("article", "verdict", "truth", "sources"):
            if f not in c:
                fail(f"{path}: {c['id']} has no '{f}'")
        if c["verdict"] not in VERDICTS:
            fail(f"{path}: {c['id']}: verdict '{c['verdict']}' is none of {', '.join(VERDICTS)}")
    if not claims:
        fail(f"{path}: no claims")
    return groups


def lesson_dir(lesson):
    return f"{lesson['id']}-{lesson['slug']}"


def readme_body(root, lesson, name="README.md"):
    """The lesson's README (or EXPLAIN.md) without its title line; links to other Markdown
    files made relative to the repository, so Doxygen resolves them from the generated page too."""
    directory = os.path.join("lessons", lesson_dir(lesson))
    text = open(os.path.join(root, directory, name), encoding="utf-8").read()
    text = re.sub(r"\A# .*\n", "", text)

    def rebase(m):
        target = m[1]
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            return m[0]
        path, _, fragment = target.partition("#")
        path = os.path.normpath(os.path.join(root, directory, path))
        if path.endswith(".md"):  # Doxygen 1.9 resolves a page's file, not file#anchor
            fragment = ""
        return f"]({path}{'#' + fragment if fragment else ''})"

    return re.sub(r"\]\(([^)]*)\)", rebase, text)


def explain_body(root, lesson):
    """EXPLAIN.md under the page's "Explained" heading: its sections one level down."""
    body = readme_body(root, lesson, "EXPLAIN.md")
    body = re.sub(r"^Read this after[^\n]*\n", "", body, count=1, flags=re.M)
    return re.sub(r"^## ", "### ", body, flags=re.M)


def student_edition_tree(root):
    """A student edition (docs/student-edition.md): its class file, or no solutions/."""
    return is_student_edition(root) or not os.path.isdir(os.path.join(root, "solutions"))


def lesson_pages(root, manifest):
    # A student edition has no solutions/: its pages show none.
    student_edition = student_edition_tree(root)
    pages = ["# Lessons {#lessons}\n\nOne page per lesson, in the order of "
             "lessons/manifest.json: the lesson (its README), the exercise, "
             + ("" if student_edition else "the solution ") + "and "
             "the checks, each included from its source.\n"]
    for lesson in manifest["lessons"]:
        claims = ", ".join(f"\\ref {anchor(c)} \"{c}\"" for c in lesson.get("claims", []))
        pages.append(f"- \\subpage lesson{lesson['id']} — " + (f"claims {claims}" if claims else "beyond the article") + "\n")
    for lesson in manifest["lessons"]:
        d, i = lesson_dir(lesson), lesson["id"]
        checks = f"tests/lessons/lesson{i}_checks.cpp"
        solution = f"solutions/{d}/main.cpp"
        for path in (f"lessons/{d}/main.cpp", checks) + (() if student_edition else (solution,)):
            if not os.path.isfile(os.path.join(root, path)):
                fail(f"lesson {i}: {path} is missing")
        title = lesson["title"].replace("`", "")
        solution_part = "" if student_edition else f"## The solution\n\n{solution}:\n\n\\include {solution}\n\n"
        pages.append(
            f"\n\\page lesson{i} Lesson {i}: {title}\n\n"
            f"`./gpulab run {i}` runs it, `./gpulab check {i}` checks it "
            f"(lessons/{d}/README.md).\n\n{readme_body(root, lesson)}\n"
            f"## Explained\n\nRead this after you predicted and ran the lesson "
            f"(lessons/{d}/EXPLAIN.md, `./gpulab explain {i}`).\n\n"
            f"{explain_body(root, lesson)}\n"
            f"## The exercise\n\nlessons/{d}/main.cpp, with its `TODO`s:\n\n\\include lessons/{d}/main.cpp\n\n"
            f"{solution_part}"
            f"## The checks\n\n{checks}, what `./gpulab check {i}` runs:\n\n\\include {checks}\n")
    return "".join(pages)


def companion_page(root, manifest, groups):
    known = {c["id"] for g in groups for c in g["claims"]}
    lessons_of = {}
    for lesson in manifest["lessons"]:
        for c in lesson.get("claims", []):
            if c not in known:
                fail(f"lesson {lesson['id']} cites {c}, which docs/article-claims.md lacks")
            lessons_of.setdefault(c, []).append(lesson["id"])
    ids = {lesson["id"] for lesson in manifest["lessons"]}
    out = ["# The article companion {#article_companion}\n\n"
           "The tutorial starts from a popular Chinese article, \"Specifying GPUs in PyTorch\", "
           "written against PyTorch 1.4. Every claim it makes is below: the article's words "
           "(translated), the verdict today, the lesson that demonstrates it and the sources. "
           "Verdicts: **true**; **false**; **true only for PyTorch 1.4**; **depends on the "
           "profile** (the PyTorch build: release and CUDA version, \\ref profiles \"Profiles\"). "
           "The rules behind them: \\ref how_cuda_picks.\n\n"
           "Generated from docs/article-claims.md and the \"claims\" of lessons/manifest.json.\n"]
    for g in groups:
        out.append(f"\n## {g['id']} — {g['title']}\n")
        for c in g["claims"]:
            demo = lessons_of.get(c["id"], [])
            see = [s.strip() for s in c.get("see", "").split(",") if s.strip()]
            for s in see:
                if s not in ids:
                    fail(f"{c['id']}: 'see' names lesson {s}, which the manifest lacks")
            links = ", ".join(f"\\ref lesson{i} \"lesson {i}\"" for i in demo)
            if not links:
                links = ("no lesson of its own; see " + ", ".join(
                    f"\\ref lesson{i} \"lesson {i}\"" for i in see)) if see else "none"
            out.append(
                f"\n\\anchor {anchor(c['id'])}\n### {c['id']}\n\n"
                f"- **The article:** {c['article']}\n"
                f"- **Verdict:** **{VERDICTS[c['verdict']]}**\n"
                f"- **What is true:** {c['truth']}\n"
                f"- **Demonstrated by:** {links}\n"
                f"- **Sources:** {c['sources']}\n")
    text = open(os.path.join(root, "docs/article-claims.md"), encoding="utf-8").read()
    if BEYOND in text:
        out.append("\n" + text[text.index(BEYOND):])
    return "".join(out)


def answer_key_page(manifest):
    """Every lesson's predictions with their explanation (which gives the answer) and the
    right choice of each "why?" question, from the manifest: the instructors' answer key,
    kept off the lesson pages' top and out of the learning objectives (docs/instructors.md)."""
    out = ["# Answer key: the lessons' predictions {#answer_key}\n\n"
           "Part of the \\ref instructors \"instructor's kit\", for instructors: **it gives every "
           "prediction away.** Generated from lessons/manifest.json: for each question the tutorial "
           "asks before a lesson runs, the explanation it shows afterwards (which states the "
           "answer on the default build and says where other builds differ), and the right "
           "choice of the question that asks why. The tutorial itself never reads an answer from "
           "here: it scores predictions against what the run shows. Each lesson's reference "
           "solution is on its page, and `./gpulab explain NN` prints its whole explanation.\n"]
    for lesson in manifest["lessons"]:
        i, title = lesson["id"], lesson["title"].replace("`", "")
        out.append(f"\n## Lesson {i}: {title} {{#answers_{i}}}\n\n"
                   f"\\ref lesson{i} \"The lesson\" (its explanation, exercise and solution).\n")
        for n, p in enumerate(lesson["predictions"], 1):
            explain = p["explain"]
            out.append(f"\n{n}. **{p['question']}**\n"
                       f"   - The answer, explained: {p['why']}\n"
                       f"   - Why? {explain['question']} Right choice: "
                       f"*{explain['choices'][explain['answer']]}*\n")
    return "".join(out)


def index_page(root, manifest):
    template = open(os.path.join(root, "docs/site/index.md"), encoding="utf-8").read()
    rows = "".join(f"| {l['id']} | \\ref lesson{l['id']} \"{l['title'].replace('`', '')}\" | "
                   f"{', '.join(l.get('claims', [])) or 'beyond the article'} |\n" for l in manifest["lessons"])
    if "@LESSONS@" not in template:
        fail("docs/site/index.md has no @LESSONS@")
    if "@INSTRUCTORS@" not in template or "@STUDENTS@" not in template:
        fail("docs/site/index.md has no @INSTRUCTORS@ or no @STUDENTS@ lines")
    keep, drop = ("@STUDENTS@", "@INSTRUCTORS@") if student_edition_tree(root) else ("@INSTRUCTORS@", "@STUDENTS@")
    template = "".join(line[len(keep):] if line.startswith(keep) else line
                       for line in template.splitlines(keepends=True) if not line.startswith(drop))
    return template.replace("@LESSONS@", "| NN | lesson | article claims |\n|---|---|---|\n" + rows)


def main():
    if len(sys.argv) != 3:
        fail("usage: generate_pages.py ROOT OUT")
    root, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    manifest = json.load(open(os.path.join(root, "lessons/manifest.json"), encoding="utf-8"))
    groups = read_claims(os.path.join(root, "docs/article-claims.md"))
    os.makedirs(out, exist_ok=True)
    pages = {"index.md": index_page(root, manifest),
             "lessons.md": lesson_pages(root, manifest),
             "article-companion.md": companion_page(root, manifest, groups)}
    if not student_edition_tree(root):  # the answer key is the instructors' (docs/instructors.md)
        pages["answer-key.md"] = answer_key_page(manifest)
    for name, text in pages.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(text)

if __name__ == "__main__":
    main()
