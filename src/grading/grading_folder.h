// Where a student's checkout is graded (check all --root), and this build's settings.
#pragma once

#include <map>
#include <string>

namespace gpulab::grading {

/// A build folder's CMakeCache.txt as name -> value (empty when there is none).
std::map<std::string, std::string> read_build_cache(const std::string& build);

/// "the_class-3f2a91c4": a readable folder name, the same for the same path every run.
std::string folder_name(const std::string& root);

}  // namespace gpulab::grading
