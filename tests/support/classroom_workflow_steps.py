#!/usr/bin/env python3
"""classroom.workflow-caches-and-verifies: what GitHub Classroom's workflow does before the
lessons' tests (classroom/autograding.yml, made by tools/classroom-workflow.py).

- Its steps, in order: the whole history checked out; the grading code verified; LibTorch
  and the compiler cache restored by actions/cache, keyed on the pinned torch version (the
  one tools/fetch-libtorch2.sh fetches) and the OS; `./gpulab setup`; `./gpulab build`;
  then one grader per lesson.
- The verification step itself, run on scratch repositories: a student's commit to their
  lesson's main.cpp passes; one that changes a lesson's checks, gpulab or the manifest
  fails and names the file.

  classroom_workflow_steps.py SOURCE_DIR
"""
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
WORKFLOW = ROOT / "classroom" / "autograding.yml"


def fail(message):
    sys.exit(f"classroom-workflow-steps: {message}")


def steps_of(text):
    """The job's steps as dicts (PyYAML); without it, a reading of this generator's layout."""
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is not None:
        document = yaml.safe_load(text)
        return document["jobs"]["run-autograding-tests"]["steps"]
    steps, step, block = [], None, None
    for line in text.splitlines():
        if line.startswith("    - "):
            step = {}
            steps.append(step)
            line = "      " + line[6:]
        if step is None:
            continue
        if block is not None and (line.startswith("        ") or not line.strip()):
            step[block] += line[8:] + "\n"
            continue
        block = None
        match = re.match(r"^      (\w[\w-]*): ?(.*)$", line)
        if match:
            key, value = match.groups()
            if value == "|":
                block = key
                step[key] = ""
            elif value:
                step[key] = value.strip('"')
            else:
                step[key] = {}
            continue
        match = re.match(r"^        ([\w-]+): (.*)$", line)
        if match and isinstance(step.get("with"), dict):
            step["with"][match.group(1)] = match.group(2).split("  #")[0].strip('"')
    return steps


def index_of(steps, what, test):
    for i, step in enumerate(steps):
        if test(step):
            return i
    fail(f"no step that {what}")


def torch_version():
    text = (ROOT / "tools" / "fetch-libtorch2.sh").read_text()
    return re.search(r'TORCH_VERSION="\$\{GPULAB_TORCH_VERSION:-([0-9.]+)\}"', text).group(1)


def run_verification(script):
    """The verification step on scratch repositories: (commit, expected to pass, file named)."""
    cases = [
        ("lessons/01-meet-the-node/main.cpp", True),
        (".gpulab-progress", True),
        ("tests/lessons/lesson01_checks.cpp", False),
        ("gpulab", False),
        ("lessons/manifest.json", False),
    ]
    for path, allowed in cases:
        with tempfile.TemporaryDirectory() as tmp:
            repo = pathlib.Path(tmp)
            git = ["git", "-C", tmp, "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                   "-c", "commit.gpgsign=false"]
            subprocess.run(["git", "init", "-q", tmp], check=True)
            for name in ("lessons/01-meet-the-node/main.cpp", "tests/lessons/lesson01_checks.cpp", "gpulab",
                         "lessons/manifest.json", "README.md"):
                (repo / name).parent.mkdir(parents=True, exist_ok=True)
                (repo / name).write_text("as the template has it\n")
            subprocess.run(git + ["add", "-A"], check=True)
            subprocess.run(git + ["commit", "-q", "-m", "Initial commit"], check=True)
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text("the student's\n")
            subprocess.run(git + ["add", "-A"], check=True)
            subprocess.run(git + ["commit", "-q", "-m", "mine"], check=True)
            run = subprocess.run(["bash", "-e", "-c", script], cwd=tmp, capture_output=True, text=True)
            if allowed and run.returncode != 0:
                fail(f"the verification refused a change to {path}, which is the student's:\n{run.stdout}{run.stderr}")
            if not allowed and (run.returncode == 0 or path not in run.stdout):
                fail(f"the verification let a change to {path} pass (exit {run.returncode}):\n{run.stdout}{run.stderr}")
    return len(cases)


def main():
    steps = steps_of(WORKFLOW.read_text())
    torch = torch_version()
    uses = lambda step: str(step.get("uses", ""))
    checkout = index_of(steps, "checks out", lambda s: uses(s).startswith("actions/checkout@"))
    if str((steps[checkout].get("with") or {}).get("fetch-depth")) != "0":
        fail("the checkout is not the whole history (fetch-depth: 0): the verification needs the first commit")
    verify = index_of(steps, "verifies the grading code", lambda s: "git rev-list --max-parents=0" in str(s.get("run", "")))
    libtorch = index_of(steps, "caches LibTorch", lambda s: uses(s).startswith("actions/cache@")
                        and str(s["with"]["path"]) == f"~/.cache/gpulab/libtorch-{torch}")
    ccache = index_of(steps, "caches ccache's folder", lambda s: uses(s).startswith("actions/cache@")
                      and str(s["with"]["path"]) == "~/.cache/ccache")
    for i in (libtorch, ccache):
        key = str(steps[i]["with"]["key"])
        if torch not in key or "runner.os" not in key:
            fail(f"the cache key {key!r} does not name torch {torch} and the OS")
    setup = index_of(steps, "runs ./gpulab setup", lambda s: "./gpulab setup" in str(s.get("run", "")))
    if "CCACHE_DIR=$HOME/.cache/ccache" not in str(steps[setup].get("run", "")):
        fail("ccache's folder is not the one cached")
    build = index_of(steps, "runs ./gpulab build", lambda s: "./gpulab build" in str(s.get("run", "")))
    first_test = index_of(steps, "grades a lesson", lambda s: "autograding-command-grader" in uses(s))
    order = [checkout, verify, libtorch, ccache, setup, build, first_test]
    if order != sorted(order):
        fail(f"the steps are not in the order checkout, verify, caches, setup, build, tests: {order}")
    cases = run_verification(str(steps[verify]["run"]))
    print(f"classroom-workflow-steps: checkout, verification, LibTorch {torch} and ccache cached, setup, build, "
          f"then the tests; the verification passes the student's files and refuses the grading code's "
          f"({cases} scratch repositories)")


main()
