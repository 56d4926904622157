#include "cuda_check_message.h"

#include <cstdlib>

#include "model/cuda_messages.h"

namespace gpulab::sim {

std::string cuda_error_message(Error error) {
  // c10/cuda's get_cuda_check_suffix reads CUDA_LAUNCH_BLOCKING once, as here.
  static const bool blocking = [] {
    const char* flag = std::getenv("CUDA_LAUNCH_BLOCKING");
    return flag != nullptr && std::atoi(flag) != 0;
  }();
  const CudaErrorCode code{static_cast<int>(error), error_name(error), error_string(error)};
  return gpulab::cuda_error_message(Driver::current_profile(), code, blocking);
}

}  // namespace gpulab::sim
