// gpulab hint NN [LEVEL]: hints for a lesson, one more specific step at a time, as many as
// the class allows (workspace/rules.h's hint_reply).
#include <iostream>

#include "commands.h"
#include "report/outcome.h"

namespace gpulab::cli {

void setup_hint(CLI::App& app, Workspace& workspace) {
  auto lesson = std::make_shared<std::string>();
  auto level = std::make_shared<int>(1);
  auto* cmd = app.add_subcommand("hint", "a hint for a lesson; ask again with a higher LEVEL for a more specific one");
  cmd->add_option("lesson", *lesson, "lesson number, e.g. 04")->required();
  cmd->add_option("level", *level, "1 = gentle nudge ... last = nearly the answer");
  cmd->callback([lesson, level, &workspace] {
    const HintReply reply = workspace.hint(*lesson, *level);
    std::cout << reply.out;
    std::cerr << reply.err;
    if (reply.outcome != Outcome::kOk) throw Ended{reply.outcome};
  });
}

}  // namespace gpulab::cli
