// Building lesson programs (grading/runner.h make_builder): what cmake is asked, and how
// Ninja's log is read back per target ("FAILED: <outputs>"), so that a grader can tell which
// lesson does not compile and show only what the compiler said about it, with the paths a
// learner must not see removed. cmake is a fake here: it records its command line and
// answers with a log.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "grading/builder_internal.h"
#include "grading/runner.h"
#include "proc/temp_dir.h"

namespace fs = std::filesystem;
using gpulab::ProcessOptions;
using gpulab::ProcessResult;
using gpulab::TempDir;
using gpulab::grading::failures_in_log;
using gpulab::grading::make_builder;

namespace {

// Two lessons fail, one to compile and one to link; another compiles; the build stops.
const char* const kLog =
    "[1/4] Building CXX object lessons/CMakeFiles/lesson-03.dir/03-setting-it-in-code/main.cpp.o\n"
    "[2/4] Building CXX object lessons/CMakeFiles/lesson-04.dir/04-which-gpu-is-cuda-1/main.cpp.o\n"
    "FAILED: lessons/CMakeFiles/lesson-04.dir/04-which-gpu-is-cuda-1/main.cpp.o \n"
    "/usr/bin/clang++ -I/src/include -c ../lessons/04-which-gpu-is-cuda-1/main.cpp -o lessons/CMakeFiles/x.o\n"
    "../lessons/04-which-gpu-is-cuda-1/main.cpp:3:1: error: expected ';'\n"
    "1 error generated.\n"
    "[3/4] Linking CXX executable bin/lesson-05\n"
    "FAILED: bin/lesson-05 \n"
    ": && /usr/bin/clang++ main.cpp.o -o bin/lesson-05 && :\n"
    "/usr/bin/ld: /build/lessons/main.cpp.o: undefined reference to `helper()'\n"
    "ninja: build stopped: cannot make progress due to previous errors.\n";

// cmake as a fake: every command line it was given, and one answer for all.
struct FakeCmake {
  std::vector<ProcessOptions> calls;
  ProcessResult answer;
  std::vector<std::string> failing_targets;  // other generators: these targets' builds fail

  gpulab::grading::ProcessRun run() {
    return [this](const ProcessOptions& options) {
      calls.push_back(options);
      if (failing_targets.empty()) return answer;
      ProcessResult result;
      result.exit_code = 0;
      for (const auto& target : failing_targets)
        if (options.argv.back() == target) result = {2, 0, false, "error in " + target + "\n", "stderr of " + target + "\n"};
      return result;
    };
  }
};

ProcessResult failed(const std::string& out, const std::string& err = "") { return {1, 0, false, out, err}; }

void make_ninja_folder(const TempDir& build) { std::ofstream(build.path() + "/build.ninja") << "# ninja\n"; }

}  // namespace

TEST_CASE("Ninja's log: each FAILED target's messages, without its command line or other targets' progress",
          "[unit][grading][builder]") {
  const auto failures = failures_in_log(kLog);
  REQUIRE(failures.size() == 2);
  CHECK(failures.at("lesson-04") ==
        "../lessons/04-which-gpu-is-cuda-1/main.cpp:3:1: error: expected ';'\n"
        "1 error generated.\n");
  CHECK(failures.at("lesson-05") == "/usr/bin/ld: /build/lessons/main.cpp.o: undefined reference to `helper()'\n");
  CHECK(failures.count("lesson-03") == 0);  // it compiled
}

TEST_CASE("Ninja's log: a FAILED line naming no target keeps its messages to no one", "[unit][grading][builder]") {
  const auto failures = failures_in_log("FAILED: build.ninja \n/usr/bin/cmake -S..\nCMake Error: bad\n");
  CHECK(failures.empty());
  // Messages before any FAILED line (cmake's own) belong to no target either.
  CHECK(failures_in_log("CMake Error at CMakeLists.txt:3\n[1/1] Re-running CMake...\n").empty());
}

TEST_CASE("a Ninja build asks cmake for every target at once, going on past failures, in the build folder's lock",
          "[unit][grading][builder]") {
  const TempDir build("builder");
  make_ninja_folder(build);
  FakeCmake cmake;
  cmake.answer = {0, 0, false, "[1/2] ok\n", ""};
  const auto result = make_builder(build.path(), {}, cmake.run())->build({"lesson-01", "lesson01-checks"});
  CHECK(result.ok);
  CHECK(result.failures.empty());
  CHECK(result.messages.empty());
  REQUIRE(cmake.calls.size() == 1);
  // Ninja itself when it is on the PATH (cmake --build adds seconds to a build with nothing
  // to do), else cmake --build; either way every target that compiles is built (-k 0).
  const auto& argv = cmake.calls[0].argv;
  if (argv.at(0) == "cmake")
    CHECK(argv == std::vector<std::string>{"cmake", "--build", build.path(), "--target", "lesson-01", "lesson01-checks", "--", "-k", "0"});
  else
    CHECK(argv == std::vector<std::string>{argv.at(0), "-C", build.path(), "lesson-01", "lesson01-checks", "-k", "0"});
  CHECK((argv.at(0) == "cmake" || fs::path(argv.at(0)).filename() == "ninja"));
  CHECK(cmake.calls[0].timeout_s == 3600);  // a cold build folder on a small machine
  CHECK(fs::exists(build.path() + "/.gpulab-build.lock"));  // the ./gpulab script's lock
}

TEST_CASE("a failed Ninja build names each failed target with what the compiler said, paths as the learner knows them",
          "[unit][grading][builder]") {
  const TempDir build("builder");
  make_ninja_folder(build);
  FakeCmake cmake;
  cmake.answer = failed(kLog);
  const auto result =
      make_builder(build.path(), {"/build/"}, cmake.run())->build({"lesson-03", "lesson-04", "lesson-05"});
  CHECK_FALSE(result.ok);
  REQUIRE(result.failures.size() == 2);
  CHECK(result.failures[0].first == "lesson-04");
  // "../" of the build folder gone: the path is the repository's.
  CHECK(result.failures[0].second == "lessons/04-which-gpu-is-cuda-1/main.cpp:3:1: error: expected ';'\n1 error generated.\n");
  CHECK(result.failures[1].first == "lesson-05");
  CHECK(result.failures[1].second == "/usr/bin/ld: lessons/main.cpp.o: undefined reference to `helper()'\n");  // stripped
  CHECK(result.messages == result.failures[0].second + result.failures[1].second);
}

TEST_CASE("a failed build that names no target is one failure with everything cmake said", "[unit][grading][builder]") {
  const TempDir build("builder");
  make_ninja_folder(build);
  FakeCmake cmake;
  cmake.answer = failed("ninja: error: unknown target 'lesson-99'\n", "cmake: stopped\n");
  const auto result = make_builder(build.path(), {}, cmake.run())->build({"lesson-99"});
  CHECK_FALSE(result.ok);
  REQUIRE(result.failures.size() == 1);
  CHECK(result.failures[0].first.empty());
  CHECK(result.failures[0].second == "ninja: error: unknown target 'lesson-99'\ncmake: stopped\n");
}

TEST_CASE("another generator builds one target at a time, and only the failed ones are failures", "[unit][grading][builder]") {
  const TempDir build("builder");  // no build.ninja
  FakeCmake cmake;
  cmake.failing_targets = {"lesson-02"};
  const auto result = make_builder(build.path(), {}, cmake.run())->build({"lesson-01", "lesson-02", "lesson-03"});
  REQUIRE(cmake.calls.size() == 3);
  CHECK(cmake.calls[1].argv == std::vector<std::string>{"cmake", "--build", build.path(), "--target", "lesson-02"});
  CHECK_FALSE(result.ok);
  REQUIRE(result.failures.size() == 1);
  CHECK(result.failures[0].first == "lesson-02");
  CHECK(result.failures[0].second == "error in lesson-02\nstderr of lesson-02\n");
}

TEST_CASE("nothing to build runs nothing", "[unit][grading][builder]") {
  const TempDir build("builder");
  FakeCmake cmake;
  const auto result = make_builder(build.path() + "/not-yet", {}, cmake.run())->build({});
  CHECK(result.ok);
  CHECK(cmake.calls.empty());
  CHECK_FALSE(fs::exists(build.path() + "/not-yet"));  // not even the lock is taken
}
