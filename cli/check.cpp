// gpulab check NN: runs lesson NN's checks — the same ones CI runs against the solution —
// against your exercise, and says what is still wrong.
#include <iostream>

#include <fmt/format.h>

#include "commands.h"
#include "gpulab/manifest.h"
#include "gpulab/process.h"

namespace gpulab::cli {
namespace {
struct CheckOptions {
  std::string lesson;
  bool solution = false;
};
}  // namespace

void setup_check(CLI::App& app) {
  auto options = std::make_shared<CheckOptions>();
  auto* cmd = app.add_subcommand("check", "check your exercise against the lesson's tests");
  cmd->add_option("lesson", options->lesson, "lesson number, e.g. 04")->required();
  cmd->add_flag("--solution", options->solution, "check the reference solution instead");
  cmd->callback([options] {
    const LessonEntry lesson = load_manifest().find(options->lesson);
    ProcessOptions process;
    process.argv = {bin_dir() + "/lesson-checks", "[lesson" + lesson.id + "]"};
    process.env = {{"GPULAB_CHECK_TARGET", options->solution ? "solution" : "exercise"}};
    process.capture = false;
    process.timeout_s = 300;
    const ProcessResult result = run_process(process);
    if (result.ok()) {
      std::cout << fmt::format("\nlesson {} passes its checks.\n", lesson.id);
      return;
    }
    std::cout << fmt::format("\nlesson {}: not yet ({}). Stuck? ./gpulab hint {}\n", lesson.id,
                             result.outcome(process.timeout_s), lesson.id);
    throw Exit{1};
  });
}

}  // namespace gpulab::cli
