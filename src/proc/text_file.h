// Reading a small text file whole: what a program wrote (a report, a result, a cgroup's
// counters), read back by the process that started it.
#pragma once

#include <string>

namespace gpulab {

/// The whole text of a file; "" when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace gpulab
