// gpulab explain NN: the lesson's explanation (lessons/NN-slug/EXPLAIN.md), read after its
// predictions. Shown on demand; before the predictions it says that it gives them away.
#include <iostream>

#include <fmt/format.h>

#include "commands.h"

namespace gpulab::cli {

void setup_explain(CLI::App& app, Workspace& workspace) {
  auto lesson_id = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("explain", "why the lesson's run came out as it did (read it after predicting)");
  cmd->add_option("lesson", *lesson_id, "lesson number, e.g. 04")->required();
  cmd->callback([lesson_id, &workspace] {
    const LessonEntry& lesson = workspace.lesson(*lesson_id);
    const std::string text = workspace.explanation(lesson);
    if (!workspace.predicted(lesson.id))
      std::cerr << fmt::format("(you have not predicted lesson {} yet: this gives the answers away. "
                               "./gpulab start --lesson {} asks first.)\n\n", lesson.id, lesson.id);
    std::cout << text;
  });
}

}  // namespace gpulab::cli
