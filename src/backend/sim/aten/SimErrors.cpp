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

}  // namespace gpulab::sim
