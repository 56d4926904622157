// builder.cpp's reading of Ninja's log, exposed for its unit tests (tests/unit/grading/
// builder_test.cpp); nothing else includes this header.
#pragma once

#include <map>
#include <string>

namespace gpulab::grading {

/// What the compiler said about each target that failed, from Ninja's log: each
/// "FAILED: <outputs>" line names the target (CMakeFiles/<target>.dir/… or bin/<target>),
/// the command line after it is dropped, then its messages follow, up to the next progress
/// ("[3/7] ") or "ninja: " line.
std::map<std::string, std::string> failures_in_log(const std::string& log);

}  // namespace gpulab::grading
