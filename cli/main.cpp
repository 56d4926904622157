// gpulab: the tutorial's command line. `./gpulab` (the script at the repository root)
// builds the project and forwards every other subcommand here.
#include <iostream>
#include <string>

#include "commands.h"
#include "report/outcome.h"


int main(int argc, char** argv) {
  CLI::App app{"gpulab — where do my tensors land? A LibTorch GPU-placement tutorial."};
  app.require_subcommand(1);
  using namespace gpulab::cli;
  setup_list(app);
  setup_run(app);
  setup_check(app);
  setup_hint(app);
  setup_explain(app);
  setup_devices(app);
  setup_smi(app);
  setup_nodes(app);
  setup_targets(app);
  setup_launch(app);
  setup_start(app);
  setup_reset(app);
  setup_quiz(app);
  setup_dev(app);
  setup_export(app);
  setup_class(app);
  // An unknown command says so (CLI11 alone would answer "A subcommand is required").
  if (argc > 1 && argv[1][0] != '-') {
    const std::string name = argv[1];
    if (app.get_subcommands([&](const CLI::App* sub) { return sub->check_name(name); }).empty()) {
      std::cerr << "gpulab: unknown command '" << name << "' (see ./gpulab help)\n";
      return static_cast<int>(gpulab::Outcome::kUsage);
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, and the usage exit code whatever CLI11's own code for the error is.
    std::cerr << "gpulab: " << e.what() << " (see ./gpulab help)\n";
    return static_cast<int>(gpulab::Outcome::kUsage);
  } catch (const gpulab::Failure& e) {
    std::cerr << "gpulab: " << e.what() << '\n';
    return static_cast<int>(e.outcome);
  } catch (const gpulab::Ended& e) {
    return static_cast<int>(e.outcome);
  } catch (const gpulab::EndedLike& e) {
    return e.exit_code;
  } catch (const std::exception& e) {
    std::cerr << "gpulab: " << e.what() << '\n';
    return static_cast<int>(gpulab::Outcome::kUsage);
  }
  return 0;
}
