#!/usr/bin/env python3
"""Doxygen's input filter for Markdown pages (FILTER_PATTERNS in docs/Doxyfile.in).

Doxygen 1.9 reads `text' as a quotation, so a code span holding a single quote, such as
`model.cuda('cuda:1,2')`, is cut at its first quote and leaves stray backticks on the page.
A span written with two backticks is read as code whatever it holds, and CommonMark (the
files are also read on the forge and in a terminal) gives both spellings the same meaning,
so this rewrites such spans on the way into Doxygen and leaves the sources as they are.
Headings lose their backticks (the navigation tree shows titles as plain text). Fenced
code blocks pass through untouched; the line count never changes, so Doxygen's
warnings still name the right line.

In a student edition (its root has student-edition.conf, docs/student-edition.md) the
instructor-only pages (INSTRUCTOR_PAGES) are not there: a `\ref` to one becomes its text,
a Markdown link to one its link text, so the edition's site links no missing page.

usage: markdown_filter.py FILE   (writes the filtered text to stdout)
"""
import os
import re
import sys

# The pages for instructors only, left out of the student edition (its export leaves out
# their files, docs/site/generate_pages.py does not write the answer key): page name ->
# (its file under docs/, or None when generated; what a bare \ref to it reads as).
INSTRUCTOR_PAGES = {
    "answer_key": (None, "the answer key"),
    "instructors": ("instructors.md", "the instructor's kit"),
    "lab_plans": ("lab-plans.md", "the lab plans"),
}
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def is_student_edition(root=ROOT):
    """The tree is a student edition: its class file is there (docs/student-edition.md)."""
    return os.path.isfile(os.path.join(root, "student-edition.conf"))


def without_instructor_pages(text):
    """`\ref answer_key "the key"` -> `the key`; `\ref lab_plans` -> `the lab plans` (capitalized
    where a sentence starts); `[lab-plans.md](lab-plans.md)` -> `lab-plans.md`. Lines stay lines."""
    names = "|".join(INSTRUCTOR_PAGES)

    def titled(m):
        text = m[2] if m[2] is not None else INSTRUCTOR_PAGES[m[1]][1]
        before = m.string[:m.start()]
        starts = not before.strip() or before.rstrip()[-1] in ".!?" or re.search(r"\n[ \t]*\n[ \t]*$", before)
        return text[0].upper() + text[1:] if m[2] is None and starts else text

    text = re.sub(r'\\ref[ \t]+(' + names + r')\b(?:[ \t]+"([^"\n]*)")?', titled, text)
    files = "|".join(re.escape(f) for f, _ in INSTRUCTOR_PAGES.values() if f)
    return re.sub(r"\[([^\]]*)\]\((?:\.\./)?(?:docs/)?(?:" + files + r")(?:#[^)]*)?\)", lambda m: m[1], text)


FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6} ")
BACKTICKS = re.compile(r"`+")


def rewrite_spans(paragraph):
    """Pairs backtick runs as CommonMark does (a run closes at the next run of the same
    length) and gives each single-backtick span that holds a quote double delimiters."""
    out, pos = [], 0
    runs = list(BACKTICKS.finditer(paragraph))
    i = 0
    while i < len(runs):
        opening = runs[i]
        closing = next((j for j in range(i + 1, len(runs))
                        if len(runs[j].group()) == len(opening.group())), None)
        if closing is None:
            i += 1
            continue
        end = runs[closing]
        body = paragraph[opening.end():end.start()]
        if len(opening.group()) == 1 and "'" in body:
            out.append(paragraph[pos:opening.start()])
            out.append("`` " + body + " ``" if body.startswith("`") or body.endswith("`")
                       else "``" + body + "``")
            pos = end.end()
        i = closing + 1
    out.append(paragraph[pos:])
    return "".join(out)


def filter_markdown(text):
    lines = text.split("\n")
    result, paragraph, fence = [], [], None

    def flush():
        if paragraph:
            result.extend(rewrite_spans("\n".join(paragraph)).split("\n"))
            paragraph.clear()

    for line in lines:
        marker = FENCE.match(line)
        if fence:
            result.append(line)
            if marker and marker.group(1) == fence:
                fence = None
        elif marker:
            flush()
            fence = marker.group(1)
            result.append(line)
        elif HEADING.match(line):
            # The navigation tree shows a heading's title as plain text, so a code span
            # there would read "<tt>gpulab launch</tt>": headings lose their backticks.
            flush()
            result.append(line.replace("`", ""))
        elif not line.strip():
            flush()
            result.append(line)
        else:
            paragraph.append(line)
    flush()
    return "\n".join(result)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as source:
        text = source.read()
    if is_student_edition():
        text = without_instructor_pages(text)
    sys.stdout.write(filter_markdown(text))
