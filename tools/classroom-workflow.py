#!/usr/bin/env python3
"""GitHub Classroom's autograding workflow for gpulab, made from the manifest.

One test per lesson: `./gpulab check NN` (the command the learner-path tests type for every
lesson), a point each. Classroom's command grader passes a test when its command exits 0.
Before the tests (docs/class.md, "GitHub Classroom's runners"): the grading code is checked
against the assignment's first commit, LibTorch and the compiler cache come from GitHub's
cache (keyed on the pinned torch version and the OS), `./gpulab setup` installs the packages
(Ubuntu 24.04's: Catch2 3) and `./gpulab build` builds.

  tools/classroom-workflow.py           write classroom/autograding.yml
  tools/classroom-workflow.py --check   fail when the file is not what the manifest makes
"""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "classroom" / "autograding.yml"
# The command each test runs: the one tests/cli/learner_path_test.cpp types for each lesson.
COMMAND = "./gpulab check {id}"
# What a student may change: their lessons' folders and their progress file. Everything
# else (the checks, gpulab, the manifest, the sources, the build) is the template's. .github/
# is GitHub Classroom's own (it may add its files there): the assignment protects it.
STUDENT_PATHS = ["lessons/[0-9][0-9]-*", ".gpulab-progress", ".github"]


def torch_version():
    """The LibTorch that tools/fetch-libtorch2.sh pins: the caches' keys name it."""
    text = (ROOT / "tools" / "fetch-libtorch2.sh").read_text()
    return re.search(r'TORCH_VERSION="\$\{GPULAB_TORCH_VERSION:-([0-9.]+)\}"', text).group(1)


def before_the_tests(torch):
    """Steps between the checkout and the first test: verify, restore caches, set up, build."""
    excludes = " ".join(f"':(exclude){path}'" for path in STUDENT_PATHS)
    return [
        "    - name: The grading code is the template's",
        "      run: |",
        "        # The assignment's first commit is the template as GitHub Classroom copied it.",
        "        # Since then only the student's lessons and progress file may have changed.",
        "        base=\"$(git rev-list --max-parents=0 HEAD | tail -n 1)\"",
        f"        changed=\"$(git diff --no-renames --name-only \"$base\" HEAD -- . {excludes})\"",
        "        if [ -n \"$changed\" ]; then",
        "          echo \"::error::grading code changed since the assignment's first commit $base (docs/class.md):\"",
        "          printf '%s\\n' \"$changed\"",
        "          exit 1",
        "        fi",
        "        echo \"the grading code is the assignment's first commit's ($base)\"",
        f"    - name: Cache LibTorch {torch}",
        "      uses: actions/cache@v4",
        "      with:",
        f"        path: ~/.cache/gpulab/libtorch-{torch}",
        f"        key: gpulab-libtorch-{torch}-${{{{ runner.os }}}}-${{{{ hashFiles('tools/fetch-libtorch2.sh') }}}}",
        "    - name: Cache the compiler cache",
        "      uses: actions/cache@v4",
        "      with:",
        "        path: ~/.cache/ccache",
        f"        key: gpulab-ccache-{torch}-${{{{ runner.os }}}}-${{{{ github.sha }}}}",
        f"        restore-keys: gpulab-ccache-{torch}-${{{{ runner.os }}}}-",
        "    - name: Packages (Ubuntu 24.04's, Catch2 3 among them) and LibTorch",
        "      run: |",
        "        echo \"CCACHE_DIR=$HOME/.cache/ccache\" >> \"$GITHUB_ENV\"",
        "        ./gpulab setup",
        "    - name: Build",
        "      run: |",
        "        ./gpulab build",
        "        ccache --show-stats || true",
    ]


def workflow(lessons):
    lines = [
        "# GitHub Classroom autograding for gpulab (made by tools/classroom-workflow.py from the",
        "# manifest; docs/class.md). In the assignment's template repository it goes to",
        "# .github/workflows/classroom.yml: the student edition carries it there.",
        "name: Autograding Tests",
        "'on':",
        "- push",
        "- repository_dispatch",
        "permissions:",
        "  checks: write",
        "  actions: read",
        "  contents: read",
        "jobs:",
        "  run-autograding-tests:",
        "    runs-on: ubuntu-latest",
        "    if: github.actor != 'github-classroom[bot]'",
        "    env:",
        "      # GitHub sets CI=true, which makes gpulab's build -Werror: a newer compiler's",
        "      # warning about the template's code must not fail a student's lessons.",
        "      GPULAB_CMAKE_ARGS: -DGPULAB_WERROR=OFF",
        "      CCACHE_MAXSIZE: 3G",
        "    steps:",
        "    - name: Checkout code",
        "      uses: actions/checkout@v4",
        "      with:",
        "        fetch-depth: 0  # the whole history: the grading code is checked against its first commit",
    ]
    lines += before_the_tests(torch_version())
    runners = []
    for index, lesson in enumerate(lessons):
        step = f"lesson-{lesson['id']}"
        runners.append(step)
        title = lesson["title"].replace('"', "'")
        lines += [
            f"    - name: \"Lesson {lesson['id']}\"",
            f"      id: {step}",
            "      uses: classroom-resources/autograding-command-grader@v1",
            "      with:",
            f"        test-name: \"Lesson {lesson['id']}: {title}\"",
        ]
        lines += [
            f"        command: {COMMAND.format(id=lesson['id'])}",
            "        timeout: 10",
            "        max-score: 1",
        ]
    lines += [
        "    - name: Autograding Reporter",
        "      uses: classroom-resources/autograding-grading-reporter@v1",
        "      env:",
    ]
    for step in runners:
        lines.append(f"        {step.upper()}_RESULTS: \"${{{{steps.{step}.outputs.result}}}}\"")
    lines += ["      with:", f"        runners: {','.join(runners)}"]
    return "\n".join(lines) + "\n"


def main():
    manifest = json.loads((ROOT / "lessons" / "manifest.json").read_text())
    text = workflow(manifest["lessons"])
    if sys.argv[1:] == ["--check"]:
        shipped = OUT.read_text() if OUT.exists() else ""
        if shipped != text:
            sys.exit(f"classroom-workflow: {OUT.relative_to(ROOT)} is not what the manifest makes: "
                     "run tools/classroom-workflow.py")
        commands = [line.split("command: ", 1)[1] for line in text.splitlines() if line.strip().startswith("command: ")]
        expected = [COMMAND.format(id=lesson["id"]) for lesson in manifest["lessons"]]
        if commands != expected:
            sys.exit(f"classroom-workflow: commands {commands} are not one check per lesson")
        # ...and that command is what the learner-path tests type for every lesson.
        typed = 'type({"check", lesson.id})'
        if typed not in (ROOT / "tests" / "cli" / "learner_path_test.cpp").read_text():
            sys.exit(f"classroom-workflow: the learner-path tests no longer type {typed}: the workflow's command is untested")
        print(f"classroom-workflow: {len(commands)} lessons, each `{COMMAND}`, as learner.lessonNN types it")
        return
    if sys.argv[1:]:
        sys.exit(__doc__)
    OUT.write_text(text)


main()
