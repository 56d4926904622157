// The backend's part in gpulab::distributed (src/parallel/distributed.cpp): the tensor a
// collective reads and writes.
#pragma once

#include <ATen/core/Tensor.h>

namespace gpulab::backend {

/// On the simulated node a GPU tensor is host memory tagged CUDA, which Gloo (CPU tensors
/// only in a CPU build) would refuse: a CPU tensor over the same bytes, so the collective
/// writes its result in place with no copy. On real GPUs the tensor itself.
at::Tensor collective_view(const at::Tensor& tensor);

}  // namespace gpulab::backend
