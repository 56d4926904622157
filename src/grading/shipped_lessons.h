// The lessons as shipped must teach: each exercise fails its checks, each solution passes.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "course/lesson_rules.h"
#include "grading/grading.h"

namespace gpulab::grading {

/// How the lessons are graded: grade (grading.h), or a unit test's fake.
using Grader = std::function<Grading(const GradeOptions&, std::ostream&)>;

/// Grades every listed lesson's exercise and solution with `grader` (progress to stderr);
/// one line per problem: the file, then what to do.
std::vector<std::string> shipped_lesson_problems(const std::vector<ListedLesson>& listed, double timeout_s,
                                                 const Grader& grader = grade);

}  // namespace gpulab::grading
