// gpulab: the tutorial's command line. `./gpulab` (the script at the repository root) sets
// up and builds the project and the CLI, and forwards every other subcommand here; `run`,
// `check` and `start` build their lessons themselves (the workspace's builder).
#include <iostream>
#include <string>

#include "commands.h"
#include "report/outcome.h"

int main(int argc, char** argv) {
  CLI::App app{"gpulab — where do my tensors land? A LibTorch GPU-placement tutorial."};
  app.require_subcommand(1);
  using namespace gpulab::cli;
  gpulab::Workspace workspace;  // the learner's, read as the commands need it
  setup_list(app, workspace);
  setup_run(app, workspace);
  setup_check(app, workspace);
  setup_hint(app, workspace);
  setup_explain(app, workspace);
  setup_devices(app);
  setup_smi(app);
  setup_nodes(app, workspace);
  setup_launch(app);
  setup_start(app, workspace);
  setup_reset(app, workspace);
  setup_quiz(app);
  setup_dev(app, workspace);
  setup_export(app, workspace);
  setup_class(app, workspace);
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
  } catch (const CLI::Success& e) {  // --help, --help-all
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
