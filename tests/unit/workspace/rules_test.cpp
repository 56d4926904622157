// The learner's rules (src/workspace/rules.h) and the workspace that answers them
// (src/workspace/workspace.h), on hand-made lessons, progress and class files: hint caps,
// predicted yet, the verdict, summary, crash and build-failure lines, the lesson's names,
// what a learner builds next.
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <catch2/catch.hpp>

#include "workspace/workspace.h"

using namespace gpulab;

namespace {

LessonEntry lesson(const std::string& id, int hints = 3) {
  LessonEntry l;
  l.id = id;
  l.slug = "the-slug";
  l.title = "Lesson " + id;
  for (int i = 1; i <= hints; ++i) l.hints.push_back("hint " + std::to_string(i));
  return l;
}

Manifest three_lessons() {
  Manifest m;
  m.root = "/nowhere";
  for (const char* id : {"01", "02", "03"}) m.lessons.push_back(lesson(id));
  return m;
}

grading::ChecksResult checks(Outcome outcome, int passed, int failed) {
  grading::ChecksResult result;
  result.outcome = outcome;
  result.has_verdict = true;
  for (int i = 0; i < passed + failed; ++i) {
    CheckCase c;
    c.name = "check " + std::to_string(i);
    c.passed = i < passed;
    result.verdict.cases.push_back(c);
  }
  return result;
}

}  // namespace

TEST_CASE("what a lesson's files and build targets are called", "[workspace]") {
  const LessonEntry l = lesson("04");
  CHECK(l.source_file() == "lessons/04-the-slug/main.cpp");
  CHECK(l.source_file(true) == "solutions/04-the-slug/main.cpp");
  CHECK(l.explanation_file() == "lessons/04-the-slug/EXPLAIN.md");
  CHECK(l.program_target() == "lesson-04");
  CHECK(l.program_target(true) == "solution-04");
  CHECK(l.checks_target() == "lesson04-checks");
}

TEST_CASE("hint caps: every hint without a class file, the class's cap with one", "[workspace]") {
  const LessonEntry l = lesson("01");
  CHECK(hints_allowed(std::nullopt, l) == 3);
  CHECK(hints_allowed(parse_class_file("hints = all-but-last\n", "student-edition.conf"), l) == 2);
  CHECK(hints_allowed(parse_class_file("hints.01 = none\n", "student-edition.conf"), l) == 0);

  const HintReply two = hint_reply(std::nullopt, l, 2);
  CHECK(two.out == "Hint 1/3: hint 1\nHint 2/3: hint 2\n(more: ./gpulab hint 01 3)\n");
  CHECK(two.outcome == Outcome::kOk);
  const HintReply beyond = hint_reply(std::nullopt, l, 4);
  CHECK(beyond.err == "gpulab: lesson 01 has hints 1 to 3; there is no hint 4\n");
  CHECK(beyond.outcome == Outcome::kUsage);
  const auto capped = parse_class_file("hints = all-but-last\n", "student-edition.conf");
  CHECK(hint_reply(capped, l, 2).out.find("(that is the last hint your class allows for this lesson: 2 of 3)") !=
        std::string::npos);
  CHECK(hint_reply(capped, l, 3).err.find("your class allows hints 1 to 2 of lesson 01's 3") != std::string::npos);
  CHECK(hint_reply(parse_class_file("hints = none\n", "student-edition.conf"), l, 1).outcome == Outcome::kUsage);
  CHECK(hint_reply(std::nullopt, lesson("02", 0), 1).out == "Lesson 02 has no hints.\n");
}

TEST_CASE("predicted yet: once the lesson's predictions were scored, not before", "[workspace]") {
  Progress progress;
  CHECK_FALSE(predicted(progress, "01"));
  progress.lessons["01"].passed = true;  // passed, never predicted
  CHECK_FALSE(predicted(progress, "01"));
  progress.lessons["01"].predictions_right = 0;  // scored, none right: predicted all the same
  CHECK(predicted(progress, "01"));
  CHECK(predicted(progress.lessons["01"]));
}

TEST_CASE("the verdict, summary and crash lines", "[workspace]") {
  LessonEntry l = lesson("04");
  CHECK(checks_header(l, false) == "== lesson 04: checking your exercise's task (lessons/04-the-slug/main.cpp)\n");
  CHECK(checks_header(l, true, true) == "== lesson 04: checking the solution's stretch task (solutions/04-the-slug/main.cpp)\n");
  l.args = {"--steps", "2"};
  CHECK(run_banner(l, false, " CUDA_VISIBLE_DEVICES=2,3", {}) ==
        "== lesson 04: Lesson 04 (lessons/04-the-slug/main.cpp)\n   scenario: CUDA_VISIBLE_DEVICES=2,3 --steps 2\n");
  CHECK(run_banner(l, true, "", {"x"}) == "== lesson 04: Lesson 04 (solutions/04-the-slug/main.cpp)\n   scenario: x\n");
  l.args.clear();
  CHECK(run_banner(l, false, "", {}) == "== lesson 04: Lesson 04 (lessons/04-the-slug/main.cpp)\n");
  CHECK(crash_line(l, "crashed with SIGSEGV (signal 11)") ==
        "gpulab: lesson 04 crashed with SIGSEGV (signal 11). Your files are untouched; fix the code and run it again.\n");

  l.stretch = "go further";
  const std::string passed = verdict_lines(l, checks(Outcome::kOk, 2, 0), false);
  CHECK(passed.find("\nlesson 04: the task passes its checks (2 of 2).\nStretch (optional): go further\n  ./gpulab check 04 --stretch\n") !=
        std::string::npos);
  CHECK(verdict_lines(l, checks(Outcome::kOk, 2, 0), true).find("Stretch") == std::string::npos);
  grading::ChecksResult failing = checks(Outcome::kChecksFailed, 1, 2);
  failing.program_ends = "lesson-04 crashed with SIGSEGV (signal 11).\n";
  const std::string not_yet = verdict_lines(l, failing, false);
  CHECK(not_yet.find("\nYour program lesson-04 crashed") != std::string::npos);
  CHECK(not_yet.find("\nlesson 04: not yet — 2 of 3 checks failed. Stuck? ./gpulab hint 04\n") != std::string::npos);
  // Raw (check --verbose): Catch2 said the rest; no counts.
  grading::ChecksResult raw;
  raw.outcome = Outcome::kOk;
  CHECK(verdict_lines(l, raw, false, true).rfind("\nlesson 04: the task passes its checks.\n", 0) == 0);
  raw.outcome = Outcome::kChecksFailed;
  CHECK(verdict_lines(l, raw, false, true) == "\nlesson 04: not yet. Stuck? ./gpulab hint 04\n");

  grading::ChecksResult none;
  none.no_stretch_task = true;
  CHECK(verdict_lines(l, none, true) == "lesson 04 has no stretch task.\n");

  grading::Grading grading;
  grading.root = "/tree";
  grading.target = "exercise";
  grading.lessons.resize(3);
  grading.lessons[0].status = "passed";
  grading.lessons[1].status = "failed";
  grading.lessons[2].status = "passed";
  CHECK(grading_summary(grading) == "\n3 lessons: 2 passed, 1 failed (exercises of /tree)\n");

  grading::BuildResult broken;
  broken.ok = false;
  broken.failures = {{"lesson-04", "main.cpp:1: error\n"}};
  broken.messages = "main.cpp:1: error\n";
  CHECK(build_failure_text(broken, {"lesson-04", "lesson04-checks"}) ==
        "main.cpp:1: error\ngpulab: error: could not build lesson-04 (the compiler's messages are above; your file is unchanged)\n");
}

TEST_CASE("what a learner builds next: the lesson's checks, the next lessons, the earlier, the solutions", "[workspace]") {
  const Manifest m = three_lessons();
  CHECK(targets_ahead(m, 1, true) == std::vector<std::string>{"lesson02-checks", "lesson-03", "lesson03-checks", "lesson-01",
                                                              "lesson01-checks", "solution-02", "solution-03", "solution-01"});
  CHECK(targets_ahead(m, 0, false) ==
        std::vector<std::string>{"lesson01-checks", "lesson-02", "lesson02-checks", "lesson-03", "lesson03-checks"});
}

TEST_CASE("the goal and the explanation, from the lesson's files", "[workspace]") {
  CHECK(goal_of_text("#include <x>\n  // TODO: put x on\n  //   physical GPU 3.\nint main() {}\n") == "put x on physical GPU 3.");
  CHECK(goal_of_text("int main() {}\n") == "");
  LessonEntry l = lesson("04");
  Prediction p;
  p.question = "where?";
  p.why = "because.";
  l.predictions = {p};
  CHECK(explanation_text(l, "# Why\nIt ran there. <!-- run: x on 3 -->\n") ==
        "# Why\nIt ran there.\n\nThe predictions' answers, as the tutorial explains them:\n  1. where?\n     because.\n");
}

TEST_CASE("a workspace of given parts answers the rules from them, and saves its progress", "[workspace]") {
  char dir[] = "/tmp/gpulab-workspace-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string file = std::string(dir) + "/progress";
  Progress progress;
  progress.lessons["02"].predictions_right = 1;
  Workspace workspace(three_lessons(), progress, parse_class_file("hints.03 = 1\n", "student-edition.conf"), file);
  CHECK(workspace.lesson("3").id == "03");
  CHECK(workspace.hints_allowed(workspace.lesson("03")) == 1);
  CHECK(workspace.hints_allowed(workspace.lesson("01")) == 3);
  CHECK(workspace.predicted("02"));
  CHECK_FALSE(workspace.predicted("01"));
  CHECK(workspace.targets_ahead(2).front() == "lesson03-checks");
  CHECK_THROWS_AS(workspace.explanation(workspace.lesson("01")), Failure);  // /nowhere has none

  progress.lessons["01"].predictions_right = 0;
  workspace.save_progress(progress);
  CHECK(workspace.predicted("01"));
  CHECK(load_progress(file).lessons.at("01").predictions_right == 0);
  std::remove(file.c_str());
  rmdir(dir);
}
