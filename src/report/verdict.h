// What `gpulab check` tells a learner: the lesson's checks (a Catch2 program) run with
// Catch2's XML reporter, read back and phrased as "expected … — observed …", without
// Catch2's banner, file names or absolute paths.
#pragma once

#include <string>
#include <vector>

namespace gpulab {

struct CheckFailure {
  std::string text;                  ///< "expected: weight on physical GPU 3 — observed: on cpu"
  std::vector<std::string> context;  ///< INFO lines the check attached, paths removed
};

struct CheckCase {
  std::string name;  ///< the TEST_CASE's name: what the lesson requires, in words
  bool passed = false;
  bool skipped = false;  ///< e.g. "needs 6 GPUs, found 1" on a real machine
  std::string skip_reason;
  std::vector<CheckFailure> failures;
};

struct CheckVerdict {
  std::vector<CheckCase> cases;
  std::size_t failed() const;
  std::size_t passed() const;
};

/// Parses Catch2's XML report. Throws std::runtime_error when `xml` is not one (e.g. the
/// checks program died before writing it). `strip` lists path prefixes to remove from texts.
CheckVerdict parse_check_xml(const std::string& xml, const std::vector<std::string>& strip = {});

}  // namespace gpulab
