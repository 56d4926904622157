#include "generated.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "expect.h"
#include "gpu_requirements.h"
#include "model/visibility.h"

namespace gpulab::test {

std::uint64_t generated_seed() {
  static const std::uint64_t seed = [] {
    const char* set = std::getenv("GPULAB_SEED");
    if (set != nullptr && *set != '\0') {
      char* end = nullptr;
      const unsigned long long value = std::strtoull(set, &end, 10);
      if (end != nullptr && *end == '\0') return static_cast<std::uint64_t>(value);
    }
    return static_cast<std::uint64_t>(std::random_device{}() % 1000000);  // short enough to type
  }();
  return seed;
}

ListKinds every_kind() {
  ListKinds kinds;
  kinds.spaces = kinds.uuids = kinds.mig = kinds.garbage = true;
  return kinds;
}

const std::vector<std::string>& simulated_nodes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> found;
    for (const auto& file : std::filesystem::directory_iterator(source_dir() + "/nodes"))
      if (file.path().extension() == ".json") found.push_back(file.path().stem().string());
    std::sort(found.begin(), found.end());  // the same draws from the same seed
    return found;
  }();
  return names;
}

int scenario_count(const Family& family) {
  const char* all = std::getenv("GPULAB_SCENARIOS");
  return all != nullptr && std::string(all) == "all" ? family.count : (family.count + 1) / 2;
}

std::string draw_one(Rng& rng, const std::vector<std::string>& names) {
  return names.at(std::uniform_int_distribution<std::size_t>(0, names.size() - 1)(rng));
}

int draw_int(Rng& rng, int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); }

std::string draw_visible_list(Rng& rng, const std::string& node_name, const ListKinds& kinds, int max_entries) {
  const Node drawn_on = node(node_name);
  const int gpu_count = static_cast<int>(drawn_on.gpus.size());
  std::vector<std::string> entries;
  std::vector<int> indices;  // the plain indices so far, for duplicates
  const int count = draw_int(rng, 1, max_entries);
  for (int i = 0; i < count; ++i) {
    const int index = draw_int(rng, 0, gpu_count - 1);
    // Mostly plain indices (two in three), so most lists still leave GPUs to use.
    std::vector<std::string> choices(4, std::to_string(index));
    if (kinds.duplicates && !indices.empty())
      choices.push_back(std::to_string(indices.at(static_cast<std::size_t>(draw_int(rng, 0, static_cast<int>(indices.size()) - 1)))));
    if (kinds.leading_zeros) choices.push_back("0" + std::to_string(index));
    if (kinds.out_of_range) choices.push_back(std::to_string(gpu_count + draw_int(rng, 0, 3)));
    if (kinds.negative) choices.push_back("-1");
    if (kinds.spaces) choices.push_back(draw_int(rng, 0, 1) == 0 ? " " + std::to_string(index) : std::to_string(index) + " ");
    const std::string& uuid = drawn_on.gpus.at(static_cast<std::size_t>(index)).uuid;
    if (kinds.uuids) {
      choices.push_back(uuid);
      choices.push_back(uuid.substr(0, static_cast<std::size_t>(draw_int(rng, 8, 14))));  // GPU-xxxx…: unique on every node here
    }
    if (kinds.mig)
      for (const auto& gpu : drawn_on.gpus)
        for (const auto& instance : gpu.mig) choices.push_back(instance.uuid);
    if (kinds.garbage) {
      choices.push_back("x");
      choices.push_back("");
    }
    std::string entry = draw_one(rng, choices);
    if (entry == std::to_string(index)) indices.push_back(index);
    entries.push_back(entry);
  }
  std::string list;
  for (std::size_t i = 0; i < entries.size(); ++i) list += (i == 0 ? "" : ",") + entries[i];
  return list;
}

std::string draw_list_with_gpus(Rng& rng, const std::string& node_name, const ListKinds& kinds, int max_entries) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string list = draw_visible_list(rng, node_name, kinds, max_entries);
    if (!visible_after(node_name, list).empty()) return list;
  }
  return "0";  // every kind of entry drawn hid the GPUs a hundred times: the first GPU alone
}

Place draw_place(Rng& rng, const std::vector<std::string>& nodes, double list_chance, bool repeats, int max_entries) {
  Place place;
  place.node = draw_one(rng, nodes);
  place.drawn.env = {{"GPULAB_NODE", place.node}};
  ListKinds kinds;
  kinds.negative = kinds.out_of_range = false;
  kinds.duplicates = repeats;
  std::optional<std::string> list;
  if (std::bernoulli_distribution(list_chance)(rng)) list = draw_list_with_gpus(rng, place.node, kinds, max_entries);
  if (list) place.drawn.env.emplace_back("CUDA_VISIBLE_DEVICES", *list);
  place.visible = static_cast<int>(visible_after(place.node, list).size());
  return place;
}

std::string draw_indices(Rng& rng, int visible, int count) {
  std::vector<int> indices(static_cast<std::size_t>(std::max(visible, 0)));
  for (int i = 0; i < visible; ++i) indices[static_cast<std::size_t>(i)] = i;
  std::shuffle(indices.begin(), indices.end(), rng);
  std::string text;
  for (int i = 0; i < std::min(visible, count); ++i) text += (text.empty() ? "" : ",") + std::to_string(indices[static_cast<std::size_t>(i)]);
  return text;
}

Generator device_ids_scenarios() {
  return [](Rng& rng) {
    Place place = draw_place(rng, {"dgx-a100"}, 0.5, /*repeats=*/false, 5);
    place.drawn.args = {"--device-ids", draw_indices(rng, place.visible, draw_int(rng, 1, 3))};
    return place.drawn;
  };
}

std::vector<int> visible_after(const std::string& node_name, const std::optional<std::string>& list,
                               const std::optional<std::string>& order) {
  std::vector<int> physical;
  for (const VisibleDevice& device :
       visible_devices(node(node_name), list, parse_device_order(order ? order->c_str() : nullptr)))
    physical.push_back(device.physical_index);
  return physical;
}

namespace {

// What the node observed of one run, and what the program said.
struct Seen {
  std::string failure;  ///< why there is nothing to compare ("" when there is)
  int exit_code = 0;
  nlohmann::json report;
  std::string said;     ///< its lesson.say lines (stderr under --json)
};

gpulab::ProcessOptions options_for(const std::string& program_path, const Drawn& drawn) {
  gpulab::ProcessOptions options;
  options.argv = {program_path};
  options.argv.insert(options.argv.end(), drawn.args.begin(), drawn.args.end());
  options.argv.emplace_back("--json");
  options.env = {{"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"CUDA_DEVICE_ORDER", std::nullopt},
                 {"GPULAB_NODE", std::nullopt},
                 {"NVIDIA_VISIBLE_DEVICES", std::nullopt},
                 {"GPULAB_STATE_DIR", fresh_state_dir()}};
  options.env.insert(options.env.end(), drawn.env.begin(), drawn.env.end());
  options.timeout_s = 60;
  return options;
}

// Runs off the test's thread: no Catch2 macro here.
Seen run_seen(const std::string& program_path, const Drawn& drawn) {
  const gpulab::ProcessOptions options = options_for(program_path, drawn);
  const gpulab::ProcessResult result = run_lesson_process(options, /*prestarted=*/true);
  Seen seen;
  seen.exit_code = result.exit_code;
  seen.said = result.err;
  if (!result.ok() && (result.timed_out || result.signal != 0)) {
    seen.failure = "the program " + result.outcome(options.timeout_s);
    return seen;
  }
  const auto start = result.out.find('{');
  if (start != std::string::npos) seen.report = nlohmann::json::parse(result.out.substr(start), nullptr, false);
  if (start == std::string::npos || seen.report.is_discarded() || !seen.report.is_object())
    seen.failure = "no lesson report (it printed: " + result.out.substr(0, 200) + result.err.substr(0, 200) + ")";
  return seen;
}

std::string command_line(const std::string& lesson, const Drawn& drawn) {
  std::string text = shown(drawn.env) + "lesson-" + lesson;
  for (const auto& arg : drawn.args) text += " " + (arg.find_first_of(" ,") != std::string::npos || arg.empty() ? "'" + arg + "'" : arg);
  return text;
}

// The error at each label: the message of a CUDA or LibTorch error (c10::…), whose words the
// learner's program cannot choose; "" for the program's own exception, whose words it may.
std::map<std::string, std::string> errors_of(const nlohmann::json& report) {
  std::map<std::string, std::string> errors;
  for (const auto& e : report.value("errors", nlohmann::json::array())) {
    const std::string type = e.value("type", "");
    std::string message = type.rfind("c10::", 0) == 0 ? e.value("message", "") : "";
    errors[e.value("label", "")] = message.substr(0, message.find('\n'));
  }
  return errors;
}

// The reference's message at `label`, its first line (its words are a hint, not a rule).
std::string reference_message(const nlohmann::json& report, const std::string& label) {
  for (const auto& e : report.value("errors", nlohmann::json::array()))
    if (e.value("label", "") == label) {
      const std::string message = e.value("message", "");
      return message.substr(0, message.find('\n'));
    }
  return "";
}

struct Placement {
  std::map<std::string, int> tensors;  ///< name → physical GPU (-1: not on a GPU)
  std::map<int, std::uint64_t> memory; ///< physical GPU → bytes
  std::set<int> contexts;
};

std::map<std::string, Placement> placements_of(const nlohmann::json& report) {
  std::map<std::string, Placement> placements;
  for (const auto& o : report.value("observations", nlohmann::json::array())) {
    Placement& p = placements[o.value("label", "")];
    for (const auto& t : o.value("tensors", nlohmann::json::array()))
      p.tensors[t.value("name", "")] = t.contains("physical_index") && t["physical_index"].is_number() ? t["physical_index"].get<int>() : -1;
    for (const auto& g : o.value("gpus", nlohmann::json::array())) {
      const int gpu = g.value("physical_index", -1);
      if (g.value("used_bytes", std::uint64_t{0}) > 0) p.memory[gpu] = g.value("used_bytes", std::uint64_t{0});
      if (g.value("context", false)) p.contexts.insert(gpu);
    }
  }
  return placements;
}

std::set<int> keys(const std::map<int, std::uint64_t>& memory) {
  std::set<int> gpus_with;
  for (const auto& [gpu, bytes] : memory) gpus_with.insert(gpu);
  return gpus_with;
}

// The first line of `text` holding `needle`, whatever the case ("" when none does).
std::string said_with(const std::string& text, const std::string& needle) {
  const auto lower = [](std::string word) {
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return word;
  };
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (lower(line).find(lower(needle)) != std::string::npos) return line;
  return "";
}

const char* const kAsReference = " (as the reference solution does)";

// The first difference between the two runs, as (expected, observed); none: both empty.
// Only what `family` compares: its labels (and "uncaught", where any error may end up).
template <typename T>
std::map<std::string, T> compared(const Family& family, std::map<std::string, T> all) {
  if (family.labels.empty()) return all;
  for (auto it = all.begin(); it != all.end();)
    it = it->first == "uncaught" || std::any_of(family.labels.begin(), family.labels.end(),
                                                [&](const std::string& prefix) { return it->first.rfind(prefix, 0) == 0; })
             ? std::next(it)
             : all.erase(it);
  return all;
}

std::pair<std::string, std::string> difference(const Family& family, const Seen& reference, const Seen& learner,
                                               const Drawn& drawn) {
  if (!learner.failure.empty()) return {"the program runs to its end", learner.failure};
  const auto want_errors = compared(family, errors_of(reference.report));
  const auto got_errors = compared(family, errors_of(learner.report));
  for (const auto& [label, message] : want_errors) {
    const auto got = got_errors.find(label);
    const std::string where = label == "uncaught" ? "the program stops with an error" : "an error at '" + label + "'";
    if (got == got_errors.end()) return {where + " (as the reference solution: \"" + reference_message(reference.report, label) + "\")", "no error"};
    if (!message.empty() && got->second != message) return {where + ": \"" + message + "\"" + kAsReference, "the error \"" + got->second + "\""};
  }
  for (const auto& [label, message] : got_errors)
    if (want_errors.count(label) == 0)
      return {"no error at '" + label + "'" + kAsReference,
              message.empty() ? "an error there" : "the error \"" + message + "\" there"};
  if (learner.exit_code != reference.exit_code)
    return {"exit code " + std::to_string(reference.exit_code) + kAsReference, "exit code " + std::to_string(learner.exit_code)};

  const auto want = compared(family, placements_of(reference.report));
  const auto got = placements_of(learner.report);
  for (const auto& [label, w] : want) {
    const auto g = got.find(label);
    if (g == got.end()) return {"an observation '" + label + "'" + kAsReference, "none"};
    for (const auto& [tensor, gpu] : w.tensors) {
      const auto t = g->second.tensors.find(tensor);
      const std::string where = t == g->second.tensors.end() ? "no tensor " + tensor : tensor + " " + placement(t->second);
      if (t == g->second.tensors.end() || t->second != gpu)
        return {tensor + " " + placement(gpu) + " (" + label + ")" + kAsReference, where};
    }
    if (g->second.contexts != w.contexts)
      return {"CUDA contexts on " + gpus(w.contexts) + " (" + label + ")" + kAsReference, "on " + gpus(g->second.contexts)};
    if (keys(g->second.memory) != keys(w.memory))
      return {"memory on " + gpus(keys(w.memory)) + " (" + label + ")" + kAsReference, "on " + gpus(keys(g->second.memory))};
    for (const auto& [gpu, bytes] : w.memory) {
      const std::uint64_t other = g->second.memory.at(gpu);
      const std::uint64_t apart = other > bytes ? other - bytes : bytes - other;
      if (apart > family.memory_slack)
        return {"about " + mib(bytes) + " on " + gpus({gpu}) + " (" + label + ")" + kAsReference, mib(other)};
    }
  }
  for (const auto& key : family.facts) {
    const auto& want_facts = reference.report.value("facts", nlohmann::json::object());
    const auto& got_facts = learner.report.value("facts", nlohmann::json::object());
    if (!want_facts.contains(key)) continue;
    if (!got_facts.contains(key)) return {"the fact " + key + " = " + want_facts[key].dump() + kAsReference, "no fact " + key};
    if (got_facts[key] != want_facts[key])
      return {"the fact " + key + " = " + want_facts[key].dump() + kAsReference, key + " = " + got_facts[key].dump()};
  }
  for (const auto& needle : family.said) {
    const std::string want_line = said_with(reference.said, needle);
    const std::string got_line = said_with(learner.said, needle);
    if (!want_line.empty() && got_line.empty()) return {"a line that says \"" + want_line + "\"" + kAsReference, "no such line"};
    if (want_line.empty() && !got_line.empty()) return {"no line about \"" + needle + "\"" + kAsReference, "\"" + got_line + "\""};
  }
  if (family.also) return family.also(learner.report, drawn);
  return {};
}

}  // namespace

void check_against_reference(const Family& family) {
  GPULAB_REQUIRE_SIMULATED_NODE("generated scenarios draw simulated nodes");
  const std::string reference_path = program(family.lesson, Target::Solution);
  const std::string learner_path = program(family.lesson);
  if (!std::filesystem::exists(reference_path)) {
    WARN("the generated scenarios (" << family.what << ") compare with the reference solution, which this edition does not have: skipped");
    return;
  }
  const std::uint64_t seed = generated_seed();
  // The lesson's own stream of scenarios: the same seed draws different scenarios per lesson.
  Rng rng(seed * 1000003ull + std::hash<std::string>{}(family.lesson + family.what));
  std::vector<Drawn> drawn;
  for (int i = 0; i < scenario_count(family); ++i) drawn.push_back(family.draw(rng));

  // Two runs at a time (the two cores): each scenario's reference and learner side by side,
  // until the first that differs (a wrong answer's verdict comes at once).
  const bool same_program = reference_path == learner_path;
  std::size_t differing = 0;
  std::pair<std::string, std::string> first;
  for (std::size_t i = 0; i < drawn.size() && differing == 0; ++i) {
    auto reference = std::async(std::launch::async, [&, i] { return run_seen(reference_path, drawn[i]); });
    const Seen learner = same_program ? Seen{} : run_seen(learner_path, drawn[i]);
    const Seen want = reference.get();
    // A generator must draw what the reference runs through; say so as a fault of the checks.
    INFO("generated scenario " << i + 1 << ": " << command_line(family.lesson, drawn[i]));
    require_that(want.failure.empty(), "the reference solution runs this generated scenario (a fault of the checks)",
                 want.failure);
    if (same_program) continue;
    const auto diff = difference(family, want, learner, drawn[i]);
    if (diff.first.empty()) continue;
    differing = i + 1;
    first = diff;
  }
  if (differing == 0) return;
  INFO("scenario: " << command_line(family.lesson, drawn[differing - 1]) << "\n(generated: " << family.what
                    << "; scenario " << differing << " of " << drawn.size() << " drawn, compared with the reference solution; GPULAB_SEED="
                    << seed << " ./gpulab check " << family.lesson << " draws the same ones)");
  expect_that(false, first.first, first.second);
}

}  // namespace gpulab::test
