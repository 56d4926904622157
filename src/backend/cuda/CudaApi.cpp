// gpulab::cuda on real GPUs: what torch.cuda.set_device, current_device, memory_allocated,
// memory_reserved and empty_cache do in Python, through c10::cuda.
#include <ATen/Context.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>

#include "gpulab/cuda.h"
#include "backend/torch_compat.h"
#include "backend/cuda/uuid_text.h"

namespace gpulab::cuda {
namespace {

// StatType::AGGREGATE, the "all" in "allocated_bytes.all.current" (0 in every version;
// the enum moved namespaces in 2.x).
constexpr std::size_t kAggregate = 0;

// Python's torch.cuda functions initialise CUDA lazily (allocator, generators) first.
void lazy_init() {
#if GPULAB_TORCH_AT_LEAST(2, 6)
  at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
#else
  at::globalContext().lazyInitCUDA();
#endif
}

c10::DeviceIndex resolve(int index) {
  lazy_init();
  return index < 0 ? c10::cuda::current_device() : static_cast<c10::DeviceIndex>(index);
}

}  // namespace

void set_device(int index) {
  lazy_init();
  TORCH_CHECK(index >= 0, "CUDA error: invalid device ordinal");
#if GPULAB_TORCH_AT_LEAST(2, 8)
  // torch.cuda.set_device since 2.8 (PR 155900): cudaSetDevice even when `index` is current.
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(index), /*force=*/true);
#else
  // torch.cuda.set_device before 2.8: nothing when `index` is current already, so
  // set_device(0) on a fresh thread creates no context (issue 155668). The simulator's
  // profile models the same.
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
#endif
}

int current_device() {
  lazy_init();
  return c10::cuda::current_device();
}

std::uint64_t memory_allocated(int index) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(resolve(index));
  return static_cast<std::uint64_t>(stats.allocated_bytes[kAggregate].current);
}

std::uint64_t memory_reserved(int index) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(resolve(index));
  return static_cast<std::uint64_t>(stats.reserved_bytes[kAggregate].current);
}

void empty_cache() { c10::cuda::CUDACachingAllocator::emptyCache(); }

DeviceProperties get_device_properties(int index) {
  lazy_init();
  const int count = c10::cuda::device_count();
  TORCH_CHECK(index >= 0 && index < count, "Invalid device id ", index, ": this process sees ", count, " GPU(s)");
  cudaDeviceProp prop{};
  C10_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  DeviceProperties properties;
  properties.name = prop.name;
  properties.total_memory = static_cast<std::uint64_t>(prop.totalGlobalMem);
  properties.multi_processor_count = prop.multiProcessorCount;
  properties.major = prop.major;
  properties.minor = prop.minor;
  properties.uuid = uuid_text(prop.uuid);
  properties.pci_domain_id = prop.pciDomainID;
  properties.pci_bus_id = prop.pciBusID;
  properties.pci_device_id = prop.pciDeviceID;
  return properties;
}

}  // namespace gpulab::cuda
