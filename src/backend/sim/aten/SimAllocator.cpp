#include "SimAllocator.h"

#include <array>
#include <cstring>
#include <utility>

#include "SimErrors.h"

namespace gpulab::sim {
namespace {

// A DataPtr deleter receives only its context; encoding the device in which deleter is
// used keeps each allocation free of extra heap bookkeeping.
template <int Index>
void release_on(void* ptr) {
  Driver::get().release(Index, ptr);
}

template <int... Indices>
constexpr std::array<c10::DeleterFnPtr, sizeof...(Indices)> make_deleters(std::integer_sequence<int, Indices...>) {
  return {&release_on<Indices>...};
}

constexpr auto kDeleters = make_deleters(std::make_integer_sequence<int, kMaxGpus>{});

}  // namespace

c10::DataPtr SimCudaAllocator::allocate(size_t nbytes) GPULAB_ALLOCATE_CONST {
  Driver& d = driver();
  const int index = current_device();
  check(d.check_device(index));
  const c10::Device device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
  if (nbytes == 0) return {nullptr, nullptr, nullptr, device};
  // The context comes first (PyTorch's allocator sets up the device's streams before any
  // cudaMalloc): a context that does not fit is CUDA's error, not the allocator's text.
  check(d.ensure_context(index));
  std::string oom;
  void* ptr = d.allocate(index, nbytes, &oom);
  if (ptr == nullptr) TORCH_CHECK_WITH(OutOfMemoryError, false, oom);
  return {ptr, ptr, kDeleters[static_cast<std::size_t>(index)], device};
}

#if GPULAB_TORCH_AT_LEAST(2, 3)
void SimCudaAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  std::memcpy(dest, src, count);
}
#endif

SimCudaAllocator& cuda_allocator() {
  static SimCudaAllocator allocator;
  return allocator;
}

int resolve_index(const c10::Device& device) {
  return device.has_index() ? device.index() : current_device();
}

}  // namespace gpulab::sim
