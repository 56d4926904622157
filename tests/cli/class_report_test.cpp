// gpulab class report (docs/class.md) on a class made by scripted tutorial runs: each
// student's tree holds only the .gpulab-progress that `gpulab start` wrote while a script
// answered lesson 01's questions. The counts the report gives must be the ones the scripts
// imply, and the answers it marks right the ones the tutor scored right. The truth comes
// from the lesson's own run and the manifest's answer key, never from a copy of an output.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "course/manifest.h"
#include "proc/process.h"
#include "proc/temp_dir.h"
#include "lesson_run.h"

using namespace gpulab;
using namespace gpulab::test;
namespace fs = std::filesystem;

namespace {

// `gpulab start --no-watch --lesson 01` answering `typed` (one answer a line), with the
// progress file in `tree`; the input ends after the answers, and so does the tutorial.
void scripted_tutorial(const std::string& tree, const std::string& typed) {
  fs::create_directories(tree);
  const std::string answers = fresh_state_dir() + "/typed";
  std::ofstream(answers) << typed;
  ProcessOptions options;
  options.argv = {"sh", "-c", "exec \"$0\" start --no-watch --lesson 01 < \"$1\"", bin_dir() + "/gpulab", answers};
  options.env = {{"GPULAB_BUILD_DIR", std::string(GPULAB_TEST_BUILD_DIR)}, {"GPULAB_STATE_DIR", fresh_state_dir()},
                 {"GPULAB_PROGRESS_FILE", tree + "/.gpulab-progress"}, {"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"CUDA_DEVICE_ORDER", std::nullopt}, {"GPULAB_NODE", std::nullopt}};
  options.timeout_s = 600;
  const ProcessResult result = run_process(options);
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  REQUIRE(result.out.find("predictions: ") != std::string::npos);
}

// The count of `answer` in a question of the report's JSON (0 when not listed).
int count_of(const nlohmann::json& question, const std::string& answer) {
  for (const auto& a : question.at("answers"))
    if (a.at("answer") == answer) return a.at("count").get<int>();
  return 0;
}

// The answers the report marks right.
std::vector<std::string> marked_right(const nlohmann::json& question) {
  std::vector<std::string> right;
  for (const auto& a : question.at("answers"))
    if (a.at("right").get<bool>()) right.push_back(a.at("answer").get<std::string>());
  return right;
}

}  // namespace

TEST_CASE("class report counts a scripted class's answers and marks the truth the tutor scored with", "[class]") {
  // The truth, from the exercise's own run and the answer key. Built first: another test
  // (the tutorial's never-ending save) may have left a different lesson-01 in bin/.
  ProcessOptions build;
  // Under the build folder's lock, as ./gpulab and the grader build (one Ninja at a time).
  build.argv = {"flock", std::string(GPULAB_TEST_BUILD_DIR) + "/.gpulab-build.lock", "cmake", "--build", GPULAB_TEST_BUILD_DIR,
                "--target", "lesson-01"};
  build.timeout_s = 600;
  const ProcessResult built = run_process(build);
  INFO(built.out << built.err);
  REQUIRE(built.ok());
  const LessonRun run = run_lesson("01", {}, {}, Target::Exercise);
  const std::string visible = run.fact("visible_devices").dump();
  const std::string last = run.report.at("observations").back().at("label").get<std::string>();
  const int x_gpu = run.physical_of(last, "x");
  REQUIRE(x_gpu >= 0);
  const LessonEntry lesson = load_manifest().find("01");
  REQUIRE(lesson.predictions.size() == 2);
  REQUIRE(lesson.predictions[0].explain);
  REQUIRE(lesson.predictions[1].explain);
  const std::string why1(1, static_cast<char>('a' + lesson.predictions[0].explain->answer));
  const std::string why2(1, static_cast<char>('a' + lesson.predictions[1].explain->answer));
  const std::string wrong2(1, static_cast<char>('a' + (lesson.predictions[1].explain->answer + 1) %
                                                          lesson.predictions[1].explain->choices.size()));
  const std::string wrong_count = visible == "1" ? "2" : "1";
  const std::string next_gpu = std::to_string(x_gpu + 1);

  const fs::path root = fresh_state_dir() + "/class";
  // ann: everything right; ben: the second prediction and the second why wrong; cat: both
  // predictions wrong, and the input ends before the why questions (no answer).
  scripted_tutorial(root / "ann", visible + "\n" + std::to_string(x_gpu) + "\n" + why1 + "\n" + why2 + "\n");
  scripted_tutorial(root / "ben", visible + "\n" + next_gpu + "\n" + why1 + "\n" + wrong2 + "\n");
  scripted_tutorial(root / "cat", wrong_count + "\ncpu\n");
  const std::string ann_progress = read_text_file(root / "ann" / ".gpulab-progress");
  REQUIRE(ann_progress.find("lesson 01 started predictions 2/2 explained 2/2") != std::string::npos);
  // dan: ann's file, then a line a hand edit broke; eve: a checkout with no progress file.
  fs::create_directories(root / "dan");
  std::ofstream(root / "dan" / ".gpulab-progress") << ann_progress << "lesson\n";
  const int broken_line = static_cast<int>(std::count(ann_progress.begin(), ann_progress.end(), '\n')) + 1;
  fs::create_directories(root / "eve");

  const std::string json_file = root / "report.json";
  const std::string html_file = root / "report.html";
  ProcessOptions report;
  report.argv = {bin_dir() + "/gpulab", "class", "report", root / "ann", root / "ben", root / "cat", (root / "dan").string() + "/",
                 root / "eve", root / "nobody", "--json", json_file, "--html", html_file};
  report.env = {{"GPULAB_STATE_DIR", fresh_state_dir()}, {"CUDA_VISIBLE_DEVICES", "7"}};  // the scenario wins over the shell
  report.timeout_s = 600;
  const ProcessResult result = run_process(report);
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);  // written, though some students had problems
  CHECK(result.out.find("problems") != std::string::npos);
  for (const char* name : {"ann", "ben", "cat", "dan", "eve", "nobody"})  // folder names, never paths
    CHECK(result.out.find((root / name).string()) == std::string::npos);

  const nlohmann::json json = nlohmann::json::parse(read_text_file(json_file));
  CHECK(json.at("students") == 4);
  CHECK(json.at("truth_run") == true);
  CHECK(json.at("profile").get<std::string>().rfind("PyTorch ", 0) == 0);
  REQUIRE(json.at("lessons").size() == 1);
  const auto& l = json.at("lessons")[0];
  CHECK(l.at("id") == "01");
  CHECK(l.at("started") == 4);
  CHECK(l.at("passed") == 0);
  const auto& q = l.at("questions");
  REQUIRE(q.size() == 4);  // prediction 1, why 1, prediction 2, why 2

  CHECK(q[0].at("kind") == "prediction");
  CHECK(count_of(q[0], visible) == 3);
  CHECK(count_of(q[0], wrong_count) == 1);
  CHECK(q[0].at("no_answer") == 0);
  CHECK(marked_right(q[0]) == std::vector<std::string>{visible});

  CHECK(q[1].at("kind") == "explain");
  CHECK(count_of(q[1], why1) == 3);
  CHECK(q[1].at("no_answer") == 1);
  CHECK(marked_right(q[1]) == std::vector<std::string>{why1});

  CHECK(count_of(q[2], std::to_string(x_gpu)) == 2);
  CHECK(count_of(q[2], next_gpu) == 1);
  CHECK(count_of(q[2], "cpu") == 1);
  CHECK(marked_right(q[2]) == std::vector<std::string>{std::to_string(x_gpu)});

  CHECK(count_of(q[3], why2) == 2);
  CHECK(count_of(q[3], wrong2) == 1);
  CHECK(q[3].at("no_answer") == 1);
  CHECK(marked_right(q[3]) == std::vector<std::string>{why2});

  // The right answers are the ones the tutor scored right: ann's, who scored 2 of 2.
  CHECK(ann_progress.find("answers 01 predicted " + visible + " " + std::to_string(x_gpu) + " explained " + why1 + " " +
                          why2) != std::string::npos);

  const auto& problems = json.at("problems");
  REQUIRE(problems.size() == 3);
  CHECK(problems[0].at("student") == "dan");
  CHECK(problems[0].at("lines") == nlohmann::json::array({broken_line}));
  CHECK(problems[0].at("counted") == true);
  CHECK(problems[1].at("student") == "eve");
  CHECK(problems[1].at("counted") == false);
  CHECK(problems[2].at("student") == "nobody");
  CHECK(problems[2].at("what") == "no such folder");

  const std::string html = read_text_file(html_file);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
}

TEST_CASE("class report without a folder is a usage error", "[class]") {
  ProcessOptions report;
  report.argv = {bin_dir() + "/gpulab", "class", "report"};
  const ProcessResult result = run_process(report);
  CHECK(result.exit_code == 2);
  CHECK(result.err.find("dirs") != std::string::npos);
}
