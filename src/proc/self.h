// Where this program runs from.
#pragma once

#include <string>

namespace gpulab {

/// Folder of the running executable (/proc/self/exe): the lesson, solution and check
/// programs are built beside the gpulab binary. "." when it cannot be read.
std::string executable_dir();

}  // namespace gpulab
