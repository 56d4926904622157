// gpulab list: the lessons, in order, with the article claims each one tests.
#include <iostream>

#include <fmt/format.h>

#include "commands.h"

namespace gpulab::cli {

void setup_list(CLI::App& app, Workspace& workspace) {
  auto* cmd = app.add_subcommand("list", "the lessons, in order");
  cmd->callback([&workspace] {
    const Manifest& manifest = workspace.manifest();
    std::cout << "Lessons (run one with `./gpulab run NN`, check your work with `./gpulab check NN`):\n";
    for (const auto& lesson : manifest.lessons) {
      std::string claims;
      for (const auto& claim : lesson.claims) claims += (claims.empty() ? "" : " ") + claim;
      std::cout << fmt::format("  {}  {:<44} {}\n", lesson.id, lesson.title, claims.empty() ? "beyond the article" : claims);
    }
  });
}

}  // namespace gpulab::cli
