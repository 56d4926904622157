#include "course/predictions.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <variant>

namespace gpulab {
namespace {

std::string trimmed_lower(const std::string& text) {
  std::string out;
  for (char c : text) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto first = out.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return out.substr(first, out.find_last_not_of(" \t\r\n") - first + 1);
}

std::optional<int> gpu_number(std::string word) {
  for (const std::string prefix : {"physical gpu", "gpu"})
    if (word.rfind(prefix, 0) == 0) word = trimmed_lower(word.substr(prefix.size()));
  if (word.empty() || word.size() > 3 || !std::all_of(word.begin(), word.end(), ::isdigit)) return std::nullopt;
  return std::stoi(word);
}

std::string joined(const std::set<int>& gpus) {
  if (gpus.empty()) return "none";
  std::string out;
  for (int gpu : gpus) out += (out.empty() ? "" : ",") + std::to_string(gpu);
  return out;
}

// A fact that names physical GPUs, as gpulab::WorkerPool's `workerN_gpus` ("5", "5,6" or
// "none"): asked and compared as a list of GPUs, like gpus_used, not as a number.
bool is_gpu_list_fact(const Prediction& prediction) {
  const std::string suffix = "_gpus";
  return prediction.observe == "fact" && prediction.subject.size() > suffix.size() &&
         prediction.subject.compare(prediction.subject.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "3, 0 and gpu 3" -> "0,3"; "none" (or "no gpu", "-") -> "none"; nullopt when it is not a list of GPUs.
std::optional<std::string> gpu_list(const std::string& answer) {
  if (answer == "none" || answer == "no gpu" || answer == "-") return std::string("none");
  std::set<int> gpus;
  std::string word;
  std::istringstream words(answer);
  while (std::getline(words, word, ',')) {
    std::istringstream parts(word);
    std::string part;
    while (parts >> part) {
      if (part == "gpu" || part == "gpus" || part == "and") continue;
      const auto gpu = gpu_number(part);
      if (!gpu) return std::nullopt;
      gpus.insert(*gpu);
    }
  }
  if (gpus.empty()) return std::nullopt;
  return joined(gpus);
}

// The one report the question is about, in a launched (ranks) or stepped (steps) run.
const Report* report_for(const Prediction& prediction, const RunDocument& run) {
  const std::vector<RunPart>& parts = run.parts;
  if (run.kind == RunDocument::Kind::kRanks) {
    for (const auto& part : parts)
      if (part.rank == prediction.rank && part.report) return &*part.report;
    return nullptr;
  }
  const std::size_t index = run.kind == RunDocument::Kind::kSteps ? static_cast<std::size_t>(prediction.step) : 0;
  return index < parts.size() && parts[index].report ? &*parts[index].report : nullptr;
}

// The observation labelled `at`, or the last one (observations are in the order taken).
const Observation* observation_for(const Prediction& prediction, const Report& report) {
  const Observation* found = nullptr;
  for (const auto& observation : report.observations)
    if (prediction.at.empty() || observation.label == prediction.at) found = &observation;
  return found;
}

std::set<int> gpus_used(const Observation& observation) {
  std::set<int> gpus;
  for (const auto& gpu : observation.gpus)
    if (gpu.used_bytes > 0 || gpu.context) gpus.insert(gpu.physical_index);
  return gpus;
}

std::optional<std::string> fact_answer(const Prediction& prediction, const Report& report) {
  const auto fact = report.facts.find(prediction.subject);
  if (fact == report.facts.end()) return std::nullopt;
  const std::string text = std::holds_alternative<std::string>(fact->second)
                               ? trimmed_lower(std::get<std::string>(fact->second))
                               : std::to_string(std::get<std::int64_t>(fact->second));
  if (is_gpu_list_fact(prediction))
    if (const auto gpus = gpu_list(text)) return gpus;
  return text;
}

// The last observation (labelled `at`, if given) that shows the tensor.
std::optional<std::string> tensor_answer(const Prediction& prediction, const Report& report) {
  std::optional<std::string> where;
  for (const auto& observation : report.observations) {
    if (!prediction.at.empty() && observation.label != prediction.at) continue;
    if (const TensorLocation* tensor = observation.tensor(prediction.subject))
      where = tensor->physical_index ? std::to_string(*tensor->physical_index) : "cpu";
  }
  return where;
}

}  // namespace

std::string answer_format(const Prediction& prediction) {
  if (prediction.observe == "tensor") return "a physical GPU number, or cpu";
  if (prediction.observe == "gpus_used" || is_gpu_list_fact(prediction))
    return "physical GPU numbers separated by commas, or none";
  if (prediction.observe == "fact") return "a number";
  return "yes or no";
}

std::optional<std::string> canonical_answer(const Prediction& prediction, const std::string& typed) {
  const std::string answer = trimmed_lower(typed);
  if (prediction.observe == "tensor") {
    if (answer == "cpu") return answer;
    if (const auto gpu = gpu_number(answer)) return std::to_string(*gpu);
    return std::nullopt;
  }
  if (prediction.observe == "gpus_used" || is_gpu_list_fact(prediction)) return gpu_list(answer);
  if (prediction.observe == "fact") {
    if (answer.empty()) return std::nullopt;
    return answer;
  }
  if (answer == "y" || answer == "yes" || answer == "true") return std::string("yes");
  if (answer == "n" || answer == "no" || answer == "false") return std::string("no");
  return std::nullopt;
}

std::optional<std::string> observed_answer(const Prediction& prediction, const RunDocument& run) {
  const Report* report = report_for(prediction, run);
  if (report == nullptr) return std::nullopt;
  if (prediction.observe == "fact") return fact_answer(prediction, *report);
  if (prediction.observe == "error" || prediction.observe == "succeeds") {
    bool failed = false;
    for (const auto& error : report->errors) failed = failed || error.label.rfind(prediction.subject, 0) == 0;
    return std::string(failed == (prediction.observe == "error") ? "yes" : "no");
  }
  if (prediction.observe == "tensor") return tensor_answer(prediction, *report);
  const Observation* observation = observation_for(prediction, *report);
  if (observation == nullptr) return std::nullopt;
  const std::set<int> gpus = gpus_used(*observation);
  if (prediction.observe == "gpus_used") return joined(gpus);
  const auto gpu = gpu_number(prediction.subject);  // gpu_memory: is this GPU among them?
  if (!gpu) return std::nullopt;
  return std::string(gpus.count(*gpu) ? "yes" : "no");
}

}  // namespace gpulab
