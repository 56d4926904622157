#!/usr/bin/env python3
"""Where a build's time went, from Ninja's own log (.ninja_log) and graph (ninja -t query).

    tools/build-profile.py [BUILD_DIR]      (default: build)

Prints the wall time of the largest ninja run in the log (the full build), its critical path (the chain of steps, each waiting
for the one before, that no number of cores can shorten), the slowest steps, and the
compile and link time per kind of target. Run it on a folder built from clean.
"""
import os
import re
import subprocess
import sys
from collections import defaultdict


def largest_build(log_path):
    """{output: (start_ms, end_ms)} of the ninja run with the most steps in a v5 .ninja_log
    (the full build, not the incremental ones a test run appends after it)."""
    runs = [{}]
    previous_end = -1
    with open(log_path) as log:
        for line in log:
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 5:
                continue
            start, end, output = int(fields[0]), int(fields[1]), fields[3]
            # Lines come in the order steps finish, on a clock each ninja run restarts: an
            # end earlier than the line before's means a new run began here.
            if end < previous_end:
                runs.append({})
            previous_end = end
            runs[-1][output] = (start, end)
    return max(runs, key=len)


def inputs_of(build, outputs):
    """{output: [inputs]} from `ninja -t query`, in batches."""
    graph = {}
    outputs = list(outputs)
    for i in range(0, len(outputs), 200):
        text = subprocess.run(["ninja", "-C", build, "-t", "query", *outputs[i:i + 200]],
                              capture_output=True, text=True, check=True).stdout
        current, section = None, None
        for line in text.splitlines():
            if not line.startswith(" "):
                current = line.rstrip(":")
                graph[current] = []
                continue
            stripped = line.strip()
            if stripped.startswith("input:"):
                section = "input"
            elif stripped.startswith("outputs:"):
                section = "outputs"
            elif section == "input" and current is not None:
                graph[current].append(stripped.lstrip("|").strip())
    return graph


def kind_of(output):
    if output.endswith(".gch") or "cmake_pch" in output:
        return "precompiled headers"
    if output.endswith(".o"):
        target = re.search(r"CMakeFiles/([^/]+)\.dir/", output)
        name = target.group(1) if target else "?"
        if re.match(r"(lesson|solution)-\d+$", name):
            return "compile: lesson and solution programs"
        if re.match(r"lesson\d+-checks$", name):
            return "compile: lesson checks"
        if re.match(r"mutant-", name):
            return "compile: mutants"
        if "test" in name or "probe" in name or name.startswith("dp-"):
            return "compile: test suites and probes"
        if name == "gpulab":
            return "compile: libgpulab (simulator, report, parallel)"
        return "compile: torch-free modules and CLI"
    if output.endswith(".a"):
        return "archive"
    return "link"


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    steps = largest_build(os.path.join(build, ".ninja_log"))
    if not steps:
        sys.exit(f"build-profile: {build}/.ninja_log has no build")
    # Every node of the graph, phony ones included: a program waits for a library through
    # CMake's phony order-only targets, which the log does not hold.
    listing = subprocess.run(["ninja", "-C", build, "-t", "targets", "all"], capture_output=True, text=True,
                             check=True).stdout
    nodes = [line.rsplit(": ", 1)[0] for line in listing.splitlines() if ": " in line]
    graph = inputs_of(build, nodes)
    duration = {o: (e - s) / 1000 for o, (s, e) in steps.items()}
    memo = {}

    def longest(output, depth=0):
        if output in memo:
            return memo[output]
        best, chain = 0.0, []
        for parent in graph.get(output, []):
            if parent in graph and depth < 200:
                length, parent_chain = longest(parent, depth + 1)
                if length > best:
                    best, chain = length, parent_chain
        memo[output] = (best + duration.get(output, 0.0), chain + ([output] if output in duration else []))
        return memo[output]

    wall = (max(e for _, e in steps.values()) - min(s for s, _ in steps.values())) / 1000
    total = sum(duration.values())
    path_length, path = max((longest(o) for o in steps), key=lambda x: x[0])
    print(f"{len(steps)} steps, wall {wall:.0f} s, {total:.0f} s of work (x{total / wall:.2f} in parallel)")
    print(f"critical path {path_length:.0f} s:")
    for output in path:
        print(f"  {duration[output]:7.1f} s  {output}")
    print("slowest steps:")
    for output in sorted(duration, key=duration.get, reverse=True)[:12]:
        print(f"  {duration[output]:7.1f} s  {output}")
    by_kind = defaultdict(lambda: [0, 0.0])
    for output, seconds in duration.items():
        by_kind[kind_of(output)][0] += 1
        by_kind[kind_of(output)][1] += seconds
    print("by kind:")
    for kind, (count, seconds) in sorted(by_kind.items(), key=lambda kv: -kv[1][1]):
        print(f"  {seconds:7.0f} s  {count:4d} steps  {kind}")


if __name__ == "__main__":
    main()
