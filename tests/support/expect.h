// Checks phrased in the learner's terms. `gpulab check` shows a failed one exactly as its
// message reads: "expected: weight on physical GPU 3 — observed: on cpu".
#pragma once

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

/// observed == expected, described as "<what> = <value>".
template <typename T, typename U>
void expect_equal(const std::string& what, const T& observed, const U& expected) {
  expect_that(observed == expected, what + " = " + Catch::Detail::stringify(expected),
              what + " = " + Catch::Detail::stringify(observed));
}

}  // namespace gpulab::test
