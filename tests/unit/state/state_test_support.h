// What the node state tests share: private scratch folders, whole-file reads and writes,
// a small node, and the refusal a test expects.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include <unistd.h>

#include "model/node.h"
#include "state/state_folder.h"

namespace gpulab::state_test {

/// A fresh folder of this user's (mode 0700), removed with everything in it afterwards.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gpulab-state-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::string& path, const std::string& content) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << content;
  REQUIRE(file.good());
}

/// The shipped two-GPU node (2 GiB each).
inline Node tiny2() { return load_node_file(std::string(GPULAB_TEST_SOURCE_DIR) + "/nodes/tiny2.json"); }

/// Only root can hand a file to another user: the tests of other owners need it.
inline bool running_as_root() { return geteuid() == 0; }
constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

/// The message of the UnsafeStateError that `open` throws; fails the test when it throws
/// none.
template <class Open>
std::string refusal(Open&& open) {
  try {
    open();
  } catch (const UnsafeStateError& e) {
    return e.what();
  }
  FAIL("gpulab used a node state it should have refused");
  return {};
}

/// Sets or removes an environment variable for one scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace gpulab::state_test
