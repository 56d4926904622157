#include "gpulab/predictions.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

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

// The one report the question is about, in a launched ({"ranks"}) or stepped ({"steps"}) run.
const nlohmann::json* report_for(const Prediction& prediction, const nlohmann::json& run) {
  if (run.contains("ranks") && run.at("ranks").is_array()) {
    for (const auto& rank : run.at("ranks"))
      if (rank.is_object() && rank.value("facts", nlohmann::json::object()).value("rank", -1) == prediction.rank) return &rank;
    const auto& ranks = run.at("ranks");
    return static_cast<std::size_t>(prediction.rank) < ranks.size() ? &ranks.at(static_cast<std::size_t>(prediction.rank)) : nullptr;
  }
  if (run.contains("steps") && run.at("steps").is_array()) {
    const auto& steps = run.at("steps");
    return static_cast<std::size_t>(prediction.step) < steps.size() ? &steps.at(static_cast<std::size_t>(prediction.step)) : nullptr;
  }
  return run.is_object() ? &run : nullptr;
}

// The observation labelled `at`, or the last one (observations are in the order taken).
const nlohmann::json* observation_for(const Prediction& prediction, const nlohmann::json& report) {
  if (!report.contains("observations") || !report.at("observations").is_array()) return nullptr;
  const nlohmann::json* found = nullptr;
  for (const auto& observation : report.at("observations"))
    if (prediction.at.empty() || observation.value("label", "") == prediction.at) found = &observation;
  return found;
}

std::set<int> gpus_used(const nlohmann::json& observation) {
  std::set<int> gpus;
  for (const auto& gpu : observation.value("gpus", nlohmann::json::array()))
    if (gpu.value("used_bytes", 0ULL) > 0 || gpu.value("context", false)) gpus.insert(gpu.value("physical_index", -1));
  return gpus;
}

}  // namespace

std::string answer_format(const Prediction& prediction) {
  if (prediction.observe == "tensor") return "a physical GPU number, or cpu";
  if (prediction.observe == "gpus_used") return "physical GPU numbers separated by commas, or none";
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
  if (prediction.observe == "gpus_used") {
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
  if (prediction.observe == "fact") {
    if (answer.empty()) return std::nullopt;
    return answer;
  }
  if (answer == "y" || answer == "yes" || answer == "true") return std::string("yes");
  if (answer == "n" || answer == "no" || answer == "false") return std::string("no");
  return std::nullopt;
}

std::optional<std::string> observed_answer(const Prediction& prediction, const nlohmann::json& run) {
  try {
    const nlohmann::json* report = report_for(prediction, run);
    if (report == nullptr || !report->is_object()) return std::nullopt;
    if (prediction.observe == "fact") {
      const auto facts = report->value("facts", nlohmann::json::object());
      if (!facts.contains(prediction.subject)) return std::nullopt;
      const auto& value = facts.at(prediction.subject);
      return trimmed_lower(value.is_string() ? value.get<std::string>() : value.dump());
    }
    if (prediction.observe == "error") {
      for (const auto& error : report->value("errors", nlohmann::json::array()))
        if (error.value("label", "").rfind(prediction.subject, 0) == 0) return std::string("yes");
      return std::string("no");
    }
    if (!report->contains("observations")) return std::nullopt;
    if (prediction.observe == "tensor") {
      // The last observation (labelled `at`, if given) that shows the tensor.
      std::optional<std::string> where;
      for (const auto& observation : report->at("observations")) {
        if (!prediction.at.empty() && observation.value("label", "") != prediction.at) continue;
        for (const auto& tensor : observation.value("tensors", nlohmann::json::array()))
          if (tensor.value("name", "") == prediction.subject)
            where = tensor.at("physical_index").is_number() ? std::to_string(tensor.at("physical_index").get<int>()) : "cpu";
      }
      return where;
    }
    const nlohmann::json* observation = observation_for(prediction, *report);
    if (observation == nullptr) return std::nullopt;
    const std::set<int> gpus = gpus_used(*observation);
    if (prediction.observe == "gpus_used") return joined(gpus);
    return std::string(gpus.count(std::stoi(prediction.subject)) ? "yes" : "no");  // gpu_memory
  } catch (const std::exception&) {
    return std::nullopt;  // a report that does not say (the schema is checked elsewhere)
  }
}

}  // namespace gpulab
