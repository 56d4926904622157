// mutants.cpp's parts, exposed for their unit tests (tests/unit/grading/mutants_test.cpp):
// reading a folder of patches, patching a mutant's source, judging what its checks said.
// Nothing else includes this header.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

#include "grading/runner.h"

namespace gpulab {
class TempDir;
}

namespace gpulab::grading {

// Known wrong answers (mutants) must fail; valid variants must pass. One runner for both.
struct Kind {
  const char* prefix;   ///< of the programs: mutant-NN-<name>, variant-NN-<name>
  const char* folder;   ///< of the patches, under tests/
  const char* sources;  ///< of the patched files, under the build folder
  bool must_pass;
};
inline constexpr Kind kMutants{"mutant", "mutations", "mutants", false};
inline constexpr Kind kVariants{"variant", "variants", "variants", true};

struct Mutant {
  std::string lesson;   ///< "04"
  std::string name;     ///< the patch's file name without .patch
  std::string mistake;  ///< its first line, "Mistake: …" (a variant's: "Variant: …")
  std::string line;     ///< the verdict line(s) printed for it
  bool caught = false;  ///< judged as its kind must be: a mutant failed, a variant passed
  bool stretch = false;  ///< an answer to the stretch task: the [stretch] checks judge it
  const Kind* kind = &kMutants;

  std::string target() const { return fmt::format("{}-{}-{}", kind->prefix, lesson, name); }
  std::string title() const { return fmt::format("lesson {}{} {}", lesson, stretch ? " (stretch)" : "", name); }
};

/// The .patch files of a lesson's folder of patches, sorted ({} when it is no folder).
std::vector<std::string> patch_files(const std::string& folder);

/// "# Task: stretch" among the patch's leading comment lines: a wrong answer to the stretch.
bool for_the_stretch(const std::string& path);

/// The patch's first line without its leading "# ": the mistake it makes.
std::string first_line_of(const std::string& path);

/// The patch applied to the solution (by `patch`, started with `run`), into the mutant's
/// source when the text differs. Returns "" or why it does not apply (the mutant is then stale).
std::string write_mutant_source(const Mutant& mutant, const std::string& solution, const std::string& patch_file,
                                const std::string& source, const TempDir& scratch, const ProcessRun& run = run_process);

/// Each line of `text` indented by four spaces.
std::string indented(const std::string& text);

/// A mutant's verdict from its checks' result: `caught` and its `line`.
void judge_mutant(Mutant& mutant, const ChecksResult& checks);

}  // namespace gpulab::grading
