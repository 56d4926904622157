// The software profile on real GPUs: the linked LibTorch's version and the CUDA it was built
// with, which CMake read from the build's own files (a wheel's version.py, a libtorch zip's
// build-version), so this stays torch-free like the CLI that links it. The shipped-builds
// table and GPULAB_CUDA_BUILD play no role here: real hardware and a real build are what
// they are.
#include "backend/linked_torch.h"
#include "backend/backend.h"

namespace gpulab {

Profile active_profile() {
  Profile profile = linked_torch_version();
#ifdef GPULAB_TORCH_CUDA_VERSION
  if (const auto cuda = parse_cuda_build(GPULAB_TORCH_CUDA_VERSION)) profile.cuda = *cuda;  // MAJOR.MINOR: CMake checked
#endif
  return profile;
}

bool cuda_not_started() { return false; }

int current_device_if_started() { return -1; }

}  // namespace gpulab
