// Catch2 2's single header, as gpulab's tests use it, for a build against Catch2 3 (Ubuntu
// 24.04's, GitHub's ubuntu-latest). CMakeLists.txt puts this folder on the test programs'
// include path only when it found Catch2 3, so every test file keeps its
// `#include <catch2/catch.hpp>` and builds with either: Debian 12's Catch2 2 reads its own
// header, untouched. What the tests use of Catch2 2 that Catch2 3 renamed is named here.
// tools/check-catch2-3.sh builds and runs the tests against Catch2 3's sources.
#pragma once

#if !__has_include(<catch2/catch_test_macros.hpp>)
#error "tests/support/catch2-3 is for Catch2 3; CMake put it on the include path of a Catch2 2 build"
#endif

#include <string>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <catch2/reporters/catch_reporter_event_listener.hpp>
#include <catch2/reporters/catch_reporter_registrars.hpp>

namespace Catch {

// Catch2 2 also names its matchers in namespace Catch, and its string Contains is Catch2
// 3's ContainsSubstring (Catch2 3's Matchers::Contains is for ranges).
using Matchers::EndsWith;
using Matchers::Equals;
using Matchers::StartsWith;
inline Matchers::StringContainsMatcher Contains(const std::string& text, CaseSensitive sensitivity = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(text, sensitivity);
}

// A listener's base (tests/support/in_process_environment.h). A class, not an alias: a
// listener names its base's constructor and members as TestEventListenerBase, the
// injected-class-name, which an alias does not bring.
struct TestEventListenerBase : EventListenerBase {
  using EventListenerBase::EventListenerBase;
};

}  // namespace Catch

// Catch2 2 puts Approx in the global namespace.
using Catch::Approx;
