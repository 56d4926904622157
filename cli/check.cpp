// gpulab check NN: runs lesson NN's checks — the same ones CI runs against the solution —
// against your exercise, and says in the lesson's terms what is still wrong.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "check_all.h"
#include "check_verdict.h"
#include "commands.h"
#include "exit_codes.h"
#include "gpulab/manifest.h"
#include "gpulab/process.h"

namespace gpulab::cli {
namespace {
struct CheckOptions {
  std::string lesson;
  bool solution = false;
  bool verbose = false;
  bool stretch = false;  ///< the lesson's optional stretch task instead of its task
  GradeOptions all;  ///< `check all`'s options (check_all.cpp); --timeout applies to one lesson too
};

// The checks note here each lesson program that crashed or hung (tests/support), so the
// verdict can say so and `check` can exit with the matching code.
class OutcomeFile {
 public:
  OutcomeFile() {
    char path[] = "/tmp/gpulab-check-XXXXXX";
    const int fd = mkstemp(path);
    if (fd >= 0) {
      close(fd);
      path_ = path;
    }
  }
  ~OutcomeFile() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  OutcomeFile(const OutcomeFile&) = delete;
  OutcomeFile& operator=(const OutcomeFile&) = delete;
  const std::string& path() const { return path_; }
  std::string text() const {
    std::ifstream in(path_);
    std::ostringstream all;
    all << in.rdbuf();
    return all.str();
  }

 private:
  std::string path_;
};

int exit_code_for(const std::string& outcomes) {
  if (outcomes.find("crashed") != std::string::npos) return kCrashed;
  if (outcomes.find("did not finish") != std::string::npos) return kTimedOut;
  return kChecksFailed;
}

void check_lesson(const CheckOptions& options) {
  const Manifest manifest = load_manifest();
  const LessonEntry& lesson = manifest.find(options.lesson);
  const std::string target = options.solution ? "solution" : "exercise";
  const std::string file = fmt::format("{}s/{}/main.cpp", options.solution ? "solution" : "lesson", lesson.directory());
  OutcomeFile outcomes;

  ProcessOptions process;
  process.argv = {bin_dir() + "/lesson" + lesson.id + "-checks", options.stretch ? kStretchChecks : kLessonChecks};
  if (!options.verbose) process.argv.insert(process.argv.end(), {"--reporter", "xml"});
  process.env = {{"GPULAB_CHECK_TARGET", target}, {"GPULAB_CHECK_OUTCOMES", outcomes.path()}};
  process.capture = !options.verbose;
  process.timeout_s = options.all.timeout_s;
  const std::string what = options.stretch ? "stretch task" : "task";
  std::cout << fmt::format("== lesson {}: checking {}'s {} ({})\n", lesson.id, options.solution ? "the solution" : "your exercise",
                           what, file);
  const ProcessResult result = run_process(process);
  if (options.stretch && result.out.find("No test cases matched") != std::string::npos) {
    std::cout << fmt::format("lesson {} has no stretch task.\n", lesson.id);
    return;
  }

  if (options.verbose) {
    if (result.ok()) {
      std::cout << fmt::format("\nlesson {}: the {} passes its checks.\n", lesson.id, what);
      return;
    }
    std::cout << fmt::format("\nlesson {}: not yet. Stuck? ./gpulab hint {}\n", lesson.id, lesson.id);
    throw Exit{result.timed_out ? kTimedOut : exit_code_for(outcomes.text())};
  }

  CheckVerdict verdict;
  try {
    verdict = parse_check_xml(result.out, {bin_dir() + "/", manifest.root + "/"});
  } catch (const std::exception&) {
    std::cerr << fmt::format("gpulab: lesson {}'s checks {} before giving a verdict.\n{}", lesson.id,
                             result.outcome(options.all.timeout_s), result.err);
    throw Exit{result.timed_out ? kTimedOut : kCrashed};
  }
  std::cout << render_verdict(verdict);
  if (result.ok() && verdict.failed() == 0) {
    std::cout << fmt::format("\nlesson {}: the {} passes its checks ({} of {}).\n", lesson.id, what, verdict.passed(),
                             verdict.cases.size());
    if (!options.stretch && !lesson.stretch.empty())
      std::cout << fmt::format("Stretch (optional): {}\n  ./gpulab check {} --stretch\n", lesson.stretch, lesson.id);
    return;
  }
  const std::string what_happened = outcomes.text();
  if (!what_happened.empty()) std::cout << "\nYour program " << what_happened;
  std::cout << fmt::format("\nlesson {}: not yet — {} of {} checks failed. Stuck? ./gpulab hint {}\n", lesson.id,
                           verdict.failed(), verdict.cases.size(), lesson.id);
  throw Exit{exit_code_for(what_happened)};
}
}  // namespace

void setup_check(CLI::App& app) {
  auto options = std::make_shared<CheckOptions>();
  auto* cmd = app.add_subcommand("check", "check your exercise against the lesson's tests");
  cmd->add_option("lesson", options->lesson, "lesson number, e.g. 04, or all (every lesson, for grading)")->required();
  cmd->add_flag("--solution", options->solution, "check the reference solution instead");
  cmd->add_flag("--verbose,-v", options->verbose, "show the checks' raw output (Catch2's report)");
  cmd->add_flag("--stretch", options->stretch, "check the lesson's optional stretch task instead of its task");
  add_check_all_options(*cmd, options->all);
  cmd->callback([options, cmd] {
    if (options->stretch && options->lesson == "all") {
      std::cerr << "gpulab: --stretch checks one lesson's stretch task; `check all` grades the tasks\n";
      throw Exit{kUsage};
    }
    if (options->lesson == "all") {
      options->all.solution = options->solution;
      return run_check_all(options->all);
    }
    for (const char* only_all : {"--junit", "--json", "--root", "--build-dir", "--lessons", "--no-placement", "--fail-fast"})
      if (cmd->count(only_all) > 0) {
        std::cerr << fmt::format("gpulab: {} is for `check all`, not one lesson\n", only_all);
        throw Exit{kUsage};
      }
    check_lesson(*options);
  });
}

}  // namespace gpulab::cli
