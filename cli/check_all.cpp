// gpulab check all: grades a whole tree — this build's exercises (or --solution), or a
// student's checkout (--root DIR) built in a grading build folder of its own — lesson by
// lesson, each lesson's checks under a time limit, and writes what came out as JUnit XML
// (Catch2's own junit reporter, merged) and as JSON (docs/instructors.md).
#include "check_all.h"

#include <dirent.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "commands.h"
#include "exit_codes.h"
#include "gpulab/manifest.h"
#include "gpulab/process.h"

namespace fs = std::filesystem;

namespace gpulab::cli {
namespace {

constexpr double kBuildTimeout = 3600;  // a cold grading folder on a small machine

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream all;
  all << in.rdbuf();
  return all.str();
}

std::string without(std::string text, const std::vector<std::string>& prefixes) {
  for (const auto& prefix : prefixes) {
    if (prefix.empty()) continue;
    for (auto at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at)) text.erase(at, prefix.size());
  }
  return text;
}

std::string first_lines(const std::string& text, std::size_t count) {
  std::istringstream in(text);
  std::string line;
  std::string kept;
  for (std::size_t n = 0; n < count && std::getline(in, line); ++n) kept += line + '\n';
  return kept;
}

// A temporary folder for this grading's scratch files, removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "gpulab-grade-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot make a temporary folder");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string fresh(const std::string& name) {
    const std::string path = path_ + "/" + name;
    std::error_code ignored;
    fs::remove_all(path, ignored);
    return path;
  }

 private:
  std::string path_;
};

// ---- processes left behind ---------------------------------------------------------------
// A lesson program runs in a process group of its own (gpulab::run_process), so stopping
// checks that ran past their limit does not stop a lesson program they started. As the
// subreaper of everything it starts, check all inherits those orphans and stops them.

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (const dirent* entry = readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_file("/proc/" + name + "/stat");
    const auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(close_paren + 1));
    std::string state;
    long ppid = 0;
    fields >> state >> ppid;
    if (ppid == parent) children.push_back(static_cast<pid_t>(std::stol(name)));
  }
  closedir(proc);
  return children;
}

void stop_leftovers() {
  for (int round = 0; round < 100; ++round) {
    const auto children = children_of(getpid());
    if (children.empty()) return;
    for (const pid_t child : children) {
      kill(-child, SIGKILL);  // its group (a lesson program and what it started) ...
      kill(child, SIGKILL);   // ... or it alone
    }
    for (const pid_t child : children) waitpid(child, nullptr, 0);
  }
}

ProcessResult run_and_clean_up(const ProcessOptions& options) {
  ProcessResult result = run_process(options);
  stop_leftovers();
  return result;
}

// ---- building ----------------------------------------------------------------------------

std::map<std::string, std::string> read_cache(const std::string& build) {
  std::map<std::string, std::string> cache;
  std::ifstream in(build + "/CMakeCache.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == '/') continue;
    const auto colon = line.find(':');
    const auto equals = line.find('=');
    if (colon == std::string::npos || equals == std::string::npos || colon > equals) continue;
    cache[line.substr(0, colon)] = line.substr(equals + 1);
  }
  return cache;
}

// One build at a time per build folder, as the ./gpulab script does (the same lock file).
class BuildLock {
 public:
  explicit BuildLock(const std::string& build) {
    fs::create_directories(build);
    fd_ = ::open((build + "/.gpulab-build.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0) flock(fd_, LOCK_EX);
  }
  ~BuildLock() {
    if (fd_ >= 0) close(fd_);
  }
  BuildLock(const BuildLock&) = delete;
  BuildLock& operator=(const BuildLock&) = delete;

 private:
  int fd_ = -1;
};

ProcessResult cmake(std::vector<std::string> args) {
  ProcessOptions options;
  options.argv = {"cmake"};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.timeout_s = kBuildTimeout;
  return run_process(options);
}

[[noreturn]] void grader_build_failed(const std::string& what, const ProcessResult& result) {
  std::cerr << fmt::format("gpulab: {} failed ({}):\n{}{}", what, result.outcome(kBuildTimeout),
                           first_lines(result.out, 60), first_lines(result.err, 60));
  throw Exit{kBuildFailed};
}

// A grading build folder: this repository, with the lesson-NN programs built from the
// student's lessons/*/main.cpp (cmake/GpulabLessons.cmake, GPULAB_EXERCISE_ROOT), and the
// same generator and settings as this build, so ccache serves everything but their files.
// `present`: the lessons whose file the student has (CMake defines lesson-NN for those only),
// kept in a stamp file so that a file added since the last grading is configured in.
void configure_grading_folder(const std::string& main_build, const std::string& folder, const std::string& root,
                              const std::string& present) {
  const auto existing = read_cache(folder);
  const auto found = existing.find("GPULAB_EXERCISE_ROOT");
  const std::string stamp = folder + "/.gpulab-grading-lessons";
  if (found != existing.end() && found->second == root && fs::exists(folder + "/build.ninja") && read_file(stamp) == present)
    return;
  const auto cache = read_cache(main_build);
  std::vector<std::string> args = {"-S", cache.count("CMAKE_HOME_DIRECTORY") ? cache.at("CMAKE_HOME_DIRECTORY") : "",
                                   "-B", folder};
  if (cache.count("CMAKE_GENERATOR")) args.insert(args.end(), {"-G", cache.at("CMAKE_GENERATOR")});
  for (const char* key : {"CMAKE_BUILD_TYPE", "CMAKE_CXX_COMPILER", "CMAKE_CXX_FLAGS", "CMAKE_PREFIX_PATH", "GPULAB_BACKEND",
                          "GPULAB_WERROR", "GPULAB_SANITIZE", "LIBTORCH_PREFIX"}) {
    const auto value = cache.find(key);
    if (value != cache.end() && !value->second.empty()) args.push_back(fmt::format("-D{}={}", key, value->second));
  }
  args.push_back("-DGPULAB_BUILD_TESTS=ON");
  args.push_back("-DGPULAB_EXERCISE_ROOT=" + root);
  const ProcessResult result = cmake(args);
  if (!result.ok()) grader_build_failed("configuring the grading build folder " + folder, result);
  std::ofstream(stamp) << present;
}

bool uses_ninja(const std::string& build) {
  const auto cache = read_cache(build);
  const auto generator = cache.find("CMAKE_GENERATOR");
  return generator != cache.end() && generator->second.find("Ninja") != std::string::npos;
}

// What the compiler said about each lesson program that failed, from Ninja's log: each
// "FAILED: <outputs>" line, the command line after it, then its messages.
std::map<std::string, std::string> failures_in_log(const std::string& log) {
  std::map<std::string, std::string> messages;
  static const std::regex target_of(R"((?:^|[/ ])(?:lesson|solution)-([0-9]+)(?:\.dir/|$| ))");
  std::istringstream in(log);
  std::string line;
  std::string current;
  bool command_follows = false;
  while (std::getline(in, line)) {
    if (line.rfind("FAILED: ", 0) == 0) {
      std::smatch match;
      current = std::regex_search(line, match, target_of) ? match[1].str() : "";
      command_follows = true;
      continue;
    }
    if (command_follows) {
      command_follows = false;
      continue;
    }
    if (line.rfind("ninja: ", 0) == 0 || std::regex_search(line, std::regex(R"(^\[[0-9]+/[0-9]+\] )"))) {
      current.clear();
      continue;
    }
    if (!current.empty()) messages[current] += line + '\n';
  }
  return messages;
}

// The program was (re)built from its current source: not missing, not older than its file.
bool built_from(const std::string& program, const std::string& source) {
  std::error_code error;
  const auto built = fs::last_write_time(program, error);
  if (error) return false;
  const auto written = fs::last_write_time(source, error);
  return !error && built >= written;
}

// Builds the grader's programs (`common`: the checks and the CLI; a failure is the
// grader's), then the lesson programs (a failure is that lesson's). Returns the lessons
// whose program did not build, with the compiler's messages.
struct LessonProgram {
  std::string target;  ///< lesson-04
  std::string source;  ///< its main.cpp
};

std::map<std::string, std::string> build_programs(const std::string& build, const std::vector<std::string>& common,
                                                  const std::map<std::string, LessonProgram>& lesson_targets,
                                                  const std::vector<std::string>& strip) {
  if (!common.empty()) {
    std::vector<std::string> args = {"--build", build, "--target"};
    args.insert(args.end(), common.begin(), common.end());
    const ProcessResult result = cmake(args);
    if (!result.ok()) grader_build_failed("building the checks in " + build, result);
  }
  std::map<std::string, std::string> failed;
  if (lesson_targets.empty()) return failed;
  if (uses_ninja(build)) {
    std::vector<std::string> args = {"--build", build, "--target"};
    for (const auto& entry : lesson_targets) args.push_back(entry.second.target);
    args.insert(args.end(), {"--", "-k", "0"});  // every lesson that compiles is built
    const ProcessResult result = cmake(args);
    const auto messages = failures_in_log(result.out + result.err);
    for (const auto& [id, program] : lesson_targets) {
      const auto message = messages.find(id);
      if (message != messages.end()) failed[id] = without(message->second, strip);
      else if (!result.ok() && !built_from(build + "/bin/" + program.target, program.source))
        failed[id] = without(result.out + result.err, strip);  // e.g. the build stopped before it
    }
    return failed;
  }
  for (const auto& [id, program] : lesson_targets) {  // other generators: one target at a time
    const ProcessResult result = cmake({"--build", build, "--target", program.target});
    if (!result.ok()) failed[id] = without(result.out + result.err, strip);
  }
  return failed;
}

// "the_class-3f2a91c4": a student folder's name, readable and unique per path.
std::string folder_name(const std::string& root) {
  std::string name = fs::path(root).filename().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  std::uint32_t hash = 2166136261u;  // FNV-1a: the same folder for the same path, every run
  for (const unsigned char c : root) hash = (hash ^ c) * 16777619u;
  return fmt::format("{}-{:08x}", name.empty() ? "root" : name, hash);
}

// ---- running the checks ------------------------------------------------------------------

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

nlohmann::json placement_of(const nlohmann::json& report) {
  if (!report.is_object()) return nullptr;
  const auto observations = report.value("observations", nlohmann::json::array());
  if (!observations.is_array() || observations.empty()) return nullptr;
  const auto& last = observations.back();
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& t : last.value("tensors", nlohmann::json::array()))
    tensors.push_back({{"name", t.value("name", "")}, {"device", t.value("device", "")},
                       {"physical_gpu", t.value("physical_index", nlohmann::json())}});
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : last.value("gpus", nlohmann::json::array()))
    gpus.push_back({{"physical_gpu", g.value("physical_index", -1)}, {"used_bytes", g.value("used_bytes", 0)},
                    {"context", g.value("context", false)}});
  return {{"observation", last.value("label", "")}, {"tensors", tensors}, {"gpus", gpus}};
}

// The observed placement: the lesson run in its manifest scenario (`gpulab run NN --json`).
nlohmann::json observe_placement(const std::string& bin, const LessonEntry& lesson, bool solution, double timeout_s,
                                 ScratchDir& scratch) {
  ProcessOptions options;
  options.argv = {bin + "/gpulab", "run", lesson.id, "--json", "--timeout", fmt::format("{}", timeout_s)};
  if (solution) options.argv.push_back("--solution");
  // The scenario's own environment: variables set for the grader would win over it.
  const std::string state = scratch.fresh("state-" + lesson.id);
  fs::create_directories(state);
  options.env = {{"CUDA_VISIBLE_DEVICES", std::nullopt}, {"CUDA_DEVICE_ORDER", std::nullopt},
                 {"GPULAB_NODE", std::nullopt}, {"GPULAB_STATE_DIR", state}};
  options.timeout_s = timeout_s + 10;
  const ProcessResult result = run_and_clean_up(options);
  const auto start = result.out.find('{');
  if (start == std::string::npos) return nullptr;
  const auto document = nlohmann::json::parse(result.out.substr(start), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) return nullptr;
  try {
    if (document.contains("ranks")) {
      nlohmann::json ranks = nlohmann::json::array();
      for (const auto& rank : document.at("ranks")) ranks.push_back(placement_of(rank));
      return {{"ranks", ranks}};
    }
    if (document.contains("steps")) {
      const auto& steps = document.at("steps");
      for (std::size_t i = steps.size(); i-- > 0;) {
        auto placement = placement_of(steps.at(i));
        if (!placement.is_null()) {
          placement["step"] = i + 1;
          return placement;
        }
      }
      return nullptr;
    }
    return placement_of(document);
  } catch (const nlohmann::json::exception&) {
    return nullptr;  // a report cut short: no placement to show
  }
}

struct Paths {
  std::string bin;                 ///< where the graded programs and their checks are
  std::vector<std::string> strip;  ///< prefixes removed from messages
};

void run_checks(LessonGrade& grade, const LessonEntry& lesson, const GradeOptions& options, const Paths& paths,
                ScratchDir& scratch) {
  const std::string outcomes = scratch.fresh("outcomes-" + lesson.id);
  std::ofstream(outcomes).close();
  ProcessOptions process;
  process.argv = {paths.bin + "/lesson" + lesson.id + "-checks", kLessonChecks, "--reporter", "xml"};
  if (options.fail_fast) process.argv.push_back("--abort");
  process.env = {{"GPULAB_CHECK_TARGET", options.solution ? "solution" : "exercise"}, {"GPULAB_CHECK_OUTCOMES", outcomes}};
  process.timeout_s = options.timeout_s;
  // Catch2's own JUnit report comes from a second run of the same checks, at the same time
  // (each check runs its programs on a fresh node of its own).
  std::future<std::string> junit;
  if (!options.junit.empty()) {
    const std::string file = scratch.fresh("junit-" + lesson.id + ".xml");
    ProcessOptions junit_run = process;
    junit_run.argv = {process.argv[0], kLessonChecks, "--reporter", "junit", "--out", file};
    junit_run.env.back().second = scratch.fresh("outcomes-junit-" + lesson.id);
    junit = std::async(std::launch::async, [junit_run, file] {
      run_process(junit_run);
      return read_file(file);
    });
  }
  const ProcessResult result = run_process(process);
  if (junit.valid()) grade.junit_xml = junit.get();
  stop_leftovers();
  const std::string what_happened = without(read_file(outcomes), paths.strip);

  if (result.timed_out) {
    grade.junit_xml.clear();  // whatever Catch2 left is not a report
    grade.status = "timed_out";
    grade.message = fmt::format("the checks did not finish within {} s and were stopped\n{}", options.timeout_s, what_happened);
    return;
  }
  try {
    grade.verdict = parse_check_xml(result.out, paths.strip);
    grade.has_verdict = true;
  } catch (const std::exception&) {
    grade.junit_xml.clear();
    grade.status = "crashed";
    grade.message = fmt::format("the checks {} before giving a verdict\n{}{}", result.outcome(options.timeout_s),
                                what_happened, first_lines(without(result.err, paths.strip), 20));
    return;
  }
  grade.message = what_happened.empty() ? "" : "the program " + what_happened;
  if (what_happened.find("crashed") != std::string::npos) grade.status = "crashed";
  else if (what_happened.find("did not finish") != std::string::npos) grade.status = "timed_out";
  else if (result.ok() && grade.verdict.failed() == 0 && !grade.verdict.cases.empty()) grade.status = "passed";
  else grade.status = "failed";
  if (grade.status == "failed" && grade.verdict.failed() == 0)
    grade.message = fmt::format("the checks {}\n{}", result.outcome(options.timeout_s), first_lines(result.err, 20));

  if (options.placement && grade.status != "timed_out") grade.placement = observe_placement(paths.bin, lesson, options.solution, options.timeout_s, scratch);
}

// "expected: X — observed: Y" → {X, Y}; any other text is all observation.
std::pair<nlohmann::json, nlohmann::json> split_failure(const std::string& text) {
  static const std::string expected = "expected: ";
  static const std::string observed = " — observed: ";
  const auto at = text.find(observed);
  if (text.rfind(expected, 0) == 0 && at != std::string::npos)
    return {text.substr(expected.size(), at - expected.size()), text.substr(at + observed.size())};
  return {nullptr, text};
}

std::string pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

// "04  failed        2 of 4 checks  (Which GPU is cuda:1?)", then the first thing to fix.
std::string lesson_line(const LessonGrade& grade, double timeout_s) {
  std::string count;
  if (grade.status == "build_failed") count = "does not compile";
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

}  // namespace

std::size_t Grading::failed() const {
  return static_cast<std::size_t>(std::count_if(lessons.begin(), lessons.end(), [](const LessonGrade& l) { return !l.passed(); }));
}

Grading grade(const GradeOptions& options, std::ostream& out) {
  const Manifest manifest = load_manifest();
  std::vector<LessonEntry> lessons;
  if (options.lessons.empty()) lessons = manifest.lessons;
  for (const auto& id : options.lessons) lessons.push_back(manifest.find(id));
  if (options.timeout_s <= 0) {
    std::cerr << "gpulab: --timeout must be a positive number of seconds\n";
    throw Exit{kUsage};
  }

  const std::string main_build = fs::weakly_canonical(bin_dir() + "/..").string();
  const bool buildable = fs::exists(main_build + "/CMakeCache.txt");
  Grading grading;
  grading.target = options.solution ? "solution" : "exercise";
  Paths paths;
  std::string build = main_build;
  if (options.root.empty()) {
    grading.root = manifest.root;
    paths.strip = {bin_dir() + "/", manifest.root + "/"};
  } else {
    if (options.solution) {
      std::cerr << "gpulab: --solution grades this repository's solutions; it takes no --root\n";
      throw Exit{kUsage};
    }
    std::error_code error;
    grading.root = fs::canonical(options.root, error).string();
    if (error || !fs::is_directory(grading.root + "/lessons")) {
      std::cerr << fmt::format("gpulab: '{}' is not a student's checkout: it has no lessons/ folder\n", options.root);
      throw Exit{kUsage};
    }
    if (!buildable) {
      std::cerr << "gpulab: --root needs the build folder gpulab was built in (its CMakeCache.txt)\n";
      throw Exit{kUsage};
    }
    // Beside this build folder by default: the same path to the sources, so that ccache
    // (CCACHE_BASEDIR makes paths relative) serves the library, the checks and the CLI.
    const fs::path main_path(main_build);
    build = options.build_dir.empty()
                ? (main_path.parent_path() / (main_path.filename().string() + "-grading-" + folder_name(grading.root))).string()
                : fs::absolute(options.build_dir).lexically_normal().string();
    paths.strip = {build + "/bin/", grading.root + "/", manifest.root + "/", build + "/"};
  }
  paths.bin = build + "/bin";

  // Everything this process starts, and everything they start, comes back to it to be stopped.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  stop_leftovers();

  // Which lessons have a program to build; a student's missing file fails that lesson.
  std::map<std::string, LessonProgram> targets;
  std::map<std::string, std::string> build_failures;
  for (const auto& lesson : lessons) {
    const std::string file =
        fmt::format("{}/{}s/{}/main.cpp", grading.root, options.solution ? "solution" : "lesson", lesson.directory());
    if (!fs::exists(file)) {
      build_failures[lesson.id] = fmt::format("{}s/{}/main.cpp is missing\n", options.solution ? "solution" : "lesson",
                                              lesson.directory());
      continue;
    }
    targets[lesson.id] = {(options.solution ? "solution-" : "lesson-") + lesson.id, file};
  }
  if (buildable) {
    std::vector<std::string> checks;
    for (const auto& lesson : lessons) checks.push_back("lesson" + lesson.id + "-checks");
    std::cerr << fmt::format("gpulab: building {} of {} in {}\n", options.solution ? "the solutions" : "the exercises",
                             grading.root, build);
    BuildLock lock(build);
    if (!options.root.empty()) {
      std::string present;
      for (const auto& entry : targets) present += entry.first + "\n";
      configure_grading_folder(main_build, build, grading.root, present);
    }
    for (auto& [id, message] : build_programs(build, checks, targets, paths.strip)) build_failures[id] = message;
  }

  ScratchDir scratch;
  for (const auto& lesson : lessons) {
    const auto started = std::chrono::steady_clock::now();
    LessonGrade grade;
    grade.id = lesson.id;
    grade.title = lesson.title;
    const auto failure = build_failures.find(lesson.id);
    if (failure != build_failures.end()) {
      grade.status = "build_failed";
      grade.message = compiler_summary(failure->second);
    } else if (!fs::exists(paths.bin + "/" + targets.at(lesson.id).target)) {
      grade.status = "build_failed";
      grade.message = fmt::format("{}/{} is not built\n", paths.bin, targets.at(lesson.id).target);
    } else {
      run_checks(grade, lesson, options, paths, scratch);
    }
    grade.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    out << lesson_line(grade, options.timeout_s) << std::flush;
    grading.lessons.push_back(std::move(grade));
  }
  return grading;
}

nlohmann::json grading_json(const Grading& grading) {
  nlohmann::json lessons = nlohmann::json::array();
  for (const auto& lesson : grading.lessons) {
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : lesson.verdict.cases) {
      nlohmann::json check = {{"name", c.name}, {"ok", c.passed || c.skipped}, {"expected", nullptr}, {"observed", nullptr}};
      if (c.skipped) check["skipped"] = c.skip_reason;
      if (!c.failures.empty()) {
        const auto [expected, observed] = split_failure(c.failures.front().text);
        check["expected"] = expected;
        check["observed"] = observed;
        if (c.failures.size() > 1) {
          nlohmann::json more = nlohmann::json::array();
          for (std::size_t i = 1; i < c.failures.size(); ++i) {
            const auto [e, o] = split_failure(c.failures[i].text);
            more.push_back({{"expected", e}, {"observed", o}});
          }
          check["more"] = more;
        }
      }
      checks.push_back(check);
    }
    nlohmann::json entry = {{"id", lesson.id},
                            {"title", lesson.title},
                            {"status", lesson.status},
                            {"passed", lesson.verdict.passed()},
                            {"failed", lesson.verdict.failed()},
                            {"checks", checks},
                            {"placement", lesson.placement},
                            {"seconds", std::round(lesson.seconds * 10) / 10}};
    if (!lesson.message.empty()) entry["message"] = lesson.message;
    lessons.push_back(entry);
  }
  const std::size_t failed = grading.failed();
  return {{"root", grading.root},
          {"target", grading.target},
          {"lessons", lessons},
          {"passed", grading.lessons.size() - failed},
          {"failed", failed}};
}

std::string grading_junit(const Grading& grading) {
  pugi::xml_document document;
  auto declaration = document.append_child(pugi::node_declaration);
  declaration.append_attribute("version") = "1.0";
  declaration.append_attribute("encoding") = "UTF-8";
  auto suites = document.append_child("testsuites");
  suites.append_attribute("name") = fmt::format("gpulab check all: {} ({})", grading.root, grading.target).c_str();
  long tests = 0, failures = 0, errors = 0;
  for (const auto& lesson : grading.lessons) {
    pugi::xml_document part;
    bool copied = false;
    if (!lesson.junit_xml.empty() && part.load_string(lesson.junit_xml.c_str())) {
      for (const auto& suite : part.child("testsuites").children("testsuite")) {
        suites.append_copy(suite);
        tests += suite.attribute("tests").as_llong();
        failures += suite.attribute("failures").as_llong();
        errors += suite.attribute("errors").as_llong();
        copied = true;
      }
    }
    if (copied) continue;
    // No report from Catch2 (not built, stopped, crashed, or --junit's second run broke):
    // one test case that says why.
    const std::string name = "lesson" + lesson.id + "-checks";
    const bool is_failure = lesson.status == "build_failed" || lesson.status == "failed";
    auto suite = suites.append_child("testsuite");
    suite.append_attribute("name") = name.c_str();
    suite.append_attribute("tests") = 1;
    suite.append_attribute("failures") = is_failure ? 1 : 0;
    suite.append_attribute("errors") = is_failure ? 0 : 1;
    suite.append_attribute("skipped") = 0;
    suite.append_attribute("time") = fmt::format("{:.3f}", lesson.seconds).c_str();
    auto test_case = suite.append_child("testcase");
    test_case.append_attribute("classname") = name.c_str();
    test_case.append_attribute("name") = fmt::format("lesson {}: {}", lesson.id, lesson.title).c_str();
    test_case.append_attribute("time") = fmt::format("{:.3f}", lesson.seconds).c_str();
    auto problem = test_case.append_child(is_failure ? "failure" : "error");
    std::string first;
    std::getline(std::istringstream(lesson.message), first);
    problem.append_attribute("message") = (lesson.status + ": " + first).c_str();
    problem.append_attribute("type") = lesson.status.c_str();
    problem.text().set(lesson.message.c_str());
    tests += 1;
    (is_failure ? failures : errors) += 1;
  }
  suites.append_attribute("tests") = tests;
  suites.append_attribute("failures") = failures;
  suites.append_attribute("errors") = errors;
  std::ostringstream text;
  document.save(text, "  ");
  return text.str();
}

void add_check_all_options(CLI::App& check, GradeOptions& options) {
  check.add_option("--junit", options.junit, "check all: write JUnit XML here (Catch2's reports, one testsuite per lesson)");
  check.add_option("--json", options.json, "check all: write each lesson's status, failed checks and placement as JSON here");
  check.add_option("--root", options.root, "check all: grade the exercises of this checkout (a student's) instead of yours");
  check.add_option("--build-dir", options.build_dir, "check all --root: build the student's exercises here")
      ->default_str("build-grading-<name>, beside the build folder");
  check.add_option("--timeout", options.timeout_s, "seconds each lesson's checks may run")->capture_default_str();
  check.add_option("--lessons", options.lessons, "check all: only these lessons, e.g. 01,04")->delimiter(',');
  check.add_flag("--fail-fast", options.fail_fast, "check all: stop each lesson's checks at their first failure");
  check.add_flag("--no-placement", [&options](std::int64_t) { options.placement = false; },
                 "check all: do not run each lesson again to record where its tensors landed");
}

void run_check_all(const GradeOptions& options) {
  const Grading grading = grade(options, std::cout);
  const std::size_t failed = grading.failed();
  std::cout << fmt::format("\n{} lessons: {} passed, {} failed ({}s of {})\n", grading.lessons.size(),
                           grading.lessons.size() - failed, failed, grading.target, grading.root);
  if (!options.json.empty()) {
    std::ofstream file(options.json);
    file << grading_json(grading).dump(2) << '\n';
    if (!file) {
      std::cerr << fmt::format("gpulab: cannot write {}\n", options.json);
      throw Exit{kUsage};
    }
  }
  if (!options.junit.empty()) {
    std::ofstream file(options.junit);
    file << grading_junit(grading);
    if (!file) {
      std::cerr << fmt::format("gpulab: cannot write {}\n", options.junit);
      throw Exit{kUsage};
    }
  }
  if (failed > 0) throw Exit{kChecksFailed};
}

}  // namespace gpulab::cli
