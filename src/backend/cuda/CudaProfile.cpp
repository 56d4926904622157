// The software profile on real GPUs: the linked LibTorch's version and the CUDA its
// libtorch_cuda.so was built with (CUDART_VERSION there, which CUDAHooks reports). The
// shipped-builds table and GPULAB_CUDA_BUILD play no role here: real hardware and a real
// build are what they are.
#include <ATen/detail/CUDAHooksInterface.h>

#include "backend/linked_torch.h"
#include "backend/backend.h"

namespace gpulab {

Profile active_profile() {
  Profile profile = linked_torch_version();
  const long cudart = at::detail::getCUDAHooks().versionCUDART();  // 13020 for CUDA 13.2
  profile.cuda.major = static_cast<int>(cudart / 1000);
  profile.cuda.minor = static_cast<int>(cudart % 1000 / 10);
  return profile;
}

}  // namespace gpulab
