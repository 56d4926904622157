#include "SimErrors.h"

namespace gpulab::sim {

std::string cuda_error_message(Error error) {
  return std::string("CUDA error: ") + error_string(error) +
         "\nCUDA kernel errors might be asynchronously reported at any other API call, so the "
         "stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
         "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n";
}

void check(Error error) {
  if (error == Error::Success) return;
  TORCH_CHECK(false, cuda_error_message(error));
}

Driver& driver() {
  try {
    return Driver::get();
  } catch (const c10::Error&) {
    throw;
  } catch (const std::exception& e) {
    TORCH_CHECK(false, "gpulab simulated node: ", e.what());
  }
}

}  // namespace gpulab::sim
