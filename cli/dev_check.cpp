// gpulab dev check / dev mutants: the lessons themselves, for maintainers (rustlings' dev check): their
// files and manifest entries (src/course/lesson_rules.h), and without --quick that every
// exercise fails and every solution passes its checks (src/grading/shipped_lessons.h); dev
// mutants, that every known wrong answer fails them, and dev variants, that every other
// right answer passes them (src/grading/mutants.h).
#include <algorithm>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "commands.h"
#include "grading/mutants.h"
#include "grading/shipped_lessons.h"
#include "report/outcome.h"

namespace gpulab::cli {
namespace {

struct DevCheckOptions {
  bool quick = false;
  std::string root;
  double timeout_s = 300;
};

void dev_check(const DevCheckOptions& options, const Workspace& workspace) {
  if (options.root.empty()) workspace.require_solutions("dev check");  // it checks the solutions too
  const std::string root = options.root.empty() ? workspace.manifest().root : options.root;
  if (!options.root.empty() && !options.quick)
    throw Failure(Outcome::kUsage, "dev check --root checks another tree's structure only; add --quick");
  const grading::DevCheck check =
      grading::dev_check(root, options.quick, options.timeout_s, options.quick ? nullptr : &workspace.manifest());
  std::cout << check.text;
  if (!check.ok) throw Ended{Outcome::kChecksFailed};
}

}  // namespace

void setup_dev(CLI::App& app, Workspace& workspace) {
  auto options = std::make_shared<DevCheckOptions>();
  auto* dev = app.add_subcommand("dev", "for maintainers: checks of the lessons themselves");
  dev->require_subcommand(1);
  auto* check = dev->add_subcommand("check", "manifest, files, hints, predictions; exercises fail and solutions pass");
  check->add_flag("--quick", options->quick, "structure only: do not build or run the checks");
  check->add_option("--root", options->root, "check another tree's structure (with --quick)");
  check->add_option("--timeout", options->timeout_s, "seconds each lesson's checks may run")->capture_default_str();
  check->callback([options, &workspace] { dev_check(*options, workspace); });

  // dev mutants and dev variants: patched solutions that must fail, or must pass.
  const auto add_patched = [dev, &workspace](const char* name, const char* what, bool variants) {
    auto patched = std::make_shared<grading::MutantsOptions>();
    patched->variants = variants;
    patched->jobs = std::max(1u, std::thread::hardware_concurrency());
    auto* command = dev->add_subcommand(name, what);
    command->add_option("lessons", patched->lessons, fmt::format("lesson numbers (default: every lesson with {})", name));
    command->add_option("-j,--jobs", patched->jobs, fmt::format("{} checked at once", name))
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    command->add_option(variants ? "--variants" : "--mutations", patched->patches,
                        fmt::format("the folder of lessonNN/*.patch (default: tests/{})", variants ? "variants" : "mutations"));
    command->add_option("--timeout", patched->timeout_s, "seconds each one's checks may run")->capture_default_str();
    command->callback([patched, name, &workspace] {
      workspace.require_solutions(std::string("dev ") + name);
      if (grading::grade_mutants(workspace.manifest(), *patched, std::cout) > 0) throw Ended{Outcome::kChecksFailed};
    });
  };
  add_patched("mutants", "every known wrong answer (tests/mutations) must fail its lesson's checks", false);
  add_patched("variants", "every other right answer (tests/variants) must pass its lesson's checks", true);
}

}  // namespace gpulab::cli
