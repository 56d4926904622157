#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/util/Exception.h>

#include "gpulab/cuda.h"
#include "gpulab/observe.h"

namespace gpulab {

int physical_index_of(const c10::Device& device) {
  if (!device.is_cuda()) return -1;
  static const std::unique_ptr<Observer> observer = make_observer();
  // A CUDA device without an index means the current device, as in LibTorch.
  const int index = device.has_index() ? device.index() : gpulab::cuda::current_device();
  try {
    return observer->physical_index(index);
  } catch (const c10::Error&) {
    throw;
  } catch (const std::exception& e) {
    // The observer is torch-free; to a LibTorch program a bad index is a c10::Error, as
    // C10_CUDA_CHECK raises it.
    TORCH_CHECK(false, e.what());
  }
}

int physical_index_of(const at::Tensor& tensor) {
  if (!tensor.defined()) return -1;
  return physical_index_of(tensor.device());
}

}  // namespace gpulab
