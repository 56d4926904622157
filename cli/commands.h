// The gpulab command line: one setup_<cmd> per subcommand, each in its own file.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace gpulab::cli {

void setup_devices(CLI::App& app);
void setup_smi(CLI::App& app);
void setup_nodes(CLI::App& app);
void setup_list(CLI::App& app);
void setup_hint(CLI::App& app);
void setup_explain(CLI::App& app);  // a lesson's EXPLAIN.md, after its predictions
void setup_run(CLI::App& app);
void setup_check(CLI::App& app);
void setup_targets(CLI::App& app);
void setup_launch(CLI::App& app);
void setup_start(CLI::App& app);   // the interactive tutorial (start.cpp)
void setup_reset(CLI::App& app);
void setup_quiz(CLI::App& app);
void setup_dev(CLI::App& app);     // gpulab dev check (dev_check.cpp)
void setup_export(CLI::App& app);  // gpulab export --student DIR (export.cpp)
void setup_class(CLI::App& app);   // gpulab class: report and grade (class_grade.cpp wires both)

// gpulab class: for instructors, a class's checkouts at once; each subcommand in its own file.
void add_class_report(CLI::App& class_cmd);  // gpulab class report (class_report.cpp)
void add_class_grade(CLI::App& class_cmd);   // gpulab class grade (class_grade.cpp)

}  // namespace gpulab::cli
