// gpulab hint NN [LEVEL]: hints for a lesson, one more specific step at a time.
#include <iostream>

#include <fmt/format.h>

#include "commands.h"
#include "report/outcome.h"
#include "course/manifest.h"
#include "course/student_edition.h"

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
    // A student edition's class file may cap them (docs/student-edition.md).
    const std::optional<ClassSettings> settings = load_class_settings(manifest);
    const int allowed = settings ? settings->hints_allowed(lesson.id, count) : count;
    if (allowed == 0) {
      std::cerr << fmt::format("gpulab: your class has no hints for lesson {} ({}); ./gpulab check {} says what is still wrong\n",
                               lesson.id, kClassFileName, lesson.id);
      throw Ended{Outcome::kUsage};
    }
    if (options->level > allowed) {
      std::cerr << fmt::format("gpulab: your class allows hints 1 to {} of lesson {}'s {} ({}); there is no hint {} here\n",
                               allowed, lesson.id, count, kClassFileName, options->level);
      throw Ended{Outcome::kUsage};
    }
    const auto shown = static_cast<std::size_t>(options->level);
    for (std::size_t i = 0; i < shown; ++i)
      std::cout << fmt::format("Hint {}/{}: {}\n", i + 1, lesson.hints.size(), lesson.hints[i]);
    if (options->level < allowed)
      std::cout << fmt::format("(more: ./gpulab hint {} {})\n", lesson.id, shown + 1);
    else if (allowed < count)
      std::cout << fmt::format("(that is the last hint your class allows for this lesson: {} of {})\n", allowed, count);
  });
}

}  // namespace gpulab::cli
