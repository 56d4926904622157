// gpulab check all: every lesson of a tree graded (src/grading), written as JUnit and JSON.
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "check_all.h"
#include "report/outcome.h"

namespace gpulab::cli {
using grading::GradeOptions;
using grading::Grading;

void add_check_all_options(CLI::App& check, GradeOptions& options) {
  check.add_option("--junit", options.junit, "check all: write JUnit XML here (Catch2's reports, one testsuite per lesson)");
  check.add_option("--json", options.json, "check all: write each lesson's status, failed checks and placement as JSON here");
  check.add_option("--root", options.root, "check all: grade the exercises of this checkout (a student's) instead of yours");
  check.add_option("--build-dir", options.build_dir, "check all --root: build the student's programs here")
      ->default_str("build/grading/<name>-<hash>");
  check.add_option("--timeout", options.timeout_s, "seconds each lesson's checks may run")->capture_default_str();
  check.add_option("--lessons", options.lessons, "check all: only these lessons, e.g. 01,04")->delimiter(',');
  check.add_flag("--fail-fast", options.fail_fast, "check all: stop each lesson's checks at their first failure");
  check.add_flag("--no-placement", [&options](std::int64_t) { options.placement = false; },
                 "check all: do not run each lesson again to record where its tensors landed");
}

void run_check_all(const GradeOptions& options, const Workspace&) {
  const Grading grading = grading::grade(options, std::cout);
  std::cout << grading_summary(grading);
  if (!options.json.empty()) {
    std::ofstream file(options.json);
    file << grading::grading_json(grading).dump(2) << '\n';
    if (!file) {
      throw Failure(Outcome::kUsage, fmt::format("cannot write {}", options.json));
    }
  }
  if (!options.junit.empty()) {
    std::ofstream file(options.junit);
    file << grading::grading_junit(grading);
    if (!file) {
      throw Failure(Outcome::kUsage, fmt::format("cannot write {}", options.junit));
    }
  }
  if (grading.failed() > 0) throw Ended{Outcome::kChecksFailed};
}

}  // namespace gpulab::cli
