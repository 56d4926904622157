// How this build compiles and links a lesson's exercise, as commands with the source, the
// object and the program left open: a class's exercises are built in their grading boxes
// with exactly this build's flags and precompiled header, against the library it built
// once, instead of in a build folder per student.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "course/manifest.h"
#include "grading/runner.h"

namespace gpulab::grading {

/// One lesson's two shell commands, run in `directory` (the build folder), with the words
/// {source}, {object} and {program} to fill in.
struct Recipe {
  std::string compile;
  std::string link;
  std::string directory;
};

/// The recipes of `lessons`' lesson-NN programs in the Ninja build folder `build`, read with
/// `ninja -t commands`. Throws Failure(kBuildFailed) when a lesson's commands are not there
/// or not of the form expected.
std::map<std::string, Recipe> read_recipes(const std::string& build, const std::vector<LessonEntry>& lessons);

nlohmann::json recipes_json(const std::map<std::string, Recipe>& recipes);
/// Throws Failure(kUsage) on a document recipes_json did not write.
std::map<std::string, Recipe> parse_recipes(const std::string& text);

/// Compiles and links each lesson's exercise from `root`/lessons/<dir>/main.cpp into
/// `bin`/lesson-NN, objects in `objects`. Returns the lessons that did not build, with the
/// compiler's messages (`strip`'s prefixes removed).
std::map<std::string, std::string> build_from_recipes(const std::map<std::string, Recipe>& recipes,
                                                      const std::vector<LessonEntry>& lessons, const std::string& root,
                                                      const std::string& bin, const std::string& objects,
                                                      const std::vector<std::string>& strip);

}  // namespace gpulab::grading
