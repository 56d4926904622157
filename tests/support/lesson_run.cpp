#include "lesson_run.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "gpu_requirements.h"
#include "proc/confine.h"
#include "proc/prestart.h"
#include "report/program_ends.h"
#include "report/report_reader.h"
#include "model/visibility.h"

namespace gpulab::test {

namespace {
constexpr const char* kMutantPrefix = "mutant:";
constexpr const char* kVariantPrefix = "variant:";
std::string check_target_setting() {
  const char* target = std::getenv("GPULAB_CHECK_TARGET");
  return target == nullptr ? "" : target;
}
}  // namespace

Target check_target() {
  const std::string target = check_target_setting();
  if (target == "exercise") return Target::Exercise;
  if (target.rfind(kMutantPrefix, 0) == 0) return Target::Mutant;
  if (target.rfind(kVariantPrefix, 0) == 0) return Target::Variant;
  return Target::Solution;
}

std::string shown(const Env& env) {
  std::string text;
  for (const auto& [name, value] : env) text += name + "=" + (value ? "\"" + *value + "\"" : "(unset)") + " ";
  return text.empty() ? "nothing set " : text;
}

std::string bin_dir() { return GPULAB_TEST_BIN_DIR; }
std::string source_dir() { return GPULAB_TEST_SOURCE_DIR; }

std::string program(const std::string& id, Target target) {
  switch (target) {
    case Target::Exercise: {
      // A student's exercises built apart from this build (gpulab check all --root).
      const char* apart = std::getenv("GPULAB_CHECK_PROGRAMS");
      return (apart != nullptr && *apart != '\0' ? std::string(apart) : bin_dir()) + "/lesson-" + id;
    }
    case Target::Mutant: return bin_dir() + "/mutant-" + id + "-" + check_target_setting().substr(std::string(kMutantPrefix).size());
    case Target::Variant:
      return bin_dir() + "/variant-" + id + "-" + check_target_setting().substr(std::string(kVariantPrefix).size());
    case Target::Solution: break;
  }
  // In a grading box the references are apart, where only the checks see them (confine.h).
  const char* references = std::getenv(gpulab::kReferenceVariable);
  return (references != nullptr && *references != '\0' ? std::string(references) : bin_dir()) + "/solution-" + id;
}

namespace {
// State folders made for this test process; removed when it exits (its children are done).
struct StateDirs {
  std::mutex mutex;
  std::vector<std::string> paths;
  ~StateDirs() {
    std::error_code ignored;
    for (const auto& path : paths) std::filesystem::remove_all(path, ignored);
  }
};
StateDirs& state_dirs() {
  static StateDirs dirs;
  return dirs;
}
}  // namespace

std::string fresh_state_dir() {
  const std::string pattern = fresh_run_folder("gpulab-test");  // in a grading box, where its runs can write
  std::lock_guard<std::mutex> lock(state_dirs().mutex);
  state_dirs().paths.push_back(pattern);
  return pattern;
}

Node node(const std::string& name) { return load_node_file(source_dir() + "/nodes/" + name + ".json"); }

namespace {
std::optional<std::string> setting(const Env& env, const std::string& name) {
  std::optional<std::string> value;
  for (const auto& [key, v] : env)
    if (key == name) value = v;  // the last setting wins, as in run_scenario
  return value;
}

std::string node_name(const Env& env) { return setting(env, "GPULAB_NODE").value_or(kDefaultNodeName); }

// `gpulab <command> --json` with every GPU visible, under env's GPULAB_NODE and CUDA_DEVICE_ORDER.
nlohmann::json ask_gpulab(const std::string& command, const Env& env) {
  ProcessOptions options;
  options.argv = {bin_dir() + "/gpulab", command, "--json"};
  options.env = {{"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"CUDA_DEVICE_ORDER", setting(env, "CUDA_DEVICE_ORDER")},
                 {"GPULAB_NODE", setting(env, "GPULAB_NODE")},
                 {"NVIDIA_VISIBLE_DEVICES", std::nullopt},
                 {"GPULAB_STATE_DIR", fresh_state_dir()}};
  options.timeout_s = 60;
  const ProcessResult result = run_process(options);
  if (!result.ok())
    throw std::runtime_error("gpulab " + command + " --json " + result.outcome(options.timeout_s) + ":\n" + result.err);
  return nlohmann::json::parse(result.out);
}

// Computes a value once per key (the helpers' answers do not change during a run).
template <typename T, typename Make>
const T& cached(std::map<std::string, T>& cache, const std::string& key, Make make) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(key);
  if (found == cache.end()) found = cache.emplace(key, make()).first;
  return found->second;
}
}  // namespace

bool simulated(const Env& env) {
  static const bool sim = gpu_inventory(env).backend == Backend::kSim;  // the same under every env: asked once
  return sim;
}

int physical_gpus(const Env& env) {
  return simulated(env) ? static_cast<int>(node(node_name(env)).gpus.size()) : gpu_inventory(env).physical_gpus;
}

std::vector<int> cuda_order(const Env& env) {
  const auto order = setting(env, "CUDA_DEVICE_ORDER");
  if (simulated(env)) return enumeration_order(node(node_name(env)), parse_device_order(order ? order->c_str() : nullptr));
  static std::map<std::string, std::vector<int>> cache;
  return cached(cache, order.value_or("(unset)"), [&] {
    const auto devices = ask_gpulab("devices", env);
    std::vector<int> physical;
    for (const auto& device : devices.at("devices"))
      physical.push_back(device.at("physical_index").get<int>());
    return physical;
  });
}

std::vector<int> physical_of_entries(const std::vector<int>& entries, const Env& env) {
  const auto order = cuda_order(env);
  std::vector<int> physical;
  for (const int entry : entries) physical.push_back(order.at(static_cast<std::size_t>(entry)));
  return physical;
}

std::vector<int> visible_physical(const std::optional<std::string>& integer_list, const Env& env) {
  if (!integer_list) return cuda_order(env);
  if (simulated(env)) {  // any list: the simulator's own rule (UUIDs, prefixes, bad entries)
    const auto order = setting(env, "CUDA_DEVICE_ORDER");
    std::vector<int> physical;
    for (const VisibleDevice& device : visible_devices(node(node_name(env)), integer_list,
                                                       parse_device_order(order ? order->c_str() : nullptr)))
      physical.push_back(device.physical_index);
    return physical;
  }
  std::vector<int> entries;
  for (std::string::size_type start = 0; start <= integer_list->size();) {
    const auto comma = integer_list->find(',', start);
    entries.push_back(std::stoi(integer_list->substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return physical_of_entries(entries, env);
}

std::vector<std::string> gpu_uuids(const Env& env) {
  std::vector<std::string> uuids;
  if (simulated(env)) {
    for (const auto& gpu : node(node_name(env)).gpus) uuids.push_back(gpu.uuid);
    return uuids;
  }
  static std::map<std::string, std::vector<std::string>> cache;
  return cached(cache, "", [&] {
    const auto smi = ask_gpulab("smi", env);
    for (const auto& gpu : smi.at("gpus")) uuids.push_back(gpu.at("uuid").get<std::string>());
    return uuids;
  });
}

LessonRun parse_run(ProcessResult process) {
  LessonRun run;
  run.process = std::move(process);
  INFO("stdout:\n" << run.process.out << "\nstderr:\n" << run.process.err);
  const auto start = run.process.out.find('{');
  REQUIRE(start != std::string::npos);
  const std::string text = run.process.out.substr(start);
  run.report = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  REQUIRE_FALSE(run.report.is_discarded());
  // Every report a check reads follows docs/report-schema.md, field by field.
  REQUIRE_NOTHROW(parse_report(text));
  return run;
}

namespace {
// A lesson program runs once as a prestarted parent (proc/prestart.h) that forks each
// scenario's run: a run starts in milliseconds instead of paying LibTorch's start-up again,
// and still reads its own environment at its first CUDA call. GPULAB_PRESTART_RUNS=0 starts
// every run afresh (to compare, or to rule the parent out).
std::optional<ProcessResult> run_prestarted(const ProcessOptions& options) {
  const char* setting = std::getenv("GPULAB_PRESTART_RUNS");
  if (setting != nullptr && std::string(setting) == "0") return std::nullopt;
  // Only this build's own programs and a box's reference solutions (a lesson started
  // through a shell script is not one), and only on the simulated node: on real GPUs the
  // parent refuses (backend.h), so it would be one more start per program.
  const char* references = std::getenv(gpulab::kReferenceVariable);  // a box's (confine.h)
  const auto in = [&](const std::string& folder) { return !folder.empty() && options.argv.at(0).rfind(folder + "/", 0) == 0; };
  if (!(in(bin_dir()) || in(references != nullptr ? references : "")) || !simulated()) return std::nullopt;
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<PrestartedProgram>> parents;
  PrestartedProgram* parent = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = parents[options.argv.at(0)];
    if (!slot) slot = std::make_unique<PrestartedProgram>(options.argv.at(0));
    parent = slot.get();
  }
  return parent->run(options);
}
}  // namespace

ProcessResult run_lesson_process(const ProcessOptions& options, bool prestarted) {
  std::optional<ProcessResult> forked = prestarted ? run_prestarted(options) : std::nullopt;
  ProcessResult result;
  if (forked) {
    result = std::move(*forked);
  } else {
    ProcessOptions fresh = options;
    fresh.argv = confined(options.argv);  // in a grading box, out of the checks' reach
    result = run_process(fresh);
    program_end_of_confined(result);
  }
  // `gpulab check` reads this to tell the learner their program crashed or hung, and to
  // exit with the matching code (gpulab::Outcome, src/report/outcome.h).
  const char* file = std::getenv("GPULAB_CHECK_OUTCOMES");
  if (file != nullptr && (result.signal != 0 || result.timed_out))
    std::ofstream(file, std::ios::app) << program_end_line(
        {std::filesystem::path(options.argv.at(0)).filename().string(), result.outcome(options.timeout_s)});
  return result;
}

LessonRun run_report_program(const std::string& path, const std::vector<std::string>& args, const Env& env,
                             double timeout_s, bool prestarted) {
  ProcessOptions options;
  options.argv = {path};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.argv.emplace_back("--json");
  options.env = {{"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"CUDA_DEVICE_ORDER", std::nullopt},
                 {"GPULAB_NODE", std::nullopt},
                 {"NVIDIA_VISIBLE_DEVICES", std::nullopt},  // the simulated node plays a container only when asked
                 {"GPULAB_STATE_DIR", fresh_state_dir()}};
  options.env.insert(options.env.end(), env.begin(), env.end());
  options.timeout_s = timeout_s;
  ProcessResult result = run_lesson_process(options, prestarted);
  INFO(options.argv[0] << " " << result.outcome(options.timeout_s) << "\nstderr:\n" << result.err);
  REQUIRE_FALSE(result.timed_out);
  REQUIRE(result.signal == 0);
  return parse_run(std::move(result));
}

LessonRun run_scenario(const std::string& id, const Env& env, const std::vector<std::string>& args, Target target) {
  return run_report_program(program(id, target), args, env, /*timeout_s=*/120, /*prestarted=*/true);
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
