// The software profile on real GPUs: the linked LibTorch's version and the major version
// of the CUDA runtime it loaded (cudaRuntimeGetVersion). GPULAB_CUDA_RUNTIME plays no role
// here: real hardware is what it is.
#include <cuda_runtime_api.h>

#include "backend/linked_torch.h"
#include "backend/backend.h"

namespace gpulab {

Profile active_profile() {
  Profile profile = linked_torch_version();
  int runtime = 0;
  profile.cuda_runtime = cudaRuntimeGetVersion(&runtime) == cudaSuccess ? runtime / 1000
                                                                        : official_cuda_runtime(profile.torch_major, profile.torch_minor);
  return profile;
}

}  // namespace gpulab
