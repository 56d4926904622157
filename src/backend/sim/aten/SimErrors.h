// Errors raised the way PyTorch raises them on real CUDA, with the same texts.
#pragma once

#include <c10/util/Exception.h>

#include "backend/sim/runtime/cuda_check_message.h"
#include "backend/sim/runtime/driver.h"

namespace gpulab::sim {

/// Throws c10::Error("CUDA error: ...") unless `error` is Success.
void check(Error error);

/// The driver, turning a node or state problem into a c10::Error that says what to fix.
/// Works in a child forked after init too: what PyTorch caches (the device count) stays
/// readable there; each CUDA call fails on its own.
Driver& driver();

/// c10::cuda::current_device (cudaGetDevice): the thread's current device; in a child
/// forked after init, CUDA's "initialization error", as cudaGetDevice's there.
int current_device();

}  // namespace gpulab::sim
