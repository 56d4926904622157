// dev check's behaviour rule (grading/shipped_lessons.h): each shipped exercise compiles,
// runs and fails its checks; each solution passes them. The grading engine is a fake here:
// it records what it was asked and answers with a grading per target.
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "grading/shipped_lessons.h"

using gpulab::CheckCase;
using gpulab::grading::GradeOptions;
using gpulab::grading::Grading;
using gpulab::grading::LessonGrade;
using gpulab::grading::shipped_lesson_problems;

namespace {

LessonGrade graded(const std::string& id, const std::string& status, bool failed_check, const std::string& message = "") {
  LessonGrade grade;
  grade.id = id;
  grade.status = status;
  grade.message = message;
  grade.has_verdict = status == "passed" || status == "failed";
  CheckCase c;
  c.name = "a check";
  c.passed = !failed_check;
  if (failed_check) c.failures.push_back({"expected: GPU 3 — observed: GPU 2", {}});
  if (grade.has_verdict) grade.verdict.cases = {c};
  return grade;
}

// The engine: each grading asked for, answered with `exercises` or `solutions`.
struct FakeGrader {
  std::vector<GradeOptions> asked;
  std::vector<LessonGrade> exercises;
  std::vector<LessonGrade> solutions;

  gpulab::grading::Grader grader() {
    return [this](const gpulab::Manifest&, const GradeOptions& options, std::ostream&) {
      asked.push_back(options);
      Grading grading;
      grading.lessons = options.solution ? solutions : exercises;
      return grading;
    };
  }
};

const gpulab::Manifest kManifest{};  // the fake grader reads none of it
const std::vector<gpulab::ListedLesson> kListed = {{"01", "01-meet-the-node"}, {"04", "04-which-gpu-is-cuda-1"}};

}  // namespace

TEST_CASE("the shipped lessons are graded twice, exercises then solutions, without placement runs", "[unit][grading]") {
  FakeGrader engine;
  engine.exercises = {graded("01", "failed", true), graded("04", "failed", true)};
  engine.solutions = {graded("01", "passed", false), graded("04", "passed", false)};
  CHECK(shipped_lesson_problems(kManifest, kListed, 42, engine.grader()).empty());  // lessons as they must be
  REQUIRE(engine.asked.size() == 2);
  CHECK_FALSE(engine.asked[0].solution);
  CHECK(engine.asked[1].solution);
  for (const auto& options : engine.asked) {
    CHECK(options.lessons == std::vector<std::string>{"01", "04"});
    CHECK(options.timeout_s == 42);
    CHECK_FALSE(options.placement);
    CHECK(options.root.empty());  // this tree
  }
}

TEST_CASE("an exercise that passes, or that does not compile, run and fail a check, is a problem with its file",
          "[unit][grading]") {
  FakeGrader engine;
  engine.exercises = {graded("01", "passed", false),
                      graded("04", "build_failed", false, "main.cpp:3: error: expected ';'\nIn function main\n")};
  engine.solutions = {graded("01", "passed", false), graded("04", "passed", false)};
  const auto problems = shipped_lesson_problems(kManifest, kListed, 60, engine.grader());
  CHECK(problems == std::vector<std::string>{
                        "lessons/01-meet-the-node/main.cpp: the shipped exercise passes its checks; leave the lesson's mistake "
                        "in it, or make the checks catch it",
                        "lessons/04-which-gpu-is-cuda-1/main.cpp: the shipped exercise must compile, run and fail its checks, "
                        "but: build_failed: main.cpp:3: error: expected ';'"});
}

TEST_CASE("an exercise that failed without a failed check (crashed, or the checks exited) is a problem", "[unit][grading]") {
  FakeGrader engine;
  engine.exercises = {graded("01", "crashed", false, "the checks crashed with SIGSEGV (signal 11) before giving a verdict\n"),
                      graded("04", "failed", false, "the checks exited with code 1\n")};
  engine.solutions = {graded("01", "passed", false), graded("04", "passed", false)};
  const auto problems = shipped_lesson_problems(kManifest, kListed, 60, engine.grader());
  REQUIRE(problems.size() == 2);
  CHECK(problems[0] == "lessons/01-meet-the-node/main.cpp: the shipped exercise must compile, run and fail its checks, but: "
                       "crashed: the checks crashed with SIGSEGV (signal 11) before giving a verdict");
  CHECK(problems[1] == "lessons/04-which-gpu-is-cuda-1/main.cpp: the shipped exercise must compile, run and fail its checks, "
                       "but: failed: the checks exited with code 1");
}

TEST_CASE("a solution that does not pass is a problem, with its first failure or why it gave none", "[unit][grading]") {
  FakeGrader engine;
  engine.exercises = {graded("01", "failed", true), graded("04", "failed", true)};
  engine.solutions = {graded("01", "failed", true), graded("04", "timed_out", false, "the checks did not finish within 60 s\nmore\n")};
  const auto problems = shipped_lesson_problems(kManifest, kListed, 60, engine.grader());
  CHECK(problems == std::vector<std::string>{
                        "solutions/01-meet-the-node/main.cpp: the solution fails its checks (failed): expected: GPU 3 — "
                        "observed: GPU 2; fix the solution or the checks",
                        "solutions/04-which-gpu-is-cuda-1/main.cpp: the solution does not pass its checks (timed_out): the "
                        "checks did not finish within 60 s; fix the solution or the checks"});
}
