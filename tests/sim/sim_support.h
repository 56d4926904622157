// What the simulated-backend tests share: a known environment for the tests that run in
// this process, and child processes for those that need their own environment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "lesson_run.h"

namespace gpulab::test {

/// cuda:<index>, as torch::Device("cuda:<index>") would give.
inline c10::Device cuda(int index) { return {c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index)}; }

/// Bytes the caching allocator reserves for a block of `bytes` (PyTorch rounds to 512 B).
constexpr std::uint64_t block_bytes(std::uint64_t bytes) { return (bytes + 511) / 512 * 512; }

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
