// `gpulab check all`'s options, on the `check` subcommand, and its action.
#pragma once

#include <CLI/CLI.hpp>

#include "grading/grading.h"
#include "workspace/workspace.h"

namespace gpulab::cli {

void add_check_all_options(CLI::App& check, grading::GradeOptions& options);
void run_check_all(const grading::GradeOptions& options, const Workspace& workspace);

}  // namespace gpulab::cli
