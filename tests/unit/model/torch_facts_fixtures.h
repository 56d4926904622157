// The torch-facts fixtures (tests/fixtures/torch-facts/, read out of each release's wheel by
// tools/torch-facts.sh), one per release, and the software profile each release has.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/profile.h"

namespace gpulab::test {

struct TorchFactsFixture {
  std::string release;  // "2.15.0"
  nlohmann::json facts;
};

// Every VERSION.json in tests/fixtures/torch-facts/<folder> ("" for the top level).
inline std::vector<TorchFactsFixture> torch_facts_fixtures(const std::string& folder = "") {
  std::vector<TorchFactsFixture> found;
  const auto dir = std::filesystem::path(GPULAB_TEST_SOURCE_DIR) / "tests/fixtures/torch-facts" / folder;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    found.push_back({entry.path().stem().string(), nlohmann::json::parse(in)});
  }
  return found;
}

// The profile of the release's default build.
inline Profile profile_of(const TorchFactsFixture& fixture) {
  const auto version = parse_torch_version(fixture.release);
  REQUIRE(version);
  return make_profile(version->torch_major, version->torch_minor, version->torch_patch, nullptr);
}

}  // namespace gpulab::test
