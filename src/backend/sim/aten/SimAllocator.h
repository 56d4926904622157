// c10::Allocator for DeviceType::CUDA: device memory from the driver's caching allocator.
#pragma once

#include <c10/core/Allocator.h>

#include "backend/torch_compat.h"

namespace gpulab::sim {

class SimCudaAllocator final : public c10::Allocator {
 public:
  /// Allocates on the calling thread's current device, like CUDA's caching allocator.
  c10::DataPtr allocate(size_t nbytes) GPULAB_ALLOCATE_CONST override;
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  GPULAB_ALLOCATOR_EXTRA_OVERRIDES
};

SimCudaAllocator& cuda_allocator();

/// The CUDA index a tensor or device refers to: its index, or the current device.
int resolve_index(const c10::Device& device);

}  // namespace gpulab::sim
