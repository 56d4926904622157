// PyTorch's caching-allocator rounding, written down from PyTorch's sources
// (c10/cuda/CUDACachingAllocator.cpp) independently of the simulator's own model, for the
// tests that predict memory_allocated(): sim_tests and memory_tests (whose
// memory_support.h builds the segment arithmetic on it).
#pragma once

#include <cstdint>

namespace gpulab::test {

/// The block a request of `bytes` gets: rounded up to a multiple of kMinBlockSize = 512
/// bytes, 512 at least (PyTorch's round_size).
constexpr std::uint64_t block_bytes(std::uint64_t bytes) { return bytes <= 512 ? 512 : (bytes + 511) / 512 * 512; }

}  // namespace gpulab::test
