#include "lesson_run.h"

#include <cstdlib>
#include <stdexcept>

#include <catch2/catch.hpp>

namespace gpulab::test {

Target check_target() {
  const char* target = std::getenv("GPULAB_CHECK_TARGET");
  if (target != nullptr && std::string(target) == "exercise") return Target::Exercise;
  return Target::Solution;
}

std::string bin_dir() { return GPULAB_TEST_BIN_DIR; }
std::string source_dir() { return GPULAB_TEST_SOURCE_DIR; }

std::string program(const std::string& id, Target target) {
  return bin_dir() + (target == Target::Exercise ? "/lesson-" : "/solution-") + id;
}

std::string fresh_state_dir() {
  std::string pattern = "/tmp/gpulab-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

Node node(const std::string& name) { return load_node_file(source_dir() + "/nodes/" + name + ".json"); }

LessonRun parse_run(ProcessResult process) {
  LessonRun run;
  run.process = std::move(process);
  INFO("stdout:\n" << run.process.out << "\nstderr:\n" << run.process.err);
  const auto start = run.process.out.find('{');
  REQUIRE(start != std::string::npos);
  run.report = nlohmann::json::parse(run.process.out.substr(start), nullptr, /*allow_exceptions=*/false);
  REQUIRE_FALSE(run.report.is_discarded());
  return run;
}

LessonRun run_lesson(const std::string& id, const Env& env, const std::vector<std::string>& args, Target target) {
  ProcessOptions options;
  options.argv = {program(id, target)};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.argv.emplace_back("--json");
  options.env = {{"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"CUDA_DEVICE_ORDER", std::nullopt},
                 {"GPULAB_NODE", std::nullopt},
                 {"GPULAB_STATE_DIR", fresh_state_dir()}};
  options.env.insert(options.env.end(), env.begin(), env.end());
  options.timeout_s = 120;
  ProcessResult result = run_process(options);
  INFO(options.argv[0] << " " << result.outcome(options.timeout_s) << "\nstderr:\n" << result.err);
  REQUIRE_FALSE(result.timed_out);
  REQUIRE(result.signal == 0);
  return parse_run(std::move(result));
}

const nlohmann::json& LessonRun::observation(const std::string& label) const {
  std::string labels;
  for (const auto& o : report.at("observations")) {
    if (o.at("label") == label) return o;
    labels += "\n  '" + o.at("label").get<std::string>() + "'";
  }
  INFO("no observation labelled '" << label << "'; the report has:" << labels);
  for (const auto& e : report.at("errors")) INFO("error: " << e.dump());
  FAIL("observation missing");
  throw std::logic_error("unreachable");
}

std::map<int, std::uint64_t> LessonRun::usage(const std::string& label) const {
  std::map<int, std::uint64_t> used;
  for (const auto& gpu : observation(label).at("gpus"))
    used[gpu.at("physical_index").get<int>()] = gpu.at("used_bytes").get<std::uint64_t>();
  return used;
}

std::vector<int> LessonRun::contexts(const std::string& label) const {
  std::vector<int> physical;
  for (const auto& gpu : observation(label).at("gpus"))
    if (gpu.at("context").get<bool>()) physical.push_back(gpu.at("physical_index").get<int>());
  return physical;
}

namespace {
const nlohmann::json& find_tensor(const nlohmann::json& observation, const std::string& name) {
  for (const auto& t : observation.at("tensors"))
    if (t.at("name") == name) return t;
  INFO("observation '" << observation.at("label").get<std::string>() << "' names no tensor '" << name << "'");
  FAIL("tensor missing");
  throw std::logic_error("unreachable");
}
}  // namespace

int LessonRun::physical_of(const std::string& label, const std::string& tensor) const {
  const auto& t = find_tensor(observation(label), tensor);
  return t.at("physical_index").is_null() ? -1 : t.at("physical_index").get<int>();
}

std::string LessonRun::device_of(const std::string& label, const std::string& tensor) const {
  return find_tensor(observation(label), tensor).at("device").get<std::string>();
}

std::vector<std::string> LessonRun::errors(const std::string& label) const {
  std::vector<std::string> messages;
  for (const auto& e : report.at("errors"))
    if (e.at("label") == label) messages.push_back(e.at("message").get<std::string>());
  return messages;
}

const nlohmann::json& LessonRun::fact(const std::string& key) const {
  const auto& facts = report.at("facts");
  INFO("the report's facts: " << facts.dump());
  REQUIRE(facts.contains(key));
  return facts.at(key);
}

}  // namespace gpulab::test
