// Mutation tests on the already-built tree: patch each known wrong answer into a source of
// this build folder (<build>/mutants/NN/<name>.cpp, written only when its text changed, so
// ninja recompiles only what changed), build the mutant programs in one ninja run, then run
// each one's lesson checks through the one runner, several at a time.
#include "grading/mutants.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <ostream>
#include <thread>

#include <fmt/format.h>

#include "course/manifest.h"
#include "grading/mutants_internal.h"
#include "grading/runner.h"
#include "proc/leftovers.h"
#include "proc/self.h"
#include "proc/temp_dir.h"
#include "proc/text_file.h"
#include "report/message_text.h"
#include "report/outcome.h"

namespace fs = std::filesystem;

namespace gpulab::grading {
namespace {

const char* ending(Outcome outcome) {
  switch (outcome) {
    case Outcome::kCrashed: return "crashed";
    case Outcome::kTimedOut: return "timed out";
    case Outcome::kChecksFailed: return "no verdict";
    default: return "did not run";
  }
}

// The first failed check's expectation, for a caught mutant's second line.
std::string first_failure(const CheckVerdict& verdict) {
  for (const auto& c : verdict.cases)
    if (!c.passed && !c.skipped && !c.failures.empty()) return c.failures.front().text;
  return "";
}

}  // namespace

std::vector<std::string> patch_files(const std::string& folder) {
  std::vector<std::string> patches;
  if (fs::is_directory(folder))
    for (const auto& entry : fs::directory_iterator(folder))
      if (entry.path().extension() == ".patch") patches.push_back(entry.path().string());
  std::sort(patches.begin(), patches.end());
  return patches;
}

// "# Task: stretch" among the patch's leading comment lines: a wrong answer to the stretch.
bool for_the_stretch(const std::string& path) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line) && line.rfind('#', 0) == 0;)
    if (line.rfind("# Task: stretch", 0) == 0) return true;
  return false;
}

std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const auto text = line.find_first_not_of("# ");
  return text == std::string::npos ? "" : line.substr(text);
}

// The patch applied to the solution, into the mutant's source when the text differs.
// Returns "" or why it does not apply (the mutant is then stale).
std::string write_mutant_source(const Mutant& mutant, const std::string& solution, const std::string& patch_file,
                                const std::string& source, const TempDir& scratch, const ProcessRun& run) {
  const std::string patched = scratch.fresh(mutant.target() + ".cpp");
  ProcessOptions patch;
  patch.argv = {"patch", "--batch", "--silent", "--output", patched, "--reject-file", scratch.fresh(mutant.target() + ".rej"),
                solution, "--input", patch_file};
  patch.timeout_s = 30;
  const ProcessResult applied = run(patch);
  if (!applied.ok()) return applied.out + applied.err;
  const std::string text = read_text_file(patched);
  if (!fs::exists(source) || read_text_file(source) != text) {
    fs::create_directories(fs::path(source).parent_path());
    std::ofstream(source, std::ios::binary) << text;
  }
  return "";
}

// Each line of `text` indented by four spaces.
std::string indented(const std::string& text) {
  std::string result;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    result += "    " + text.substr(start, end == std::string::npos ? std::string::npos : end - start + 1);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (!result.empty() && result.back() != '\n') result += '\n';
  return result;
}

void judge_mutant(Mutant& mutant, const ChecksResult& checks) {
  if (mutant.kind->must_pass) {
    mutant.caught = checks.outcome == Outcome::kOk;
    if (mutant.caught) {
      mutant.line = fmt::format("{}: passes — {}\n", mutant.title(), mutant.mistake);
    } else if (checks.outcome == Outcome::kChecksFailed && checks.has_verdict) {
      std::string why = first_failure(checks.verdict);
      mutant.line = fmt::format("{}: REJECTED — the checks fail this right answer: {}\n    {}\n", mutant.title(),
                                mutant.mistake, why.substr(0, why.find('\n')));
    } else {
      mutant.line = fmt::format("{}: BROKEN — the variant did not run to a verdict ({}); a variant must compile and run\n{}",
                                mutant.title(), ending(checks.outcome),
                                indented(first_lines(checks.message + checks.program_ends, 20)));
    }
    return;
  }
  if (checks.outcome == Outcome::kChecksFailed && checks.has_verdict && checks.verdict.failed() > 0) {
    mutant.caught = true;
    std::string why = first_failure(checks.verdict);
    why = why.substr(0, why.find('\n'));
    mutant.line = fmt::format("{}: caught — {}\n    {}\n", mutant.title(), mutant.mistake, why);
  } else if (checks.outcome == Outcome::kOk) {
    mutant.line = fmt::format("{}: SURVIVED — the checks pass this wrong answer: {}\n", mutant.title(), mutant.mistake);
  } else {
    mutant.line = fmt::format("{}: BROKEN — the mutant did not run to a verdict ({}); a mutant must compile and run\n{}",
                              mutant.title(), ending(checks.outcome),
                              indented(first_lines(checks.message + checks.program_ends, 20)));
  }
}

std::size_t grade_mutants(const Manifest& manifest, const MutantsOptions& options, std::ostream& out) {
  const Kind& kind = options.variants ? kVariants : kMutants;
  fix_generated_seed();
  const std::string root = manifest.root;
  const std::string build = fs::weakly_canonical(executable_dir() + "/..").string();
  const std::string patches_dir = options.patches.empty() ? root + "/tests/" + kind.folder : options.patches;
  std::vector<std::string> ids = options.lessons;
  if (ids.empty())
    for (const auto& lesson : manifest.lessons)
      if (fs::is_directory(fmt::format("{}/lesson{}", patches_dir, lesson.id))) ids.push_back(lesson.id);

  TempDir scratch("gpulab-mutants");
  std::size_t problems = 0;
  std::vector<Mutant> mutants;
  std::vector<std::string> targets;
  for (const auto& id : ids) {
    const LessonEntry& lesson = manifest.find(id);  // throws kUsage for an unknown lesson
    const std::string folder = fmt::format("{}/lesson{}", patches_dir, lesson.id);
    const std::vector<std::string> patches = patch_files(folder);
    if (patches.empty()) {
      out << fmt::format("lesson {}: NO {} ({} has no .patch)\n", lesson.id, options.variants ? "VARIANTS" : "MUTANTS",
                         without_prefixes(folder + "/", {root + "/"}));
      ++problems;
      continue;
    }
    targets.push_back(lesson.checks_target());
    const std::string solution = root + "/" + lesson.source_file(true);
    for (const auto& patch_file : patches) {
      Mutant mutant{lesson.id, fs::path(patch_file).stem().string(), first_line_of(patch_file), "", false,
                    for_the_stretch(patch_file), &kind};
      const std::string source = fmt::format("{}/{}/{}/{}.cpp", build, kind.sources, lesson.id, mutant.name);
      std::string why = write_mutant_source(mutant, solution, patch_file, source, scratch);
      if (!why.empty()) {  // patch names its rejects file, in the scratch folder
        why = without_prefixes(why, {scratch.path() + "/"});
        out << fmt::format("{}: STALE — the patch no longer applies to solutions/{}/main.cpp\n{}", mutant.title(),
                           lesson.directory(), indented(first_lines(why, 10)));
        ++problems;
        continue;
      }
      targets.push_back(mutant.target());
      mutants.push_back(std::move(mutant));
    }
  }

  // One ninja run for every mutant: it compiles them side by side, and only what changed.
  const Programs programs = this_build(manifest);
  std::map<std::string, std::string> build_failures;
  for (const auto& [target, messages] : make_builder(build, programs.strip)->build(targets).failures) {
    if (target.rfind(std::string(kind.prefix) + "-", 0) != 0)
      throw Failure(Outcome::kBuildFailed, fmt::format("building {} failed:\n{}", target.empty() ? "the checks" : target, messages));
    build_failures[target] = messages;
  }

  // Each mutant's checks on a node of their own, `jobs` at a time: the checks of one never
  // meet another's programs. Leftover processes are stopped once, after all of them.
  adopt_orphans();
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < mutants.size(); i = next++) {
      Mutant& mutant = mutants[i];
      const auto failed = build_failures.find(mutant.target());
      if (failed != build_failures.end()) {
        mutant.line = fmt::format("{}: BROKEN — the {} does not compile; it must compile and run\n{}", mutant.title(), kind.prefix,
                                  indented(first_lines(failed->second, 20)));
        continue;
      }
      ChecksRequest request;
      (kind.must_pass ? request.variant : request.mutant) = mutant.name;
      request.stretch = mutant.stretch;
      request.fail_fast = true;
      request.timeout_s = options.timeout_s;
      request.stop_leftovers = false;
      judge_mutant(mutant, run_checks(mutant.lesson, request, programs));
    }
  };
  std::vector<std::thread> workers;
  for (unsigned j = 0; j < std::max(1u, options.jobs); ++j) workers.emplace_back(work);
  for (auto& worker : workers) worker.join();
  stop_leftovers();

  std::size_t caught = 0;
  for (const auto& mutant : mutants) {
    out << mutant.line;
    mutant.caught ? ++caught : ++problems;
  }
  if (kind.must_pass) out << fmt::format("variants: {} pass, {} rejected or broken\n", caught, problems);
  else out << fmt::format("mutants: {} caught, {} survived or broken\n", caught, problems);
  return problems;
}

}  // namespace gpulab::grading
