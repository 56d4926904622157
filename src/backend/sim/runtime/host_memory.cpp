#include "host_memory.h"

#include <sys/mman.h>

namespace gpulab::sim {

void* map_host_memory(std::size_t bytes) {
  void* ptr = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return ptr == MAP_FAILED ? nullptr : ptr;
}

void unmap_host_memory(void* ptr, std::size_t bytes) {
  if (ptr != nullptr) munmap(ptr, bytes);
}

}  // namespace gpulab::sim
