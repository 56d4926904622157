// Fuzzes the node state file as untrusted input (docs/shared-node.md): any bytes in the
// file, then every operation a process does on it. gpulab must not read or write out of
// bounds, hang, or report what a real node could not show: a process listed twice, more
// memory on a GPU than it has, a name a terminal would interpret, a context on a GPU the
// node lacks. A violated rule aborts, which libFuzzer reports with the input.
//
// Byte 0 chooses how the bytes after the first three make the file:
//   bit 0 clear: they are the whole file, as is (broken headers, any size);
//   bit 0 set:   a valid header for this node, then they fill the process slots;
//   bit 1 set:   slots the input reaches, whose pid byte says so, get the pid and start time of a live process
//                (this one, its parent, pid 1), so crafted records pass the liveness check.
// Bytes 1 and 2 choose the physical GPU and the capacity for publish_if_fits.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "state/node_state.h"

namespace {

constexpr std::size_t kHeaderBytes = 64;  // docs/memory.md: header, then 256 slots
constexpr std::size_t kSlotBytes = 584;
constexpr int kSlots = 256;

[[noreturn]] void violated(const char* rule) {
  std::fprintf(stderr, "node_state_fuzz: %s\n", rule);
  std::abort();
}

gpulab::Node two_gpu_node() {
  gpulab::Node node;
  node.name = "fuzz2";
  for (int i = 0; i < 2; ++i) {
    gpulab::Gpu gpu;
    gpu.name = "Fuzz GPU";
    gpu.uuid = "GPU-0000000" + std::to_string(i) + "-0000-0000-0000-000000000000";
    gpu.pci_bus_id = "00000000:0" + std::to_string(i) + ":00.0";
    gpu.total_bytes = 1ull << 30;
    gpu.context_bytes = 1ull << 20;
    node.gpus.push_back(gpu);
  }
  return node;
}

struct Setup {
  gpulab::Node node = two_gpu_node();
  std::string folder;
  std::string path;
  std::string valid_header;  // as gpulab itself writes it for `node`

  Setup() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gpulab-node-state-fuzz-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) violated("cannot make a scratch folder");
    folder = pattern;
    path = folder + "/" + node.name + ".state";
    { gpulab::NodeState create(node, path, gpulab::StateSharing::Private); }
    char header[kHeaderBytes];
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0 || pread(fd, header, sizeof header, 0) != static_cast<ssize_t>(sizeof header)) violated("cannot read the header");
    close(fd);
    valid_header.assign(header, sizeof header);
  }
  ~Setup() {
    std::error_code ignored;
    std::filesystem::remove_all(folder, ignored);
  }
};

Setup& setup() {
  static Setup instance;
  return instance;
}

std::string file_from(std::uint8_t how, const std::uint8_t* data, std::size_t size) {
  const bool structured = (how & 1) != 0;
  const bool live_pids = (how & 2) != 0;
  std::string rest(reinterpret_cast<const char*>(data), size);
  if (!structured) return rest;
  std::string file = setup().valid_header;
  rest.resize(kSlots * kSlotBytes, '\0');
  file += rest;
  if (live_pids) {
    const int pids[3] = {getpid(), getppid(), 1};
    const std::size_t covered = std::min<std::size_t>(kSlots, (size + kSlotBytes - 1) / kSlotBytes);
    for (std::size_t i = 0; i < covered; ++i) {
      char* slot = &file[kHeaderBytes + i * kSlotBytes];
      const auto choice = static_cast<unsigned char>(slot[0]);
      if (choice >= 3 * 64) continue;  // most slots keep their crafted pid
      const std::int32_t pid = pids[choice % 3];
      const std::uint64_t start = gpulab::process_start_time(pid);
      std::memcpy(slot, &pid, sizeof pid);
      std::memcpy(slot + 8, &start, sizeof start);
    }
  }
  return file;
}

void write_state(const std::string& path, const std::string& content) {
  const int fd = open(path.c_str(), O_WRONLY | O_TRUNC);
  if (fd < 0) violated("cannot write the state file");
  if (!content.empty() && write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size()))
    violated("short write of the state file");
  close(fd);
}

void check_view(const std::vector<gpulab::ProcessUsage>& processes, const gpulab::Node& node) {
  std::vector<int> seen;
  for (const auto& process : processes) {
    for (const int pid : seen)
      if (pid == process.pid) violated("a process listed twice");
    seen.push_back(process.pid);
    if (process.pid <= 0) violated("a listed pid that cannot be a process");
    if (process.used_bytes.size() != node.gpus.size()) violated("usage for another number of GPUs");
    for (std::size_t g = 0; g < node.gpus.size(); ++g)
      if (process.used_bytes[g] > node.gpus[g].total_bytes) violated("more memory on a GPU than it has");
    if ((process.context_mask >> node.gpus.size()) != 0) violated("a context on a GPU the node lacks");
    for (const char c : process.name)
      if (c < 0x20 || c > 0x7e) violated("a name with a byte that is not printable");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  Setup& s = setup();
  const int physical = data[1] % 3 - (data[1] >= 250 ? 3 : 0);  // 0, 1, or a GPU the node lacks
  const std::uint64_t capacity = static_cast<std::uint64_t>(data[2]) << 24;
  write_state(s.path, file_from(data[0], data + 3, size - 3));
  try {
    gpulab::NodeState state(s.node, s.path, gpulab::StateSharing::Private);
    check_view(state.processes(), s.node);
    const std::uint64_t total = state.used_bytes(0);
    if (total > 256 * s.node.gpus[0].total_bytes) violated("a total larger than every slot full");

    gpulab::ProcessUsage mine;
    mine.used_bytes = {1ull << 20, 2ull << 20};
    mine.context_mask = 0b01;
    std::uint64_t others = 0;
    try {
      state.publish_if_fits(mine, physical, capacity, &others);
    } catch (const std::out_of_range&) {
      if (physical >= 0 && physical < 2) violated("publish_if_fits refused a GPU the node has");
    }
    state.publish(mine);
    const auto processes = state.processes();
    check_view(processes, s.node);
    int own = 0;
    for (const auto& process : processes)
      if (process.pid == getpid()) {
        ++own;
        if (process.used_bytes != mine.used_bytes || process.context_mask != mine.context_mask)
          violated("this process's record is not what it published");
      }
    if (own != 1) violated("this process is not listed exactly once after publishing");
    state.withdraw();
    for (const auto& process : state.processes())
      if (process.pid == getpid()) violated("this process is still listed after withdrawing");
  } catch (const gpulab::UnsafeStateError& e) {
    violated(e.what());  // a file of ours in a folder of ours is always usable
  } catch (const std::runtime_error&) {
    // The one expected: no free process slot. It cannot happen here (three live pids).
    violated("a runtime error on a state file of ours");
  }
  return 0;
}
