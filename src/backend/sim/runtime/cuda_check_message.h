// The message PyTorch's C10_CUDA_CHECK raises for a failed CUDA runtime call, in the
// profile's wording. Torch-free, so that the command line and the LibTorch adapters say
// the same thing.
#pragma once

#include <string>

#include "driver.h"

namespace gpulab::sim {

/// "CUDA error: invalid device ordinal" and the profile's suffix lines.
std::string cuda_error_message(Error error);

}  // namespace gpulab::sim
