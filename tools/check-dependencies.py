#!/usr/bin/env python3
"""Checks which part of gpulab may include which: the module layering of src/README.md.

Scans every #include "..." line (and every <...> one naming a file of src/ or include/) of
src/**, include/** and cli/**, and exits 1, naming file:line and the rule broken, when an
include goes the wrong way:

  * nothing under src/ or include/ includes a header of cli/;
  * a public header (include/gpulab/) includes only the other public headers;
  * only src/backend/sim includes src/backend/sim, only src/backend/cuda src/backend/cuda;
  * a module includes only the modules its row of src/README.md's layering table may use
    (one way: no cycles); that table is the rule's one source, which CMake reads too;
  * the torch-free modules include no public header that needs LibTorch.

    tools/check-dependencies.py [--root DIR] [--verbose]

A quoted include resolves, as the compiler looks, first against the including file's
folder, then against src/ and include/ (the include roots); one found nowhere that way but
naming a header of a private part ("commands.h", "driver.h") counts as that header.
Includes that resolve to nothing in the tree (system headers, LibTorch's "c10/...") are
not checked.
CTest runs it as deps.check-dependencies; deps.rule-fails-on-a-wrong-way-include proves
it fails on a planted wrong-way include (tests/CMakeLists.txt).
"""
import argparse
import os
import re
import sys

# ---------------------------------------------------------------------------------------
# The rule: src/README.md's layering table, read from the checked tree (read_table below).
# It gives the parts (a file belongs to the part whose listed place holds it: a listed file
# first, then the longest folder; src/backend/*.h and src/backend/physical_index.cpp are
# "backend", the hook every other part may be allowed to use) and which parts each may use.
TABLE = "src/README.md"
TABLE_START, TABLE_END = "<!-- layering:", "<!-- end of layering -->"
PARTS = {}    # part -> [folder or file, root-relative], filled by read_table
MAY_USE = {}  # part -> [parts it may include, besides itself]

# The public lesson API, include/gpulab: what lesson and lab programs include and what
# `cmake --install` installs (cmake/GpulabPackage.cmake). Nothing else lives in include/.
PUBLIC_HEADERS = [
    "include/gpulab/lesson.h", "include/gpulab/cuda.h", "include/gpulab/observe.h",
    "include/gpulab/data_parallel.h", "include/gpulab/distributed.h", "include/gpulab/warnings.h",
    "include/gpulab/threads.h", "include/gpulab/processes.h",
]

# Every part may include the public headers (include/gpulab), except as TORCH_FREE says.

# The torch-free modules (static libraries, no LibTorch) and the public headers that need
# LibTorch, which they so must not include. observe.h and warnings.h are torch-free.
TORCH_FREE = ["model", "state", "proc", "report", "course", "grading", "view", "workspace", "tutor", "classroom"]
TORCH_PUBLIC_HEADERS = ["include/gpulab/lesson.h", "include/gpulab/data_parallel.h",
                        "include/gpulab/distributed.h", "include/gpulab/cuda.h", "include/gpulab/threads.h",
                        "include/gpulab/processes.h"]

# Private parts: only files of the part itself may include them, whatever MAY_USE says.
PRIVATE = ["backend/sim", "backend/cuda", "cli"]

INCLUDE_ROOTS = ["src", "include"]  # -I folders every target has
SCANNED = ["src", "include", "cli"]
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cxx", ".inl")
# ---------------------------------------------------------------------------------------

INCLUDE_LINE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<([^>]+)>)')


class TableError(Exception):
    pass


def read_table(root):
    """PARTS and MAY_USE from the layering table of `root`'s src/README.md: between its
    markers, rows of `| part | where | what it does | may use |`."""
    path = os.path.join(root, TABLE)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise TableError(f"cannot read {TABLE}: {e.strerror}")
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if start < 0 or end < start:
        raise TableError(f"{TABLE} has no layering table (between '{TABLE_START}' and '{TABLE_END}')")
    parts, may_use = {}, {}
    for line in text[start:end].splitlines()[1:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("part", "") or set(cells[0]) <= set("-"):
            continue
        name, where, _, uses = cells
        places = re.findall(r"`([^`]+)`", where)
        if not places:
            raise TableError(f"{TABLE}: the row of {name!r} names no place (`folder/` or `file`)")
        if name in parts:
            raise TableError(f"{TABLE}: the part {name!r} has two rows")
        parts[name] = [p.rstrip("/") for p in places]
        may_use[name] = [] if uses in ("—", "-", "") else [u.strip() for u in uses.split(",")]
    if not parts:
        raise TableError(f"{TABLE}: the layering table has no rows")
    return parts, may_use


def part_of(rel):
    """The part a root-relative path belongs to, or None (outside the parts): the part that
    lists the file itself, else the one with the longest folder holding it."""
    rel = rel.replace(os.sep, "/")
    best, best_len = None, -1
    for part, places in PARTS.items():
        for place in places:
            if rel == place:
                return part
            if rel.startswith(place + "/") and len(place) > best_len:
                best, best_len = part, len(place)
    return best


def resolve(root, including_rel, target, quoted=True):
    """The root-relative path an #include "target" (or <target>) in `including_rel` names,
    or None: a quoted include looks in the including file's folder first."""
    candidates = [os.path.join(os.path.dirname(including_rel), target)] if quoted else []
    candidates += [os.path.join(r, target) for r in INCLUDE_ROOTS]
    for candidate in candidates:
        normal = os.path.normpath(candidate)
        if normal.startswith(".."):
            continue
        if os.path.isfile(os.path.join(root, normal)):
            return normal.replace(os.sep, "/")
    if quoted:
        # Not found the compiler's way: a private header reached through an extra -I
        # ("commands.h", "driver.h", "HostAlias.h") counts as that header.
        for rel in private_headers(root):
            if rel.endswith("/" + target.replace(os.sep, "/")):
                return rel
    return None


_private_headers = {}


def private_headers(root):
    """The files of the PRIVATE parts, root-relative (cached per root)."""
    if root not in _private_headers:
        _private_headers[root] = [rel for rel in scanned_files(root) if part_of(rel) in PRIVATE]
    return _private_headers[root]


def check_include(root, rel, line_no, target, quoted=True):
    """The rule an include breaks, as a message, or None."""
    resolved = resolve(root, rel, target, quoted)
    if resolved is None:
        return None
    src, dst = part_of(rel), part_of(resolved)
    if src is None or src == dst:
        return None
    spelled = f'"{target}"' if quoted else f"<{target}>"
    where = f"{rel}:{line_no}: #include {spelled} ({resolved})"
    if dst is None:
        return f"{where}: {src} includes a file outside the parts of src/, the public headers and cli/"
    if dst == "cli":
        return f"{where}: only cli/ includes cli/ headers ({src} must not)"
    if src == "public":
        return f"{where}: a public header (include/gpulab) includes only the other public headers, not {dst}"
    if dst in PRIVATE:
        return f"{where}: only src/{dst} includes src/{dst} headers ({src} must not; use the backend hook, src/backend/*.h)"
    if dst == "public":
        if src in TORCH_FREE and resolved in TORCH_PUBLIC_HEADERS:
            return f"{where}: {src} is torch-free and must not include {resolved}, which needs LibTorch"
        return None
    if dst not in MAY_USE.get(src, []):
        allowed = ", ".join(MAY_USE.get(src, [])) or "no other module"
        return f"{where}: {src} may not include {dst} (it may use: {allowed})"
    return None


def scanned_files(root):
    for top in SCANNED:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")


def check_tree(root, verbose=False):
    problems, includes, files = [], 0, 0
    for rel in scanned_files(root):
        files += 1
        if rel.startswith("include/") and rel not in PUBLIC_HEADERS:
            problems.append(f"{rel}:1: include/ holds only the public headers (PUBLIC_HEADERS): "
                            "move it under src/")
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for line_no, line in enumerate(f, 1):
                match = INCLUDE_LINE.match(line)
                if not match:
                    continue
                includes += 1
                quoted = match.group(1) is not None
                problem = check_include(root, rel, line_no, match.group(1) if quoted else match.group(2), quoted)
                if problem:
                    problems.append(problem)
    if verbose:
        print(f"check-dependencies: {files} files, {includes} includes", file=sys.stderr)
    return problems


def self_check():
    """The table itself: known parts, and one way (no part reachable from itself)."""
    errors = [f"{TABLE} has no row for {part!r}, which this check knows" for part in TORCH_FREE + PRIVATE
              if part not in PARTS]
    for part, uses in MAY_USE.items():
        for used in uses:
            if used not in PARTS:
                errors.append(f"MAY_USE[{part!r}] names the unknown part {used!r}")
    for part in MAY_USE:
        seen, todo = set(), list(MAY_USE[part])
        while todo:
            used = todo.pop()
            if used == part:
                errors.append(f"MAY_USE has a cycle through {part!r}")
                break
            if used not in seen:
                seen.add(used)
                todo.extend(MAY_USE.get(used, []))
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.dirname(here), help="the source tree (default: this checkout)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    for top in SCANNED:
        if not os.path.isdir(os.path.join(root, top)):
            print(f"check-dependencies: {root} has no {top}/", file=sys.stderr)
            return 2
    try:
        parts, may_use = read_table(root)
    except TableError as e:
        print(f"check-dependencies: {e}", file=sys.stderr)
        return 2
    PARTS.update(parts)
    MAY_USE.update(may_use)
    errors = self_check()
    if errors:
        for e in errors:
            print(f"check-dependencies: the layering table is wrong: {e}", file=sys.stderr)
        return 2
    problems = check_tree(root, args.verbose)
    for p in problems:
        print(p)
    if problems:
        print(f"check-dependencies: {len(problems)} include(s) go the wrong way (the rule: "
              "src/README.md's layering table)", file=sys.stderr)
        return 1
    print("check-dependencies: every include goes the allowed way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
