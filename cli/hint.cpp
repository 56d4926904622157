// gpulab hint NN [LEVEL]: hints for a lesson, one more specific step at a time.
#include <iostream>

#include <fmt/format.h>

#include "commands.h"
#include "report/outcome.h"
#include "course/manifest.h"

namespace gpulab::cli {
namespace {
struct HintOptions {
  std::string lesson;
  int level = 1;
};
}  // namespace

void setup_hint(CLI::App& app) {
  auto options = std::make_shared<HintOptions>();
  auto* cmd = app.add_subcommand("hint", "a hint for a lesson; ask again with a higher LEVEL for a more specific one");
  cmd->add_option("lesson", options->lesson, "lesson number, e.g. 04")->required();
  cmd->add_option("level", options->level, "1 = gentle nudge ... last = nearly the answer");
  cmd->callback([options] {
    const Manifest manifest = load_manifest();
    const LessonEntry& lesson = manifest.find(options->lesson);
    if (lesson.hints.empty()) {
      std::cout << "Lesson " << lesson.id << " has no hints.\n";
      return;
    }
    const int count = static_cast<int>(lesson.hints.size());
    if (options->level < 1 || options->level > count) {
      std::cerr << fmt::format("gpulab: lesson {} has hints 1 to {}; there is no hint {}\n", lesson.id, count, options->level);
      throw Ended{Outcome::kUsage};
    }
    const auto shown = static_cast<std::size_t>(options->level);
    for (std::size_t i = 0; i < shown; ++i)
      std::cout << fmt::format("Hint {}/{}: {}\n", i + 1, lesson.hints.size(), lesson.hints[i]);
    if (shown < lesson.hints.size())
      std::cout << fmt::format("(more: ./gpulab hint {} {})\n", lesson.id, shown + 1);
  });
}

}  // namespace gpulab::cli
