// Real GPUs: NCCL (or Gloo's CUDA support) takes device tensors as they are.
#include "backend/collectives.h"

namespace gpulab::backend {

at::Tensor collective_view(const at::Tensor& tensor) { return tensor; }

}  // namespace gpulab::backend
