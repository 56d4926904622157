// The lessons' own rules, for `gpulab dev check`: the manifest lists every lesson once, in
// order, with a title, a goal, a stretch task, hints and predictions; each lesson has its
// exercise, solution, README (the template's sections) and checks, known wrong answers
// (mutants) that docs/instructors.md names, and a row in the README's lesson table.
#pragma once

#include <string>
#include <vector>

namespace gpulab {

/// A lesson the manifest lists, as far as it could be read.
struct ListedLesson {
  std::string id;
  std::string directory;  ///< "04-which-gpu-is-cuda-1"
};

struct LessonRulesResult {
  std::vector<std::string> problems;  ///< one line each: the file, then what to do
  std::vector<ListedLesson> listed;
};

/// Checks the tree at `root` (its lessons/manifest.json and the files it names).
LessonRulesResult check_lesson_rules(const std::string& root);

}  // namespace gpulab
