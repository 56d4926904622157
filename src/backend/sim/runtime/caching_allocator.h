// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp):
// request sizes are rounded to 512 bytes; requests up to 1 MiB come from 2 MiB segments
// (the small pool), larger ones from 20 MiB segments or their own segment rounded to
// 2 MiB (the large pool); blocks split and coalesce inside a segment; freed blocks stay
// reserved until empty_cache(), or until a segment allocation fails, when cached segments
// are released and the allocation retried once — as PyTorch does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

namespace gpulab::sim {

struct AllocatorStats {
  std::uint64_t allocated_bytes = 0;  ///< live blocks (rounded sizes): memory_allocated()
  std::uint64_t reserved_bytes = 0;   ///< all segments: memory_reserved()
  std::uint64_t segments = 0;
};

class CachingAllocator {
 public:
  /// Obtains one segment (cudaMalloc); returns nullptr when the device is out of memory.
  using SegmentMalloc = std::function<void*(std::size_t bytes)>;
  /// Returns one segment (cudaFree).
  using SegmentFree = std::function<void(void* ptr, std::size_t bytes)>;

  CachingAllocator(SegmentMalloc segment_malloc, SegmentFree segment_free);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  /// Returns nullptr when even a retry after releasing the cache fails; `segment_bytes`
  /// then holds the size of the segment that could not be obtained.
  void* allocate(std::size_t bytes, std::size_t* segment_bytes = nullptr);
  void release(void* ptr);
  void empty_cache();
  AllocatorStats stats() const;

  static std::size_t round_size(std::size_t bytes);
  static std::size_t segment_size(std::size_t rounded);

 private:
  struct Block {
    std::size_t size = 0;
    char* ptr = nullptr;
    bool allocated = false;
    bool small = false;
    Block* prev = nullptr;  // neighbours inside the same segment
    Block* next = nullptr;
  };
  struct BySizeThenAddress {
    bool operator()(const Block* a, const Block* b) const {
      return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
    }
  };
  using Pool = std::set<Block*, BySizeThenAddress>;

  Block* take_free_block(Pool& pool, std::size_t size);
  Block* new_segment(std::size_t rounded, bool small, std::size_t* segment_bytes);
  void release_cached_segments();

  SegmentMalloc segment_malloc_;
  SegmentFree segment_free_;
  mutable std::mutex mutex_;
  Pool small_pool_;
  Pool large_pool_;
  std::unordered_map<void*, Block*> live_;
  AllocatorStats stats_;
};

}  // namespace gpulab::sim
