#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "gpulab/cuda.h"
#include "gpulab/observe.h"

namespace gpulab {

int physical_index_of(const c10::Device& device) {
  if (!device.is_cuda()) return -1;
  static const std::unique_ptr<Observer> observer = make_observer();
  // A CUDA device without an index means the current device, as in LibTorch.
  const int index = device.has_index() ? device.index() : gpulab::cuda::current_device();
  return observer->physical_index(index);
}

int physical_index_of(const at::Tensor& tensor) {
  if (!tensor.defined()) return -1;
  return physical_index_of(tensor.device());
}

}  // namespace gpulab
