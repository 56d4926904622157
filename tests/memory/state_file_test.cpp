// A broken or stale node state file — garbage, the wrong size, another node's — is
// detected, rebuilt with a warning and used again; it never makes a program crash.
#include <cstdio>
#include <fstream>
#include <random>
#include <sys/file.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "child.h"
#include "memory_support.h"

using namespace gpulab::test;

namespace {

std::string state_file(const std::string& dir, const std::string& node_name) {
  return dir + "/" + node_name + ".state";
}

std::uint64_t file_size(const std::string& path) {
  struct stat info {};
  REQUIRE(stat(path.c_str(), &info) == 0);
  return static_cast<std::uint64_t>(info.st_size);
}

std::string garbage(std::size_t bytes, unsigned seed) {
  std::mt19937 random(seed);
  std::string text(bytes, '\0');
  for (char& c : text) c = static_cast<char>(random() & 0xff);
  return text;
}

// Overwrites the file under its lock, as a process updating the state would hold it.
void overwrite(const std::string& path, const std::string& content) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(flock(fd, LOCK_EX) == 0);
  REQUIRE(ftruncate(fd, 0) == 0);
  REQUIRE(write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()));
  flock(fd, LOCK_UN);
  close(fd);
}

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// smi on a broken file: a warning that names the file, an empty node, exit code 0.
void check_rebuilt(const std::string& dir) {
  const std::string path = state_file(dir, gpulab::kDefaultNodeName);
  const auto view = smi(dir);
  CHECK(view.err.find("warning") != std::string::npos);
  CHECK(view.err.find(path) != std::string::npos);
  for (int gpu = 0; gpu < static_cast<int>(node().gpus.size()); ++gpu) CHECK(view.pids(gpu).empty());

  INFO("the rebuilt file serves the next processes, without another warning");
  const std::uint64_t held = 64 * kMiB;
  Child holder({bin("memory-hold"), "cuda:0", std::to_string(held / kMiB)}, dir);
  REQUIRE(holder.read_line() == "ready");
  const auto after = smi(dir);
  CHECK(after.err.find("warning") == std::string::npos);
  CHECK(after.usage(0, holder.pid()) == node().gpus[0].context_bytes + segment_bytes(held));
  holder.close_stdin();
  const auto result = holder.wait();
  CHECK(result.exit_code == 0);
  CHECK(result.err.find("warning") == std::string::npos);
}

}  // namespace

TEST_CASE("a broken node state file is rebuilt with a warning, never a crash", "[memory][state]") {
  const std::string dir = fresh_state_dir();
  const std::string path = state_file(dir, gpulab::kDefaultNodeName);

  SECTION("garbage bytes of the right size") {
    smi(dir);  // creates a valid, empty state file
    const std::uint64_t size = file_size(path);
    overwrite(path, garbage(size, 1));
    REQUIRE(file_size(path) == size);
    check_rebuilt(dir);
  }
  SECTION("a file of the wrong size") {
    overwrite(path, garbage(1000, 2));
    check_rebuilt(dir);
  }
  SECTION("the state file of another node") {
    smi(dir, {{"GPULAB_NODE", "tiny2"}});
    overwrite(path, read_file(state_file(dir, "tiny2")));
    check_rebuilt(dir);
  }
}

TEST_CASE("a process whose node state file is broken while it runs carries on and exits cleanly", "[memory][state]") {
  const std::string dir = fresh_state_dir();
  const std::string path = state_file(dir, gpulab::kDefaultNodeName);
  Child holder({bin("memory-hold"), "cuda:0", "64"}, dir);
  REQUIRE(holder.read_line() == "ready");
  overwrite(path, garbage(file_size(path), 3));

  const auto view = smi(dir);
  CHECK(view.err.find("warning") != std::string::npos);
  holder.close_stdin();
  const auto result = holder.wait();
  INFO("stderr: " << result.err);
  CHECK(result.exit_code == 0);
  CHECK(smi(dir).err.find("warning") == std::string::npos);
}
