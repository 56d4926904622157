// The lessons as shipped must teach: each exercise fails its checks, each solution passes.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "course/lesson_rules.h"
#include "course/manifest.h"
#include "grading/grading.h"

namespace gpulab::grading {

/// How the lessons are graded: grade (grading.h), or a unit test's fake.
using Grader = std::function<Grading(const Manifest&, const GradeOptions&, std::ostream&)>;

/// Grades every listed lesson's exercise and solution of `manifest` with `grader` (progress
/// to stderr); one line per problem: the file, then what to do.
std::vector<std::string> shipped_lesson_problems(const Manifest& manifest, const std::vector<ListedLesson>& listed,
                                                 double timeout_s, const Grader& grader = grade);

/// `gpulab dev check`: the lessons' rules in the tree at `root` (course/lesson_rules.h) and,
/// unless `quick`, shipped_lesson_problems of `manifest` (that tree's; it may be null when
/// `quick`). `text`: each problem, then the summary line.
struct DevCheck {
  std::string text;
  bool ok = true;
};
DevCheck dev_check(const std::string& root, bool quick, double timeout_s, const Manifest* manifest);

}  // namespace gpulab::grading
