// Building lesson programs: the one child process the runner keeps. Ninja's log is read
// back per target, so a grader can tell which lesson does not compile and show only what
// the compiler said about it.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "grading/builder_internal.h"
#include "grading/runner.h"
#include "report/message_text.h"

namespace fs = std::filesystem;

namespace gpulab::grading {
namespace {

constexpr double kBuildTimeout = 3600;  // a cold build folder on a small machine

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

bool uses_ninja(const std::string& build) { return fs::exists(build + "/build.ninja"); }

class CmakeBuilder : public Builder {
 public:
  CmakeBuilder(std::string build_dir, std::vector<std::string> strip, ProcessRun run)
      : build_(std::move(build_dir)), strip_(std::move(strip)), run_(std::move(run)) {}

  BuildResult build(const std::vector<std::string>& targets) override {
    BuildResult built;
    if (targets.empty()) return built;
    BuildLock lock(build_);
    if (!uses_ninja(build_)) {
      for (const auto& target : targets) {  // other generators: one target at a time
        const ProcessResult result = cmake({"--build", build_, "--target", target});
        if (!result.ok()) add_failure(built, target, result.out + result.err);
      }
      return built;
    }
    std::vector<std::string> args = {"--build", build_, "--target"};
    args.insert(args.end(), targets.begin(), targets.end());
    args.insert(args.end(), {"--", "-k", "0"});  // every target that compiles is built
    const ProcessResult result = cmake(args);
    if (result.ok()) return built;
    const auto messages = failures_in_log(result.out + result.err);
    for (const auto& [target, text] : messages) add_failure(built, target, text);
    if (built.failures.empty()) add_failure(built, "", result.out + result.err);  // e.g. the build stopped before any
    return built;
  }

 private:
  ProcessResult cmake(std::vector<std::string> args) const {
    ProcessOptions options;
    options.argv = {"cmake"};
    options.argv.insert(options.argv.end(), args.begin(), args.end());
    options.timeout_s = kBuildTimeout;
    return run_(options);
  }

  // Ninja names sources relative to the build folder ("../lessons/…"): the learner reads
  // them relative to the repository, as the ./gpulab script shows them.
  static std::string from_repository(const std::string& text) {
    std::istringstream in(text);
    std::string out;
    for (std::string line; std::getline(in, line);) {
      while (line.rfind("../", 0) == 0) line.erase(0, 3);
      out += line + '\n';
    }
    return out;
  }

  void add_failure(BuildResult& built, const std::string& target, const std::string& text) const {
    built.ok = false;
    const std::string messages = from_repository(without_prefixes(text, strip_));
    built.failures.emplace_back(target, messages);
    built.messages += messages;
  }

  std::string build_;
  std::vector<std::string> strip_;
  ProcessRun run_;
};

}  // namespace

std::map<std::string, std::string> failures_in_log(const std::string& log) {
  static const std::regex target_of(R"((?:CMakeFiles/([^/ ]+)\.dir/|bin/([^ /]+)(?:$| )))");
  static const std::regex progress(R"(^\[[0-9]+/[0-9]+\] )");
  std::map<std::string, std::string> messages;
  std::istringstream in(log);
  std::string line;
  std::string current;
  bool command_follows = false;
  while (std::getline(in, line)) {
    if (line.rfind("FAILED: ", 0) == 0) {
      std::smatch match;
      current = std::regex_search(line, match, target_of) ? (match[1].matched ? match[1].str() : match[2].str()) : "";
      command_follows = true;
      continue;
    }
    if (command_follows) {
      command_follows = false;
      continue;
    }
    if (line.rfind("ninja: ", 0) == 0 || std::regex_search(line, progress)) {
      current.clear();
      continue;
    }
    if (!current.empty()) messages[current] += line + '\n';
  }
  return messages;
}

std::unique_ptr<Builder> make_builder(const std::string& build_dir, std::vector<std::string> strip, ProcessRun run) {
  return std::make_unique<CmakeBuilder>(build_dir, std::move(strip), std::move(run));
}

}  // namespace gpulab::grading
