#include "course/manifest.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpulab {

const LessonEntry& Manifest::find(const std::string& id) const& {
  std::string wanted = id.substr(0, id.find('-'));
  const bool numeric = !wanted.empty() && std::all_of(wanted.begin(), wanted.end(), [](unsigned char c) { return std::isdigit(c); });
  if (numeric && wanted.size() == 1) wanted = "0" + wanted;
  for (const auto& lesson : lessons)
    if (lesson.id == wanted) return lesson;
  std::string known;
  for (const auto& lesson : lessons) known += (known.empty() ? "" : ", ") + lesson.id;
  throw ManifestError("there is no lesson '" + id + "'; the lessons are " + (known.empty() ? "(none)" : known) +
                      " (see `./gpulab list`)");
}

LessonEntry Manifest::find(const std::string& id) && { return static_cast<const Manifest&>(*this).find(id); }

Manifest load_manifest(const std::string& path) {
  const std::string file = path.empty() ? std::string(GPULAB_SOURCE_DIR) + "/lessons/manifest.json" : path;
  std::ifstream in(file);
  if (!in) throw ManifestError("cannot open the lesson manifest '" + file + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_manifest(text.str(), file);
}

namespace {
Prediction parse_prediction(const nlohmann::json& item, const std::string& file, const std::string& lesson) {
  Prediction prediction;
  prediction.question = item.at("question").get<std::string>();
  prediction.observe = item.at("observe").get<std::string>();
  prediction.subject = item.value("subject", std::string());
  prediction.at = item.value("at", std::string());
  prediction.rank = item.value("rank", 0);
  prediction.step = item.value("step", 0);
  prediction.why = item.at("why").get<std::string>();
  static const std::set<std::string> kinds = {"tensor", "gpus_used", "gpu_memory", "fact", "error", "succeeds"};
  const bool needs_subject = prediction.observe != "gpus_used" && prediction.observe != "error" &&
                             prediction.observe != "succeeds";
  if (kinds.count(prediction.observe) == 0 || (needs_subject && prediction.subject.empty()) || prediction.rank < 0 ||
      prediction.step < 0)
    throw ManifestError("lesson manifest '" + file + "': lesson " + lesson + ": prediction '" + prediction.question +
                        "' needs observe = tensor, gpus_used, gpu_memory, fact, error or succeeds (with a subject for "
                        "tensor, gpu_memory and fact) and a rank and step of 0 or more");
  if (item.contains("explain")) {
    const auto& explain = item.at("explain");
    Prediction::Explain parsed;
    parsed.question = explain.at("question").get<std::string>();
    parsed.choices = explain.at("choices").get<std::vector<std::string>>();
    const auto answer = explain.at("answer").get<std::int64_t>();
    // Letters a, b, c ... name the choices: more than 6 would not fit a line, fewer than 2 is no choice.
    if (parsed.choices.size() < 2 || parsed.choices.size() > 6 || answer < 0 ||
        answer >= static_cast<std::int64_t>(parsed.choices.size()))
      throw ManifestError("lesson manifest '" + file + "': lesson " + lesson + ": prediction '" + prediction.question +
                          "': explain needs 2 to 6 choices and an answer that is the index of one of them");
    parsed.answer = static_cast<std::size_t>(answer);
    prediction.explain = std::move(parsed);
  }
  return prediction;
}
}  // namespace

Manifest parse_manifest(std::string_view text, const std::string& file) {
  Manifest manifest;
  manifest.root = file.substr(0, file.rfind("/lessons/"));
  try {
    const auto document = nlohmann::json::parse(text.begin(), text.end());
    for (const auto& item : document.at("lessons")) {
      LessonEntry lesson;
      lesson.id = item.at("id").get<std::string>();
      lesson.slug = item.at("slug").get<std::string>();
      lesson.title = item.at("title").get<std::string>();
      lesson.claims = item.value("claims", std::vector<std::string>{});
      lesson.hints = item.value("hints", std::vector<std::string>{});
      lesson.goal = item.value("goal", std::string());
      lesson.stretch = item.value("stretch", std::string());
      for (const auto& question : item.value("predictions", nlohmann::json::array()))
        lesson.predictions.push_back(parse_prediction(question, file, lesson.id));
      if (item.contains("scenario")) {
        const auto& scenario = item.at("scenario");
        const nlohmann::json env = scenario.value("env", nlohmann::json::object());
        for (const auto& [name, value] : env.items())
          lesson.env.emplace_back(name, value.get<std::string>());
        lesson.args = scenario.value("args", std::vector<std::string>{});
        if (scenario.contains("launch")) {
          const auto& launch = scenario.at("launch");
          lesson.nproc_per_node = launch.at("nproc_per_node").get<int>();
          lesson.nnodes = launch.value("nnodes", 1);
          if (lesson.nproc_per_node < 1 || lesson.nproc_per_node > 64 || lesson.nnodes < 1 || lesson.nnodes > 8)
            throw ManifestError("lesson manifest '" + file + "': lesson " + lesson.id +
                                ": launch needs nproc_per_node from 1 to 64 and nnodes from 1 to 8");
        }
        for (const auto& item_step : scenario.value("steps", nlohmann::json::array())) {
          LessonEntry::Step step;
          step.title = item_step.at("title").get<std::string>();
          const nlohmann::json step_env = item_step.value("env", nlohmann::json::object());  // named: items() keeps no copy
          for (const auto& [name, value] : step_env.items())
            step.env.emplace_back(name, value.get<std::string>());
          step.args = item_step.value("args", std::vector<std::string>{});
          lesson.steps.push_back(std::move(step));
        }
        if (lesson.launched() && !lesson.steps.empty())
          throw ManifestError("lesson manifest '" + file + "': lesson " + lesson.id + " has both launch and steps");
      }
      manifest.lessons.push_back(std::move(lesson));
    }
  } catch (const nlohmann::json::exception& e) {
    throw ManifestError("lesson manifest '" + file + "' is malformed: " + e.what());
  }
  return manifest;
}

std::string LessonEntry::scenario_text() const {
  std::string scenario;
  for (const auto& [name, value] : env) scenario += fmt::format(" {}={}", name, value);
  if (launched()) scenario += fmt::format(" launched: {} node(s) x {} processes", nnodes, nproc_per_node);
  return scenario;
}

}  // namespace gpulab
