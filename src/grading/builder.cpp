// Building lesson programs: the one child process the runner keeps. Ninja's log is read
// back per target, so a grader can tell which lesson does not compile and show only what
// the compiler said about it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "grading/builder_internal.h"
#include "grading/runner.h"
#include "proc/leftovers.h"
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

// Ninja itself on the PATH ("" none): `cmake --build` adds about two seconds of its own to a
// build with nothing to do, the edit-rerun loop's usual case.
std::string ninja_on_path() {
  const char* path = std::getenv("PATH");
  std::string folders = path != nullptr ? path : "";
  for (std::size_t at = 0; at <= folders.size();) {
    const auto end = std::min(folders.find(':', at), folders.size());
    const std::string candidate = (end > at ? folders.substr(at, end - at) : ".") + "/ninja";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    at = end + 1;
  }
  return "";
}

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
    const std::string ninja = ninja_on_path();
    std::vector<std::string> args = ninja.empty() ? std::vector<std::string>{"cmake", "--build", build_, "--target"}
                                                  : std::vector<std::string>{ninja, "-C", build_};
    args.insert(args.end(), targets.begin(), targets.end());
    if (ninja.empty()) args.push_back("--");
    args.insert(args.end(), {"-k", "0"});  // every target that compiles is built
    const ProcessResult result = run(args);
    if (result.ok()) return built;
    const auto messages = failures_in_log(result.out + result.err);
    for (const auto& [target, text] : messages) add_failure(built, target, text);
    if (built.failures.empty()) add_failure(built, "", result.out + result.err);  // e.g. the build stopped before any
    return built;
  }

 private:
  ProcessResult cmake(std::vector<std::string> args) const {
    args.insert(args.begin(), "cmake");
    return run(std::move(args));
  }

  ProcessResult run(std::vector<std::string> argv) const {
    ProcessOptions options;
    options.argv = std::move(argv);
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

// The background builder's process (Prebuild): each target in turn under the build lock,
// its ninja in a process group of its own, until the targets are done or `alive` ends.
[[noreturn]] void prebuild_loop(int alive, const std::string& ninja, const std::string& build,
                                const std::vector<std::string>& targets) {
  const int null = ::open("/dev/null", O_RDWR);
  for (int fd : {0, 1, 2}) dup2(null, fd);  // quiet, and holding none of the caller's pipes open
  for (int fd = 3; fd < 1024; ++fd)
    if (fd != alive) close(fd);
  setpriority(PRIO_PROCESS, 0, 10);
  pollfd watch{alive, POLLIN, 0};
  for (const auto& target : targets) {
    if (poll(&watch, 1, 0) != 0) break;  // the caller is gone
    BuildLock lock(build);
    if (poll(&watch, 1, 0) != 0) break;
    const pid_t child = fork();
    if (child < 0) break;
    if (child == 0) {
      setpgid(0, 0);
      execl(ninja.c_str(), "ninja", "-C", build.c_str(), target.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(child, child);
    for (;;) {
      if (waitpid(child, nullptr, WNOHANG) == child) break;
      if (poll(&watch, 1, 100) != 0) {  // stop: the whole ninja, its compilers too
        kill(-child, SIGTERM);
        waitpid(child, nullptr, 0);
        _exit(0);
      }
    }
  }
  _exit(0);
}

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

Prebuild::Prebuild(const std::string& build_dir, const std::vector<std::string>& targets) {
  const std::string ninja = ninja_on_path();
  int alive[2];
  if (targets.empty() || ninja.empty() || !uses_ninja(build_dir) || pipe2(alive, O_CLOEXEC) != 0) return;
  const pid_t child = fork();
  if (child == 0) {
    close(alive[1]);
    setsid();  // no terminal's Ctrl-C: it stops when the pipe says so
    prebuild_loop(alive[0], ninja, build_dir, targets);
  }
  close(alive[0]);
  if (child < 0) {
    close(alive[1]);
    return;
  }
  spare_from_leftovers(child);  // a grader's stop_leftovers must not stop it
  alive_ = alive[1];
  pid_ = child;
}

Prebuild::~Prebuild() {
  if (pid_ < 0) return;
  close(alive_);  // the builder stops its ninja and ends
  waitpid(pid_, nullptr, 0);
  spare_from_leftovers(pid_, false);
}

std::unique_ptr<Builder> make_builder(const std::string& build_dir, std::vector<std::string> strip, ProcessRun run) {
  return std::make_unique<CmakeBuilder>(build_dir, std::move(strip), std::move(run));
}

}  // namespace gpulab::grading
