// The lessons as shipped must teach: each exercise fails its checks, each solution passes.
#pragma once

#include <string>
#include <vector>

#include "course/lesson_rules.h"

namespace gpulab::grading {

/// Grades every listed lesson's exercise and solution (progress to stderr); one line per
/// problem: the file, then what to do.
std::vector<std::string> shipped_lesson_problems(const std::vector<ListedLesson>& listed, double timeout_s);

/// `gpulab dev check`: the lessons' rules in the tree at `root` (course/lesson_rules.h) and,
/// unless `quick`, shipped_lesson_problems. `text`: each problem, then the summary line.
struct DevCheck {
  std::string text;
  bool ok = true;
};
DevCheck dev_check(const std::string& root, bool quick, double timeout_s);

}  // namespace gpulab::grading
