// Running a quiz round's scenario and reading its truth (quiz_probe.h).
#include "tutor/quiz_probe.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <variant>

#include <fmt/format.h>

#include "proc/process.h"

namespace gpulab::tutor {

using quiz::int_list;
using quiz::join;

QuizTruth run_scenario(const QuizScenario& s, const std::string& probe) {
  ProcessOptions process;
  process.argv = {probe, "--json", "--code", code_name(s.code)};
  if (s.code == QuizCode::kDataParallel) {
    process.argv.insert(process.argv.end(), {"--device-ids", join(s.device_ids)});
    if (s.model_on_cuda0) process.argv.push_back("--model-on-cuda0");
    if (s.batch_to_cuda) process.argv.push_back("--batch-to-cuda");
  } else {
    process.argv.insert(process.argv.end(), {"--index", std::to_string(s.index)});
  }
  if (s.code == QuizCode::kSetenvLate) process.argv.insert(process.argv.end(), {"--setenv", s.setenv});
  if (s.code == QuizCode::kFork && s.fork_after_init) process.argv.push_back("--after-init");
  if (s.code == QuizCode::kDeviceString) process.argv.insert(process.argv.end(), {"--device", s.device_string});
  if (s.code == QuizCode::kGuard) {
    process.argv.insert(process.argv.end(), {"--borrow", std::to_string(s.borrowed)});
    if (s.scoped) process.argv.push_back("--scoped");
    if (s.ask_memory) process.argv.push_back("--reads-only");
  }
  if (s.code == QuizCode::kMixedDevice) {
    if (s.batch_to_cuda) process.argv.push_back("--batch-to-cuda");
    if (s.cpu_mask) process.argv.push_back("--cpu-mask");
  }
  const bool ranked = s.code == QuizCode::kLocalRank || s.code == QuizCode::kNoSetDevice;
  const auto per_node = static_cast<int>(quiz_node(s.node).gpus.size());
  process.env = {{"GPULAB_NODE", s.node}, {"CUDA_VISIBLE_DEVICES", s.visible}, {"CUDA_DEVICE_ORDER", s.order},
                 {"NVIDIA_VISIBLE_DEVICES", s.container},
                 {"LOCAL_RANK", ranked ? std::optional<std::string>(std::to_string(s.index))
                                : s.code == QuizCode::kRank ? std::optional<std::string>(std::to_string(s.index % per_node))
                                                            : std::nullopt},
                 {"RANK", s.code == QuizCode::kRank ? std::optional<std::string>(std::to_string(s.index)) : std::nullopt}};
  process.timeout_s = 60;
  std::string checkpoint;
  if (s.code == QuizCode::kLoad) {  // saved first on dgx-a100 with every GPU visible, as the round says
    char folder[] = "/tmp/gpulab-quiz-XXXXXX";
    if (mkdtemp(folder) == nullptr) throw ProbeFailed(Outcome::kCrashed, "quiz-probe: cannot make a folder for the checkpoint\n");
    checkpoint = std::string(folder) + "/ckpt.pt";
    ProcessOptions save = process;
    save.argv = {probe, "--json", "--code", "save", "--index", std::to_string(s.index), "--file", checkpoint};
    save.env = {{"GPULAB_NODE", "dgx-a100"}, {"CUDA_VISIBLE_DEVICES", std::nullopt}, {"CUDA_DEVICE_ORDER", std::nullopt},
                {"NVIDIA_VISIBLE_DEVICES", std::nullopt},
                {"LOCAL_RANK", std::nullopt}, {"RANK", std::nullopt}};
    const ProcessResult saved = run_process(save);
    if (!saved.ok()) throw ProbeFailed(Outcome::kCrashed, "quiz-probe could not save the checkpoint:\n" + saved.err);
    process.argv.insert(process.argv.end(), {"--file", checkpoint});
  }
  const ProcessResult result = run_process(process);
  if (!checkpoint.empty()) {
    std::remove(checkpoint.c_str());
    rmdir(checkpoint.substr(0, checkpoint.rfind('/')).c_str());
  }
  try {
    return truth_of(s, parse_report(result.out));
  } catch (const ReportError& e) {
    throw ProbeFailed(result.timed_out ? Outcome::kTimedOut : Outcome::kCrashed,
                      fmt::format("quiz-probe {} without a report ({}):\n{}", result.outcome(process.timeout_s), e.what(), result.err));
  }
}

QuizTruth truth_of(const QuizScenario& s, const Report& report) {
  QuizTruth truth;
  for (const auto& error : report.errors) {
    if (error.label != "place") throw ProbeFailed(Outcome::kCrashed, "quiz-probe failed: " + error.message + "\n");  // not an answer
    truth.error = true;
    truth.message = error.message.substr(0, error.message.find('\n'));  // LibTorch appends advice lines
  }
  if (const auto fact = report.facts.find("visible"); fact != report.facts.end())
    if (const auto* visible = std::get_if<std::string>(&fact->second)) truth.visible = int_list(*visible);
  const Observation* placed = report.observation("placed");
  if (s.code == QuizCode::kFork && !truth.error) {  // the worker's own report (gpulab::WorkerPool)
    if (const auto fact = report.facts.find("worker0_x_gpu"); fact != report.facts.end())
      if (const auto* gpu = std::get_if<std::string>(&fact->second)) truth.gpus = int_list(*gpu);
  } else if (!truth.error && placed != nullptr) {
    const bool y = s.code == QuizCode::kDefaultIds || s.code == QuizCode::kMixedDevice || s.ask_output;
    const char* tensor = s.code == QuizCode::kLoad ? "weight" : y ? "y" : "x";
    if ((s.code == QuizCode::kDataParallel && !s.ask_output) || (s.code == QuizCode::kGuard && s.ask_memory)) {
      for (const auto& gpu : placed->gpus)
        if (gpu.used_bytes > 0 || gpu.context) truth.gpus.push_back(gpu.physical_index);
    } else if (const auto* x = placed->tensor(tensor); x != nullptr && x->physical_index) {
      truth.gpus.push_back(*x->physical_index);
    }
    std::sort(truth.gpus.begin(), truth.gpus.end());
  }
  return truth;
}

}  // namespace gpulab::tutor
