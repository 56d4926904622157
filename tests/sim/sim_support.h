// What the simulated-backend tests share: a known environment for the tests that run in
// this process, and child processes for those that need their own environment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "allocator_sizes.h"  // block_bytes
#include "cuda_device.h"      // cuda(i)
#include "lesson_run.h"

namespace gpulab::test {

/// Runs build/bin/sim-probe with `steps` (see tests/sim/programs/sim_probe.cpp) under
/// `env`, on top of a clean CUDA environment and a fresh node state; returns one result
/// per step; `err`, if given, receives what the probe wrote on stderr.
nlohmann::json probe(const Env& env, const std::vector<std::string>& steps, std::string* err = nullptr);

/// Runs `gpulab devices --json` under `env` and returns its report.
nlohmann::json devices_report(const Env& env);

/// The physical index of every GPU in `node` in CUDA's FASTEST_FIRST order: the core's
/// gpulab::enumeration_order, the one definition the simulator uses too.
std::vector<int> fastest_first(const Node& node);

}  // namespace gpulab::test
