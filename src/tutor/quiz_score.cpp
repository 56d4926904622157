// Scoring a quiz (quiz_score.h).
#include "tutor/quiz_score.h"

#include <cctype>
#include <map>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "course/predictions.h"
#include "tutor/quiz_text.h"
#include "tutor/quiz_why.h"

namespace gpulab::tutor {
namespace {

using quiz::int_list;

// The scored rounds by idea: "05 a new thread's current device" -> right, asked.
std::map<std::string, std::pair<int, int>> by_topic(const nlohmann::json& rounds) {
  std::map<std::string, std::pair<int, int>> topics;
  for (const auto& r : rounds)
    if (r.at("scored").get<bool>()) {
      auto& [right, of] = topics[r.at("lesson").get<std::string>() + " " + r.at("topic").get<std::string>()];
      right += r.at("correct").get<bool>() ? 1 : 0;
      ++of;
    }
  return topics;
}

}  // namespace

QuizAnswer parse_answer(const std::string& typed) {
  std::string line = typed;
  for (char& c : line) c = c == ',' || c == ';' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.size() == 1 && words[0].rfind("err", 0) == 0) return {QuizAnswer::kError, {}};
  if (words.size() == 1 && (words[0] == "none" || words[0] == "cpu")) return {QuizAnswer::kGpus, {}};
  std::string list;
  for (const auto& w : words)
    if (w != "physical") list += (list.empty() ? "" : ",") + w;
  Prediction gpus_used;
  gpus_used.observe = "gpus_used";
  const auto canonical = canonical_answer(gpus_used, list);
  // The predictions' "none" spellings ("-", "no gpu") are not the quiz's: only the words above.
  if (!canonical || *canonical == "none") return {};
  return {QuizAnswer::kGpus, int_list(*canonical)};
}

bool correct(const QuizAnswer& answer, const QuizTruth& truth) {
  if (truth.error) return answer.kind == QuizAnswer::kError;
  return answer.kind == QuizAnswer::kGpus && answer.gpus == truth.gpus;
}

nlohmann::json round_json(int round, const QuizScenario& s, const std::string& answer, const QuizTruth& truth,
                          bool right, bool scored, const std::string& why) {
  const auto optional = [](const std::optional<std::string>& value) { return value ? nlohmann::json(*value) : nlohmann::json(); };
  nlohmann::json json = {{"round", round},
                         {"lesson", s.lesson},
                         {"topic", s.topic},
                         {"node", s.node},
                         {"env",
                          {{"CUDA_VISIBLE_DEVICES", optional(s.visible)},
                           {"CUDA_DEVICE_ORDER", optional(s.order)},
                           {"NVIDIA_VISIBLE_DEVICES", optional(s.container)}}},
                         {"code", code_text(s)},
                         {"answer", answer},
                         {"truth", truth_text(truth)},
                         {"error", truth.error ? nlohmann::json(truth.message) : nlohmann::json()},
                         {"correct", right},
                         {"scored", scored},
                         {"why", why}};
  auto& scenario = json["scenario"] = {{"code", code_name(s.code)}};
  if (s.code == QuizCode::kDataParallel) {
    scenario["device_ids"] = s.device_ids;
    scenario["model_on_cuda0"] = s.model_on_cuda0;
    scenario["batch_to_cuda"] = s.batch_to_cuda;
    scenario["ask_output"] = s.ask_output;
  } else {
    scenario["index"] = s.index;
  }
  if (s.code == QuizCode::kSetenvLate) scenario["setenv"] = s.setenv;
  if (s.code == QuizCode::kFork) scenario["fork_after_init"] = s.fork_after_init;
  if (s.code == QuizCode::kDeviceString) scenario["device_string"] = s.device_string;
  if (s.code == QuizCode::kGuard) {
    scenario["borrowed"] = s.borrowed;
    scenario["scoped"] = s.scoped;
    scenario["ask_memory"] = s.ask_memory;
  }
  if (s.code == QuizCode::kMixedDevice) {
    scenario["batch_to_cuda"] = s.batch_to_cuda;
    scenario["cpu_mask"] = s.cpu_mask;
  }
  if (s.code == QuizCode::kLocalRank || s.code == QuizCode::kNoSetDevice) json["env"]["LOCAL_RANK"] = std::to_string(s.index);
  if (s.code == QuizCode::kRank) json["env"]["RANK"] = std::to_string(s.index);
  return json;
}

void QuizTally::add(nlohmann::json round) {
  rounds.push_back(std::move(round));
  ++asked;
  if (!rounds.back().at("scored").get<bool>()) return;
  ++scored;
  score += rounds.back().at("correct").get<bool>() ? 1 : 0;
}

std::string QuizTally::summary_text() const {
  std::string text = fmt::format("\nscore: {}/{}\n", score, scored);
  // By idea: what to revisit. Only scored rounds count.
  const auto topics = by_topic(rounds);
  if (!topics.empty()) text += "by lesson (revisit the ones you missed with ./gpulab explain NN):\n";
  for (const auto& [topic, result] : topics) text += fmt::format("  {}/{}  lesson {}\n", result.first, result.second, topic);
  if (scored < asked)
    text += fmt::format("({} of {} rounds rested on gpulab's model of FASTEST_FIRST and were not scored)\n", asked - scored, asked);
  return text;
}

nlohmann::json QuizTally::document(std::uint32_t seed) const {
  nlohmann::json topics = nlohmann::json::object();
  for (const auto& [topic, result] : by_topic(rounds)) topics[topic] = {{"correct", result.first}, {"scored", result.second}};
  return {{"seed", seed},     {"rounds", rounds},   {"score", score},           {"asked", asked},
          {"scored", scored}, {"by_topic", topics}, {"ended_early", ended_early}};
}

}  // namespace gpulab::tutor
