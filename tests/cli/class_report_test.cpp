// gpulab class report (docs/class.md) on a class made by scripted tutorial runs: each
// student's tree holds only the .gpulab-progress that `gpulab start` wrote while a script
// answered lesson 01's questions. The counts the report gives must be the ones the scripts
// imply, and the answers it marks right the ones the tutor scored right. The truth comes
// from the lesson's own run and the manifest's answer key, never from a copy of an output.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "course/manifest.h"
#include "proc/process.h"
#include "proc/text_file.h"
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
  const LessonRun run = run_scenario("01", {}, {}, Target::Exercise);
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

namespace {

// Whether `text` is valid UTF-8 (shortest forms, no surrogates, at most U+10FFFF), checked
// here on its own rather than with the printable() under test.
bool valid_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = b(i);
    std::size_t n = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
    if (n == 0 || i + n > text.size()) return false;
    for (std::size_t k = 1; k < n; ++k)
      if ((b(i + k) & 0xC0) != 0x80) return false;
    if (c == 0xE0 && b(i + 1) < 0xA0) return false;   // overlong
    if (c == 0xED && b(i + 1) >= 0xA0) return false;  // a surrogate
    if (c == 0xF0 && b(i + 1) < 0x90) return false;   // overlong
    if (c == 0xF4 && b(i + 1) >= 0x90) return false;  // past U+10FFFF
    i += n;
  }
  return true;
}

// No escape byte, no other control character but newline, carriage return or tab.
bool no_control(const std::string& text) {
  return std::none_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\n' && c != '\r' && c != '\t') || u == 0x7F;
  });
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path.string(), std::ios::binary) << text;
}

const nlohmann::json* problem_of(const nlohmann::json& report, const std::string& student) {
  for (const auto& problem : report.at("problems"))
    if (problem.at("student") == student) return &problem;
  return nullptr;
}

// `gpulab class report ARGS --no-truth --json --html`, at most 60 s (a hang is a failure,
// not a wait): its output, and the JSON and the page it wrote.
struct Report {
  ProcessResult result;
  double seconds = 0;
  std::string json_text;
  std::string html;
};

Report class_report(const fs::path& root, std::vector<std::string> args) {
  args.insert(args.begin(), {bin_dir() + "/gpulab", "class", "report", "--no-truth", "--json", (root / "report.json").string(),
                             "--html", (root / "report.html").string()});
  ProcessOptions options;
  options.argv = args;
  options.env = {{"GPULAB_STATE_DIR", fresh_state_dir()}};
  options.timeout_s = 60;
  Report report;
  const auto started = std::chrono::steady_clock::now();
  report.result = run_process(options);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::error_code error;
  if (fs::exists(root / "report.json", error)) report.json_text = read_text_file(root / "report.json");
  if (fs::exists(root / "report.html", error)) report.html = read_text_file(root / "report.html");
  return report;
}

}  // namespace

TEST_CASE("class report survives a hostile class: a pipe, a 2 GB file, invalid UTF-8, escape codes, a link",
          "[class]") {
  const fs::path root = fresh_state_dir() + "/hostile";
  const fs::path cls = root / "class";
  // Honest students, and one each whose folder's name is hostile: they are reported.
  write(cls / "ann" / ".gpulab-progress", "lesson 01 passed predictions 2/2 explained 2/2\nanswers 01 predicted 1 0 explained a b\n");
  write(cls / "ben" / ".gpulab-progress", "lesson 01 started\nanswers 01 predicted 2 - explained b -\n");
  write(cls / "\x1b[2J\x1b[31mred" / ".gpulab-progress", "lesson 01 started\nanswers 01 predicted 1 0\n");
  write(cls / "\xff\xfe" / ".gpulab-progress", "lesson 01 started\n");
  write(cls / "class.json" / ".gpulab-progress", "lesson 01 started\n");
  // A named pipe: opened, it would wait for a writer forever.
  fs::create_directories(cls / "fifo");
  REQUIRE(mkfifo((cls / "fifo" / ".gpulab-progress").c_str(), 0600) == 0);
  // 2 GB with nothing in it (sparse): read whole, it took 10.5 GB and an abort.
  fs::create_directories(cls / "sparse");
  {
    const int fd = open((cls / "sparse" / ".gpulab-progress").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, off_t{2000} * 1000 * 1000) == 0);
    close(fd);
  }
  // A link to a file outside the class (here one that reads as a pass).
  write(root / "outside", "lesson 01 passed\n");
  fs::create_directories(cls / "link");
  fs::create_symlink(root / "outside", cls / "link" / ".gpulab-progress");
  // Invalid UTF-8 and terminal escape codes in answers, a lesson id and broken lines.
  write(cls / "utf8" / ".gpulab-progress",
        "lesson 01 started\nanswers 01 predicted \xff\xfe 0\xc3 explained \xe2\x80\xae\xc0\xaf\nlesson \xff\xfe started\n\xc3\x28 junk\n");
  write(cls / "escapes" / ".gpulab-progress",
        "lesson 01 started\nanswers 01 predicted \x1b[2J\x1b]0;owned\x07 \x1b[1;1H explained \x1b[31ma\n"
        "lesson \x1b[5m01 started\n\x1b[2K\rclass report: 0 of 0 students read\n");

  std::vector<std::string> dirs;
  for (const char* name : {"ann", "ben", "\x1b[2J\x1b[31mred", "\xff\xfe", "class.json", "fifo", "sparse", "link", "utf8", "escapes"})
    dirs.push_back((cls / name).string());
  const Report report = class_report(root, dirs);
  INFO(report.result.out << report.result.err);
  REQUIRE_FALSE(report.result.timed_out);  // finishes: the pipe is never opened
  CHECK(report.result.exit_code == 0);
  WARN("class report on the hostile class: " << report.seconds << " s");

  // No raw escape byte, no invalid UTF-8 anywhere it writes.
  for (const std::string* text : {&report.result.out, &report.result.err, &report.json_text, &report.html}) {
    CHECK(valid_utf8(*text));
    CHECK(no_control(*text));
    CHECK(text->find('\x1b') == std::string::npos);
  }
  REQUIRE_FALSE(report.json_text.empty());
  const nlohmann::json json = nlohmann::json::parse(report.json_text);
  CHECK(json.at("passed_from") == "self-reported");

  // Each bad student under problems, not counted; the rest of the class reported.
  CHECK(report.result.out.find("\nproblems:\n") != std::string::npos);
  for (const char* bad : {"fifo", "sparse", "link"}) {
    const nlohmann::json* problem = problem_of(json, bad);
    REQUIRE(problem != nullptr);
    CHECK(problem->at("counted") == false);
    CHECK(report.result.out.find(std::string("  ") + bad + ": its progress file") != std::string::npos);
  }
  CHECK(problem_of(json, "fifo")->at("what").get<std::string>().find("named pipe") != std::string::npos);
  CHECK(problem_of(json, "sparse")->at("what").get<std::string>().find("more than the 1.0 MiB read") != std::string::npos);
  CHECK(problem_of(json, "link")->at("what").get<std::string>().find("symbolic link") != std::string::npos);
  for (const char* skipped : {"utf8", "escapes"}) {  // their broken lines and unknown lessons: listed, the rest counted
    const nlohmann::json* problem = problem_of(json, skipped);
    REQUIRE(problem != nullptr);
    CHECK(problem->at("counted") == true);
  }
  CHECK(json.at("students") == 7);
  CHECK(json.at("names") == nlohmann::json::array({"ann", "ben", "__2J__31mred", "__", "class.json-2", "fifo", "sparse",
                                                   "link", "utf8", "escapes"}));
  REQUIRE(json.at("lessons").size() == 1);
  CHECK(json.at("lessons")[0].at("started") == 7);
  CHECK(json.at("lessons")[0].at("passed") == 1);  // ann; the link's pass is not read
  CHECK(count_of(json.at("lessons")[0].at("questions")[0], "1") == 2);
  CHECK(report.result.out.find("class report: 7 of 10 students read") != std::string::npos);
}

TEST_CASE("class report --grades: passed comes from class grade's results, predictions from the progress files",
          "[class]") {
  const fs::path root = fresh_state_dir() + "/graded";
  // ann passed lesson 01 in grading, her progress file says started; ben's says passed, he failed.
  write(root / "ann" / ".gpulab-progress", "lesson 01 started\nanswers 01 predicted 1 0\n");
  write(root / "ben" / ".gpulab-progress", "lesson 01 passed\nanswers 01 predicted 2 0\n");
  write(root / "cat" / ".gpulab-progress", "lesson 01 passed\n");
  // class grade's output as it writes it (src/grading/class_grade.cpp): class.json and a
  // grading.json per student; cat's grading.json is a named pipe.
  const fs::path out = root / "grades";
  write(out / "class.json", R"({"students": [
      {"student": "ann", "status": "graded", "passed": 1, "lessons": {"01": "passed"}, "limits_hit": [], "message": "", "seconds": 9},
      {"student": "ben", "status": "graded", "passed": 0, "lessons": {"01": "failed"}, "limits_hit": [], "message": "", "seconds": 9},
      {"student": "cat", "status": "graded", "passed": 1, "lessons": {"01": "passed"}, "limits_hit": [], "message": "", "seconds": 9},
      {"student": "dan", "status": "graded", "passed": 0, "lessons": {"01": "failed"}, "limits_hit": [], "message": "", "seconds": 9}],
    "lessons": {"01": {"passed": 2, "graded": 4}}, "box": "rlimits"})");
  auto grading = [](const std::string& name, const std::string& status) {
    return nlohmann::json{{"student", name}, {"status", "graded"}, {"limits_hit", nlohmann::json::array()}, {"message", ""},
                          {"grading", {{"lessons", {{{"id", "01"}, {"status", status}}}}, {"passed", status == "passed" ? 1 : 0},
                                       {"failed", status == "passed" ? 0 : 1}}}}.dump(2);
  };
  write(out / "ann" / "grading.json", grading("ann", "passed"));
  write(out / "ben" / "grading.json", grading("ben", "failed"));
  fs::create_directories(out / "cat");
  REQUIRE(mkfifo((out / "cat" / "grading.json").c_str(), 0600) == 0);

  const std::vector<std::string> dirs = {(root / "ann").string(), (root / "ben").string(), (root / "cat").string()};
  std::vector<std::string> graded_args = dirs;
  graded_args.insert(graded_args.end(), {"--grades", out.string()});
  const Report graded = class_report(root, graded_args);
  INFO(graded.result.out << graded.result.err);
  REQUIRE_FALSE(graded.result.timed_out);
  CHECK(graded.result.exit_code == 0);
  const nlohmann::json json = nlohmann::json::parse(graded.json_text);
  CHECK(json.at("passed_from") == "class grade");
  REQUIRE(json.at("lessons").size() == 1);
  CHECK(json.at("lessons")[0].at("passed") == 1);  // ann's, by grading
  CHECK(json.at("lessons")[0].at("graded") == 2);  // ann and ben: cat's grade could not be read
  CHECK(json.at("lessons")[0].at("started") == 3);
  CHECK(count_of(json.at("lessons")[0].at("questions")[0], "1") == 1);  // predictions: the progress files
  REQUIRE(problem_of(json, "cat") != nullptr);
  CHECK(problem_of(json, "cat")->at("what").get<std::string>().find("named pipe") != std::string::npos);
  REQUIRE(problem_of(json, "dan") != nullptr);  // graded, but not given
  CHECK(graded.result.out.find("passed: class grade's results") != std::string::npos);
  CHECK(graded.result.out.find("passed 1 of 2 graded (50%, class grade)") != std::string::npos);
  CHECK(graded.html.find("passed (class grade)") != std::string::npos);

  // Without --grades, every form says whose word "passed" is.
  const Report self = class_report(root, dirs);
  CHECK(self.result.exit_code == 0);
  CHECK(nlohmann::json::parse(self.json_text).at("lessons")[0].at("passed") == 2);
  CHECK(nlohmann::json::parse(self.json_text).at("passed_from") == "self-reported");
  CHECK(self.result.out.find("passed 2 of 3 started (67%, self-reported)") != std::string::npos);
  CHECK(self.html.find("passed (self-reported)") != std::string::npos);

  // A --grades folder that is not there is a usage error.
  std::vector<std::string> missing = dirs;
  missing.insert(missing.end(), {"--grades", (root / "nowhere").string()});
  CHECK(class_report(root, missing).result.exit_code == 2);
}
