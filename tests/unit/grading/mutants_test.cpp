// Mutation tests' parts (grading/mutants_internal.h): a lesson's folder of patches, a
// patch's mistake and task, the mutant's source patched in only when its text changed, and
// the judgement of what the checks said: a mutant must fail them, a variant pass them.
// `patch` is a fake here: it records its command line and writes what it would have made.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "grading/mutants_internal.h"
#include "proc/temp_dir.h"
#include "proc/text_file.h"

namespace fs = std::filesystem;
using gpulab::CheckCase;
using gpulab::Outcome;
using gpulab::ProcessOptions;
using gpulab::ProcessResult;
using gpulab::read_text_file;
using gpulab::TempDir;
using gpulab::grading::ChecksResult;
using gpulab::grading::Mutant;

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// `patch`: writes `text` where --output says, or fails as a patch that no longer applies.
struct FakePatch {
  std::vector<ProcessOptions> calls;
  std::string text = "int main() { return 1; }\n";
  bool applies = true;

  gpulab::grading::ProcessRun run() {
    return [this](const ProcessOptions& options) {
      calls.push_back(options);
      if (!applies) return ProcessResult{1, 0, false, "1 out of 1 hunk FAILED -- saving rejects to file x.rej\n", "err\n"};
      write(options.argv.at(4), text);
      return ProcessResult{0, 0, false, "", ""};
    };
  }
};

Mutant mutant(const gpulab::grading::Kind& kind = gpulab::grading::kMutants) {
  Mutant m;
  m.lesson = "04";
  m.name = "uses-cuda-0";
  m.mistake = "Mistake: uses cuda:0";
  m.kind = &kind;
  return m;
}

ChecksResult failed_checks() {
  ChecksResult checks;
  checks.outcome = Outcome::kChecksFailed;
  checks.has_verdict = true;
  CheckCase passed;
  passed.name = "nothing on GPU 0";
  passed.passed = true;
  CheckCase failed;
  failed.name = "the work lands on GPU 3";
  failed.failures.push_back({"expected: GPU 3 — observed: GPU 2\nscenario: …", {}});
  checks.verdict.cases = {passed, failed};
  return checks;
}

ChecksResult ended(Outcome outcome, const std::string& message = "", const std::string& ends = "") {
  ChecksResult checks;
  checks.outcome = outcome;
  checks.message = message;
  checks.program_ends = ends;
  return checks;
}

}  // namespace

TEST_CASE("a lesson's patches are its folder's .patch files, in name order", "[unit][grading][mutants]") {
  const TempDir folder("mutants");
  for (const char* name : {"b-second.patch", "a-first.patch", "README.md", "c.patch.orig"}) write(folder.path() + "/" + name, "x");
  CHECK(gpulab::grading::patch_files(folder.path()) ==
        std::vector<std::string>{folder.path() + "/a-first.patch", folder.path() + "/b-second.patch"});
  CHECK(gpulab::grading::patch_files(folder.path() + "/lesson99").empty());  // no folder: none
}

TEST_CASE("a patch's first line is its mistake; '# Task: stretch' among its leading comments makes it the stretch's",
          "[unit][grading][mutants]") {
  const TempDir folder("mutants");
  const std::string task = folder.path() + "/task.patch";
  const std::string stretch = folder.path() + "/stretch.patch";
  const std::string late = folder.path() + "/late.patch";
  write(task, "# Mistake: uses cuda:0 for the model\n--- a/main.cpp\n");
  write(stretch, "# Mistake: forgets the second GPU\n# Task: stretch\n--- a/main.cpp\n");
  write(late, "# Mistake: x\n--- a/main.cpp\n# Task: stretch\n");  // in the diff, not the header
  CHECK(gpulab::grading::first_line_of(task) == "Mistake: uses cuda:0 for the model");
  CHECK_FALSE(gpulab::grading::for_the_stretch(task));
  CHECK(gpulab::grading::for_the_stretch(stretch));
  CHECK_FALSE(gpulab::grading::for_the_stretch(late));
  write(task, "##\n");
  CHECK(gpulab::grading::first_line_of(task).empty());
  CHECK(gpulab::grading::first_line_of(folder.path() + "/missing.patch").empty());
}

TEST_CASE("a mutant's source is the patched solution, written only when its text changed", "[unit][grading][mutants]") {
  const TempDir build("mutants");
  const TempDir scratch("mutants-scratch");
  const std::string source = build.path() + "/mutants/04/uses-cuda-0.cpp";
  FakePatch patch;
  CHECK(gpulab::grading::write_mutant_source(mutant(), "/src/solutions/04/main.cpp", "/src/tests/mutations/lesson04/uses-cuda-0.patch",
                                             source, scratch, patch.run())
            .empty());
  REQUIRE(patch.calls.size() == 1);
  const auto& argv = patch.calls[0].argv;
  CHECK(argv == std::vector<std::string>{"patch", "--batch", "--silent", "--output", scratch.path() + "/mutant-04-uses-cuda-0.cpp",
                                         "--reject-file", scratch.path() + "/mutant-04-uses-cuda-0.rej",
                                         "/src/solutions/04/main.cpp", "--input",
                                         "/src/tests/mutations/lesson04/uses-cuda-0.patch"});
  CHECK(patch.calls[0].timeout_s == 30);
  CHECK(read_text_file(source) == patch.text);

  // The same text again: the file is left alone, so ninja does not compile it again.
  const auto long_ago = fs::file_time_type::clock::now() - std::chrono::hours(24);
  fs::last_write_time(source, long_ago);
  CHECK(gpulab::grading::write_mutant_source(mutant(), "s", "p", source, scratch, patch.run()).empty());
  CHECK(fs::last_write_time(source) == long_ago);
  // Another text: written.
  patch.text = "int main() { return 2; }\n";
  CHECK(gpulab::grading::write_mutant_source(mutant(), "s", "p", source, scratch, patch.run()).empty());
  CHECK(read_text_file(source) == patch.text);
}

TEST_CASE("a patch that no longer applies says why, and leaves the mutant's source as it was", "[unit][grading][mutants]") {
  const TempDir build("mutants");
  const TempDir scratch("mutants-scratch");
  const std::string source = build.path() + "/uses-cuda-0.cpp";
  write(source, "the last good text\n");
  FakePatch patch;
  patch.applies = false;
  CHECK(gpulab::grading::write_mutant_source(mutant(), "s", "p", source, scratch, patch.run()) ==
        "1 out of 1 hunk FAILED -- saving rejects to file x.rej\nerr\n");
  CHECK(read_text_file(source) == "the last good text\n");
}

TEST_CASE("indented: each line four spaces in, ending with a newline", "[unit][grading][mutants]") {
  CHECK(gpulab::grading::indented("a\nb") == "    a\n    b\n");
  CHECK(gpulab::grading::indented("a\n\nb\n") == "    a\n    \n    b\n");
  CHECK(gpulab::grading::indented("").empty());
}

TEST_CASE("a mutant is caught only by a failed check, shown with the first failure's first line", "[unit][grading][mutants]") {
  Mutant caught = mutant();
  gpulab::grading::judge_mutant(caught, failed_checks());
  CHECK(caught.caught);
  CHECK(caught.line == "lesson 04 uses-cuda-0: caught — Mistake: uses cuda:0\n    expected: GPU 3 — observed: GPU 2\n");
  CHECK(caught.target() == "mutant-04-uses-cuda-0");

  Mutant survived = mutant();
  survived.stretch = true;
  gpulab::grading::judge_mutant(survived, ended(Outcome::kOk));
  CHECK_FALSE(survived.caught);
  CHECK(survived.line == "lesson 04 (stretch) uses-cuda-0: SURVIVED — the checks pass this wrong answer: Mistake: uses cuda:0\n");
}

TEST_CASE("a mutant that crashed, hung or gave no failed check is broken, not caught", "[unit][grading][mutants]") {
  Mutant crashed = mutant();
  gpulab::grading::judge_mutant(crashed, ended(Outcome::kCrashed, "the checks crashed\n", "lesson-04 crashed with SIGSEGV.\n"));
  CHECK_FALSE(crashed.caught);
  CHECK(crashed.line == "lesson 04 uses-cuda-0: BROKEN — the mutant did not run to a verdict (crashed); a mutant must compile and "
                        "run\n    the checks crashed\n    lesson-04 crashed with SIGSEGV.\n");
  Mutant hung = mutant();
  gpulab::grading::judge_mutant(hung, ended(Outcome::kTimedOut));
  CHECK_FALSE(hung.caught);
  CHECK(hung.line.find("(timed out)") != std::string::npos);
  // Failed with a verdict in which nothing failed (the checks exited 1): no check caught it.
  ChecksResult nothing_failed = ended(Outcome::kChecksFailed, "the checks exited with code 1\n");
  nothing_failed.has_verdict = true;
  Mutant unjudged = mutant();
  gpulab::grading::judge_mutant(unjudged, nothing_failed);
  CHECK_FALSE(unjudged.caught);
  CHECK(unjudged.line.find("BROKEN") != std::string::npos);
  CHECK(unjudged.line.find("(no verdict)") != std::string::npos);
}

TEST_CASE("a variant must pass: a failed check rejects it, no verdict breaks it", "[unit][grading][mutants]") {
  Mutant passes = mutant(gpulab::grading::kVariants);
  passes.mistake = "Variant: other order";
  gpulab::grading::judge_mutant(passes, ended(Outcome::kOk));
  CHECK(passes.caught);
  CHECK(passes.line == "lesson 04 uses-cuda-0: passes — Variant: other order\n");
  CHECK(passes.target() == "variant-04-uses-cuda-0");

  Mutant rejected = mutant(gpulab::grading::kVariants);
  gpulab::grading::judge_mutant(rejected, failed_checks());
  CHECK_FALSE(rejected.caught);
  CHECK(rejected.line == "lesson 04 uses-cuda-0: REJECTED — the checks fail this right answer: Mistake: uses cuda:0\n"
                         "    expected: GPU 3 — observed: GPU 2\n");

  Mutant broken = mutant(gpulab::grading::kVariants);
  gpulab::grading::judge_mutant(broken, ended(Outcome::kTimedOut, "the checks did not finish\n"));
  CHECK_FALSE(broken.caught);
  CHECK(broken.line == "lesson 04 uses-cuda-0: BROKEN — the variant did not run to a verdict (timed out); a variant must compile "
                       "and run\n    the checks did not finish\n");
}
