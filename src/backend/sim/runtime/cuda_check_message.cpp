#include "cuda_check_message.h"

#include <cstdlib>

namespace gpulab::sim {

namespace {
// c10/cuda's get_cuda_check_suffix, empty under CUDA_LAUNCH_BLOCKING=1 (read once, as PyTorch does).
std::string cuda_check_suffix(CudaErrorSuffixForm form) {
  static const bool blocking = [] {
    const char* flag = std::getenv("CUDA_LAUNCH_BLOCKING");
    return flag != nullptr && std::atoi(flag) != 0;
  }();
  if (blocking) return "";
  switch (form) {
    case CudaErrorSuffixForm::Torch1:
      return "\nCUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace "
             "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.";
    case CudaErrorSuffixForm::Torch20:
      return "\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
             "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.";
    case CudaErrorSuffixForm::Torch21:
      break;
  }
  return "\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
         "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1";
}
}  // namespace

std::string cuda_error_message(Error error) {
  const CudaErrorSuffixForm form = Driver::current_profile().cuda_error_suffix_form();
  std::string text = std::string("CUDA error: ") + error_string(error) + cuda_check_suffix(form);
  // c10_cuda_check_implementation adds the device-side assertion hint from 2.0 on.
  if (form != CudaErrorSuffixForm::Torch1) text += "\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n";
  return text;
}

}  // namespace gpulab::sim
