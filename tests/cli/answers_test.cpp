// The predictions as a whole, from real runs: every lesson as shipped, in its scenario,
// through `./gpulab run NN --json`.
// - Guessing does not pay: no constant answer ("yes", "0", "all", the first listed GPU ...)
//   scores more than a third of all predictions, nor does the best constant per kind of
//   question, and no letter is right in more than a third of the explain questions.
// - What a lesson's EXPLAIN.md states about the shipped run is what the run shows: each
//   `<!-- run: {...} -->` note beside a stated fact is checked like a prediction.
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "course/manifest.h"
#include "course/predictions.h"
#include "lesson_run.h"
#include "model/node.h"
#include "proc/process.h"

using namespace gpulab;
using namespace gpulab::test;

namespace {

// `./gpulab run NN --json` as shipped, in the lesson's scenario, on a fresh node.
RunDocument shipped_run(const LessonEntry& lesson) {
  ProcessOptions options;
  options.argv = {source_dir() + "/gpulab", "run", lesson.id, "--json"};
  options.env = {{"GPULAB_BUILD_DIR", std::string(GPULAB_TEST_BUILD_DIR)},
                 {"GPULAB_STATE_DIR", fresh_state_dir()},
                 {"GPULAB_PROGRESS_FILE", fresh_state_dir() + "/progress"},
                 {"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"CUDA_DEVICE_ORDER", std::nullopt},
                 {"GPULAB_NODE", std::nullopt}};
  options.working_directory = source_dir();
  options.timeout_s = 300;
  const ProcessResult result = run_process(options);
  INFO("lesson " << lesson.id << ": " << result.err);
  return parse_run_document(result.out);
}

// The kind of answer a question takes: what a constant guess is typed into.
std::string kind_of(const Prediction& p) {
  if (p.observe == "error" || p.observe == "succeeds" || p.observe == "gpu_memory") return "yes/no";
  return p.observe;  // tensor, gpus_used, fact
}

// "2,3,4,5" -> "2"; the first GPU a scenario lists (the guess "the first listed GPU").
std::string first_listed(const LessonEntry& lesson) {
  for (const auto& [name, value] : lesson.env)
    if (name == "CUDA_VISIBLE_DEVICES") return value.substr(0, value.find(','));
  return "0";
}

// "0,1,...,n-1" for the node the prediction's run was on (the guess "all").
std::string all_gpus(const Prediction& p, const RunDocument& run) {
  const std::size_t part = run.kind == RunDocument::Kind::kSteps ? static_cast<std::size_t>(p.step) : 0;
  if (part >= run.parts.size() || !run.parts[part].report) return "?";
  const Node node = load_node_file(resolve_node_path(run.parts[part].report->node));
  std::string all;
  for (std::size_t gpu = 0; gpu < node.gpus.size(); ++gpu) all += (gpu == 0 ? "" : ",") + std::to_string(gpu);
  return all;
}

struct Asked {
  std::string lesson, kind, observed, first_listed, all;
};

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream all;
  all << in.rdbuf();
  return all.str();
}

}  // namespace

TEST_CASE("guessing does not pay, and EXPLAIN.md states what the shipped run shows", "[answers]") {
  const Manifest manifest = load_manifest();
  std::vector<Asked> asked;
  int facts_checked = 0;
  for (const auto& lesson : manifest.lessons) {
    const RunDocument run = shipped_run(lesson);
    for (const auto& p : lesson.predictions) {
      const auto observed = observed_answer(p, run);
      INFO("lesson " << lesson.id << ": " << p.question);
      REQUIRE(observed.has_value());
      asked.push_back({lesson.id, kind_of(p), *observed, first_listed(lesson), all_gpus(p, run)});
    }
    // <!-- run: {"observe": "tensor", "subject": "x", "answer": "3"} --> beside a fact.
    const std::string explain = text_of(manifest.root + "/lessons/" + lesson.directory() + "/EXPLAIN.md");
    static const std::regex note(R"(<!-- run: (\{[^}]*\}) -->)");
    for (auto it = std::sregex_iterator(explain.begin(), explain.end(), note); it != std::sregex_iterator(); ++it) {
      const auto json = nlohmann::json::parse((*it)[1].str());
      Prediction fact;
      fact.observe = json.at("observe").get<std::string>();
      fact.subject = json.value("subject", std::string());
      fact.at = json.value("at", std::string());
      fact.rank = json.value("rank", 0);
      fact.step = json.value("step", 0);
      const auto seen = observed_answer(fact, run);
      INFO("lesson " << lesson.id << " EXPLAIN.md states " << (*it)[1].str() << "; the run shows "
                     << seen.value_or("nothing about it"));
      CHECK(seen == std::optional<std::string>(json.at("answer").get<std::string>()));
      ++facts_checked;
    }
  }
  const auto total = static_cast<int>(asked.size());
  INFO(total << " predictions");
  REQUIRE(total >= 20);

  // Every constant a learner might type, over every prediction.
  std::set<std::string> guesses = {"yes", "no", "cpu", "none", "all", "first listed"};
  for (int n = 0; n <= 8; ++n) guesses.insert(std::to_string(n));
  for (const auto& guess : guesses) {
    int right = 0;
    for (const auto& a : asked) {
      if (guess == "first listed") right += a.kind == "tensor" && a.observed == a.first_listed ? 1 : 0;
      else if (guess == "all") right += a.kind == "gpus_used" && a.observed == a.all ? 1 : 0;
      else right += a.observed == guess ? 1 : 0;
    }
    INFO("the constant guess \"" << guess << "\" scores " << right << " of " << total);
    CHECK(3 * right <= total);
  }
  // The best constant for each kind of question, together (yes/no, a GPU, a list, a number).
  std::map<std::string, std::map<std::string, int>> by_kind;
  for (const auto& a : asked) ++by_kind[a.kind][a.kind == "gpus_used" && a.observed == a.all ? "all" : a.observed];
  int best = 0;
  std::string strategy;
  for (const auto& [kind, answers] : by_kind) {
    const auto top = std::max_element(answers.begin(), answers.end(),
                                      [](const auto& x, const auto& y) { return x.second < y.second; });
    best += top->second;
    strategy += kind + ": \"" + top->first + "\" (" + std::to_string(top->second) + ") ";
  }
  INFO("the best constant per kind of question, " << strategy << "scores " << best << " of " << total);
  CHECK(3 * best <= total);

  // The explain questions: no letter is the answer more than a third of the time.
  std::map<std::size_t, int> letters;
  int explains = 0;
  for (const auto& lesson : manifest.lessons)
    for (const auto& p : lesson.predictions)
      if (p.explain) {
        ++letters[p.explain->answer];
        ++explains;
      }
  for (const auto& [letter, count] : letters) {
    INFO("explain answer " << static_cast<char>('a' + letter) << " is right in " << count << " of " << explains);
    CHECK(3 * count <= explains);
  }
  CHECK(facts_checked > 0);
}
