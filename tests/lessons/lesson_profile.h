// The software profile a lesson ran under, from its report: lesson checks derive what the
// program should have done from it (docs/reference.md, "Profiles"). Shared by the lessons
// whose outcome depends on the PyTorch version or the CUDA runtime.
#pragma once

#include <catch2/catch.hpp>

#include "model/profile.h"
#include "lesson_run.h"

namespace gpulab::test {

inline Profile profile_of(const LessonRun& run) {
  const auto& profile = run.report.at("profile");
  INFO("the report's profile: " << profile.dump());
  REQUIRE(profile.contains("torch"));
  auto parsed = parse_torch_version(profile.at("torch").get<std::string>());
  REQUIRE(parsed);
  parsed->cuda_runtime = profile.at("cuda_runtime").get<int>();
  return *parsed;
}

}  // namespace gpulab::test
