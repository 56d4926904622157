// gpulab: the tutorial's command line. `./gpulab` (the script at the repository root)
// builds the project and forwards every other subcommand here.
#include <iostream>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"gpulab — where do my tensors land? A LibTorch GPU-placement tutorial."};
  app.require_subcommand(1);
  gpulab::cli::setup_devices(app);
  gpulab::cli::setup_smi(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "gpulab: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
