// The learner's path, end to end: every command a learner types, through the ./gpulab
// script exactly as typed, for every lesson in lessons/manifest.json (so a new lesson is
// covered without editing this file). GPULAB_E2E_LESSON=NN limits the lesson tests to one
// lesson: CTest runs one test per lesson, in parallel.
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "course/manifest.h"
#include "model/node.h"
#include "course/predictions.h"
#include "proc/process.h"
#include "report/report_reader.h"
#include "model/visibility.h"
#include "lesson_run.h"

using namespace gpulab;
using namespace gpulab::test;

namespace {

// What a command line produced.
struct Typed {
  std::string line;
  ProcessResult result;
};

// Runs `./gpulab <args>` from the repository root with a clean CUDA environment, against
// this build folder, on a fresh simulated node; `env` comes on top.
Typed type(const std::vector<std::string>& args,
           const std::vector<std::pair<std::string, std::optional<std::string>>>& env = {}) {
  ProcessOptions options;
  options.argv = {source_dir() + "/gpulab"};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.env = {{"GPULAB_BUILD_DIR", std::string(GPULAB_TEST_BUILD_DIR)},
                 {"GPULAB_STATE_DIR", fresh_state_dir()},
                 {"GPULAB_PROGRESS_FILE", fresh_state_dir() + "/progress"},  // never the learner's own
                 {"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"CUDA_DEVICE_ORDER", std::nullopt},
                 {"GPULAB_NODE", std::nullopt}};
  options.env.insert(options.env.end(), env.begin(), env.end());
  options.working_directory = source_dir();
  options.timeout_s = 600;
  Typed typed{"./gpulab", run_process(options)};
  for (const auto& arg : args) typed.line += " " + arg;
  return typed;
}

#define SHOW(typed)                                                                            \
  INFO("$ " << (typed).line << "\n-> " << (typed).result.outcome(600) << "\nstdout:\n" \
            << (typed).result.out << "\nstderr:\n" << (typed).result.err)

int lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n' ? 1 : 0;
  return n;
}

// A program that ran to its end: not a crash (4), a time-out (5) or a usage error (2).
bool ran(const Typed& typed) { return typed.result.exit_code == 0 || typed.result.exit_code == 1; }

std::vector<LessonEntry> lessons_under_test() {
  const auto manifest = load_manifest(source_dir() + "/lessons/manifest.json");
  const char* only = std::getenv("GPULAB_E2E_LESSON");
  if (only == nullptr) return manifest.lessons;
  return {manifest.find(only)};
}

}  // namespace

TEST_CASE("run: every lesson runs as typed, with and without its leading zero, as exercise and solution", "[lessons]") {
  for (const auto& lesson : lessons_under_test()) {
    const std::string short_id = std::to_string(std::stoi(lesson.id));
    DYNAMIC_SECTION("lesson " << lesson.id) {
      for (const auto& args : std::vector<std::vector<std::string>>{{"run", lesson.id}, {"run", short_id}}) {
        const auto typed = type(args);
        SHOW(typed);
        CHECK(ran(typed));
        CHECK(typed.result.err.find("== lesson " + lesson.id + ": " + lesson.title) != std::string::npos);
        CHECK(typed.result.err.find("std::bad_alloc") == std::string::npos);
      }
      const auto solution = type({"run", lesson.id, "--solution"});
      SHOW(solution);
      CHECK(solution.result.exit_code == 0);

      for (const auto& args : std::vector<std::vector<std::string>>{{"run", lesson.id, "--json"},
                                                                     {"run", lesson.id, "--solution", "--json"}}) {
        const auto typed = type(args);
        SHOW(typed);
        REQUIRE(ran(typed));
        // The report follows docs/report-schema.md, field by field. A launched lesson prints
        // every rank's report ({"ranks": [...], "launch": summary}), a lesson in steps each
        // step's ({"steps": [...]}).
        std::vector<std::string> reports{typed.result.out};
        if (lesson.launched() || !lesson.steps.empty()) {
          nlohmann::json document;
          REQUIRE_NOTHROW(document = nlohmann::json::parse(typed.result.out));
          const auto& parts = document.at(lesson.launched() ? "ranks" : "steps");
          // Every rank and step reports when all goes well; a failing exercise stops early.
          const std::size_t all = lesson.launched() ? static_cast<std::size_t>(lesson.nproc_per_node * lesson.nnodes)
                                                    : lesson.steps.size();
          CHECK(!parts.empty());
          CHECK(parts.size() <= all);
          if (args.size() == 4) CHECK(parts.size() == all);  // run NN --solution --json
          reports.clear();
          for (const auto& part : parts) reports.push_back(part.dump());
          if (lesson.launched()) CHECK(document.at("launch").at("exit_code").get<int>() == typed.result.exit_code);
        }
        for (const auto& text : reports) {
          Report report;
          REQUIRE_NOTHROW(report = parse_report(text));
          CHECK(report.lesson == lesson.id);
          if (!lesson.launched() && lesson.steps.empty()) CHECK(report.exit_code == typed.result.exit_code);
        }
        // Every prediction `gpulab start` asks can be scored from the exercise's own run: its
        // labels, tensors, facts and ranks exist in the report (a typo would leave it unscorable).
        if (args.size() == 3) {
          const RunDocument document = parse_run_document(typed.result.out);
          for (const auto& prediction : lesson.predictions) {
            INFO("prediction: " << prediction.question);
            CHECK(observed_answer(prediction, document).has_value());
          }
        }
      }
    }
  }
}

TEST_CASE("check: the shipped exercise fails in the learner's terms; the solution passes", "[lessons]") {
  for (const auto& lesson : lessons_under_test()) {
    DYNAMIC_SECTION("lesson " << lesson.id) {
      const auto exercise = type({"check", lesson.id});
      SHOW(exercise);
      CHECK(exercise.result.exit_code == 1);
      const auto& verdict = exercise.result.out;
      CHECK(verdict.find("✗ ") != std::string::npos);
      CHECK(verdict.find("expected: ") != std::string::npos);
      CHECK(verdict.find("not yet") != std::string::npos);
      CHECK(verdict.find("./gpulab hint " + lesson.id) != std::string::npos);
      // No Catch2 banner, no paths of this machine, nothing that reads like a crash, and no
      // C++ expression where a physical fact belongs ("expected: a == b — observed: 1 == 2").
      for (const std::string& noise : {std::string("Catch"), std::string("=========="), source_dir() + "/",
                                       std::string("exited with code"), std::string("<?xml"), std::string(" == "),
                                       std::string("std::"), std::string("static_cast")})
        CHECK(verdict.find(noise) == std::string::npos);

      const auto solution = type({"check", lesson.id, "--solution"});
      SHOW(solution);
      CHECK(solution.result.exit_code == 0);
      CHECK(solution.result.out.find("passes its checks") != std::string::npos);
      CHECK(solution.result.out.find("✗ ") == std::string::npos);

      // The stretch task: its own checks, passed by the solution, offered once the task passes.
      if (!lesson.stretch.empty()) {
        CHECK(solution.result.out.find("Stretch (optional): " + lesson.stretch) != std::string::npos);
        const auto stretch = type({"check", lesson.id, "--solution", "--stretch"});
        SHOW(stretch);
        CHECK(stretch.result.exit_code == 0);
        CHECK(stretch.result.out.find("stretch task passes its checks") != std::string::npos);
      }
    }
  }
}

TEST_CASE("hint: 1 to k give progressively more; 0 and k+1 are a one-line usage error", "[lessons]") {
  for (const auto& lesson : lessons_under_test()) {
    DYNAMIC_SECTION("lesson " << lesson.id) {
      const int count = static_cast<int>(lesson.hints.size());
      REQUIRE(count >= 1);
      for (int level = 1; level <= count; ++level) {
        const auto typed = type({"hint", lesson.id, std::to_string(level)});
        SHOW(typed);
        CHECK(typed.result.exit_code == 0);
        CHECK(typed.result.out.find("Hint " + std::to_string(level) + "/" + std::to_string(count)) != std::string::npos);
        CHECK(typed.result.out.find(lesson.hints[static_cast<std::size_t>(level - 1)]) != std::string::npos);
      }
      for (int level : {0, count + 1}) {
        const auto typed = type({"hint", lesson.id, std::to_string(level)});
        SHOW(typed);
        CHECK(typed.result.exit_code == 2);
        CHECK(lines(typed.result.err) == 1);
      }
    }
  }
}

TEST_CASE("the commands around the lessons", "[commands]") {
  SECTION("start enters the tutorial at the first lesson, asks its predictions, and ends at the end of input") {
    const auto typed = type({"start"});  // stdin: nothing to read, as from a script
    SHOW(typed);
    CHECK(typed.result.exit_code == 0);
    const auto lessons = load_manifest(source_dir() + "/lessons/manifest.json").lessons;
    REQUIRE_FALSE(lessons.empty());
    const std::string total = std::to_string(lessons.size());
    CHECK(typed.result.out.find("progress 0/" + total) != std::string::npos);
    CHECK(typed.result.out.find("== lesson " + lessons.front().id + " of " + total + ": " + lessons.front().title) !=
          std::string::npos);
    CHECK(typed.result.out.find("Before it runs, predict") != std::string::npos);
    CHECK(typed.result.out.find("bye") != std::string::npos);
  }
  SECTION("list, devices, smi, nodes and help succeed") {
    for (const auto& args : std::vector<std::vector<std::string>>{{"list"}, {"devices"}, {"smi"}, {"nodes"}, {"help"}}) {
      const auto typed = type(args);
      SHOW(typed);
      CHECK(typed.result.exit_code == 0);
      CHECK_FALSE(typed.result.out.empty());
    }
  }
  SECTION("run explains where CUDA cut CUDA_VISIBLE_DEVICES short only after the predictions, or with --explain") {
    // A lesson whose scenario CUDA cuts short, found from the manifest and the visibility rules.
    const Manifest manifest = load_manifest(source_dir() + "/lessons/manifest.json");
    std::string id, note;
    for (const auto& lesson : manifest.lessons) {
      std::optional<std::string> visible;
      for (const auto& [name, value] : lesson.env)
        if (name == "CUDA_VISIBLE_DEVICES") visible = value;
      bool default_node = true;
      for (const auto& [name, value] : lesson.env) default_node = default_node && name != "GPULAB_NODE";
      if (!visible || !default_node || !lesson.steps.empty() || lesson.launched()) continue;
      if (const auto explained = explain_visibility(load_selected_node(), visible, DeviceOrder::FastestFirst)) {
        id = lesson.id;
        note = *explained;
        break;
      }
    }
    REQUIRE_FALSE(id.empty());  // lesson 08's scenario is one
    const std::pair<std::string, std::optional<std::string>> wide{"COLUMNS", "400"};  // the note on one line
    const auto before = type({"run", id}, {wide});
    SHOW(before);
    CHECK(ran(before));
    CHECK(before.result.err.find(note) == std::string::npos);
    CHECK(before.result.out.find(note) == std::string::npos);
    CHECK(before.result.out.find("cut short") == std::string::npos);
    const auto asked = type({"run", id, "--explain"}, {wide});
    SHOW(asked);
    CHECK(asked.result.out.find(note) != std::string::npos);
    const std::string answered = fresh_state_dir() + "/progress";
    std::ofstream(answered) << "lesson " << id << " started predictions 0/1\n";
    const auto after = type({"run", id}, {wide, {"GPULAB_PROGRESS_FILE", answered}});
    SHOW(after);
    CHECK(after.result.out.find(note) != std::string::npos);
  }
  SECTION("an unknown subcommand is a one-line usage error") {
    const auto typed = type({"frobnicate"});
    SHOW(typed);
    CHECK(typed.result.exit_code == 2);
    CHECK(lines(typed.result.err) == 1);
  }
  SECTION("an unknown lesson is named, with the lessons there are") {
    for (const std::string bad : {"99", "abc"}) {
      for (const std::string command : {"run", "check", "hint"}) {
        const auto typed = type({command, bad});
        SHOW(typed);
        CHECK(typed.result.exit_code == 2);
        CHECK(typed.result.err.find("there is no lesson '" + bad + "'; the lessons are 01, ") != std::string::npos);
        CHECK(lines(typed.result.err) == 1);
      }
    }
  }
}
