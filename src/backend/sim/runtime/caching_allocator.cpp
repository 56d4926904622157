#include "caching_allocator.h"


namespace gpulab::sim {
namespace {
// The constants of PyTorch's CUDACachingAllocator.
constexpr std::size_t kMinBlockSize = 512;
constexpr std::size_t kSmallSize = 1u << 20;        // largest "small" request
constexpr std::size_t kSmallBuffer = 2u << 20;      // small-pool segment
constexpr std::size_t kLargeBuffer = 20u << 20;     // segment for 1-10 MiB requests
constexpr std::size_t kMinLargeAlloc = 10u << 20;   // from here a request gets its own segment
constexpr std::size_t kRoundLarge = 2u << 20;       // ...rounded to 2 MiB
}  // namespace

CachingAllocator::CachingAllocator(SegmentMalloc segment_malloc, SegmentFree segment_free)
    : segment_malloc_(std::move(segment_malloc)), segment_free_(std::move(segment_free)) {}

CachingAllocator::~CachingAllocator() {
  // Process exit: give every segment back (live tensors at exit are leaked by design).
  std::set<Block*> all(small_pool_.begin(), small_pool_.end());
  all.insert(large_pool_.begin(), large_pool_.end());
  for (auto& [ptr, block] : live_) all.insert(block);
  for (Block* block : all) {
    if (block->prev != nullptr) continue;  // free each segment once, from its first block
    std::size_t bytes = 0;
    for (Block* b = block; b != nullptr; b = b->next) bytes += b->size;
    segment_free_(block->ptr, bytes);
  }
  for (Block* block : all) delete block;
}

std::size_t CachingAllocator::round_size(std::size_t bytes) {
  if (bytes < kMinBlockSize) return kMinBlockSize;
  return kMinBlockSize * ((bytes + kMinBlockSize - 1) / kMinBlockSize);
}

std::size_t CachingAllocator::segment_size(std::size_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((rounded + kRoundLarge - 1) / kRoundLarge);
}

CachingAllocator::Block* CachingAllocator::take_free_block(Pool& pool, std::size_t size) {
  Block key;
  key.size = size;
  key.ptr = nullptr;
  const auto it = pool.lower_bound(&key);  // best fit: smallest block that is large enough
  if (it == pool.end()) return nullptr;
  Block* block = *it;
  pool.erase(it);
  return block;
}

CachingAllocator::Block* CachingAllocator::new_segment(std::size_t rounded, bool small,
                                                       std::size_t* segment_bytes) {
  const std::size_t bytes = segment_size(rounded);
  if (segment_bytes != nullptr) *segment_bytes = bytes;
  void* ptr = segment_malloc_(bytes);
  if (ptr == nullptr) {
    // Like PyTorch: free every cached segment and try once more before giving up.
    release_cached_segments();
    ptr = segment_malloc_(bytes);
  }
  if (ptr == nullptr) return nullptr;
  auto* block = new Block;
  block->size = bytes;
  block->ptr = static_cast<char*>(ptr);
  block->small = small;
  stats_.reserved_bytes += bytes;
  ++stats_.segments;
  return block;
}

void* CachingAllocator::allocate(std::size_t bytes, std::size_t* segment_bytes) {
  std::lock_guard<std::mutex> guard(mutex_);
  const std::size_t size = round_size(bytes);
  const bool small = size <= kSmallSize;
  Pool& pool = small ? small_pool_ : large_pool_;
  Block* block = take_free_block(pool, size);
  if (block == nullptr) block = new_segment(size, small, segment_bytes);
  if (block == nullptr) return nullptr;
  const std::size_t remaining = block->size - size;
  const bool split = small ? remaining >= kMinBlockSize : remaining > kSmallSize;
  if (split) {
    auto* rest = new Block;
    rest->size = remaining;
    rest->ptr = block->ptr + size;
    rest->small = small;
    rest->prev = block;
    rest->next = block->next;
    if (block->next != nullptr) block->next->prev = rest;
    block->next = rest;
    block->size = size;
    pool.insert(rest);
  }
  block->allocated = true;
  stats_.allocated_bytes += block->size;
  live_.emplace(block->ptr, block);
  return block->ptr;
}

void CachingAllocator::release(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> guard(mutex_);
  const auto it = live_.find(ptr);
  if (it == live_.end()) return;
  Block* block = it->second;
  live_.erase(it);
  block->allocated = false;
  stats_.allocated_bytes -= block->size;
  Pool& pool = block->small ? small_pool_ : large_pool_;
  // Coalesce with free neighbours in the same segment.
  if (Block* prev = block->prev; prev != nullptr && !prev->allocated) {
    pool.erase(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    delete block;
    block = prev;
  }
  if (Block* next = block->next; next != nullptr && !next->allocated) {
    pool.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    delete next;
  }
  pool.insert(block);
}

void CachingAllocator::release_cached_segments() {
  for (Pool* pool : {&small_pool_, &large_pool_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* block = *it;
      if (block->prev == nullptr && block->next == nullptr) {  // an entirely free segment
        segment_free_(block->ptr, block->size);
        stats_.reserved_bytes -= block->size;
        --stats_.segments;
        it = pool->erase(it);
        delete block;
      } else {
        ++it;
      }
    }
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> guard(mutex_);
  release_cached_segments();
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return stats_;
}

}  // namespace gpulab::sim
