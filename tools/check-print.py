#!/usr/bin/env python3
"""The students' rules card prints on one page (ctest docs.rules-card-prints-on-one-page).

Headless Chromium prints the built page to PDF, as a reader's browser would with the site's
print stylesheet (docs/site/print.css), on US Letter (Chromium's default) and on A4 (a copy
of the page that asks for it with @page); each PDF must have exactly one page. Pages are
counted in the PDF itself: the page objects (/Type /Page, not /Pages) and the page tree's
/Count must agree, so a PDF this cannot read fails instead of passing.

usage: check-print.py HTML_DIR WORK
       check-print.py --break-a-copy HTML_DIR WORK   # self-test: a copy whose card holds its
           # contents twice must fail, saying it prints on 2 pages
"""
import os
import re
import shutil
import subprocess
import sys

PAGE = "rules_card.html"  # docs/rules-card.md
PAPERS = {"Letter": None, "A4": "A4"}  # None: Chromium's default paper


def fail(message, code=1):
    print("check-print:", message)
    sys.exit(code)


def pages_of(pdf):
    data = open(pdf, "rb").read()
    objects = len(re.findall(rb"/Type\s*/Page(?![A-Za-z])", data))
    counts = [int(n) for n in re.findall(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)", data)] + \
             [int(n) for n in re.findall(rb"/Count\s+(\d+)[^>]*?/Type\s*/Pages\b", data)]
    if objects == 0 or not counts or max(counts) != objects:
        fail(f"cannot count the pages of {pdf}: {objects} page objects, page tree counts {counts}", 2)
    return objects


def print_to_pdf(html_file, pdf, work):
    command = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", f"--user-data-dir={work}/profile", "--no-pdf-header-footer",
               "--virtual-time-budget=5000", f"--print-to-pdf={pdf}", "file://" + os.path.abspath(html_file)]
    try:
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=False)
    except FileNotFoundError:
        fail("chromium is missing: ./gpulab docs installs it", 2)
    except subprocess.TimeoutExpired:
        fail(f"chromium did not print {html_file} within 120 s", 2)
    if not os.path.isfile(pdf) or os.path.getsize(pdf) == 0:
        fail(f"chromium printed no PDF of {html_file}", 2)


def main(argv):
    breaking = argv[:1] == ["--break-a-copy"]
    if breaking:
        argv = argv[1:]
    if len(argv) != 2:
        fail("usage: check-print.py [--break-a-copy] HTML_DIR WORK", 2)
    html, work = argv
    if not os.path.isfile(os.path.join(html, PAGE)):
        fail(f"no {PAGE} in {html}: run ./gpulab docs", 2)
    shutil.rmtree(work, ignore_errors=True)
    site = os.path.join(work, "html")
    shutil.copytree(html, site)  # the pages for paper sizes other than the default are edited copies
    source = open(os.path.join(site, PAGE), encoding="utf-8").read()
    if 'class="rules-card"' not in source:
        fail(f"{PAGE} lacks the marker <div class=\"rules-card\"> that docs/site/print.css sets as a card", 2)
    if breaking:  # the card's text twice: a card that grew past its page
        start, end = source.find('<div class="textblock">'), source.find("</div></div><!-- contents -->")
        if start < 0 or end < start:
            fail(f"cannot break {PAGE}: no textblock in its contents", 2)
        start += len('<div class="textblock">')
        source = source[:start] + source[start:end] * 2 + source[end:]
    problems = []
    for paper, size in PAPERS.items():
        name = f"rules_card-{paper}.html"
        text = source if size is None else source.replace("</head>", f"<style>@page {{ size: {size}; }}</style></head>", 1)
        open(os.path.join(site, name), "w", encoding="utf-8").write(text)
        pdf = os.path.join(work, f"rules_card-{paper}.pdf")
        print_to_pdf(os.path.join(site, name), pdf, work)
        pages = pages_of(pdf)
        print(f"check-print: {PAGE} on {paper}: {pages} page{'s' if pages != 1 else ''} ({pdf})")
        if pages != 1:
            problems.append(f"{PAGE} prints on {pages} pages on {paper}")
    if problems:
        fail("FAILED: " + "; ".join(problems) + " (docs/rules-card.md must fit one page)")
    print("check-print: passed")


if __name__ == "__main__":
    main(sys.argv[1:])
