#!/usr/bin/env python3
"""deps.rule-fails-on-a-wrong-way-include: proves tools/check-dependencies.py can fail.

Copies src/, include/ and cli/ of the source tree into a temporary folder, plants
wrong-way includes, each in a new file of its part after a right-way one, and expects the
check to exit 1 naming each, with its rule (and not the right-way ones). Then it takes
report out of the grading row of the copy's src/README.md table (the rule's one source) and
expects grading's right-way include of report/verdict.h to be named, and removes the table
and expects exit 2:

  src/model/planted.cpp    #include "workspace/progress.h"                     (model may use no module)
  src/grading/planted.cpp  #include "backend/sim/runtime/driver.h"         (only backend/sim may)
  cli/planted.cpp          #include "../src/backend/sim/aten/HostAlias.h"  (the same, by relative path)

    tests/support/wrong_way_include.py SOURCE_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

PLANTED = [
    # (new file, a right-way include, the wrong-way include, what the message must say)
    ("src/model/planted.cpp", "model/node.h", "workspace/progress.h", "model may not include workspace"),
    ("src/grading/planted.cpp", "report/verdict.h", "backend/sim/runtime/driver.h",
     "only src/backend/sim includes src/backend/sim"),
    # a relative path reaches the simulator's insides too
    ("cli/planted.cpp", "commands.h", "../src/backend/sim/aten/HostAlias.h",
     "only src/backend/sim includes src/backend/sim"),
]


def plant(path, right, wrong):
    """Writes `path` with the right-way include on line 2 and the wrong-way one on line 3;
    returns the wrong one's line number."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"// planted by {os.path.basename(__file__)}\n"
                f'#include "{right}"\n'
                f'#include "{wrong}"\n')
    return 3


def main():
    source = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
    script = os.path.join(source, "tools", "check-dependencies.py")
    with tempfile.TemporaryDirectory(prefix="gpulab-deps-") as copy:
        for top in ("src", "include", "cli"):
            shutil.copytree(os.path.join(source, top), os.path.join(copy, top))
        # Whether the tree itself passes is deps.check-dependencies' question; here only the
        # planted includes count.
        clean = subprocess.run([sys.executable, script, "--root", copy], capture_output=True, text=True)
        if clean.returncode not in (0, 1):
            print(clean.stdout + clean.stderr)
            print(f"FAIL: the check exited {clean.returncode} on the unchanged copy")
            return 1
        expected = []
        for rel, right, wrong, rule in PLANTED:
            line = plant(os.path.join(copy, rel), right, wrong)
            expected.append((f'{rel}:{line}: #include "{wrong}"', rule))
        run = subprocess.run([sys.executable, script, "--root", copy], capture_output=True, text=True)
        print(run.stdout + run.stderr, end="")
        failed = False
        if run.returncode != 1:
            print(f"FAIL: the check exited {run.returncode} on the planted includes, not 1")
            failed = True
        for where, rule in expected:
            if any(where in line for line in clean.stdout.splitlines()):
                print(f"FAIL: the unchanged copy already names {where}")
                failed = True
            if not any(where in line and rule in line for line in run.stdout.splitlines()):
                print(f"FAIL: no line names {where} with the rule '{rule}'")
                failed = True
        for rel, right, _, _ in PLANTED:
            if f'{rel}:2:' in run.stdout:
                print(f'FAIL: the right-way #include "{right}" in {rel} is named too')
                failed = True
        # The rule is src/README.md's table and nothing else: a grading row that no longer
        # lets grading use report makes the right-way include of report/verdict.h wrong ...
        table = os.path.join(copy, "src", "README.md")
        with open(table, encoding="utf-8") as f:
            text = f.read()
        grading_row = next(line for line in text.splitlines() if line.startswith("| grading |"))
        with open(table, "w", encoding="utf-8") as f:
            f.write(text.replace(grading_row, grading_row.replace(", report,", ",")))
        narrowed = subprocess.run([sys.executable, script, "--root", copy], capture_output=True, text=True)
        if "src/grading/planted.cpp:2: #include \"report/verdict.h\"" not in narrowed.stdout:
            print(narrowed.stdout + narrowed.stderr)
            print("FAIL: the check did not follow the table's grading row (grading may no longer use report)")
            failed = True
        # ... and a tree without the table is refused, not passed.
        with open(table, "w", encoding="utf-8") as f:
            f.write("# src/\n")
        missing = subprocess.run([sys.executable, script, "--root", copy], capture_output=True, text=True)
        if missing.returncode != 2 or "no layering table" not in missing.stderr:
            print(missing.stdout + missing.stderr)
            print(f"FAIL: without the table the check exited {missing.returncode}, not 2 naming the missing table")
            failed = True
        if failed:
            return 1
    print(f"OK: the check fails on the {len(PLANTED)} planted includes, naming file:line and the rule of each; "
          "it follows src/README.md's table and refuses a tree without one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
