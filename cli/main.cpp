// gpulab: the tutorial's command line. `./gpulab` (the script at the repository root)
// builds the project and forwards every other subcommand here.
#include <unistd.h>

#include <iostream>

#include "commands.h"
#include "exit_codes.h"

namespace gpulab::cli {
std::string bin_dir() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  const std::string exe(path, static_cast<std::size_t>(n));
  return exe.substr(0, exe.rfind('/'));
}
}  // namespace gpulab::cli

int main(int argc, char** argv) {
  CLI::App app{"gpulab — where do my tensors land? A LibTorch GPU-placement tutorial."};
  app.require_subcommand(1);
  using namespace gpulab::cli;
  setup_list(app);
  setup_run(app);
  setup_check(app);
  setup_hint(app);
  setup_devices(app);
  setup_smi(app);
  setup_nodes(app);
  setup_targets(app);
  setup_launch(app);
  setup_start(app);
  setup_reset(app);
  setup_quiz(app);
  setup_dev(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, and the usage exit code whatever CLI11's own code for the error is.
    std::cerr << "gpulab: " << e.what() << " (see ./gpulab help)\n";
    return kUsage;
  } catch (const Exit& e) {
    return e.code;
  } catch (const std::exception& e) {
    std::cerr << "gpulab: " << e.what() << '\n';
    return kUsage;
  }
  return 0;
}
