// gpulab export --student DIR: the student edition of this tree, for a class
// (src/course/student_edition.h, docs/student-edition.md).
#include <iostream>

#include <fmt/format.h>

#include "commands.h"
#include "course/student_edition.h"

namespace gpulab::cli {

void setup_export(CLI::App& app, Workspace& workspace) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("export", "write a copy of the tutorial to hand out (docs/student-edition.md)");
  cmd->add_option("--student", *dir, "the folder to write the student edition into: no solutions, hints capped in its " +
                                         std::string(kClassFileName) + " (an empty or new folder)")
      ->required();
  cmd->callback([dir, &workspace] {
    const ExportSummary summary = export_student_edition(workspace.root(), *dir);
    std::string left_out;
    for (const auto& folder : summary.left_out) left_out += (left_out.empty() ? "" : ", ") + folder;
    std::cout << fmt::format("student edition: {} files in {} (left out: {}).\n", summary.files, *dir,
                             left_out.empty() ? "nothing" : left_out);
    std::cout << fmt::format("Cap the hints in {}/{}, then hand it out as a repository of its own:\n"
                             "  cd {} && git init -q && git add -A && git commit -qm 'gpulab, student edition'\n"
                             "A student runs ./gpulab start there.\n",
                             *dir, kClassFileName, *dir);
  });
}

}  // namespace gpulab::cli
