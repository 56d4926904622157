// What the memory tests share: PyTorch's caching-allocator arithmetic and its
// out-of-memory message, written down from PyTorch's sources independently of the
// simulator's own model, and ways to run the programs of tests/memory/programs and
// `gpulab smi`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "allocator_sizes.h"
#include "model/profile.h"
#include "lesson_run.h"

namespace gpulab::test {

constexpr std::uint64_t kGiB = 1024 * kMiB;

// PyTorch's CUDACachingAllocator (c10/cuda/CUDACachingAllocator.cpp) and its constants;
// block_bytes (a request rounded up to 512 bytes) is in tests/support/allocator_sizes.h.
/// The segment (one cudaMalloc) made for a block that no cached block can hold: blocks up
/// to kSmallSize = 1 MiB come from kSmallBuffer = 2 MiB segments, blocks under
/// kMinLargeAlloc = 10 MiB from kLargeBuffer = 20 MiB segments, larger ones get a segment of
/// their own rounded up to kRoundLarge = 2 MiB. PyTorch's "Tried to allocate" names it.
constexpr std::uint64_t segment_bytes(std::uint64_t bytes) {
  const std::uint64_t block = block_bytes(bytes);
  if (block <= kMiB) return 2 * kMiB;
  if (block < 10 * kMiB) return 20 * kMiB;
  return (block + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB);
}
/// memory_allocated() of a request served from a fresh segment: the block is split off the
/// segment only when the rest is worth keeping — at least 512 bytes in the small pool
/// (blocks up to 1 MiB), more than 1 MiB in the large pool; otherwise the tensor's block is
/// the whole segment (PyTorch's should_split).
constexpr std::uint64_t fresh_block_bytes(std::uint64_t bytes) {
  const std::uint64_t block = block_bytes(bytes);
  const std::uint64_t rest = segment_bytes(bytes) - block;
  const bool split = block <= kMiB ? rest >= 512 : rest > kMiB;
  return split ? block : segment_bytes(bytes);
}
/// PyTorch's format_size: "1024 bytes", "2.00 KiB", "20.00 MiB", "1.50 GiB".
std::string pytorch_size(std::uint64_t bytes);

/// One process in the out-of-memory message's list (NVML's view of the GPU).
struct ProcessInUse {
  int pid = 0;  ///< 0: the process that failed ("Including non-PyTorch memory, this process")
  std::uint64_t bytes = 0;
};
/// PyTorch's out-of-memory message in the profile's form (model/cuda_messages.h) with these
/// figures. `total` is the total capacity (cudaMemGetInfo's); 1.13's form lists no processes.
std::string oom_message(const Profile& profile, std::uint64_t tried, int cuda_index, std::uint64_t total,
                        std::uint64_t free, const std::vector<ProcessInUse>& processes, std::uint64_t allocated,
                        std::uint64_t reserved);

/// GPULAB_CUDA_BUILD values each profile-dependent case runs under: the linked release's
/// builds_per_cuda_major (model/profile.h), so every rule's variants the release shipped.
std::vector<std::string> cuda_builds_to_try();

/// The software profile a report or `gpulab smi --json` states (its "profile" object).
Profile profile_of(const nlohmann::json& report);

/// bin/<name>.
std::string bin(const std::string& name);

/// Runs `memory-probe ARGS --json` under `env`, with its own node state, and parses its report.
LessonRun probe(const std::vector<std::string>& args, const Env& env = {});

/// `gpulab smi --json` for the node state in `state_dir` (GPULAB_NODE from `env`).
struct Smi {
  nlohmann::json report;
  std::string err;
  /// Bytes process `pid` uses on a physical GPU; 0 when it is not listed there.
  std::uint64_t usage(int physical, int pid) const;
  /// Every process listed on a physical GPU.
  std::vector<int> pids(int physical) const;
  /// Memory in use on a physical GPU, all processes together.
  std::uint64_t used(int physical) const;
  /// Physical GPUs where `pid` is listed.
  std::vector<int> gpus_of(int pid) const;
  /// The software profile smi reports.
  Profile profile() const { return profile_of(report); }
};
Smi smi(const std::string& state_dir, const Env& env = {});

}  // namespace gpulab::test
