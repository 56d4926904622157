// The model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp): block
// rounding, the small and large pools and their segment sizes, reuse, split and coalesce,
// empty_cache, and the retry after releasing the cache when the device is full.
#include <catch2/catch.hpp>

#include <map>

#include "backend/sim/runtime/caching_allocator.h"
#include "backend/sim/runtime/host_memory.h"
#include "model/cuda_messages.h"

using gpulab::sim::CachingAllocator;

namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

// A device with `capacity` bytes that hands out segments (cudaMalloc/cudaFree) and
// records them. Segment memory is mapped but never touched.
struct FakeDevice {
  explicit FakeDevice(std::size_t capacity_bytes) : capacity(capacity_bytes) {}
  ~FakeDevice() {
    for (const auto& [ptr, bytes] : segments) gpulab::sim::unmap_host_memory(ptr, bytes);
  }
  FakeDevice(const FakeDevice&) = delete;
  FakeDevice& operator=(const FakeDevice&) = delete;

  void* malloc(std::size_t bytes) {
    ++mallocs;
    if (used + bytes > capacity) return nullptr;
    void* ptr = gpulab::sim::map_host_memory(bytes);
    REQUIRE(ptr != nullptr);
    segments[ptr] = bytes;
    used += bytes;
    return ptr;
  }
  void free(void* ptr, std::size_t bytes) {
    const auto it = segments.find(ptr);
    REQUIRE(it != segments.end());  // only whole segments, as obtained, go back
    REQUIRE(it->second == bytes);
    gpulab::sim::unmap_host_memory(ptr, bytes);
    segments.erase(it);
    used -= bytes;
    ++frees;
  }
  CachingAllocator allocator() {
    return CachingAllocator([this](std::size_t bytes) { return malloc(bytes); },
                            [this](void* ptr, std::size_t bytes) { free(ptr, bytes); });
  }

  std::size_t capacity;
  std::size_t used = 0;
  int mallocs = 0;
  int frees = 0;
  std::map<void*, std::size_t> segments;
};

std::ptrdiff_t distance(void* from, void* to) { return static_cast<char*>(to) - static_cast<char*>(from); }

}  // namespace

TEST_CASE("request sizes round up to 512-byte blocks", "[allocator]") {
  CHECK(CachingAllocator::round_size(0) == 512);
  CHECK(CachingAllocator::round_size(1) == 512);
  CHECK(CachingAllocator::round_size(512) == 512);
  CHECK(CachingAllocator::round_size(513) == 1024);
  CHECK(CachingAllocator::round_size(4000) == 4096);
  CHECK(CachingAllocator::round_size(10 * kMiB + 1) == 10 * kMiB + 512);
}

TEST_CASE("segments are 2 MiB up to 1 MiB, 20 MiB below 10 MiB, else the request rounded to 2 MiB",
          "[allocator]") {
  CHECK(CachingAllocator::segment_size(512) == 2 * kMiB);
  CHECK(CachingAllocator::segment_size(kMiB) == 2 * kMiB);
  CHECK(CachingAllocator::segment_size(kMiB + 512) == 20 * kMiB);
  CHECK(CachingAllocator::segment_size(10 * kMiB - 512) == 20 * kMiB);
  CHECK(CachingAllocator::segment_size(10 * kMiB) == 10 * kMiB);
  CHECK(CachingAllocator::segment_size(11 * kMiB) == 12 * kMiB);
  CHECK(CachingAllocator::segment_size(100 * kMiB + 512) == 102 * kMiB);
}

TEST_CASE("small requests share a 2 MiB segment, packed block after block", "[allocator]") {
  FakeDevice device(1024 * kMiB);
  auto allocator = device.allocator();
  void* a = allocator.allocate(1000);
  void* b = allocator.allocate(4 * kKiB);
  void* c = allocator.allocate(kMiB);
  CHECK(distance(a, b) == 1024);
  CHECK(distance(b, c) == 4096);
  const auto stats = allocator.stats();
  CHECK(stats.segments == 1);
  CHECK(stats.reserved_bytes == 2 * kMiB);
  CHECK(stats.allocated_bytes == 1024 + 4096 + kMiB);
  CHECK(device.used == 2 * kMiB);

  SECTION("a request that does not fit what is left opens another segment") {
    allocator.allocate(kMiB);
    CHECK(allocator.stats().segments == 2);
    CHECK(allocator.stats().reserved_bytes == 4 * kMiB);
  }
}

TEST_CASE("requests between 1 and 10 MiB share 20 MiB segments", "[allocator]") {
  FakeDevice device(1024 * kMiB);
  auto allocator = device.allocator();
  // Six 3 MiB blocks fit in one 20 MiB segment; the 2 MiB left cannot hold a seventh.
  for (int i = 0; i < 6; ++i) allocator.allocate(3 * kMiB);
  CHECK(allocator.stats().segments == 1);
  CHECK(allocator.stats().reserved_bytes == 20 * kMiB);
  allocator.allocate(3 * kMiB);
  CHECK(allocator.stats().segments == 2);
  CHECK(allocator.stats().reserved_bytes == 40 * kMiB);
  CHECK(allocator.stats().allocated_bytes == 7 * 3 * kMiB);
}

TEST_CASE("a large request gets a segment of its own and a remainder up to 1 MiB is not split off",
          "[allocator]") {
  FakeDevice device(1024 * kMiB);
  auto allocator = device.allocator();
  allocator.allocate(11 * kMiB);  // a 12 MiB segment; the 1 MiB left stays in the block
  CHECK(allocator.stats().segments == 1);
  CHECK(allocator.stats().reserved_bytes == 12 * kMiB);
  CHECK(allocator.stats().allocated_bytes == 12 * kMiB);
  allocator.allocate(50 * kMiB);
  CHECK(allocator.stats().reserved_bytes == 62 * kMiB);
}

TEST_CASE("small and large requests never share a pool", "[allocator]") {
  FakeDevice device(1024 * kMiB);
  auto allocator = device.allocator();
  allocator.release(allocator.allocate(3 * kMiB));  // a free 20 MiB segment in the large pool
  allocator.allocate(kKiB);                          // still needs a 2 MiB small segment
  CHECK(allocator.stats().segments == 2);
  CHECK(allocator.stats().reserved_bytes == 22 * kMiB);
}

TEST_CASE("a freed block stays reserved and serves the next request that fits", "[allocator]") {
  FakeDevice device(1024 * kMiB);
  auto allocator = device.allocator();
  void* first = allocator.allocate(5 * kMiB);
  allocator.release(first);
  CHECK(allocator.stats().allocated_bytes == 0);
  CHECK(allocator.stats().reserved_bytes == 20 * kMiB);  // the cache keeps the segment
  CHECK(device.used == 20 * kMiB);

  void* second = allocator.allocate(4 * kMiB);
  CHECK(second == first);
  CHECK(device.mallocs == 1);
  CHECK(allocator.stats().reserved_bytes == 20 * kMiB);

  SECTION("the smallest free block that fits is chosen") {
    void* small_hole = allocator.allocate(2 * kMiB);
    void* keep = allocator.allocate(2 * kMiB);
    allocator.release(small_hole);  // a 2 MiB hole before `keep`, and the 12 MiB tail after it
    CHECK(allocator.allocate(2 * kMiB) == small_hole);
    CHECK(distance(second, keep) == 6 * static_cast<std::ptrdiff_t>(kMiB));
  }
}

TEST_CASE("blocks split inside a segment and coalesce with free neighbours when released", "[allocator]") {
  FakeDevice device(1024 * kMiB);
  auto allocator = device.allocator();
  void* a = allocator.allocate(512 * kKiB);
  void* b = allocator.allocate(512 * kKiB);
  void* c = allocator.allocate(512 * kKiB);  // 512 KiB of the 2 MiB segment left after c
  REQUIRE(distance(a, c) == 1024 * static_cast<std::ptrdiff_t>(kKiB));

  allocator.release(b);
  allocator.release(a);
  // Only a merged a+b block holds 1 MiB: the tail after c has 512 KiB.
  CHECK(allocator.allocate(kMiB) == a);
  CHECK(allocator.stats().segments == 1);

  SECTION("a segment whose blocks are all free again is one free block, which empty_cache returns") {
    allocator.release(a);
    allocator.release(c);
    CHECK(allocator.stats().allocated_bytes == 0);
    allocator.empty_cache();
    CHECK(allocator.stats().segments == 0);
    CHECK(allocator.stats().reserved_bytes == 0);
    CHECK(device.used == 0);
    CHECK(device.frees == 1);
  }
}

TEST_CASE("empty_cache returns only segments with no live block", "[allocator]") {
  FakeDevice device(1024 * kMiB);
  auto allocator = device.allocator();
  allocator.allocate(kKiB);                          // a 2 MiB small segment, in use
  allocator.allocate(3 * kMiB);                      // a 20 MiB segment with a live block...
  allocator.release(allocator.allocate(3 * kMiB));   // ...and a free one
  allocator.release(allocator.allocate(30 * kMiB));  // a 30 MiB segment, all free
  const auto before = allocator.stats();
  REQUIRE(before.reserved_bytes == 2 * kMiB + 30 * kMiB + 20 * kMiB);

  allocator.empty_cache();

  const auto after = allocator.stats();
  CHECK(after.allocated_bytes == before.allocated_bytes);
  CHECK(after.reserved_bytes == 2 * kMiB + 20 * kMiB);
  CHECK(after.segments == 2);
  CHECK(device.used == after.reserved_bytes);
  CHECK(device.frees == 1);
}

TEST_CASE("a free large block serves any smaller large request, split (default max_split_size)",
          "[allocator]") {
  FakeDevice device(1024 * kMiB);
  auto allocator = device.allocator();
  void* big = allocator.allocate(30 * kMiB);
  allocator.release(big);
  CHECK(allocator.allocate(3 * kMiB) == big);
  CHECK(allocator.allocate(12 * kMiB) == static_cast<char*>(big) + 3 * kMiB);
  CHECK(device.mallocs == 1);
  CHECK(allocator.stats().reserved_bytes == 30 * kMiB);
  CHECK(allocator.stats().allocated_bytes == 15 * kMiB);
}

TEST_CASE("when the device is full the cache is released and the allocation retried once", "[allocator]") {
  FakeDevice device(40 * kMiB);
  auto allocator = device.allocator();
  allocator.release(allocator.allocate(3 * kMiB));  // 20 MiB cached, nothing live

  void* big = allocator.allocate(30 * kMiB);  // 20 + 30 > 40: fails, frees the cache, retries
  CHECK(big != nullptr);
  CHECK(device.frees == 1);
  CHECK(allocator.stats().reserved_bytes == 30 * kMiB);
  CHECK(allocator.stats().segments == 1);

  SECTION("if the retry fails too, the allocation returns nullptr and names the segment it needed") {
    std::size_t segment = 0;
    const int mallocs = device.mallocs;
    CHECK(allocator.allocate(5 * kMiB, &segment) == nullptr);
    CHECK(segment == 20 * kMiB);
    CHECK(device.mallocs - mallocs == 2);  // the first try and the retry
    CHECK(allocator.stats().reserved_bytes == 30 * kMiB);
    CHECK(allocator.stats().allocated_bytes == 30 * kMiB);
  }
}

TEST_CASE("destroying the allocator returns every segment, live blocks included", "[allocator]") {
  FakeDevice device(1024 * kMiB);
  {
    auto allocator = device.allocator();
    allocator.allocate(kKiB);
    allocator.allocate(5 * kMiB);
    allocator.release(allocator.allocate(40 * kMiB));
    CHECK(device.used == 2 * kMiB + 20 * kMiB + 40 * kMiB);
  }
  CHECK(device.used == 0);
  CHECK(device.segments.empty());
}

TEST_CASE("sizes are formatted as PyTorch's memory messages format them", "[allocator]") {
  using gpulab::format_size;
  CHECK(format_size(512) == "512 bytes");
  CHECK(format_size(1024) == "1024 bytes");
  CHECK(format_size(2048) == "2.00 KiB");
  CHECK(format_size(kMiB) == "1024.00 KiB");
  CHECK(format_size(20 * kMiB) == "20.00 MiB");
  CHECK(format_size(1024 * kMiB) == "1024.00 MiB");
  CHECK(format_size(1536 * kMiB) == "1.50 GiB");
}
