// The tutorial's transitions (src/tutor/tutor.h): events in, actions out, no terminal and
// no lesson program: builds, runs and checks are answered here by hand.
#include <algorithm>

#include <catch2/catch.hpp>

#include "report/run_document.h"
#include "tutor/tutor.h"

using namespace gpulab;
using namespace gpulab::tutor;
using Kind = Action::Kind;

namespace {

Prediction question(const std::string& observe, const std::string& subject) {
  Prediction p;
  p.question = "where is " + subject + "?";
  p.observe = observe;
  p.subject = subject;
  p.why = "because of " + subject;
  return p;
}

LessonEntry lesson(const std::string& id, std::vector<Prediction> predictions, std::vector<std::string> hints) {
  LessonEntry l;
  l.id = id;
  l.slug = "lesson-" + id;
  l.title = "Lesson " + id;
  l.goal = "the goal of " + id;
  l.predictions = std::move(predictions);
  l.hints = std::move(hints);
  return l;
}

Manifest two_lessons() {
  Manifest m;
  m.root = "/nowhere";
  Prediction x = question("tensor", "x");
  x.explain = Prediction::Explain{"why there?", {"the list", "the current device", "the bus order"}, 1};
  m.lessons.push_back(lesson("01", {question("fact", "device_count"), x}, {"one", "two", "three"}));
  m.lessons.push_back(lesson("02", {}, {}));
  m.lessons.back().stretch = "go further";
  return m;
}

Tutor tutor_with(Progress progress = {}, TutorOptions options = {}) {
  return Tutor(two_lessons(), std::move(progress), std::move(options), "/tmp/progress");
}

// Everything the actions print, in order.
std::string printed(const Actions& actions) {
  std::string text;
  for (const auto& action : actions)
    if (action.kind == Kind::kPrint) text += action.text;
  return text;
}

bool has(const Actions& actions, Kind kind) {
  return std::any_of(actions.begin(), actions.end(), [&](const Action& a) { return a.kind == kind; });
}

// A report where device_count is 4 and x is on physical GPU 3, as a run document.
grading::RunResult run_showing_x_on_3() {
  grading::RunResult run;
  run.document = parse_run_document(R"({"lesson": "01", "backend": "sim", "node": "dgx-a100", "pid": 4242,
    "env": {"CUDA_VISIBLE_DEVICES": null, "CUDA_DEVICE_ORDER": null, "GPULAB_NODE": null},
    "env_at_exit": {"CUDA_VISIBLE_DEVICES": null, "CUDA_DEVICE_ORDER": null, "GPULAB_NODE": null},
    "exit_code": 0, "facts": {"device_count": 4},
    "observations": [{"label": "end", "gpus": [{"physical_index": 3, "used_bytes": 1048576, "context": true}],
                      "tensors": [{"name": "x", "device": "cuda:3", "physical_index": 3}]}],
    "errors": []})");
  return run;
}

grading::ChecksResult checks_passed() {
  grading::ChecksResult checks;
  checks.outcome = Outcome::kOk;
  checks.has_verdict = true;
  CheckCase one;
  one.name = "x lands on physical GPU 3";
  one.passed = true;
  checks.verdict.cases.push_back(one);
  return checks;
}

}  // namespace

TEST_CASE("a lesson numbered past a gap says where it is in the course", "[tutor]") {
  Manifest m = two_lessons();
  m.lessons.back().id = "19";
  Progress progress;
  progress.current = "19";
  Tutor tutor(std::move(m), std::move(progress), {}, "/tmp/progress");
  CHECK(printed(tutor.start()).find("== lesson 19 (2 of 2): Lesson 02") != std::string::npos);
}

TEST_CASE("a new learner enters the first lesson not passed and is asked its predictions", "[tutor]") {
  Tutor tutor = tutor_with();
  const Actions actions = tutor.start();
  const std::string text = printed(actions);
  CHECK(text.find("Welcome to gpulab") != std::string::npos);
  CHECK(text.find("progress 0/2 [....................]") != std::string::npos);
  CHECK(text.find("== lesson 01 of 2: Lesson 01") != std::string::npos);
  // Nothing before the predictions gives them away: no goal, no exercise (its TODO), no text.
  CHECK(text.find("goal") == std::string::npos);
  CHECK(text.find("main.cpp") == std::string::npos);
  CHECK(text.find("README") == std::string::npos);
  CHECK(text.find("Before it runs, predict (2 questions):") != std::string::npos);
  CHECK(text.find("  1. where is device_count?\n     (a number)> ") != std::string::npos);
  CHECK(has(actions, Kind::kSave));
  CHECK_FALSE(has(actions, Kind::kBuild));  // nothing runs before the answers
  CHECK(tutor.awaiting() == Awaiting::kAnswer);
  CHECK(tutor.progress().current == "01");
}

TEST_CASE("a learner who passed lesson 01 starts at 02, which runs at once (no predictions)", "[tutor]") {
  Progress progress;
  progress.lessons["01"].passed = true;
  Tutor tutor = tutor_with(progress);
  const Actions actions = tutor.start();
  CHECK(printed(actions).find("== lesson 02 of 2") != std::string::npos);
  REQUIRE(actions.back().kind == Kind::kBuild);
  CHECK(actions.back().targets == std::vector<std::string>{"lesson-02"});
  CHECK(tutor.on_built({}).front().kind == Kind::kRun);
  const std::string after = printed(tutor.on_run(run_showing_x_on_3()));
  CHECK(after.find("Edit lessons/02-lesson-02/main.cpp and save: it is checked as you save.") != std::string::npos);
}

TEST_CASE("answers are scored against the run's report, and the score is recorded", "[tutor]") {
  Tutor tutor = tutor_with();
  tutor.start();
  CHECK(printed(tutor.on_answer("4")).find("  2. where is x?\n     (a physical GPU number, or cpu)> ") != std::string::npos);
  CHECK(printed(tutor.on_answer("gpu seven")).find("     please answer with a physical GPU number, or cpu") != std::string::npos);
  const Actions run = tutor.on_answer("GPU 2");  // wrong on purpose
  CHECK(printed(run).find("running lesson 01 as it is now...") != std::string::npos);
  REQUIRE(run.back().kind == Kind::kBuild);
  const Actions built = tutor.on_built({});
  REQUIRE(built.front().kind == Kind::kRun);
  CHECK_FALSE(built.front().checks_follow);  // the predictions' run: no checks to start beside it
  const Actions scored = tutor.on_run(run_showing_x_on_3());
  const std::string text = printed(scored);
  CHECK(text.find("  1. you said 4, the run shows 4: right.") != std::string::npos);
  CHECK(text.find("  2. you said 2, the run shows 3: not quite.\n") != std::string::npos);
  CHECK(text.find("  predictions: 1 of 2 right") != std::string::npos);
  CHECK(has(scored, Kind::kSave));
  CHECK(tutor.progress().lessons.at("01").predictions_right == 1);
  CHECK(tutor.progress().lessons.at("01").predictions_asked == 2);
  CHECK(tutor.progress().lessons.at("01").predicted == std::vector<std::string>{"4", "2"});
  // Observed; now explain: the why and the task wait for the learner's reason.
  CHECK(text.find("because of") == std::string::npos);
  CHECK(text.find("goal") == std::string::npos);
  CHECK(text.find("  2. why there?\n     a) the list\n     b) the current device\n     c) the bus order\n     (a, b or c)> ") !=
        std::string::npos);
  CHECK(tutor.awaiting() == Awaiting::kAnswer);
  CHECK(printed(tutor.on_answer("d")).find("please answer with a letter, a, b or c") != std::string::npos);
  const std::string explained = printed(tutor.on_answer("a"));  // wrong: it is b
  CHECK(explained.find("not quite: it is b).") != std::string::npos);
  // Every why, right or wrong, then the task.
  CHECK(explained.find("  1. because of device_count\n  2. because of x\n") != std::string::npos);
  CHECK(explained.find("  explained: 0 of 1 right") != std::string::npos);
  CHECK(explained.find("   goal: the goal of 01") != std::string::npos);
  CHECK(explained.find("Edit lessons/01-lesson-01/main.cpp and save") != std::string::npos);
  CHECK(tutor.progress().lessons.at("01").explained_right == 0);
  CHECK(tutor.progress().lessons.at("01").explained_asked == 1);
  CHECK(tutor.progress().lessons.at("01").explained == std::vector<std::string>{"a"});
  CHECK(tutor.awaiting() == Awaiting::kCommand);
}

TEST_CASE("the right reason is scored right, and the progress file keeps every answer", "[tutor]") {
  Tutor tutor = tutor_with();
  tutor.start();
  tutor.on_answer("8");
  tutor.on_answer("3");
  tutor.on_built({});
  tutor.on_run(run_showing_x_on_3());
  CHECK(printed(tutor.on_answer("B)")).find("     right.\n") != std::string::npos);
  const LessonProgress& mine = tutor.progress().lessons.at("01");
  CHECK(mine.explained_right == 1);
  const std::string file = progress_text(tutor.progress());
  CHECK(file.find("lesson 01 started predictions 1/2 explained 1/1\n") != std::string::npos);
  CHECK(file.find("answers 01 predicted 8 3 explained b\n") != std::string::npos);
  const Progress back = parse_progress(file);
  CHECK(back.lessons.at("01").predicted == mine.predicted);
  CHECK(back.lessons.at("01").explained == mine.explained);
  CHECK(back.lessons.at("01").explained_right == 1);
}

TEST_CASE("three unreadable answers, or the end of input, leave a question unanswered", "[tutor]") {
  Tutor tutor = tutor_with();
  tutor.start();
  tutor.on_answer("");
  tutor.on_answer("  ");
  const std::string third = printed(tutor.on_answer(""));
  CHECK(third.find("please answer with a number") != std::string::npos);
  CHECK(third.find("  2. where is x?") != std::string::npos);
  const Actions ended = tutor.on_end();
  REQUIRE(ended.back().kind == Kind::kBuild);
  tutor.on_built({});
  const std::string text = printed(tutor.on_run(run_showing_x_on_3()));
  CHECK(text.find("you said (no answer), the run shows 4: not quite.") != std::string::npos);
  CHECK(text.find("predictions: 0 of 2 right") != std::string::npos);
}

TEST_CASE("n on the last lesson says it is the last, p on the first says it is the first", "[tutor]") {
  Progress progress;
  progress.lessons["01"].predictions_right = 2;
  Tutor tutor = tutor_with(progress);
  tutor.start();
  CHECK(printed(tutor.on_key('p')) == "this is the first lesson.\n");
  const Actions next = tutor.on_key('n');
  CHECK(printed(next).find("== lesson 02 of 2") != std::string::npos);
  CHECK(tutor.lesson().id == "02");
  CHECK(printed(tutor.on_key('n')) == "that was the last lesson. l lists them all.\n");
  CHECK(printed(tutor.on_key('l')).find(">") != std::string::npos);
}

TEST_CASE("h gives the hints one level at a time, up to the last", "[tutor]") {
  Progress progress;
  progress.lessons["01"].predictions_right = 2;
  Tutor tutor = tutor_with(progress);
  tutor.start();
  CHECK(printed(tutor.on_key('h')) == "hint 1 of 3: one\n");
  CHECK(printed(tutor.on_key('h')) == "hint 2 of 3: two\n");
  CHECK(printed(tutor.on_key('h')) == "hint 3 of 3: three\n");
  CHECK(printed(tutor.on_key('h')) == "hint 3 of 3: three\n");
  CHECK(tutor.hint_level("01") == 3);
  tutor.on_key('n');
  CHECK(printed(tutor.on_key('h')) == "this lesson has no hints.\n");
}

TEST_CASE("h stops at the hint cap of a student edition's class file", "[tutor][student-edition]") {
  Progress progress;
  progress.lessons["01"].predictions_right = 2;
  TutorOptions options;
  options.class_settings = gpulab::parse_class_file("hints = all-but-last\n", "student-edition.conf");
  Tutor tutor = tutor_with(progress, options);
  tutor.start();
  CHECK(printed(tutor.on_key('h')) == "hint 1 of 3: one\n");
  CHECK(printed(tutor.on_key('h')) == "hint 2 of 3: two\n");
  CHECK(printed(tutor.on_key('h')) ==
        "that was the last hint your class allows for this lesson: 2 of 3 (student-edition.conf).\n");
  CHECK(tutor.hint_level("01") == 2);

  options.class_settings = gpulab::parse_class_file("hints.01 = none\n", "student-edition.conf");
  Tutor without = tutor_with(progress, options);
  without.start();
  CHECK(printed(without.on_key('h')).rfind("your class has no hints for this lesson (student-edition.conf)", 0) == 0);
  CHECK(without.hint_level("01") == 0);
}

TEST_CASE("a save rebuilds, runs and checks, passed checks record passed and advance progress", "[tutor]") {
  Progress progress;
  progress.lessons["01"].predictions_right = 2;
  Tutor tutor = tutor_with(progress);
  tutor.start();
  const Actions saved = tutor.on_saved();
  CHECK(printed(saved).find("saved: lessons/01-lesson-01/main.cpp — rebuilding lesson 01") != std::string::npos);
  REQUIRE(saved.back().kind == Kind::kBuild);
  CHECK(saved.back().targets == std::vector<std::string>{"lesson-01", "lesson01-checks"});
  const Actions built = tutor.on_built({});
  REQUIRE(built.front().kind == Kind::kRun);
  CHECK(built.front().checks_follow);  // the runner may start the checks beside the picture
  const Actions ran = tutor.on_run(run_showing_x_on_3());
  REQUIRE(ran.back().kind == Kind::kCheck);
  CHECK_FALSE(ran.back().stretch);
  CHECK(printed(ran).find("== lesson 01: checking your exercise's task (lessons/01-lesson-01/main.cpp)") != std::string::npos);
  const Actions checked = tutor.on_checks(checks_passed());
  const std::string text = printed(checked);
  CHECK(text.find("lesson 01: the task passes its checks (1 of 1).") != std::string::npos);
  CHECK(text.find("lesson 01 passed. progress 1/2 [##########..........]. Press n for the next lesson.") != std::string::npos);
  CHECK(has(checked, Kind::kSave));
  CHECK(tutor.progress().lessons.at("01").passed);
  CHECK(tutor.progress().passed_count() == 1);
  tutor.on_key('c');
  tutor.on_built({});
  tutor.on_run(run_showing_x_on_3());
  CHECK(printed(tutor.on_checks(checks_passed())).find("lesson 01 passed again.") != std::string::npos);
}

TEST_CASE("failed checks say not yet and record nothing", "[tutor]") {
  Progress progress;
  progress.lessons["01"].predictions_right = 2;
  Tutor tutor = tutor_with(progress);
  tutor.start();
  tutor.on_key('c');
  tutor.on_built({});
  tutor.on_run(run_showing_x_on_3());
  grading::ChecksResult failed = checks_passed();
  failed.outcome = Outcome::kChecksFailed;
  failed.verdict.cases.front().passed = false;
  const Actions checked = tutor.on_checks(failed);
  CHECK(printed(checked).find("lesson 01: not yet — 1 of 1 checks failed. Stuck? ./gpulab hint 01") != std::string::npos);
  CHECK_FALSE(has(checked, Kind::kSave));
  CHECK_FALSE(tutor.progress().lessons.at("01").passed);
}

TEST_CASE("a compile error, a time-out and a crash are told and the tutorial goes on", "[tutor]") {
  Progress progress;
  progress.lessons["01"].predictions_right = 2;
  TutorOptions options;
  options.timeout_s = 10;
  Tutor tutor = tutor_with(progress, options);
  tutor.start();  // its first run: the compiler says no
  grading::BuildResult broken;
  broken.ok = false;
  broken.messages = "lessons/01-lesson-01/main.cpp:3:1: error: expected ';'\n";
  const std::string compile = printed(tutor.on_built(broken));
  CHECK(compile.find("error: expected ';'\nthe exercise does not compile yet (the compiler's messages are above).") != std::string::npos);
  CHECK(compile.find("Edit lessons/01-lesson-01/main.cpp and save") != std::string::npos);
  tutor.on_key('r');
  grading::RunResult hung;
  hung.outcome = Outcome::kTimedOut;
  tutor.on_built({});
  CHECK(printed(tutor.on_run(hung)).find("lesson 01 did not finish within 10 s") != std::string::npos);
  tutor.on_key('c');
  tutor.on_built({});
  grading::RunResult crashed;
  crashed.outcome = Outcome::kCrashed;
  crashed.what = "crashed with SIGSEGV (signal 11)";
  crashed.err = "Segmentation fault\n";
  const Actions after_crash = tutor.on_run(crashed);
  CHECK(printed(after_crash).find("Segmentation fault\n") != std::string::npos);
  CHECK(printed(after_crash).find("lesson 01 crashed (the message is above).") != std::string::npos);
  CHECK_FALSE(has(after_crash, Kind::kCheck));  // no checks after a crash
}

TEST_CASE("x asks before it resets, s runs the stretch checks, a checks all, q quits", "[tutor]") {
  Progress progress;
  progress.lessons["01"].predictions_right = 2;
  Tutor tutor = tutor_with(progress);
  tutor.start();
  CHECK(printed(tutor.on_key('x')) == "reset lessons/01-lesson-01/main.cpp? Your file is backed up first. [y/N] ");
  CHECK(tutor.awaiting() == Awaiting::kConfirm);
  CHECK(printed(tutor.on_confirm("n")) == "\nnot reset.\n");
  tutor.on_key('x');
  CHECK(has(tutor.on_confirm("y"), Kind::kReset));
  CHECK(printed(tutor.on_key('s')) == "this lesson has no stretch task.\n");
  tutor.on_key('n');
  const Actions stretch = tutor.on_key('s');
  CHECK(printed(stretch) == "stretch: go further\n");
  const Actions built = tutor.on_built({});
  REQUIRE(built.back().kind == Kind::kCheck);
  CHECK(built.back().stretch);
  CHECK(tutor.on_key('a').front().kind == Kind::kCheckAll);
  CHECK(printed(tutor.on_key('?')).find("keys: [n]ext") != std::string::npos);
  const Actions quit = tutor.on_key('q');
  CHECK(printed(quit) == "bye — your progress is in /tmp/progress\n");
  CHECK(has(quit, Kind::kQuit));
  CHECK(has(tutor.on_end(), Kind::kQuit));
}

TEST_CASE("the lesson it starts at comes from --lesson or the progress file, and an unknown lesson is refused", "[tutor]") {
  TutorOptions options;
  options.lesson = "2";
  CHECK(tutor_with({}, options).lesson().id == "02");
  Progress progress;
  progress.current = "02";
  CHECK(tutor_with(progress).lesson().id == "02");
  options.lesson = "42";
  CHECK_THROWS(tutor_with({}, options));
}

TEST_CASE("a build that cannot start ends the job, and the lesson's first screen still ends", "[tutor]") {
  Progress progress;
  progress.lessons["01"].predictions_right = 2;
  Tutor tutor = tutor_with(progress);
  tutor.start();
  const std::string text = printed(tutor.on_error("cannot run ninja"));
  CHECK(text.find("(cannot run ninja; the tutorial goes on)") != std::string::npos);
  CHECK(text.find("Edit lessons/01-lesson-01/main.cpp and save") != std::string::npos);
  CHECK(tutor.on_run(run_showing_x_on_3()).empty());  // no job: a late result is ignored
}

// gpulab start builds the lesson the tutorial will open before its first question
// (cli/start.cpp, from the Tutor it starts): the same choice as the tutorial's own.
TEST_CASE("the tutorial starts at --lesson, else the current lesson, else the first not passed", "[tutor]") {
  const Manifest manifest = two_lessons();
  Progress progress;
  CHECK(starting_lesson(manifest, progress, "") == 0);
  progress.lessons["01"].passed = true;
  CHECK(starting_lesson(manifest, progress, "") == 1);
  progress.current = "01";
  CHECK(starting_lesson(manifest, progress, "") == 0);
  CHECK(starting_lesson(manifest, progress, "2") == 1);
  CHECK_THROWS(starting_lesson(manifest, progress, "42"));
  progress.lessons["02"].passed = true;
  progress.current.clear();
  CHECK(starting_lesson(manifest, progress, "") == 1);  // every lesson passed: the last
}
