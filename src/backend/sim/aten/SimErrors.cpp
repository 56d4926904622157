#include "SimErrors.h"

namespace gpulab::sim {

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

int current_device() {
  check(Driver::fork_check());
  return Driver::current_device();
}

}  // namespace gpulab::sim
