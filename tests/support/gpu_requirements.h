// Scenarios need GPUs: lesson 04's CUDA_VISIBLE_DEVICES=2,3,4,5 needs a machine with six.
// On the simulated node the scenario's node file has them; on real GPUs (GPULAB_BACKEND=cuda)
// the machine may have fewer, and then the check is skipped, not failed:
//
//   TEST_CASE("...", "[lesson04]") {
//     const Env env = {{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}};
//     GPULAB_REQUIRE_GPUS(gpus_needed(env), env);   // or a number: GPULAB_REQUIRE_GPUS(6, env)
//     const auto run = run_scenario("04", env);
//     ...
//
// The skip is a Catch2 warning "needs 6 GPUs, found 1"; CTest reports the test as skipped
// through SKIP_REGULAR_EXPRESSION (gpulab_skip_regex below, set in tests/lessons).
#pragma once

#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "gpulab/observe.h"
#include "lesson_run.h"

namespace gpulab::test {

/// What lesson programs run on: the simulated node of the scenario, or this machine's GPUs.
struct GpuInventory {
  Backend backend = Backend::kSim;
  std::string node;
  int physical_gpus = 0;
};

/// Asks `gpulab smi --json` (which never initialises CUDA) under `env` (GPULAB_NODE
/// matters on the simulated node). Cached per GPULAB_NODE.
const GpuInventory& gpu_inventory(const Env& env = {});

/// The physical GPUs a scenario names: the highest integer index in its
/// CUDA_VISIBLE_DEVICES (entries up to the first that is not a number) plus one; 1 when it
/// names none.
int gpus_needed(const Env& env);

/// Empty when the machine has `needed` GPUs, else why not: "needs 4 GPUs, found 1".
std::optional<std::string> missing_gpus(int needed, const Env& env = {});

/// What CTest's SKIP_REGULAR_EXPRESSION should match.
constexpr const char* kSkipRegex = "needs [0-9]+ GPUs?, found [0-9]+";

}  // namespace gpulab::test

/// Ends the current test case (as passed, with a warning CTest reads as "skipped") when
/// the machine has fewer than `needed` GPUs.
#define GPULAB_REQUIRE_GPUS(needed, env)                                                        \
  do {                                                                                          \
    if (const auto gpulab_missing_ = ::gpulab::test::missing_gpus((needed), (env))) {           \
      WARN(*gpulab_missing_);                                                                   \
      return;                                                                                   \
    }                                                                                           \
  } while (false)

/// Ends the current test case (as passed, with the warning `why`) unless lesson programs run
/// on the simulated node: for scenarios that need its other nodes (GPULAB_NODE) or its node
/// files' data. Needs one GPU, as GPULAB_REQUIRE_GPUS(1, ...) does.
#define GPULAB_REQUIRE_SIMULATED_NODE(why)                                                      \
  do {                                                                                          \
    GPULAB_REQUIRE_GPUS(1, ::gpulab::test::Env{});                                              \
    if (!::gpulab::test::simulated()) {                                                         \
      WARN(why);                                                                                \
      return;                                                                                   \
    }                                                                                           \
  } while (false)
