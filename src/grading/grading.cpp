// gpulab check all: grades a whole tree — this build's exercises (or --solution), or a
// student's checkout (--root DIR), whose exercises are compiled apart with this build's own
// commands (recipes.h) against the library and checks built here — lesson by lesson, each
// lesson's checks under a time limit (the one runner, runner.h), and records where each
// lesson's tensors landed in its scenario (docs/instructors.md).
#include "grading/grading.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include <sys/vfs.h>

#include "grading/grading_folder.h"
#include "grading/recipes.h"
#include "grading/runner.h"
#include "grading/tree_guard.h"
#include "proc/confine.h"
#include "proc/leftovers.h"
#include "proc/self.h"
#include "proc/temp_dir.h"
#include "proc/text_file.h"
#include "report/outcome.h"

namespace fs = std::filesystem;

namespace gpulab::grading {
namespace {

// The compiler's messages, shortened to the first errors.
std::string compiler_summary(const std::string& messages) {
  std::istringstream in(messages);
  std::string line;
  std::string kept;
  int lines = 0;
  bool seen_error = false;
  while (std::getline(in, line) && lines < 12) {
    if (line.find("error") != std::string::npos) seen_error = true;
    kept += line + '\n';
    ++lines;
    if (seen_error && lines >= 6 && line.find("error") == std::string::npos) break;
  }
  return kept.empty() ? "the build failed without a message\n" : kept;
}

nlohmann::json placement_of(const Report& report) {
  if (report.observations.empty()) return nullptr;
  const Observation& last = report.observations.back();
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& t : last.tensors)
    tensors.push_back({{"name", t.name}, {"device", t.device},
                       {"physical_gpu", t.physical_index ? nlohmann::json(*t.physical_index) : nlohmann::json(nullptr)}});
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : last.gpus)
    gpus.push_back({{"physical_gpu", g.physical_index}, {"used_bytes", g.used_bytes}, {"context", g.context}});
  return {{"observation", last.label}, {"tensors", tensors}, {"gpus", gpus}};
}

nlohmann::json placement_of(const RunPart& part) { return part.report ? placement_of(*part.report) : nlohmann::json(nullptr); }

// The observed placement: the lesson run in its manifest scenario alone (variables set for
// the grader would win over it), on a node state of its own.
nlohmann::json observe_placement(const LessonEntry& lesson, bool solution, double timeout_s, const Programs& programs) {
  const TempDir state("gpulab-state-" + lesson.id, confined_area());  // the program writes it, in a box too
  RunRequest request;
  request.solution = solution;
  request.json = true;
  request.timeout_s = timeout_s;
  request.learner_env = false;
  request.extra_env = {{"GPULAB_STATE_DIR", state.path()}};
  RunResult run;
  try {
    run = run_lesson_program(lesson, request, programs);
  } catch (const std::exception&) {
    return nullptr;
  }
  stop_leftovers();
  const RunDocument& document = run.document;
  if (document.kind == RunDocument::Kind::kRanks) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const auto& part : document.parts) ranks.push_back(placement_of(part));
    return {{"ranks", ranks}};
  }
  for (std::size_t i = document.parts.size(); i-- > 0;) {
    auto placement = placement_of(document.parts[i]);
    if (placement.is_null() || document.kind == RunDocument::Kind::kSingle) return placement;
    placement["step"] = i + 1;
    return placement;
  }
  return nullptr;
}

// One lesson's checks, with the runner; what came of them goes into `grade`.
void grade_checks(LessonGrade& grade, const GradeOptions& options, const Programs& programs, const TempDir& scratch) {
  ChecksRequest request;
  request.solution = options.solution;
  request.fail_fast = options.fail_fast;
  request.timeout_s = options.timeout_s;
  if (!options.junit.empty()) request.junit_file = scratch.fresh("junit-" + grade.id + ".xml");
  ChecksResult checks = run_checks(grade.id, request, programs);
  grade.junit_xml = std::move(checks.junit_xml);
  grade.has_verdict = checks.has_verdict;
  grade.verdict = std::move(checks.verdict);
  switch (checks.outcome) {
    case Outcome::kOk: grade.status = "passed"; break;
    case Outcome::kCrashed: grade.status = "crashed"; break;
    case Outcome::kTimedOut: grade.status = "timed_out"; break;
    default: grade.status = "failed"; break;
  }
  grade.message = checks.message;
  if (grade.message.empty() && !checks.program_ends.empty()) grade.message = "the program " + checks.program_ends;
}

std::string pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

// "04  failed        2 of 4 checks  (Which GPU is cuda:1?)", then the first thing to fix.
std::string lesson_line(const LessonGrade& grade, double timeout_s) {
  std::string count;
  if (grade.status == "build_failed") count = "does not compile";
  else if (grade.status == "refused") count = "not graded";
  else if (!grade.has_verdict && grade.status == "timed_out") count = fmt::format("no verdict within {} s", timeout_s);
  else if (!grade.has_verdict) count = "no verdict";
  else if (grade.passed()) count = fmt::format("{} of {} checks", grade.verdict.passed(), grade.verdict.cases.size());
  else count = fmt::format("{} of {} checks", grade.verdict.failed(), grade.verdict.cases.size());
  std::string line = fmt::format("{}  {}{}  ({})\n", grade.id, pad(grade.status, 13), pad(count, 18), grade.title);
  std::string first;
  for (const auto& c : grade.verdict.cases)
    if (!c.passed && !c.skipped && !c.failures.empty() && first.empty()) first = c.failures.front().text;
  if (first.empty() && !grade.passed()) {
    std::istringstream in(grade.message);
    for (std::string text; std::getline(in, text);) {
      if (first.empty()) first = text;
      if (grade.status == "build_failed" && text.find("error") != std::string::npos) {
        first = text;  // the compiler's first error, not "In function ..."
        break;
      }
    }
  }
  if (!first.empty()) {
    first = first.substr(0, first.find('\n'));
    if (first.size() > 200) first = first.substr(0, 197) + "...";
    line += "    " + first + '\n';
  }
  return line;
}

// Where the tree's programs are built and what its messages must not show.
struct Tree {
  std::string root;   ///< absolute
  std::string build;  ///< its build folder
  std::string main_build;  ///< the build folder gpulab runs from
  Programs programs;
};

Tree tree_to_grade(const GradeOptions& options, const Manifest& manifest, const std::string& main_build, bool buildable) {
  Tree tree{manifest.root, main_build, main_build, {main_build + "/bin", {executable_dir() + "/", manifest.root + "/"}, ""}};
  if (!options.recipes.empty()) {
    if (options.solution) throw Failure(Outcome::kUsage, "recipes build exercises, not solutions");
    // In a grading box: the student's programs go into bin/, so it must be the box's own.
    constexpr long kTmpfsMagic = 0x01021994;
    struct statfs bin {};
    if (statfs(tree.programs.bin.c_str(), &bin) != 0 || static_cast<long>(bin.f_type) != kTmpfsMagic)
      throw Failure(Outcome::kUsage, "grading with recipes builds into bin/: only in a grading box (gpulab class grade)");
    tree.root = options.root;
    tree.programs.strip = {tree.programs.bin + "/", options.root + "/", manifest.root + "/", main_build + "/"};
    return tree;
  }
  if (options.root.empty()) return tree;
  if (options.solution) throw Failure(Outcome::kUsage, "--solution grades this repository's solutions; it takes no --root");
  std::error_code error;
  tree.root = fs::canonical(options.root, error).string();
  if (error || !fs::is_directory(tree.root + "/lessons"))
    throw Failure(Outcome::kUsage, fmt::format("'{}' is not a student's checkout: it has no lessons/ folder", options.root));
  if (!buildable) throw Failure(Outcome::kUsage, "--root needs the build folder gpulab was built in (its CMakeCache.txt)");
  // Only the student's programs are theirs: the checks, the CLI and the library are this
  // build's, and the exercises compile with this build's commands, flags and precompiled header.
  tree.build = options.build_dir.empty() ? main_build + "/grading/" + folder_name(tree.root)
                                         : fs::absolute(options.build_dir).lexically_normal().string();
  tree.programs = {main_build + "/bin",
                   {tree.build + "/bin/", main_build + "/bin/", tree.root + "/", manifest.root + "/", main_build + "/"},
                   tree.build + "/bin"};
  return tree;
}

// What became of a tree's build: the lessons that did not build, with why, and those
// refused (check all --root, tree_guard.h), with why.
struct Built {
  std::map<std::string, std::string> failed;
  std::map<std::string, std::string> refused;
};

// check all --root: builds a student's exercises with this build's recipes, refusing every
// lesson that is or reads a file from outside the student's lessons/ (tree_guard.h).
void build_student_tree(Built& built, const std::vector<LessonEntry>& lessons, const std::vector<LessonEntry>& all_lessons,
                        const Tree& tree) {
  const auto recipes = read_recipes(tree.main_build, lessons);
  std::vector<std::string> allowed;
  auto in_build = [](const std::string& path, const Recipe& recipe) {
    return fs::path(path).is_absolute() ? path : (fs::path(recipe.directory) / path).string();
  };
  for (const auto& [id, recipe] : recipes) {
    for (const auto& dir : include_dirs_of(recipe.compile)) allowed.push_back(in_build(dir, recipe));
    // The precompiled header's own header (CMake's wrapper names it by absolute path).
    for (const auto& forced : forced_includes_of(recipe.compile))
      for (const auto& header : absolute_includes_in(in_build(forced, recipe))) allowed.push_back(header);
  }
  if (!recipes.empty()) {
    const std::string& compile = recipes.begin()->second.compile;
    for (auto& dir : system_include_dirs(compile.substr(0, compile.find(' ')))) allowed.push_back(dir);
  }
  const TreeGuard guard(tree.root, allowed);
  std::vector<std::string> lesson_dirs;
  for (const auto& lesson : all_lessons) lesson_dirs.push_back(lesson.directory());
  const auto tree_refused = guard.tree_refusal(lesson_dirs);
  std::vector<LessonEntry> to_build;
  for (const auto& lesson : lessons) {
    auto refused = tree_refused ? tree_refused : guard.links_refusal(lesson.directory());
    if (refused) {  // a link, even one to nothing (which reads as a missing file)
      built.failed.erase(lesson.id);
      built.refused[lesson.id] = *refused;
    } else if (built.failed.count(lesson.id) == 0) {  // not missing
      to_build.push_back(lesson);
    }
  }
  const std::string objects = tree.build + "/objects";
  RecipeBuild build{recipes, to_build, tree.root, tree.programs.lessons, objects, tree.programs.strip,
                    std::max(1u, std::thread::hardware_concurrency())};
  build.depfiles = true;
  for (const auto& [id, messages] : build_from_recipes(std::move(build))) built.failed.emplace(id, messages);
  for (const auto& lesson : to_build) {
    if (built.failed.count(lesson.id) != 0) continue;
    const auto recipe = recipes.find(lesson.id);
    std::optional<std::string> refused;
    const std::string depfile = dependency_file(objects, lesson.id);
    if (!fs::exists(depfile))
      refused = "its compiler wrote no list of the files it read (" + depfile + "): refused";
    else
      refused = guard.reads_refusal(dependency_inputs(read_text_file(depfile)), recipe->second.directory);
    if (!refused) continue;
    built.refused[lesson.id] = *refused;
    std::error_code ignored;
    fs::remove(fmt::format("{}/lesson-{}", tree.programs.lessons, lesson.id), ignored);  // never run
  }
}

// Builds the checks (a failure is the grader's) and every lesson program that has a file
// (a failure is that lesson's). Returns the lessons that did not build or were refused, with why.
Built build_tree(const GradeOptions& options, const std::vector<LessonEntry>& lessons,
                 const std::vector<LessonEntry>& all_lessons, const Tree& tree, bool buildable) {
  Built built;
  std::map<std::string, std::string>& failed = built.failed;
  std::vector<std::string> checks;
  std::vector<std::string> programs;
  for (const auto& lesson : lessons) {
    checks.push_back(lesson.checks_target());
    if (!fs::exists(tree.root + "/" + lesson.source_file(options.solution))) {
      failed[lesson.id] = lesson.source_file(options.solution) + " is missing\n";
      continue;
    }
    programs.push_back(lesson.program_target(options.solution));
  }
  if (!buildable) return built;
  std::cerr << fmt::format("gpulab: building {} of {} in {}\n", options.solution ? "the solutions" : "the exercises", tree.root,
                           tree.build);
  const auto builder = make_builder(tree.main_build, tree.programs.strip);
  // A student's programs compile with the precompiled header (the library they link
  // against comes with the checks).
  if (!options.root.empty()) checks.push_back("gpulab_pch");
  const BuildResult grader = builder->build(checks);
  if (!grader.ok) throw Failure(Outcome::kBuildFailed, "building the checks in " + tree.main_build + " failed:\n" + grader.messages);
  if (!options.root.empty()) {  // with this build's recipes; a missing file stays the failure noted above
    fs::create_directories(tree.programs.lessons);
    build_student_tree(built, lessons, all_lessons, tree);
    return built;
  }
  for (const auto& [target, messages] : builder->build(programs).failures) {
    const auto dash = target.rfind('-');
    failed[dash == std::string::npos ? target : target.substr(dash + 1)] = messages;
  }
  return built;
}

}  // namespace

std::size_t Grading::failed() const {
  return static_cast<std::size_t>(std::count_if(lessons.begin(), lessons.end(), [](const LessonGrade& l) { return !l.passed(); }));
}

Grading grade(const Manifest& manifest, const GradeOptions& options, std::ostream& out) {
  fix_generated_seed();
  std::vector<LessonEntry> lessons;
  if (options.lessons.empty()) lessons = manifest.lessons;
  for (const auto& id : options.lessons) lessons.push_back(manifest.find(id));
  if (options.timeout_s <= 0) throw Failure(Outcome::kUsage, "--timeout must be a positive number of seconds");
  const std::string main_build = fs::weakly_canonical(executable_dir() + "/..").string();
  const bool buildable = fs::exists(main_build + "/CMakeCache.txt");
  const Tree tree = tree_to_grade(options, manifest, main_build, buildable);
  Grading grading;
  grading.root = tree.root;
  grading.target = options.solution ? "solution" : "exercise";

  // Everything this process starts, and everything they start, comes back to it to be stopped.
  adopt_orphans();
  stop_leftovers();
  TempDir scratch("gpulab-grade");
  // Every lesson is built before the first is graded (in a box, several at once): the
  // checks' clean-up stops every child of this process, a compile beside them included.
  Built built;
  if (options.recipes.empty())
    built = build_tree(options, lessons, manifest.lessons, tree, buildable);
  else
    built.failed = build_from_recipes(RecipeBuild{parse_recipes(read_text_file(options.recipes)), lessons, tree.root,
                                                  tree.programs.bin, scratch.fresh("objects"), tree.programs.strip,
                                                  std::max(1u, options.build_jobs)});
  const std::map<std::string, std::string>& build_failures = built.failed;
  for (const auto& lesson : lessons) {
    const auto started = std::chrono::steady_clock::now();
    LessonGrade grade;
    grade.id = lesson.id;
    grade.title = lesson.title;
    const std::string program = fmt::format("{}/{}-{}", tree.programs.lesson_dir(), options.solution ? "solution" : "lesson", lesson.id);
    const auto failure = build_failures.find(lesson.id);
    const auto refusal = built.refused.find(lesson.id);
    if (refusal != built.refused.end()) {
      grade.status = "refused";
      grade.message = refusal->second + "\n";
    } else if (failure != build_failures.end() || !fs::exists(program)) {
      grade.status = "build_failed";
      grade.message = failure != build_failures.end() ? compiler_summary(failure->second) : program + " is not built\n";
    } else {
      grade_checks(grade, options, tree.programs, scratch);
      if (options.placement && grade.status != "timed_out")
        grade.placement = observe_placement(lesson, options.solution, options.timeout_s, tree.programs);
    }
    grade.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    out << lesson_line(grade, options.timeout_s) << std::flush;
    grading.lessons.push_back(std::move(grade));
    if (options.after_lesson) options.after_lesson();
  }
  return grading;
}

}  // namespace gpulab::grading
