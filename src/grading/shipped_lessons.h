// The lessons as shipped must teach: each exercise fails its checks, each solution passes.
#pragma once

#include <string>
#include <vector>

#include "course/lesson_rules.h"
#include "course/manifest.h"

namespace gpulab::grading {

/// Grades every listed lesson's exercise and solution (progress to stderr); one line per
/// problem: the file, then what to do.
std::vector<std::string> shipped_lesson_problems(const Manifest& manifest, const std::vector<ListedLesson>& listed,
                                                 double timeout_s);

/// `gpulab dev check`: the lessons' rules in the tree at `root` (course/lesson_rules.h) and,
/// unless `quick`, shipped_lesson_problems of `manifest` (that tree's; it may be null when
/// `quick`). `text`: each problem, then the summary line.
struct DevCheck {
  std::string text;
  bool ok = true;
};
DevCheck dev_check(const std::string& root, bool quick, double timeout_s, const Manifest* manifest);

}  // namespace gpulab::grading
