// The gpulab command line: one setup_<cmd> per subcommand, each in its own file, each given
// the one workspace (src/workspace/workspace.h) that main() makes.
#pragma once

#include <CLI/CLI.hpp>

#include "workspace/workspace.h"

namespace gpulab::cli {

void setup_devices(CLI::App& app);
void setup_smi(CLI::App& app);
void setup_nodes(CLI::App& app, Workspace& workspace);
void setup_list(CLI::App& app, Workspace& workspace);
void setup_hint(CLI::App& app, Workspace& workspace);
void setup_explain(CLI::App& app, Workspace& workspace);  // a lesson's EXPLAIN.md, after its predictions
void setup_run(CLI::App& app, Workspace& workspace);
void setup_check(CLI::App& app, Workspace& workspace);
void setup_launch(CLI::App& app);
void setup_start(CLI::App& app, Workspace& workspace);   // the interactive tutorial (start.cpp)
void setup_reset(CLI::App& app, Workspace& workspace);
void setup_quiz(CLI::App& app);
void setup_dev(CLI::App& app, Workspace& workspace);     // gpulab dev check (dev_check.cpp)
void setup_export(CLI::App& app, Workspace& workspace);  // gpulab export --student DIR (export.cpp)
void setup_class(CLI::App& app, Workspace& workspace);   // gpulab class: report and grade (class_grade.cpp wires both)

// gpulab class: for instructors, a class's checkouts at once; each subcommand in its own file.
void add_class_report(CLI::App& class_cmd, Workspace& workspace);  // gpulab class report (class_report.cpp)
void add_class_grade(CLI::App& class_cmd, Workspace& workspace);  // gpulab class grade (class_grade.cpp)

}  // namespace gpulab::cli
