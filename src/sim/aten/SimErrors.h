// Errors raised the way PyTorch raises them on real CUDA, with the same texts.
#pragma once

#include <c10/util/Exception.h>

#include "../runtime/driver.h"

namespace gpulab::sim {

/// C10_CUDA_CHECK's message for a failed runtime call, in the profile's PyTorch wording.
std::string cuda_error_message(Error error);

/// Throws c10::Error("CUDA error: ...") unless `error` is Success.
void check(Error error);

/// The driver, turning a node or state problem into a c10::Error that says what to fix.
Driver& driver();

}  // namespace gpulab::sim
