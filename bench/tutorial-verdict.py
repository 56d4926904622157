#!/usr/bin/env python3
"""Benchmark: what a learner waits for in the tutorial after changing the exercise.

`./gpulab start --no-watch --lesson NN` is driven as a learner would: its predictions
are skipped, then the exercise gets a real code change (a new definition with a new value
each time, so that neither ccache nor the linker can answer it from before), and `c` asks
for the check that a save asks for in watch mode. The time is from the key to the next
prompt: the rebuild, the picture and the checks' verdict (target <= 3 s). Best of three;
the exercise, the progress file and the node state are the learner's own again afterwards.

usage: bench/tutorial-verdict.py [NN]   (default 04)
"""
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
COMMAND_PROMPT = "command (n p h l r c s a x q, Enter = check)> "


def read_until_prompt(proc, deadline_s=300.0):
    """The tutorial's output up to its next prompt (a line that ends in '> ', unanswered)."""
    out = b""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if not ready:
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            raise SystemExit("the tutorial ended before its prompt:\n" + out.decode(errors="replace")[-2000:])
        out += chunk
        if out.endswith(b"> "):
            return out.decode(errors="replace")
    raise SystemExit("no prompt within %.0f s:\n%s" % (deadline_s, out.decode(errors="replace")[-2000:]))


def main():
    lesson = sys.argv[1] if len(sys.argv) > 1 else "04"
    sources = sorted(ROOT.glob("lessons/%s-*/main.cpp" % lesson))
    if not sources:
        raise SystemExit("no lesson %s" % lesson)
    source = sources[0]
    shipped = source.read_bytes()
    scratch = tempfile.mkdtemp(prefix="gpulab-bench-")
    env = dict(os.environ, GPULAB_STATE_DIR=scratch, GPULAB_PROGRESS_FILE=os.path.join(scratch, "progress"))
    subprocess.run([str(ROOT / "gpulab"), "check", lesson], cwd=ROOT, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # everything built once
    proc = subprocess.Popen([str(ROOT / "gpulab"), "start", "--no-watch", "--lesson", lesson], cwd=ROOT, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    best = None
    try:
        while not read_until_prompt(proc).endswith(COMMAND_PROMPT):
            proc.stdin.write(b"\n")  # no prediction: the question is skipped after a few
            proc.stdin.flush()
        for attempt in range(1, 4):
            edit = "\n[[maybe_unused]] static volatile long gpulab_bench_edit_%d = %dL;\n" % (attempt, time.time_ns())
            source.write_bytes(shipped + edit.encode())
            start = time.monotonic()
            proc.stdin.write(b"c\n")
            proc.stdin.flush()
            output = read_until_prompt(proc)
            seconds = time.monotonic() - start
            if "checks" not in output:
                raise SystemExit("no verdict after the check:\n" + output[-2000:])
            print("  edit %d: verdict after %.3f s" % (attempt, seconds))
            best = seconds if best is None else min(best, seconds)
        proc.stdin.write(b"q\n")
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        source.write_bytes(shipped)
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(scratch, ignore_errors=True)
    print("best edit -> verdict in the tutorial for lesson %s: %.3f s (target <= 3 s)" % (lesson, best))


if __name__ == "__main__":
    main()
