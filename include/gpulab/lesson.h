// The lesson report: what a lesson program did, as observed from outside it.
//
// A lesson is plain LibTorch inside run_lesson(); it calls lesson.observe() at the moments
// worth looking at. Each observation records, per physical GPU, what this process uses
// (context + reserved memory, read from the node's shared state or NVML — not from the
// lesson's own bookkeeping) and where the named tensors are. `--json` prints the report
// (schema: docs/report-schema.md) on stdout; otherwise a readable transcript.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

namespace torch::nn {
class Module;
}

/// gpulab's library: the lesson report (Lesson), the observer (Observer), the simulated
/// node (Node, NodeState), visibility rules, the software profile (Profile), DataParallel,
/// the launcher (LaunchPlan) and the manifest.
namespace gpulab {

class Observer;

/// A tensor to locate in an observation, by the name the lesson gives it.
using NamedTensor = std::pair<std::string, at::Tensor>;

/// Every parameter and buffer of a module, named as named_parameters() names them.
std::vector<NamedTensor> tensors_of(const torch::nn::Module& module);

/// The entries of `text` between the separators, as written: split("2,1") is {"2", "1"},
/// split("") is {} (no entry), split("1,,2") is {"1", "", "2"}. For the lists a lesson reads
/// (CUDA_VISIBLE_DEVICES, device strings, nvidia-smi's columns), so that parsing them is one
/// call, not the lesson.
std::vector<std::string> split(const std::string& text, char separator = ',');

/// A running lesson program: it takes observations and facts, and prints the lesson report
/// (`--json`: docs/report-schema.md) when it finishes. Usually made by run_lesson().
class Lesson {
 public:
  /// Lesson `id` ("04"); reads gpulab's flags (`--json`) from the command line, and keeps
  /// the rest as args().
  Lesson(std::string id, int argc, char** argv);
  ~Lesson();
  Lesson(const Lesson&) = delete;
  Lesson& operator=(const Lesson&) = delete;

  /// Records this process's usage of every physical GPU now, and where `tensors` are.
  void observe(const std::string& label, const std::vector<NamedTensor>& tensors = {});
  /// Runs `step`; an exception is recorded (type + message) and reported, not fatal.
  /// Returns whether the step succeeded.
  bool attempt(const std::string& label, const std::function<void()>& step);
  /// A line of explanation for the reader (not part of the checks).
  void say(const std::string& text);
  /// A free-form fact for the report's "facts" object (e.g. device_count).
  void fact(const std::string& key, std::int64_t value);
  /// A text fact for the report's "facts" object.
  void fact(const std::string& key, const std::string& value);

  /// Arguments after the program name that gpulab did not consume (e.g. scenario flags).
  const std::vector<std::string>& args() const { return args_; }
  /// The comma-separated integers after `flag` in args() ("--device-ids 2,3"), or
  /// `fallback` when the flag is absent. Anything else throws std::invalid_argument.
  std::vector<int> int_list(const std::string& flag, std::vector<int> fallback = {}) const;
  /// The word after `flag` in args() ("--save ckpt.pt"), or `fallback` when the flag is
  /// absent; a flag with nothing after it throws std::invalid_argument.
  std::string option(const std::string& flag, const std::string& fallback = {}) const;
  /// The comma-separated entries after `flag` ("--smi-uuids GPU-a,GPU-b"), split(); none
  /// when the flag is absent.
  std::vector<std::string> string_list(const std::string& flag) const { return split(option(flag)); }
  /// Whether the report is printed as JSON (`--json`) rather than as a transcript.
  bool json_output() const { return json_; }

  /// Prints the report; returns the process exit code.
  int finish(int exit_code = 0);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<std::string> args_;
  bool json_ = false;
};

/// Runs a lesson body and reports. An exception escaping the body is recorded as an
/// error and the program exits 1 with the report still printed.
int run_lesson(const std::string& id, int argc, char** argv, const std::function<void(Lesson&)>& body);

}  // namespace gpulab
