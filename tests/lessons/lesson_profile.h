// The software profile a lesson ran under, from its report: lesson checks derive what the
// program should have done from it (docs/reference.md, "Profiles"). Shared by the lessons
// whose outcome depends on the PyTorch release or its CUDA build.
#pragma once

#include <catch2/catch.hpp>

#include "model/profile.h"
#include "lesson_run.h"

namespace gpulab::test {

inline Profile profile_of(const LessonRun& run) {
  const auto& profile = run.report.at("profile");
  INFO("the report's profile: " << profile.dump());
  const auto parsed = profile_from_json(profile);
  REQUIRE(parsed);
  return *parsed;
}

}  // namespace gpulab::test
