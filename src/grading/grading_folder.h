// The build folder a student's checkout is graded in (check all --root).
#pragma once

#include <map>
#include <string>

namespace gpulab::grading {

/// A build folder's CMakeCache.txt as name -> value (empty when there is none).
std::map<std::string, std::string> read_build_cache(const std::string& build);

/// "the_class-3f2a91c4": a readable folder name, the same for the same path every run.
std::string folder_name(const std::string& root);

/// Configures `folder` as `main_build` is configured, with the exercises from `root`;
/// `present` lists the lesson ids whose file the student has (one per line). Does nothing
/// when it is already so. Throws Failure(kBuildFailed) when CMake fails.
void configure_grading_folder(const std::string& main_build, const std::string& folder, const std::string& root,
                              const std::string& present);

}  // namespace gpulab::grading
