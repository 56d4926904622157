// What run_process and a prestarted program's runs share: the pipes that capture a child's
// output, and the loop that reads them until the child ends or runs out of time.
#pragma once

#include <sys/types.h>

#include <functional>

#include "proc/process.h"

namespace gpulab {

/// The child's stdout and stderr, when captured: [0] ours to read, [1] the child's.
struct Pipes {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
};

/// Close-on-exec pipes when `capture`, none otherwise. Throws std::runtime_error.
Pipes make_pipes(bool capture);

/// Reads the child's output (closing our copies of its ends first) until it has ended and
/// its pipes are closed; past options.timeout_s it kills the child's process group (-pid).
/// `reap(block, status)` tells whether the child has ended, and how (a wait status).
ProcessResult supervise(pid_t pid, Pipes& pipes, const ProcessOptions& options,
                        const std::function<bool(bool block, int& status)>& reap);

}  // namespace gpulab
