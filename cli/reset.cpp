// gpulab reset NN: the exercise back as shipped, yours backed up first (src/course/reset.h).
#include <iostream>

#include "commands.h"
#include "course/reset.h"

namespace gpulab::cli {

void setup_reset(CLI::App& app, Workspace& workspace) {
  auto lesson = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("reset", "put a lesson's exercise back as shipped, after backing up yours");
  cmd->add_option("lesson", *lesson, "lesson number, e.g. 04")->required();
  cmd->callback([lesson, &workspace] { reset_lesson(workspace.manifest(), *lesson, std::cout); });
}

}  // namespace gpulab::cli
