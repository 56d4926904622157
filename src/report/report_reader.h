// Reading a lesson report (docs/report-schema.md) without LibTorch: what tests, graders
// and the CLI use to look at what a lesson program was observed to do.
//
// parse_report() checks the whole document against the schema before returning plain
// structs, so a caller never meets a half-valid report: a missing field, a wrong type, a
// negative size or a repeated GPU is a ReportError naming the field's path.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "gpulab/observe.h"

namespace gpulab {

/// A report that does not follow docs/report-schema.md. what() starts with the path of the
/// offending field, e.g. "observations[2].gpus[0].used_bytes: expected a non-negative integer, got -1".
class ReportError : public std::runtime_error {
 public:
  /// `problem` with the path of the offending `field`.
  ReportError(std::string field, const std::string& problem)
      : std::runtime_error(field + ": " + problem), field_(std::move(field)) {}
  /// The path of the offending field ("(document)" when the text is not JSON at all).
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

/// The CUDA-related environment of the lesson process (nullopt: the variable was unset).
struct ReportEnvironment {
  std::optional<std::string> cuda_visible_devices;  ///< `CUDA_VISIBLE_DEVICES`
  std::optional<std::string> cuda_device_order;     ///< `CUDA_DEVICE_ORDER`
  std::optional<std::string> gpulab_node;           ///< `GPULAB_NODE`
  std::optional<std::string> nvidia_visible_devices;  ///< `NVIDIA_VISIBLE_DEVICES`, a container's GPUs
};

/// What this process held on one physical GPU at an observation.
struct GpuUsage {
  int physical_index = -1;      ///< nvidia-smi's index (PCI bus order)
  std::uint64_t used_bytes = 0; ///< context + memory reserved by the caching allocator
  bool context = false;         ///< the process has a CUDA context there
};

/// Where a named tensor was at an observation.
struct TensorLocation {
  std::string name;                  ///< the name the lesson gave it
  std::string device;                ///< "cuda:1", "cpu", …
  std::optional<int> physical_index; ///< nullopt when not on a GPU
};

/// One lesson.observe(label, tensors).
struct Observation {
  std::string label;           ///< what had just happened, e.g. "after forward"
  std::vector<GpuUsage> gpus;  ///< only GPUs the process uses; each at most once
  std::vector<TensorLocation> tensors;  ///< the tensors named in the observation

  /// The usage of physical GPU `physical_index`, or nullptr when the process did not use it.
  const GpuUsage* gpu(int physical_index) const;
  /// The tensor called `name`, or nullptr.
  const TensorLocation* tensor(std::string_view name) const;
};

/// An exception the lesson caught with lesson.attempt(label, …) ("uncaught": escaped the lesson).
struct CaughtError {
  std::string label;    ///< the attempt's label, or "uncaught"
  std::string type;     ///< C++ type, e.g. "c10::Error"
  std::string message;  ///< without LibTorch's C++ backtrace
};

/// A lesson.fact(key, value): an integer or a string.
using FactValue = std::variant<std::int64_t, std::string>;

/// A lesson report (docs/report-schema.md), validated.
struct Report {
  std::string lesson;   ///< "04"
  Backend backend = Backend::kSim;
  std::string node;     ///< the simulated node, or the host name on real GPUs
  int pid = 0;          ///< the lesson process
  ReportEnvironment env;          ///< when the program started
  ReportEnvironment env_at_exit;  ///< when it printed the report
  std::map<std::string, FactValue> facts;  ///< lesson.fact() values, by key
  std::vector<Observation> observations;  ///< in the order taken
  std::vector<CaughtError> errors;  ///< in the order caught
  int exit_code = 0;                ///< what the program exits with

  /// The first observation labelled `label`, or nullptr.
  const Observation* observation(std::string_view label) const;
};

/// Parses and validates a report printed by `--json` (exactly one JSON object; unknown keys
/// are allowed, as the schema may grow). Throws ReportError on anything else.
Report parse_report(std::string_view text);

}  // namespace gpulab
