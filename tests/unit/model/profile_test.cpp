// The software profile: which runtime a PyTorch release shipped with, GPULAB_CUDA_RUNTIME,
// and the version-dependent rules (docs/reference.md "Contexts and memory", "Profiles").
#include <stdexcept>

#include <catch2/catch.hpp>

#include "model/profile.h"

using namespace gpulab;

namespace {
Profile torch(int major, int minor, int runtime = 0) {
  Profile profile = make_profile(major, minor, 0, nullptr);
  if (runtime != 0) profile.cuda_runtime = runtime;
  return profile;
}
}  // namespace

TEST_CASE("by default the runtime is the one the release's official CUDA builds shipped with", "[unit][profile]") {
  CHECK(make_profile(1, 13, 1, nullptr).cuda_runtime == 11);
  CHECK(make_profile(2, 0, 1, nullptr).cuda_runtime == 11);
  CHECK(make_profile(2, 1, 0, nullptr).cuda_runtime == 12);
  CHECK(make_profile(2, 15, 0, nullptr).cuda_runtime == 12);
  CHECK(make_profile(3, 0, 0, nullptr).cuda_runtime == 12);
  CHECK(make_profile(1, 13, 1, nullptr).torch_version() == "1.13.1");
}

TEST_CASE("GPULAB_CUDA_RUNTIME overrides the runtime with 11 or 12 and refuses anything else", "[unit][profile]") {
  CHECK(make_profile(1, 13, 1, "12").cuda_runtime == 12);
  CHECK(make_profile(2, 4, 0, "11").cuda_runtime == 11);
  for (const char* bad : {"", "13", "12.1", " 12", "cuda12"}) {
    INFO("GPULAB_CUDA_RUNTIME='" << bad << "'");
    CHECK_THROWS_WITH(make_profile(1, 13, 1, bad), Catch::Contains("GPULAB_CUDA_RUNTIME must be 11 or 12") &&
                                                       Catch::Contains(std::string("'") + bad + "'"));
  }
}

TEST_CASE("only CUDA 12's cudaSetDevice creates a context", "[unit][profile]") {
  CHECK_FALSE(torch(1, 13, 11).set_device_creates_context());
  CHECK(torch(1, 13, 12).set_device_creates_context());
  CHECK(torch(2, 4, 12).set_device_creates_context());
  CHECK_FALSE(torch(2, 4, 11).set_device_creates_context());
}

TEST_CASE("a guard restores with cudaSetDevice before 2.1 and with MaybeSetDevice from 2.1", "[unit][profile]") {
  CHECK(torch(1, 13).guard_restore_sets_device());
  CHECK(torch(2, 0).guard_restore_sets_device());
  CHECK_FALSE(torch(2, 1).guard_restore_sets_device());
  CHECK_FALSE(torch(2, 15).guard_restore_sets_device());
}

TEST_CASE("set_device(0) on a fresh thread does nothing before 2.8", "[unit][profile]") {
  CHECK(torch(1, 13).set_device_zero_on_fresh_thread_is_noop());
  CHECK(torch(2, 7).set_device_zero_on_fresh_thread_is_noop());
  CHECK_FALSE(torch(2, 8).set_device_zero_on_fresh_thread_is_noop());
}

TEST_CASE("the out-of-memory text and the CUDA error suffix follow the PyTorch version", "[unit][profile]") {
  CHECK(torch(1, 13).oom_text_form() == OomTextForm::Torch113);
  CHECK(torch(2, 0).oom_text_form() == OomTextForm::Torch113);
  CHECK(torch(2, 1).oom_text_form() == OomTextForm::Torch21);
  CHECK(torch(2, 2).oom_text_form() == OomTextForm::Torch22);
  CHECK(torch(2, 10).oom_text_form() == OomTextForm::Torch22);
  CHECK(torch(2, 11).oom_text_form() == OomTextForm::Torch211);
  CHECK(torch(1, 13).cuda_error_suffix_form() == CudaErrorSuffixForm::Torch1);
  CHECK(torch(2, 0).cuda_error_suffix_form() == CudaErrorSuffixForm::Torch20);
  CHECK(torch(2, 1).cuda_error_suffix_form() == CudaErrorSuffixForm::Torch21);
  CHECK(torch(2, 15).cuda_error_suffix_form() == CudaErrorSuffixForm::Torch21);
}

TEST_CASE("a version string gives major, minor and patch, and a suffix is ignored", "[unit][profile]") {
  const auto debian = parse_torch_version("1.13.1+dfsg-4");
  REQUIRE(debian);
  CHECK(debian->torch_version() == "1.13.1");
  REQUIRE(parse_torch_version("2.4"));
  CHECK(parse_torch_version("2.4")->torch_version() == "2.4.0");
  REQUIRE(parse_torch_version("2.1.0a0"));
  CHECK(parse_torch_version("2.1.0a0")->torch_version() == "2.1.0");
  for (const char* bad : {"", "2", "2.", "x.1", ".1.2"}) {
    INFO("'" << bad << "'");
    CHECK_FALSE(parse_torch_version(bad));
  }
}
