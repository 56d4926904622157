// dev check's behaviour rules, through the grading engine: every shipped exercise compiles,
// runs and fails its checks, and every solution passes them.
#include "grading/shipped_lessons.h"

#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "grading/grading.h"

namespace gpulab::grading {
namespace {

std::string first_line(const LessonGrade& grade) {
  for (const auto& c : grade.verdict.cases)
    if (!c.passed && !c.skipped && !c.failures.empty()) return c.failures.front().text;
  std::istringstream in(grade.message);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::vector<std::string> shipped_lesson_problems(const Manifest& manifest, const std::vector<ListedLesson>& listed,
                                                 double timeout_s, const Grader& grader) {
  std::vector<std::string> problems;
  std::map<std::string, std::string> directory;
  GradeOptions options;
  options.placement = false;
  options.timeout_s = timeout_s;
  for (const auto& lesson : listed) {
    options.lessons.push_back(lesson.id);
    directory[lesson.id] = lesson.directory;
  }
  for (const bool solution : {false, true}) {
    options.solution = solution;
    std::cerr << fmt::format("== {}\n", solution ? "the solutions must pass their checks" : "the shipped exercises must fail their checks");
    const Grading grading = grader(manifest, options, std::cerr);
    for (const auto& grade : grading.lessons) {
      const std::string file = fmt::format("{}/{}/main.cpp", solution ? "solutions" : "lessons", directory[grade.id]);
      if (solution && !grade.passed()) {
        problems.push_back(fmt::format("{}: the solution {} its checks ({}): {}; fix the solution or the checks", file,
                                       grade.status == "failed" ? "fails" : "does not pass", grade.status, first_line(grade)));
      } else if (!solution && grade.passed()) {
        problems.push_back(fmt::format("{}: the shipped exercise passes its checks; leave the lesson's mistake in it, or "
                                       "make the checks catch it",
                                       file));
      } else if (!solution && (grade.status == "build_failed" || !grade.has_verdict || grade.verdict.failed() == 0)) {
        problems.push_back(fmt::format("{}: the shipped exercise must compile, run and fail its checks, but: {}: {}", file,
                                       grade.status, first_line(grade)));
      }
    }
  }
  return problems;
}

DevCheck dev_check(const std::string& root, bool quick, double timeout_s, const Manifest* manifest) {
  LessonRulesResult rules = check_lesson_rules(root);
  std::vector<std::string>& problems = rules.problems;
  if (!quick) {
    auto more = shipped_lesson_problems(*manifest, rules.listed, timeout_s);
    problems.insert(problems.end(), more.begin(), more.end());
  }
  DevCheck check;
  for (const auto& problem : problems) check.text += problem + '\n';
  check.ok = problems.empty();
  if (!check.ok) {
    check.text += fmt::format("\ndev check: {} problem{} in {}\n", problems.size(), problems.size() == 1 ? "" : "s", root);
    return check;
  }
  check.text += fmt::format("dev check: {} lessons, {}\n", rules.listed.size(),
                            quick ? "structure only (--quick): manifest, files, hints, predictions"
                                  : "structure, exercises failing and solutions passing their checks");
  return check;
}

}  // namespace gpulab::grading
