// A grading box's bubblewrap command line, read as bubblewrap reads it (grading/box.h): every
// writable place has a size, nothing of the host is bound writable, the environment is an
// allow-list, and the reference solutions are there only when there are some.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "grading/box.h"
#include "proc/confine.h"

using namespace gpulab;
using namespace gpulab::grading;

namespace {

// Bubblewrap's options as the box uses them, by the number of words each takes. An option
// not listed fails the test: a new one (a writable --bind, say) must be looked at here.
const std::map<std::string, int> kArity = {
    {"--unshare-all", 0}, {"--die-with-parent", 0}, {"--new-session", 0}, {"--clearenv", 0}, {"--hostname", 1},
    {"--size", 1},        {"--tmpfs", 1},           {"--proc", 1},        {"--dev", 1},      {"--dir", 1},
    {"--chdir", 1},       {"--remount-ro", 1},      {"--ro-bind", 2},     {"--ro-bind-try", 2}, {"--symlink", 2},
    {"--setenv", 2}};

struct Box {
  std::vector<std::vector<std::string>> options;  // each option with its words
  std::vector<std::string> command;                // what runs in the box (after "--")
};

Box read_box(const std::vector<std::string>& args) {
  REQUIRE(!args.empty());
  REQUIRE(args[0] == "bwrap");
  Box box;
  std::size_t i = 1;
  while (i < args.size() && args[i] != "--") {
    const auto arity = kArity.find(args[i]);
    INFO("bubblewrap option " << args[i]);
    REQUIRE(arity != kArity.end());
    REQUIRE(i + static_cast<std::size_t>(arity->second) < args.size());
    box.options.emplace_back(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i) + arity->second + 1);
    i += static_cast<std::size_t>(arity->second) + 1;
  }
  REQUIRE(i < args.size());
  box.command.assign(args.begin() + static_cast<long>(i) + 1, args.end());
  return box;
}

BoxLayout layout_with(std::vector<std::string> references) {
  BoxLayout layout;
  layout.student = "/home/teacher/class/alice";
  layout.read_only = {"/home/teacher/gpulab/include", "/home/teacher/gpulab/build/src"};
  layout.bin = "/home/teacher/gpulab/build/bin";
  layout.programs = {"/home/teacher/gpulab/build/bin/gpulab", "/home/teacher/gpulab/build/bin/lesson01-checks"};
  layout.references = std::move(references);
  layout.env = {{"GPULAB_STATE_DIR", "/tmp/state"}};
  return layout;
}

}  // namespace

TEST_CASE("every writable place in a box has a size, and nothing of the host is bound writable", "[unit][grading][box]") {
  BoxLimits limits;
  limits.disk_bytes = 64ull << 20;
  const Box box = read_box(box_arguments(layout_with({}), limits, {"gpulab", "class", "grade-in-box"}, true));
  std::set<std::string> sized;
  std::string size;
  std::set<std::string> read_only;
  for (const auto& option : box.options) {
    if (option[0] == "--size") size = option[1];
    if (option[0] == "--tmpfs") {
      CHECK(size == std::to_string(64ull << 20));  // the size goes right before its tmpfs
      sized.insert(option[1]);
    }
    if (option[0] != "--size") size.clear();
    if (option[0] == "--remount-ro") read_only.insert(option[1]);
  }
  CHECK(sized == std::set<std::string>{kRunArea, kGraderScratch, "/dev/shm", "/home/teacher/gpulab/build/bin"});
  CHECK(read_only == std::set<std::string>{"/", "/dev"});
  CHECK(box.command == std::vector<std::string>{"prlimit", "--nproc=256", "--fsize=" + std::to_string(64ull << 20), "--core=0", "--",
                                                "gpulab", "class", "grade-in-box"});
}

TEST_CASE("a box's environment is the allow-list, cleared first", "[unit][grading][box]") {
  const Box box = read_box(box_arguments(layout_with({}), BoxLimits{}, {"true"}, true));
  bool cleared = false;
  std::set<std::string> names;
  for (const auto& option : box.options) {
    if (option[0] == "--clearenv") cleared = true;
    if (option[0] == "--setenv") {
      CHECK(cleared);  // no variable set before the environment is emptied
      names.insert(option[1]);
    }
  }
  CHECK(names == std::set<std::string>{"PATH", "HOME", "TMPDIR", "LANG", kConfineVariable, "GPULAB_STATE_DIR"});
}

TEST_CASE("the reference solutions are bound read-only at /reference, and named, only when there are some",
          "[unit][grading][box]") {
  const Box none = read_box(box_arguments(layout_with({}), BoxLimits{}, {"true"}, true));
  for (const auto& option : none.options) CHECK_FALSE((option[0] == "--setenv" && option[1] == kReferenceVariable));

  const Box with = read_box(box_arguments(layout_with({"/b/bin/solution-01", "/b/bin/solution-04"}), BoxLimits{}, {"true"}, true));
  std::map<std::string, std::string> bound;
  std::string named;
  for (const auto& option : with.options) {
    if (option[0] == "--ro-bind") bound[option[2]] = option[1];
    if (option[0] == "--setenv" && option[1] == kReferenceVariable) named = option[2];
  }
  CHECK(named == kReferencesInBox);
  CHECK(bound[std::string(kReferencesInBox) + "/solution-01"] == "/b/bin/solution-01");
  CHECK(bound[std::string(kReferencesInBox) + "/solution-04"] == "/b/bin/solution-04");
  CHECK(bound[kStudentInBox] == "/home/teacher/class/alice");
}

TEST_CASE("memory is limited per process only where no cgroup counts the box's", "[unit][grading][box]") {
  BoxLimits limits;
  limits.memory_bytes = 3ull << 30;
  const auto has_as = [&](bool counted) {
    for (const auto& word : read_box(box_arguments(layout_with({}), limits, {"true"}, counted)).command)
      if (word == "--as=" + std::to_string(3ull << 30)) return true;
    return false;
  };
  CHECK(has_as(false));
  CHECK_FALSE(has_as(true));
}
