// Python's Scatter (torch/nn/parallel/_functions.py → comm.scatter): chunk() the tensor
// into at most one piece per device, ceil-sized, and move piece i to device i.
#include <c10/util/Exception.h>

#include "gpulab/data_parallel.h"

namespace gpulab::parallel {

std::vector<at::Tensor> scatter_tensor(const at::Tensor& tensor, const std::vector<int>& devices, std::int64_t dim) {
  TORCH_CHECK(!devices.empty(), "scatter: no devices");
  // chunk() gives ceil(N / k)-sized pieces, so 9 rows on 8 GPUs are 5 pieces: 5 GPUs work.
  std::vector<at::Tensor> chunks = tensor.chunk(static_cast<std::int64_t>(devices.size()), dim);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const c10::Device device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(devices[i]));
    // to() records the copy for autograd (gradients go back to `tensor`'s device) and does
    // not copy a chunk that is already there, as comm.scatter's copy=False.
    chunks[i] = chunks[i].to(device);
  }
  return chunks;
}

}  // namespace gpulab::parallel
