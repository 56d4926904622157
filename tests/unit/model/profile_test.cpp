// The software profile: the builds each PyTorch release shipped, GPULAB_CUDA_BUILD,
// and the version-dependent rules (docs/reference.md "Contexts and memory", "Profiles").
#include <stdexcept>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "model/profile.h"

using namespace gpulab;

namespace {
// A profile of `major`.`minor` on CUDA `cuda_major`.`cuda_minor`, built directly: the rules
// are checked here for every build, shipped or historical (1.13 on CUDA 12, PR 94864).
Profile build(int major, int minor, int cuda_major = 12, int cuda_minor = 0) {
  Profile profile;
  profile.torch_major = major;
  profile.torch_minor = minor;
  profile.cuda = {cuda_major, cuda_minor};
  return profile;
}
}  // namespace

TEST_CASE("by default a profile is the release's PyPI wheel, and it prints as the build that shipped",
          "[unit][profile]") {
  CHECK(make_profile(1, 13, 1, nullptr).cuda.text() == "11.7");
  CHECK(make_profile(2, 0, 1, nullptr).cuda.text() == "11.7");
  CHECK(make_profile(2, 1, 0, nullptr).cuda.text() == "12.1");
  CHECK(make_profile(2, 8, 0, nullptr).cuda.text() == "12.8");
  CHECK(make_profile(2, 15, 0, nullptr).cuda.text() == "13.2");
  CHECK(make_profile(2, 15, 0, nullptr).name() == "PyTorch 2.15.0 (CUDA 13.2 build)");
  CHECK(make_profile(1, 13, 1, nullptr).name() == "PyTorch 1.13.1 (CUDA 11.7 build)");
}

TEST_CASE("GPULAB_CUDA_BUILD chooses another build the release shipped", "[unit][profile]") {
  CHECK(make_profile(2, 1, 0, "11.8").cuda.text() == "11.8");
  CHECK(make_profile(2, 11, 0, "12.6").cuda.text() == "12.6");
  CHECK(make_profile(1, 13, 1, "11.6").cuda.text() == "11.6");
  CHECK(make_profile(2, 15, 0, "").cuda.text() == "13.2");  // empty: unset
}

TEST_CASE("a build that never shipped is refused with the ones that did", "[unit][profile]") {
  CHECK_THROWS_WITH(make_profile(1, 13, 1, "12.1"), Catch::Contains("PyTorch 1.13 never shipped a CUDA 12.1 build") &&
                                                       Catch::Contains("11.6, 11.7 (PyPI's default)"));
  CHECK_THROWS_WITH(make_profile(2, 15, 0, "11.8"), Catch::Contains("PyTorch 2.15 never shipped a CUDA 11.8 build") &&
                                                        Catch::Contains("13.2 (PyPI's default)"));
  CHECK_THROWS_WITH(make_profile(2, 15, 0, "12.4"), Catch::Contains("PyTorch 2.15 never shipped a CUDA 12.4 build"));
  CHECK_THROWS_WITH(make_profile(2, 8, 0, "11.8"), Catch::Contains("never shipped a CUDA 11.8 build"));
  CHECK_THROWS_WITH(make_profile(1, 12, 1, nullptr), Catch::Contains("no profile for PyTorch 1.12") &&
                                                         Catch::Contains("1.13, 2.0, 2.1"));
}

TEST_CASE("GPULAB_CUDA_BUILD must read MAJOR.MINOR", "[unit][profile]") {
  for (const char* bad : {"12", "12.", ".8", " 12.8", "cu128", "12.8.1", "1234.1", "12,8"}) {
    INFO("GPULAB_CUDA_BUILD='" << bad << "'");
    CHECK_THROWS_WITH(make_profile(2, 15, 0, bad), Catch::Contains("GPULAB_CUDA_BUILD must be a CUDA version such as 12.8") &&
                                                       Catch::Contains(std::string("'") + bad + "'"));
  }
}

TEST_CASE("every release's default is one of its builds, and the table runs oldest first", "[unit][profile]") {
  const auto& releases = shipped_releases();
  REQUIRE_FALSE(releases.empty());
  for (std::size_t i = 0; i < releases.size(); ++i) {
    const ShippedRelease& release = releases[i];
    INFO("PyTorch " << release.major << "." << release.minor);
    bool listed = false;
    for (const CudaVersion& cuda : release.builds) listed = listed || cuda == release.pypi_default;
    CHECK(listed);
    if (i > 0) CHECK(build(releases[i - 1].major, releases[i - 1].minor).torch_at_least(release.major, release.minor) == false);
  }
}

TEST_CASE("tests try one build per CUDA major version, the default first", "[unit][profile]") {
  const auto text = [](const std::vector<CudaVersion>& builds) {
    std::string out;
    for (const CudaVersion& b : builds) out += b.text() + " ";
    return out;
  };
  CHECK(text(builds_per_cuda_major(*shipped_release(2, 1))) == "12.1 11.8 ");
  CHECK(text(builds_per_cuda_major(*shipped_release(2, 9))) == "12.8 13.0 ");
  CHECK(text(builds_per_cuda_major(*shipped_release(1, 13))) == "11.7 ");
  CHECK(text(builds_per_cuda_major(*shipped_release(2, 15))) == "13.2 ");
}

TEST_CASE("only CUDA 12's cudaSetDevice creates a context", "[unit][profile]") {
  CHECK_FALSE(build(1, 13, 11, 7).set_device_creates_context());
  CHECK(build(2, 4, 12, 1).set_device_creates_context());
  CHECK_FALSE(build(2, 4, 11, 8).set_device_creates_context());
  CHECK(build(2, 15, 13, 2).set_device_creates_context());
}

TEST_CASE("a guard restores with MaybeSetDevice only from 2.1 on CUDA 12 and later builds", "[unit][profile]") {
  CHECK(build(1, 13, 11, 7).guard_restore_sets_device());
  CHECK(build(1, 13, 12, 0).guard_restore_sets_device());  // the history PR 94864 fixed
  CHECK(build(2, 0, 11, 7).guard_restore_sets_device());
  CHECK_FALSE(build(2, 1, 12, 1).guard_restore_sets_device());
  CHECK(build(2, 1, 11, 8).guard_restore_sets_device());  // #if CUDA_VERSION >= 12000
  CHECK(build(2, 7, 11, 8).guard_restore_sets_device());
  CHECK_FALSE(build(2, 15, 13, 2).guard_restore_sets_device());
}

TEST_CASE("SetDevice skips the current device from 2.1, and torch.cuda.set_device forces it from 2.8",
          "[unit][profile]") {
  CHECK_FALSE(build(1, 13).set_device_skips_current(false));
  CHECK_FALSE(build(2, 0).set_device_skips_current(false));
  CHECK(build(2, 1).set_device_skips_current(false));
  CHECK(build(2, 7).set_device_skips_current(true));  // no `force` before 2.8
  CHECK(build(2, 8).set_device_skips_current(false));
  CHECK_FALSE(build(2, 8).set_device_skips_current(true));
  CHECK_FALSE(build(2, 7).python_set_device_forces());
  CHECK(build(2, 8).python_set_device_forces());
}

TEST_CASE("the out-of-memory text and the CUDA error suffix follow the release", "[unit][profile]") {
  CHECK(build(1, 13).oom_text_form() == OomTextForm::A);
  CHECK(build(2, 0).oom_text_form() == OomTextForm::A);
  CHECK(build(2, 1).oom_text_form() == OomTextForm::B);
  CHECK(build(2, 2).oom_text_form() == OomTextForm::C);
  CHECK(build(2, 9).oom_text_form() == OomTextForm::C);
  CHECK(build(2, 10).oom_text_form() == OomTextForm::D);
  CHECK(build(2, 11).oom_text_form() == OomTextForm::E);
  CHECK(build(2, 15).oom_text_form() == OomTextForm::E);
  CHECK(build(1, 13).cuda_error_suffix_form() == CudaErrorSuffixForm::NoSpace);
  CHECK(build(2, 0).cuda_error_suffix_form() == CudaErrorSuffixForm::FullStop);
  CHECK(build(2, 3).cuda_error_suffix_form() == CudaErrorSuffixForm::FullStop);
  CHECK(build(2, 4).cuda_error_suffix_form() == CudaErrorSuffixForm::NoFullStop);
}

TEST_CASE("the profile goes through JSON and back", "[unit][profile]") {
  const Profile profile = make_profile(2, 11, 0, "12.8");
  const auto back = profile_from_json(profile_to_json(profile));
  REQUIRE(back);
  CHECK(back->name() == "PyTorch 2.11.0 (CUDA 12.8 build)");
  CHECK_FALSE(profile_from_json(nlohmann::json{{"torch", "2.15.0"}}));
  CHECK_FALSE(profile_from_json(nlohmann::json{{"torch", "2.15.0"}, {"cuda", 13}}));
  CHECK_FALSE(profile_from_json(nlohmann::json{{"torch", "2.15.0"}, {"cuda", "thirteen"}}));
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
