// A node state file's contents are untrusted input (docs/shared-node.md): on a shared node
// any member can write any bytes into it, and a broken program can too. A file with a valid
// header and crafted records must never make gpulab read or write out of bounds, hang,
// count memory twice or wrap a total around, or show bytes a terminal would interpret.
#include <catch2/catch.hpp>

#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "state/node_state.h"
#include "state_test_support.h"

using namespace gpulab;
using namespace gpulab::state_test;

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

// The file format of docs/memory.md, written down independently: a 64-byte header, then
// 256 process slots.
struct SlotBytes {
  std::int32_t pid;
  std::int16_t mig_gpu;       // -1 -1: not on a MIG instance
  std::int16_t mig_instance;
  std::uint64_t start_time;
  char name[48];
  std::uint64_t context_mask;
  std::uint64_t used[kMaxGpus];
};
constexpr std::size_t kHeaderBytes = 64;
constexpr int kSlotCount = 256;

// A crafted record for a process, as another user of a shared node could write it.
SlotBytes record(int pid, std::uint64_t start_time, std::uint64_t used_gpu0 = 0) {
  SlotBytes slot{};
  slot.pid = pid;
  slot.mig_gpu = -1;
  slot.mig_instance = -1;
  slot.start_time = start_time;
  std::snprintf(slot.name, sizeof slot.name, "crafted");
  slot.used[0] = used_gpu0;
  return slot;
}

class CraftedState {
 public:
  CraftedState() : path_(folder_ / "tiny2.state"), state_(tiny2(), path_, StateSharing::Private) {
    struct stat info {};
    REQUIRE(stat(path_.c_str(), &info) == 0);
    REQUIRE(static_cast<std::size_t>(info.st_size) == kHeaderBytes + kSlotCount * sizeof(SlotBytes));
  }
  NodeState& state() { return state_; }
  const std::string& path() const { return path_; }
  void write_slot(int index, const SlotBytes& slot) const {
    const int fd = open(path_.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    const auto offset = static_cast<off_t>(kHeaderBytes + static_cast<std::size_t>(index) * sizeof(SlotBytes));
    REQUIRE(pwrite(fd, &slot, sizeof slot, offset) == static_cast<ssize_t>(sizeof slot));
    close(fd);
  }

 private:
  ScratchFolder folder_;
  std::string path_;
  NodeState state_;
};

// A process this test starts and ends itself, so that a record can name a live pid.
class Sleeper {
 public:
  Sleeper() : pid_(fork()) {
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      pause();
      _exit(0);
    }
    REQUIRE(process_start_time(pid_) != 0);  // it exists as soon as fork returns
  }
  ~Sleeper() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  Sleeper(const Sleeper&) = delete;
  Sleeper& operator=(const Sleeper&) = delete;
  int pid() const { return pid_; }
  std::uint64_t start_time() const { return process_start_time(pid_); }

 private:
  pid_t pid_;
};

ProcessUsage using_on_gpu0(std::uint64_t bytes) {
  ProcessUsage usage;
  usage.used_bytes = {bytes, 0};
  return usage;
}

}  // namespace

TEST_CASE("a crafted record counts for at most its GPU's memory, and totals never wrap around", "[state][crafted]") {
  CraftedState crafted;
  Sleeper sleeper;
  const std::uint64_t gpu_bytes = tiny2().gpus[0].total_bytes;
  // Two halves of 2^64: added up without care they make 0 and the GPU looks empty.
  SlotBytes first = record(sleeper.pid(), sleeper.start_time(), 1ull << 63);
  first.context_mask = ~0ull;
  crafted.write_slot(0, first);
  crafted.write_slot(1, record(getppid(), process_start_time(getppid()), 1ull << 63));

  const auto processes = crafted.state().processes();
  REQUIRE(processes.size() == 2);
  CHECK(processes[0].used_bytes == std::vector<std::uint64_t>{gpu_bytes, 0});
  CHECK(processes[0].context_mask == 0b11);  // tiny2 has two GPUs
  CHECK(crafted.state().used_bytes(0) == 2 * gpu_bytes);

  std::uint64_t others = 0;
  CHECK_FALSE(crafted.state().publish_if_fits(using_on_gpu0(kMiB), 0, gpu_bytes, &others));
  CHECK(others == 2 * gpu_bytes);
}

TEST_CASE("a crafted process name is shown as printable text", "[state][crafted]") {
  CraftedState crafted;
  SlotBytes slot = record(getppid(), process_start_time(getppid()));
  std::memset(slot.name, 'x', sizeof slot.name);  // no terminating zero
  std::memcpy(slot.name, "\x1b[2J\xff\xfe\n", 7);
  crafted.write_slot(3, slot);
  const auto processes = crafted.state().processes();
  REQUIRE(processes.size() == 1);
  CHECK(processes[0].name == "?[2J???" + std::string(sizeof slot.name - 7, 'x'));
}

TEST_CASE("copies of one record count once, and their slots can be taken", "[state][crafted]") {
  CraftedState crafted;
  const SlotBytes parent = record(getppid(), process_start_time(getppid()), 100 * kMiB);
  for (int i = 0; i < kSlotCount; ++i) crafted.write_slot(i, parent);

  auto processes = crafted.state().processes();
  REQUIRE(processes.size() == 1);
  CHECK(processes[0].pid == getppid());
  CHECK(crafted.state().used_bytes(0) == 100 * kMiB);

  INFO("every slot is taken by a copy: this process still finds one");
  crafted.state().publish(using_on_gpu0(kMiB));
  processes = crafted.state().processes();
  REQUIRE(processes.size() == 2);
  CHECK(processes[0].pid == getppid());
  CHECK(processes[1].pid == getpid());
  CHECK(crafted.state().used_bytes(0) == 101 * kMiB);
}

TEST_CASE("records of processes that are not running, whatever their pid, are ignored", "[state][crafted]") {
  CraftedState crafted;
  Sleeper sleeper;
  const std::vector<SlotBytes> records = {
      record(INT_MIN, 1, kMiB),
      record(-1, 1, kMiB),
      record(0, 1, kMiB),
      record(INT_MAX, 1, kMiB),
      record(sleeper.pid(), sleeper.start_time() + 1, kMiB),  // a reused pid
      record(sleeper.pid(), 0, kMiB),
      record(getpid(), process_start_time(getpid()) + 1, kMiB),
  };
  for (std::size_t i = 0; i < records.size(); ++i) crafted.write_slot(static_cast<int>(i), records[i]);
  CHECK(crafted.state().processes().empty());
  CHECK(crafted.state().used_bytes(0) == 0);
}

TEST_CASE("a record with this process's pid and start time is its own, wherever it is", "[state][crafted]") {
  CraftedState crafted;
  crafted.write_slot(200, record(getpid(), process_start_time(getpid()), 5 * kMiB));
  crafted.state().publish(using_on_gpu0(kMiB));
  auto processes = crafted.state().processes();
  REQUIRE(processes.size() == 1);
  CHECK(processes[0].used_bytes[0] == kMiB);
  crafted.state().withdraw();
  CHECK(crafted.state().processes().empty());
}

TEST_CASE("a process that withdraws leaves no copy of its record behind", "[state][crafted]") {
  // Found by tests/fuzz/node_state_fuzz.cpp: the copy became the record that counted.
  CraftedState crafted;
  const SlotBytes mine = record(getpid(), process_start_time(getpid()), 5 * kMiB);
  crafted.write_slot(10, mine);
  crafted.write_slot(20, mine);
  crafted.state().withdraw();
  CHECK(crafted.state().processes().empty());
}

TEST_CASE("a state file cut short or grown while in use is rebuilt, never a crash", "[state][crafted]") {
  CraftedState crafted;
  crafted.state().publish(using_on_gpu0(kMiB));
  const off_t size = GENERATE(0, 100, 1 << 20);
  REQUIRE(truncate(crafted.path().c_str(), size) == 0);
  CHECK(crafted.state().processes().empty());
  crafted.state().publish(using_on_gpu0(2 * kMiB));
  CHECK(crafted.state().used_bytes(0) == 2 * kMiB);
}

TEST_CASE("a GPU the node does not have is an error, not a read out of bounds", "[state][crafted]") {
  CraftedState crafted;
  CHECK_THROWS_WITH(crafted.state().used_bytes(2), Catch::Contains("physical GPU 2 is not on this node"));
  CHECK_THROWS_AS(crafted.state().used_bytes(-1), std::out_of_range);
  CHECK_THROWS_AS(crafted.state().publish_if_fits(using_on_gpu0(kMiB), 64, 1, nullptr), std::out_of_range);
}
