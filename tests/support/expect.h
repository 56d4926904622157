// Checks phrased in the learner's terms. `gpulab check` shows a failed one exactly as its
// message reads: "expected: weight on physical GPU 3 — observed: on cpu".
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "lesson_run.h"

namespace gpulab::test {

/// "on physical GPU 3", or "on cpu" for -1 (LessonRun::physical_of's answer off the GPUs).
std::string placement(int physical);

/// Passes when `ok`; otherwise fails the check (and goes on) with
/// "expected: <expected> — observed: <observed>".
void expect_that(bool ok, const std::string& expected, const std::string& observed);

/// A named tensor's physical GPU at an observation, e.g. expect_on_gpu(run, "after forward",
/// "weight", 3) → "expected: weight on physical GPU 3 — observed: weight on cpu".
void expect_on_gpu(const LessonRun& run, const std::string& label, const std::string& tensor, int physical);

/// "physical GPU 3", "physical GPUs 2 and 3", "physical GPUs 0, 2 and 3", or "no GPU".
std::string gpus(const std::set<int>& physical);

/// The physical GPUs nvidia-smi lists this process on: the GPUs of a LessonRun::usage().
std::set<int> listed_on(const std::map<int, std::uint64_t>& used);

/// "416.0 MiB".
std::string mib(std::uint64_t bytes);

/// The physical GPUs holding this process's CUDA contexts at an observation are exactly
/// `expected`: "expected: CUDA contexts on physical GPUs 2 and 3 (after training) —
/// observed: on physical GPUs 0, 2 and 3".
void expect_contexts(const LessonRun& run, const std::string& label, const std::set<int>& expected);

/// The physical GPUs where this process uses memory at an observation are exactly
/// `expected` ("expected: memory on physical GPU 3 (after forward) — observed: on ...").
void expect_memory_on(const LessonRun& run, const std::string& label, const std::set<int>& expected);

/// `observed` bytes are at least `minimum`: "expected: <what> at least 1440.0 MiB —
/// observed: 416.0 MiB".
void expect_at_least(const std::string& what, std::uint64_t observed, std::uint64_t minimum);

/// The report's fact `key` is the string `expected`: "expected: rank 1 reports gpu_uuid
/// GPU-… (physical GPU 3) — observed: no gpu_uuid fact". `why` follows the value in the
/// expectation, e.g. "(physical GPU 3)".
void expect_fact(const LessonRun& run, const std::string& who, const std::string& key, const std::string& expected,
                 const std::string& why);

/// Like expect_that, but stops the test case (a precondition: what would be checked next was
/// never observed).
void require_that(bool ok, const std::string& expected, const std::string& observed);

/// The program ran with no error in its report: "expected: <doing> with no error —
/// observed: the error "…" (at 'forward')". Stops the test case otherwise.
void require_no_errors(const LessonRun& run, const std::string& doing);

/// observed == expected, described as "<what> = <value>".
template <typename T, typename U>
void expect_equal(const std::string& what, const T& observed, const U& expected) {
  expect_that(observed == expected, what + " = " + Catch::Detail::stringify(expected),
              what + " = " + Catch::Detail::stringify(observed));
}

}  // namespace gpulab::test
