// Python's Gather (torch/nn/parallel/_functions.py → comm.gather): the replicas' outputs
// concatenated on the output device, which may be the CPU.
#include <ATen/ops/cat.h>
#include <c10/util/Exception.h>

#include "gpulab/data_parallel.h"
#include "gpulab/warnings.h"

namespace gpulab::parallel {

at::Tensor gather_tensors(const std::vector<at::Tensor>& outputs, int output_device, std::int64_t dim) {
  TORCH_CHECK(!outputs.empty(), "gather: no outputs");
  const c10::Device destination = output_device == -1
                                      ? c10::Device(c10::DeviceType::CPU)
                                      : c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(output_device));
  bool all_scalars = true;
  for (const at::Tensor& output : outputs) {
    TORCH_CHECK(output.is_cuda(), "Gather function not implemented for CPU tensors");
    all_scalars = all_scalars && output.dim() == 0;
  }
  if (all_scalars)
    warn("Was asked to gather along dimension 0, but all input tensors were scalars; will instead unsqueeze and "
         "return a vector.");
  std::vector<at::Tensor> moved;
  for (const at::Tensor& output : outputs) moved.push_back((all_scalars ? output.view({1}) : output).to(destination));
  // to() and cat() are differentiable: the gradient is split and sent back to each replica.
  return at::cat(moved, all_scalars ? 0 : dim);
}

}  // namespace gpulab::parallel
