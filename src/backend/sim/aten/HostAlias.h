// Simulated device memory is host memory, so a CUDA tensor can be read and written
// through a CPU tensor over the same bytes: no copy, and writes land on the "device".
#pragma once

#include <ATen/core/Tensor.h>

namespace gpulab::sim {

/// A CPU tensor over `tensor`'s storage with the same offset, sizes and strides; `tensor`
/// itself when it is not a CUDA tensor. The alias keeps the device storage alive.
at::Tensor host_alias(const at::Tensor& tensor);

/// A CUDA tensor on `device_storage_of`'s storage with `view`'s geometry and dtype: turns a
/// view computed on a host alias back into a view of the device tensor.
at::Tensor device_view(const at::Tensor& device_storage_of, const at::Tensor& view);

}  // namespace gpulab::sim
