// The grading engine behind `gpulab check all` and `gpulab dev check`: builds a tree's
// lesson programs (this build's, or a student's checkout's, compiled apart with this
// build's recipes), runs every lesson's checks with a time limit, and reports per lesson.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "course/manifest.h"
#include "report/verdict.h"

namespace gpulab::grading {

struct GradeOptions {
  std::string root;       ///< a student's checkout (its lessons/*/main.cpp); empty: this tree
  std::string build_dir;  ///< where a student's programs are built; empty: <build>/grading/<name>-<hash>
  bool solution = false;  ///< grade this repository's solutions instead of exercises
  double timeout_s = 300; ///< per lesson, for each run of its checks
  std::vector<std::string> lessons;  ///< ids to grade; empty: every lesson in the manifest
  std::string junit;      ///< write merged JUnit XML here (runs Catch2's junit reporter too)
  std::string json;       ///< write the per-lesson JSON here
  bool placement = true;  ///< run each lesson in its scenario to record the observed placement
  bool fail_fast = false;  ///< stop a lesson's checks at their first failure (mutation tests need one)
  /// In a class's grading box only (class_grade.h): build root's exercises with these
  /// recipes (recipes.h) into this build's bin/, which must be the box's own memory file system.
  std::string recipes;
  unsigned build_jobs = 1;  ///< with recipes: exercises compiled at once, beside the grading
  std::function<void()> after_lesson;  ///< called as each lesson's grade is known (a box checks its disks)
};

/// What became of one lesson.
struct LessonGrade {
  std::string id;
  std::string title;
  std::string status;    ///< passed, failed, build_failed, refused (check all --root: tree_guard.h), crashed, timed_out
  std::string message;   ///< why, when the checks gave no verdict (compiler errors, time-out, what was refused)
  bool has_verdict = false;
  CheckVerdict verdict;
  nlohmann::json placement;  ///< null, or the last observation's tensors and GPUs
  std::string junit_xml;     ///< Catch2's JUnit report for this lesson ("" when none)
  double seconds = 0;

  bool passed() const { return status == "passed"; }
};

struct Grading {
  std::string root;    ///< the tree graded (absolute)
  std::string target;  ///< "exercise" or "solution"
  std::vector<LessonGrade> lessons;
  std::size_t failed() const;
};

/// Builds and grades. Progress (one line per lesson) goes to `out`. Throws Exit{kBuildFailed}
/// when the grader's own programs (checks, CLI) do not build, Exit{kUsage} on bad options.
Grading grade(const Manifest& manifest, const GradeOptions& options, std::ostream& out);

/// The JSON document `--json` writes.
nlohmann::json grading_json(const Grading& grading);

/// Catch2's per-lesson JUnit reports under one <testsuites>, plus a <testsuite> with an
/// <error> for each lesson that gave no report (build failed, timed out, crashed).
std::string grading_junit(const Grading& grading);

/// Writes options.json (grading_json) and options.junit (grading_junit), those named;
/// throws Failure(kUsage) when one cannot be written.
void write_grading_files(const GradeOptions& options, const Grading& grading);

}  // namespace gpulab::grading
