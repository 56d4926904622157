#!/usr/bin/env python3
"""GitHub Classroom's autograding workflow for gpulab, made from the manifest.

One test per lesson: `./gpulab check NN` (the command the learner-path tests type for every
lesson), a point each; the first test also builds. Classroom's command grader passes a test
when its command exits 0.

  tools/classroom-workflow.py           write classroom/autograding.yml
  tools/classroom-workflow.py --check   fail when the file is not what the manifest makes
"""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "classroom" / "autograding.yml"
# The command each test runs: the one tests/cli/learner_path_test.cpp types for each lesson.
COMMAND = "./gpulab check {id}"


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
        "    steps:",
        "    - name: Checkout code",
        "      uses: actions/checkout@v4",
    ]
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
        if index == 0:
            # The first test sets up and builds everything (packages, LibTorch, the lessons).
            lines.append("        setup-command: ./gpulab build")
        lines += [
            f"        command: {COMMAND.format(id=lesson['id'])}",
            f"        timeout: {60 if index == 0 else 10}",
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
