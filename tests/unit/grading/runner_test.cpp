// The one runner (grading/runner.h run_lesson_program): what a lesson's run asks of the system (each
// program's command line, environment, folder and time limit, one run or steps or ranks
// under the launcher) and how it reads what the programs answered (their printed reports,
// or the reports they left in GPULAB_REPORT_DIR). The programs are a fake that records what
// it was asked and answers as a lesson would.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "grading/runner.h"
#include "proc/temp_dir.h"

namespace fs = std::filesystem;
using gpulab::LessonEntry;
using gpulab::Outcome;
using gpulab::ProcessOptions;
using gpulab::ProcessResult;
using gpulab::RunDocument;
using gpulab::TempDir;
using gpulab::grading::Programs;
using gpulab::grading::run_lesson_program;
using gpulab::grading::RunRequest;
using nlohmann::json;

namespace {

// A lesson report as a lesson program writes it (docs/report-schema.md).
std::string report(const std::string& lesson, int pid) {
  const json env = {{"CUDA_VISIBLE_DEVICES", nullptr}, {"CUDA_DEVICE_ORDER", nullptr}, {"GPULAB_NODE", nullptr}};
  return json{{"lesson", lesson}, {"backend", "sim"}, {"node", "dgx-a100"}, {"pid", pid}, {"env", env},
              {"env_at_exit", env}, {"exit_code", 0}, {"facts", json::object()}, {"errors", json::array()},
              {"observations", json::array()}}
             .dump();
}

std::optional<std::string> variable(const ProcessOptions& options, const std::string& name) {
  std::optional<std::string> value;
  bool found = false;
  for (const auto& [key, v] : options.env)
    if (key == name) {
      value = v;
      found = true;
    }
  if (!found) FAIL("no " << name << " in the program's environment");
  return value;
}

std::vector<std::string> names_of(const ProcessOptions& options) {
  std::vector<std::string> names;
  for (const auto& entry : options.env) names.push_back(entry.first);
  return names;
}

// The lesson programs: every run asked, each answered by `answer` (by default: exited 0
// having printed its report).
struct FakePrograms {
  std::vector<ProcessOptions> calls;
  std::function<ProcessResult(const ProcessOptions&, std::size_t)> answer = [](const ProcessOptions&, std::size_t) {
    return ProcessResult{0, 0, false, report("04", 100), ""};
  };

  gpulab::grading::ProcessRun run() {
    return [this](const ProcessOptions& options) {
      calls.push_back(options);
      // What the run could write is there while it runs.
      CHECK(fs::is_directory(*variable(options, "GPULAB_REPORT_DIR")));
      return answer(options, calls.size() - 1);
    };
  }
};

// Names no one sets, for a scenario's variables.
constexpr const char* kVisible = "GPULAB_UNIT_RUNNER_VISIBLE";
constexpr const char* kOrder = "GPULAB_UNIT_RUNNER_ORDER";

LessonEntry lesson04() {
  LessonEntry lesson;
  lesson.id = "04";
  lesson.slug = "which-gpu-is-cuda-1";
  lesson.env = {{kVisible, "2,3,4,5"}};
  lesson.args = {"--gpu", "3"};
  return lesson;
}

LessonEntry lesson_in_steps() {
  LessonEntry lesson;
  lesson.id = "16";
  lesson.env = {{kVisible, "0"}};
  lesson.args = {"--ignored"};
  lesson.steps = {{"save on dgx-a100", {{kOrder, "PCI_BUS_ID"}}, {"--save", "model.pt"}},
                  {"load on tiny2", {}, {"--load", "model.pt"}},
                  {"load again", {}, {"--load", "model.pt", "--twice"}}};
  return lesson;
}

LessonEntry launched_lesson() {
  LessonEntry lesson;
  lesson.id = "15";
  lesson.nproc_per_node = 4;
  lesson.nnodes = 2;
  lesson.args = {"--epochs", "1"};
  return lesson;
}

}  // namespace

TEST_CASE("a one-process lesson runs its program with the manifest's arguments, the caller's variables under the scenario's",
          "[unit][grading][runner]") {
  FakePrograms programs;
  programs.answer = [](const ProcessOptions&, std::size_t) { return ProcessResult{0, 0, false, report("04", 7), "a warning\n"}; };
  RunRequest request;
  request.json = true;
  request.timeout_s = 45;
  request.extra_env = {{"GPULAB_STATE_DIR", "/state"}};
  const auto run = run_lesson_program(lesson04(), request, {"/build/bin", {}, ""}, programs.run());
  REQUIRE(programs.calls.size() == 1);
  const ProcessOptions& asked = programs.calls[0];
  CHECK(asked.argv == std::vector<std::string>{"/build/bin/lesson-04", "--gpu", "3", "--json"});
  CHECK(asked.capture);  // --json: the report comes back whole
  CHECK(asked.timeout_s == 45);
  CHECK(asked.working_directory.empty());  // the learner's own folder
  CHECK(names_of(asked) == std::vector<std::string>{"GPULAB_STATE_DIR", kVisible, "GPULAB_REPORT_DIR"});
  CHECK(variable(asked, kVisible) == "2,3,4,5");
  CHECK(run.outcome == Outcome::kOk);
  CHECK(run.what.empty());
  CHECK(run.err == "a warning\n");
  CHECK(run.document.kind == RunDocument::Kind::kSingle);
  REQUIRE(run.document.parts.size() == 1);
  REQUIRE(run.document.parts[0].report);
  CHECK(run.document.parts[0].report->pid == 7);
}

TEST_CASE("the solution, a student's programs folder, and the learner's own arguments instead of the manifest's",
          "[unit][grading][runner]") {
  FakePrograms programs;
  RunRequest request;
  request.solution = true;
  request.args = {"--gpu", "5"};
  const auto run = run_lesson_program(lesson04(), request, {"/build/bin", {}, "/grading/alice/bin"}, programs.run());
  REQUIRE(programs.calls.size() == 1);
  CHECK(programs.calls[0].argv == std::vector<std::string>{"/grading/alice/bin/solution-04", "--gpu", "5"});
  CHECK_FALSE(programs.calls[0].capture);  // not --json: its output streams to ours
  CHECK(run.outcome == Outcome::kOk);
}

TEST_CASE("the learner's own setting of a scenario variable wins; a grader's placement run sets the scenario alone",
          "[unit][grading][runner]") {
  setenv(kVisible, "7", 1);
  FakePrograms programs;
  RunRequest request;
  run_lesson_program(lesson04(), request, {"/build/bin", {}, ""}, programs.run());
  request.learner_env = false;
  run_lesson_program(lesson04(), request, {"/build/bin", {}, ""}, programs.run());
  unsetenv(kVisible);
  REQUIRE(programs.calls.size() == 2);
  // The learner's: theirs is inherited, the scenario does not set it.
  CHECK(names_of(programs.calls[0]) == std::vector<std::string>{"GPULAB_REPORT_DIR"});
  // The grader's: the learner's placement variables removed, then the scenario's.
  const ProcessOptions& placement = programs.calls[1];
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "GPULAB_NODE", "NVIDIA_VISIBLE_DEVICES"})
    CHECK(variable(placement, name) == std::nullopt);
  CHECK(variable(placement, kVisible) == "2,3,4,5");
}

TEST_CASE("a scenario's banner says each variable, and which are the learner's", "[unit][grading][runner]") {
  setenv(kOrder, "FASTEST_FIRST", 1);
  const auto scenario = gpulab::grading::scenario_of({{kVisible, "2,3"}, {kOrder, "PCI_BUS_ID"}});
  const auto alone = gpulab::grading::scenario_of({{kVisible, "2,3"}, {kOrder, "PCI_BUS_ID"}}, false);
  unsetenv(kOrder);
  CHECK(scenario.banner == std::string(" ") + kVisible + "=2,3 " + kOrder + "=FASTEST_FIRST (yours)");
  REQUIRE(scenario.env.size() == 1);
  CHECK(scenario.env[0].first == kVisible);
  CHECK(alone.env.size() == 2);
  CHECK(alone.banner == std::string(" ") + kVisible + "=2,3 " + kOrder + "=PCI_BUS_ID");
}

TEST_CASE("a program's end decides the run's outcome", "[unit][grading][runner]") {
  struct Case {
    ProcessResult end;
    Outcome outcome;
    std::string what;
  };
  for (const Case& c : {Case{{-1, 11, false, "", ""}, Outcome::kCrashed, "crashed with SIGSEGV (signal 11)"},
                        Case{{-1, 9, true, "", ""}, Outcome::kTimedOut, "did not finish within 30 s and was stopped"},
                        Case{{1, 0, false, "", ""}, Outcome::kChecksFailed, ""}}) {
    FakePrograms programs;
    programs.answer = [&c](const ProcessOptions&, std::size_t) { return c.end; };
    RunRequest request;
    request.timeout_s = 30;
    const auto run = run_lesson_program(lesson04(), request, {"/build/bin", {}, ""}, programs.run());
    CHECK(run.outcome == c.outcome);
    CHECK(run.what == c.what);
    CHECK(run.last.exit_code == c.end.exit_code);
  }
}

TEST_CASE("what a program printed that is no report is kept, with why", "[unit][grading][runner]") {
  FakePrograms programs;
  programs.answer = [](const ProcessOptions&, std::size_t) { return ProcessResult{0, 0, false, "Segmentation fault?\n", ""}; };
  RunRequest request;
  request.json = true;
  const auto run = run_lesson_program(lesson04(), request, {"/build/bin", {}, ""}, programs.run());
  REQUIRE(run.document.parts.size() == 1);
  CHECK_FALSE(run.document.parts[0].report);
  CHECK(run.document.parts[0].json == "Segmentation fault?\n");
  CHECK_FALSE(run.document.parts[0].problem.empty());
}

TEST_CASE("a lesson in steps runs each in order in a folder of its own, told, until one fails", "[unit][grading][runner]") {
  const TempDir build("runner");
  const std::string bin = build.path() + "/bin";
  FakePrograms programs;
  programs.answer = [](const ProcessOptions&, std::size_t i) {
    return ProcessResult{i == 1 ? 1 : 0, 0, false, report("16", 200 + static_cast<int>(i)), ""};
  };
  std::vector<std::string> told;
  RunRequest request;
  request.json = true;
  request.on_step = [&told](std::size_t i, std::size_t n, const std::string& text) {
    told.push_back(std::to_string(i) + "/" + std::to_string(n) + " " + text);
  };
  const auto run = run_lesson_program(lesson_in_steps(), request, {bin, {}, ""}, programs.run());
  const std::string folder = bin + "/../lesson-work/16";
  CHECK(fs::is_directory(folder));  // the steps' shared files go here, not in the learner's tree
  REQUIRE(programs.calls.size() == 2);  // the third step never runs
  CHECK(programs.calls[0].argv == std::vector<std::string>{bin + "/lesson-16", "--save", "model.pt", "--json"});
  CHECK(programs.calls[1].argv == std::vector<std::string>{bin + "/lesson-16", "--load", "model.pt", "--json"});
  for (const auto& call : programs.calls) CHECK(call.working_directory == folder);
  // The step's variables come after the scenario's.
  CHECK(names_of(programs.calls[0]) == std::vector<std::string>{kVisible, kOrder, "GPULAB_REPORT_DIR"});
  CHECK(names_of(programs.calls[1]) == std::vector<std::string>{kVisible, "GPULAB_REPORT_DIR"});
  CHECK(told == std::vector<std::string>{std::string("1/3 save on dgx-a100: ") + kOrder + "=PCI_BUS_ID --save model.pt",
                                         "2/3 load on tiny2: --load model.pt"});
  CHECK(run.outcome == Outcome::kChecksFailed);
  CHECK(run.document.kind == RunDocument::Kind::kSteps);
  REQUIRE(run.document.parts.size() == 2);
  CHECK(run.document.parts[0].report->pid == 200);
  CHECK(run.document.parts[1].report->pid == 201);
}

TEST_CASE("the learner's own arguments make a lesson in steps one run", "[unit][grading][runner]") {
  const TempDir build("runner");
  FakePrograms programs;
  RunRequest request;
  request.json = true;
  request.args = {"--load", "mine.pt"};
  const auto run = run_lesson_program(lesson_in_steps(), request, {build.path() + "/bin", {}, ""}, programs.run());
  REQUIRE(programs.calls.size() == 1);
  CHECK(programs.calls[0].argv == std::vector<std::string>{build.path() + "/bin/lesson-16", "--load", "mine.pt", "--json"});
  CHECK(run.document.kind == RunDocument::Kind::kSingle);
}

TEST_CASE("a launched lesson runs under gpulab launch, and its ranks' reports are read from its folder in rank order",
          "[unit][grading][runner]") {
  FakePrograms programs;
  programs.answer = [](const ProcessOptions& options, std::size_t) {
    const std::string folder = *variable(options, "GPULAB_REPORT_DIR");
    std::ofstream(folder + "/rank1.json") << report("15", 301);
    std::ofstream(folder + "/rank0.json") << report("15", 300);
    std::ofstream(folder + "/rank3.json") << report("15", 303);  // after a gap: not a rank of this run
    std::ofstream(folder + "/launch.json") << "not a summary";    // no hosts to name, no failure
    return ProcessResult{0, 0, false, "launcher's own output\n", "launcher's errors\n"};
  };
  std::string launch_line;
  std::vector<RunDocument> pictured;
  RunRequest request;
  request.on_launch = [&launch_line](const std::string& line) { launch_line = line; };
  request.after_step = [&pictured](const RunDocument& document) { pictured.push_back(document); };
  const auto run = run_lesson_program(launched_lesson(), request, {"/build/bin", {}, ""}, programs.run());
  REQUIRE(programs.calls.size() == 1);
  const std::string folder = *variable(programs.calls[0], "GPULAB_REPORT_DIR");
  CHECK(programs.calls[0].argv == std::vector<std::string>{"/build/bin/gpulab", "launch", "--nproc-per-node", "4", "--nnodes", "2",
                                                           "--summary-json", folder + "/launch.json", "--", "/build/bin/lesson-15",
                                                           "--epochs", "1"});
  CHECK(launch_line == "gpulab launch --nproc-per-node 4 --nnodes 2 -- build/bin/lesson-15 --epochs 1");
  REQUIRE(pictured.size() == 1);
  CHECK(pictured[0].kind == RunDocument::Kind::kRanks);
  REQUIRE(pictured[0].parts.size() == 2);
  CHECK(pictured[0].parts[0].rank == 0);
  CHECK(pictured[0].parts[0].report->pid == 300);
  CHECK(pictured[0].parts[1].rank == 1);
  CHECK(pictured[0].parts[1].report->pid == 301);
  CHECK_FALSE(pictured[0].launch);
  CHECK(run.err.empty());  // not a launcher's
}

TEST_CASE("a launched lesson with --json: the launcher quiet, the document from the folder", "[unit][grading][runner]") {
  FakePrograms programs;
  programs.answer = [](const ProcessOptions& options, std::size_t) {
    std::ofstream(*variable(options, "GPULAB_REPORT_DIR") + "/rank0.json") << report("15", 300);
    return ProcessResult{0, 0, false, "", "launcher's errors\n"};
  };
  bool launch_told = false;
  RunRequest request;
  request.json = true;
  request.on_launch = [&launch_told](const std::string&) { launch_told = true; };
  const auto run = run_lesson_program(launched_lesson(), request, {"/build/bin", {}, ""}, programs.run());
  REQUIRE(programs.calls.size() == 1);
  const auto& argv = programs.calls[0].argv;
  REQUIRE(argv.size() > 7);
  CHECK(argv[6] == "--quiet");
  CHECK(argv.back() == "--json");
  CHECK_FALSE(launch_told);
  CHECK(run.document.kind == RunDocument::Kind::kRanks);
  REQUIRE(run.document.parts.size() == 1);
  CHECK(run.document.parts[0].report->pid == 300);
  CHECK(run.err.empty());
}

TEST_CASE("a one-process run streamed: its report is read from its folder for the picture, unless it crashed",
          "[unit][grading][runner]") {
  FakePrograms programs;
  bool crash = false;
  programs.answer = [&crash](const ProcessOptions& options, std::size_t) {
    const std::string folder = *variable(options, "GPULAB_REPORT_DIR");
    std::ofstream(folder + "/99.json") << "{\"lesson\": 1}";  // not a valid report
    std::ofstream(folder + "/100.json") << report("04", 100);
    std::ofstream(folder + "/notes.txt") << report("04", 101);  // not a .json
    return crash ? ProcessResult{-1, 6, false, "", ""} : ProcessResult{0, 0, false, "", ""};
  };
  std::vector<RunDocument> pictured;
  RunRequest request;
  request.after_step = [&pictured](const RunDocument& document) { pictured.push_back(document); };
  run_lesson_program(lesson04(), request, {"/build/bin", {}, ""}, programs.run());
  REQUIRE(pictured.size() == 1);
  REQUIRE(pictured[0].parts.size() == 1);
  REQUIRE(pictured[0].parts[0].report);
  CHECK(pictured[0].parts[0].report->pid == 100);
  crash = true;
  const auto run = run_lesson_program(lesson04(), request, {"/build/bin", {}, ""}, programs.run());
  CHECK(pictured.size() == 1);  // no picture of a crash
  CHECK(run.outcome == Outcome::kCrashed);
}
