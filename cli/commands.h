// The gpulab command line: one setup_<cmd>/run_<cmd> pair per subcommand.
#pragma once

#include <CLI/CLI.hpp>

namespace gpulab::cli {

void setup_devices(CLI::App& app);
void setup_smi(CLI::App& app);

}  // namespace gpulab::cli
