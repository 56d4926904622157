// Running lesson programs from outside, as a learner's shell would, and reading what
// they were observed to do (the lesson report, docs/report-schema.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/node.h"
#include "proc/process.h"

namespace gpulab::test {

/// Which program a lesson check runs: GPULAB_CHECK_TARGET=exercise|solution|mutant:NAME|
/// variant:NAME (default solution); a mutant is a known wrong answer (tests/mutations,
/// `gpulab dev mutants`), a variant another right answer (tests/variants, `gpulab dev variants`).
enum class Target { Exercise, Solution, Mutant, Variant };
Target check_target();

/// bin/lesson-NN, bin/solution-NN, bin/mutant-NN-NAME or bin/variant-NN-NAME; the exercise from
/// GPULAB_CHECK_PROGRAMS instead when it is set (a student's, built apart).
std::string program(const std::string& id, Target target = check_target());
/// The build's bin folder and the source tree.
std::string bin_dir();
std::string source_dir();

/// A fresh, empty node-state folder: each test sees only its own processes.
std::string fresh_state_dir();

using Env = std::vector<std::pair<std::string, std::optional<std::string>>>;

/// A scenario's settings for a test's message: NAME="value" or NAME=(unset) for each, or
/// "nothing set"; always ends with a space, so more text can follow.
std::string shown(const Env& env);

/// A finished lesson run and its parsed report.
struct LessonRun {
  ProcessResult process;
  nlohmann::json report;

  /// The observation with this label; fails the test (listing the labels) if absent.
  const nlohmann::json& observation(const std::string& label) const;
  /// Physical GPU -> bytes this process used, at that observation (GPUs it did not use are absent).
  std::map<int, std::uint64_t> usage(const std::string& label) const;
  /// Physical GPUs where the process had a context at that observation.
  std::vector<int> contexts(const std::string& label) const;
  /// The physical GPU of a named tensor at that observation; -1 when not on a GPU.
  int physical_of(const std::string& label, const std::string& tensor) const;
  std::string device_of(const std::string& label, const std::string& tensor) const;
  /// Messages of errors recorded with this label (empty if none).
  std::vector<std::string> errors(const std::string& label) const;
  const nlohmann::json& fact(const std::string& key) const;
};

/// Runs lesson `id` with --json under `env` (on top of a clean CUDA environment:
/// CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, GPULAB_NODE and NVIDIA_VISIBLE_DEVICES unset unless given).
LessonRun run_scenario(const std::string& id, const Env& env = {}, const std::vector<std::string>& args = {},
                       Target target = check_target());

/// Runs any program that prints a lesson report with --json (a lesson, a test probe), the
/// same way: clean CUDA environment plus `env`, fresh node state, a time limit.
/// `prestarted`: the program calls gpulab::run_lesson first thing, so a prestarted parent
/// may fork its run (proc/prestart.h; run_scenario does this for lessons).
LessonRun run_report_program(const std::string& path, const std::vector<std::string>& args, const Env& env,
                             double timeout_s, bool prestarted = false);

/// Runs a lesson program as run_process does (`prestarted`: forked from a prestarted parent
/// when it can be), and tells `gpulab check` (through the file GPULAB_CHECK_OUTCOMES names)
/// when it crashed or did not finish.
ProcessResult run_lesson_process(const ProcessOptions& options, bool prestarted = false);

/// Parses a report printed by any program (e.g. a script that runs a lesson).
LessonRun parse_run(ProcessResult process);

/// A node file from nodes/, to derive expectations (context size, memory) from data.
/// It describes the simulated node only: on real GPUs use the helpers below.
Node node(const std::string& name = kDefaultNodeName);

// The same checks run on the simulated node and on real GPUs (a CUDA build). Node files
// hold exactly on the first; on the second only what NVML and CUDA report does.

/// True when lesson programs run on the simulated node (`gpulab smi` reports the "sim"
/// backend), false on real GPUs (the "cuda" backend). The answer is the same under every
/// `env`, so only the first call asks: passing the scenario's env lets it reuse the answer
/// gpu_inventory has (or will have) for that GPULAB_NODE, one `gpulab smi` run fewer.
bool simulated(const Env& env = {});

/// How many physical GPUs lesson programs find under `env`: the node file's (GPULAB_NODE, or
/// the default node) on the simulated node, NVML's on real GPUs.
int physical_gpus(const Env& env = {});

/// The physical GPU (nvidia-smi's number) behind each CUDA index with every GPU visible, in
/// the order `env`'s CUDA_DEVICE_ORDER sets: element i is cuda:i, and so also the GPU an
/// integer entry i of CUDA_VISIBLE_DEVICES names. Simulated node: gpulab::enumeration_order on
/// the node file, the one definition of the order. Real GPUs: what `gpulab devices --json`
/// observes. Cached.
std::vector<int> cuda_order(const Env& env = {});

/// The physical GPUs the entries of an integer CUDA_VISIBLE_DEVICES list name, in list
/// order: entry i is cuda_order(env)[i] (physical GPU i where CUDA counts in PCI order).
std::vector<int> physical_of_entries(const std::vector<int>& entries, const Env& env = {});

/// The physical GPUs a list written by a test ("5,1,6") makes visible, in CUDA index order;
/// every GPU (cuda_order(env)) when unset. On the simulated node any list (UUIDs, bad
/// entries), by the simulator's own rule; on real GPUs integer lists only.
std::vector<int> visible_physical(const std::optional<std::string>& integer_list, const Env& env = {});

/// Each physical GPU's UUID, in nvidia-smi's order: the node file's on the simulated node,
/// NVML's (`gpulab smi --json`) on real GPUs. Cached.
std::vector<std::string> gpu_uuids(const Env& env = {});

constexpr std::uint64_t kMiB = 1024ull * 1024ull;

}  // namespace gpulab::test
