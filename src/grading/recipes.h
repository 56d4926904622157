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

/// Where a student's exercises are built from and to: `root`/lessons/<dir>/main.cpp into
/// `bin`/lesson-NN, objects in `objects`; compiler messages lose `strip`'s prefixes.
struct RecipeBuild {
  std::map<std::string, Recipe> recipes;
  std::vector<LessonEntry> lessons;
  std::string root;
  std::string bin;
  std::string objects;
  std::vector<std::string> strip;
  unsigned jobs = 1;  ///< lessons compiled at once
  /// Each compile also writes the files it read to dependency_file(objects, id) (-MD -MF):
  /// what check all --root checks (tree_guard.h).
  bool depfiles = false;
};

/// Where a RecipeBuild with `depfiles` writes lesson `id`'s dependency file.
std::string dependency_file(const std::string& objects, const std::string& id);

/// Builds every lesson of `build`, `jobs` at a time, and returns the lessons that did not,
/// with why (the compiler's messages). Returns when every lesson is built: nothing may run
/// beside a lesson's checks, whose clean-up stops every child of this process.
std::map<std::string, std::string> build_from_recipes(RecipeBuild build);

}  // namespace gpulab::grading
