// gpulab quiz: random placement scenarios (a node, CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER,
// a line of LibTorch); the learner names the physical GPU(s) or "error". The truth comes
// from running the scenario on the simulated node (bin/quiz-probe), never from a second
// copy of CUDA's rules here. Answers are read line by line, so a pipe can play (docs/quiz.md).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "exit_codes.h"
#include "gpulab/node.h"
#include "gpulab/process.h"
#include "gpulab/report_reader.h"
#include "gpulab/visibility.h"

namespace gpulab::cli {
namespace {

struct QuizOptions {
  std::optional<std::int64_t> seed;
  int rounds = 5;
  bool json = false;
};

enum class Code { Ones, SetDevice, LocalRank, DataParallel };

struct Scenario {
  std::string node;
  std::optional<std::string> visible;  // CUDA_VISIBLE_DEVICES, nullopt: unset
  std::optional<std::string> order;    // CUDA_DEVICE_ORDER, nullopt: unset
  Code code = Code::Ones;
  int index = 0;                // the CUDA index (Ones, SetDevice) or LOCAL_RANK
  std::vector<int> device_ids;  // DataParallel
  bool model_on_cuda0 = false;  // DataParallel: model->to(torch::kCUDA), the article's mistake
};

// What running the scenario showed.
struct Truth {
  bool error = false;
  std::string message;
  std::vector<int> gpus;     // sorted physical GPUs (empty and no error: it stayed on the CPU)
  std::vector<int> visible;  // physical GPU of cuda:0, cuda:1, ... in that process
};

// Portable draws: the standard distributions differ between standard libraries, and a
// seed must replay the same quiz everywhere.
class Draw {
 public:
  explicit Draw(std::uint32_t seed) : rng_(seed) {}
  int below(int n) { return static_cast<int>(rng_() % static_cast<std::uint32_t>(n)); }
  // `count` distinct values in [0, n), in drawn order.
  std::vector<int> distinct(int n, int count) {
    std::vector<int> pool(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) pool[static_cast<std::size_t>(i)] = i;
    std::vector<int> out;
    for (int k = 0; k < count && !pool.empty(); ++k) {
      const auto at = pool.begin() + below(static_cast<int>(pool.size()));
      out.push_back(*at);
      pool.erase(at);
    }
    return out;
  }

 private:
  std::mt19937 rng_;
};

std::string join(const std::vector<int>& values, const std::string& separator = ",") {
  std::string text;
  for (int v : values) text += (text.empty() ? "" : separator) + std::to_string(v);
  return text;
}

Node load(const std::string& name) { return load_node_file(resolve_node_path(name)); }

// CUDA_VISIBLE_DEVICES: mostly plain lists, and each edge case CUDA handles silently.
std::optional<std::string> draw_visible(Draw& draw, const Node& node) {
  const int n = static_cast<int>(node.gpus.size());
  const auto uuid = [&](int gpu) { return node.gpus[static_cast<std::size_t>(gpu)].uuid.substr(0, 12); };
  if (node.name == "mig-a100") {  // a MIG GPU in the list hides every whole GPU
    const std::optional<std::string> choices[] = {std::nullopt, "1", "1,0", "0,1",
                                                  node.gpus[0].mig.at(1).uuid.substr(0, 12)};
    return choices[draw.below(5)];
  }
  const auto pair = draw.distinct(n, 2);
  const std::string a = std::to_string(pair[0]), b = std::to_string(pair[1]);
  switch (draw.below(10)) {
    case 0: case 1: return std::nullopt;
    case 2: return a + "," + a + (draw.below(2) ? "" : "," + b);                         // duplicate
    case 3: return a + "," + (draw.below(2) ? "-1" : "x") + "," + b;                     // invalid entry
    case 4: return a + "," + std::to_string(n + draw.below(3)) + "," + b;               // out of range
    case 5: return std::string();                                                        // empty
    case 6: return draw.below(2) ? uuid(pair[0]) : uuid(pair[0]) + "," + uuid(pair[1]);  // UUID prefixes
    default: return join(draw.distinct(n, 1 + draw.below(std::min(4, n))));
  }
}

Scenario draw_scenario(Draw& draw) {
  Scenario s;
  const char* nodes[] = {"dgx-a100", "dgx-a100", "workstation-mixed", "workstation-mixed", "mig-a100"};
  s.node = nodes[draw.below(5)];
  const Node node = load(s.node);
  s.visible = draw_visible(draw, node);
  if (s.node == "workstation-mixed") {
    const std::optional<std::string> orders[] = {std::nullopt, "FASTEST_FIRST", "PCI_BUS_ID"};
    s.order = orders[draw.below(3)];
  } else if (s.node == "dgx-a100" && draw.below(4) == 0) {
    s.order = "PCI_BUS_ID";
  }
  // Indices range over the entries listed, and one past them: sometimes there is no such device.
  const int listed = !s.visible ? static_cast<int>(node.gpus.size())
                     : s.visible->empty() ? 0
                                          : 1 + static_cast<int>(std::count(s.visible->begin(), s.visible->end(), ','));
  s.code = static_cast<Code>(draw.below(s.node == "mig-a100" ? 3 : 4));
  // Indices mostly within the entries listed; now and then one past them.
  const int past = draw.below(4) == 0 ? 1 : 0;
  s.index = draw.below(std::max(listed, 1) + past);
  if (s.code == Code::DataParallel) {
    s.device_ids = draw.distinct(std::max(listed, 2) + past, 2 + draw.below(2));
    s.model_on_cuda0 = draw.below(3) == 0;
  }
  return s;
}

// ---- showing a round -----------------------------------------------------------------

std::string env_text(const Scenario& s) {
  const auto show = [](const char* name, const std::optional<std::string>& value) {
    if (!value) return fmt::format("{} unset", name);
    return value->empty() || value->find(' ') != std::string::npos ? fmt::format("{}=\"{}\"", name, *value)
                                                                   : fmt::format("{}={}", name, *value);
  };
  std::string text = show("CUDA_VISIBLE_DEVICES", s.visible) + "  " + show("CUDA_DEVICE_ORDER", s.order);
  if (s.code == Code::LocalRank) text += "  LOCAL_RANK=" + std::to_string(s.index);
  return text;
}

std::vector<std::string> node_text(const Node& node, bool with_uuids) {
  const auto& g = node.gpus;
  const bool alike = std::all_of(g.begin(), g.end(), [&](const Gpu& x) { return x.name == g[0].name; });
  const bool mig = std::any_of(g.begin(), g.end(), [](const Gpu& x) { return x.mig_mode; });
  std::vector<std::string> lines = {fmt::format("{}, {} GPUs", node.name, g.size())};
  if (alike) lines[0] += fmt::format(": GPU 0-{}, all {}", g.size() - 1, g[0].name);
  if (alike && !with_uuids && !mig) return lines;
  for (std::size_t i = 0; i < g.size(); ++i) {
    std::string line = alike ? fmt::format("  GPU {}", i)
                             : fmt::format("  GPU {} {} (compute {}.{}, {} SMs)", i, g[i].name, g[i].cc_major, g[i].cc_minor, g[i].sm_count);
    if (with_uuids) line += " " + g[i].uuid.substr(0, 12) + "...";
    if (g[i].mig_mode) {
      line += ", MIG mode:";
      for (const auto& m : g[i].mig) line += " " + m.uuid.substr(0, 12) + "...";
    }
    lines.push_back(line);
  }
  if (!alike) {  // the speed ranking the node file gives (display only: CUDA's order is the probe's)
    std::vector<std::size_t> fastest(g.size());
    for (std::size_t i = 0; i < g.size(); ++i) fastest[i] = i;
    std::stable_sort(fastest.begin(), fastest.end(), [&](std::size_t a, std::size_t b) {
      return std::tie(g[a].cc_major, g[a].cc_minor, g[a].sm_count) > std::tie(g[b].cc_major, g[b].cc_minor, g[b].sm_count);
    });
    std::string order;
    for (std::size_t i : fastest) order += (order.empty() ? "GPU " : ", GPU ") + std::to_string(i);
    lines.push_back("  speed, fastest first: " + order);
  }
  return lines;
}

const char* code_name(Code code) {
  const char* names[] = {"ones", "set_device", "local_rank", "data_parallel"};
  return names[static_cast<int>(code)];
}

std::string cuda(int index) { return "cuda:" + std::to_string(index); }

std::vector<std::string> code_text(const Scenario& s) {
  const std::string i = std::to_string(s.index);
  switch (s.code) {
    case Code::Ones: return {"auto x = torch::ones({1}, torch::Device(torch::kCUDA, " + i + "));"};
    case Code::SetDevice:
      return {"gpulab::cuda::set_device(" + i + ");  // torch.cuda.set_device(" + i + ")",
              "auto x = torch::ones({1}, torch::kCUDA);"};
    case Code::LocalRank:
      return {"const int local_rank = std::stoi(std::getenv(\"LOCAL_RANK\"));",
              "auto x = torch::ones({1}, torch::Device(torch::kCUDA, local_rank));"};
    case Code::DataParallel:
      return {"torch::nn::Linear model(16, 4);",
              s.model_on_cuda0 ? "model->to(torch::kCUDA);"
                               : "model->to(torch::Device(torch::kCUDA, " + std::to_string(s.device_ids[0]) + "));",
              "gpulab::DataParallel parallel(model, {" + join(s.device_ids, ", ") + "});  // nn.DataParallel(model, device_ids=[" +
                  join(s.device_ids, ", ") + "])",
              "auto y = parallel.forward(torch::randn({8, 16}));"};
  }
  return {};
}

std::string question_text(const Scenario& s) {
  return s.code == Code::DataParallel ? "the physical GPUs that run a replica (that hold this process's memory after forward)"
                                      : "the physical GPU that holds x";
}

// ---- the truth: the scenario run on the simulated node --------------------------------

std::vector<int> int_list(const std::string& text) {
  std::vector<int> values;
  std::istringstream in(text);
  for (std::string entry; std::getline(in, entry, ',');) values.push_back(std::stoi(entry));
  return values;
}

Truth run_scenario(const Scenario& s) {
  ProcessOptions process;
  process.argv = {bin_dir() + "/quiz-probe", "--json", "--code", code_name(s.code)};
  if (s.code == Code::DataParallel) {
    process.argv.insert(process.argv.end(), {"--device-ids", join(s.device_ids)});
    if (s.model_on_cuda0) process.argv.push_back("--model-on-cuda0");
  } else {
    process.argv.insert(process.argv.end(), {"--index", std::to_string(s.index)});
  }
  process.env = {{"GPULAB_NODE", s.node}, {"CUDA_VISIBLE_DEVICES", s.visible}, {"CUDA_DEVICE_ORDER", s.order},
                 {"LOCAL_RANK", s.code == Code::LocalRank ? std::optional<std::string>(std::to_string(s.index)) : std::nullopt}};
  process.timeout_s = 60;
  const ProcessResult result = run_process(process);
  Report report;
  try {
    report = parse_report(result.out);
  } catch (const ReportError& e) {
    std::cerr << fmt::format("gpulab: quiz-probe {} without a report ({}):\n{}", result.outcome(process.timeout_s), e.what(), result.err);
    throw Exit{result.timed_out ? kTimedOut : kCrashed};
  }
  Truth truth;
  for (const auto& error : report.errors) {
    if (error.label != "place") {  // the probe itself failed: not an answer
      std::cerr << "gpulab: quiz-probe failed: " << error.message << '\n';
      throw Exit{kCrashed};
    }
    truth.error = true;
    truth.message = error.message.substr(0, error.message.find('\n'));  // LibTorch appends advice lines
  }
  if (const auto fact = report.facts.find("visible"); fact != report.facts.end())
    if (const auto* visible = std::get_if<std::string>(&fact->second)) truth.visible = int_list(*visible);
  const Observation* placed = report.observation("placed");
  if (!truth.error && placed != nullptr) {
    if (s.code == Code::DataParallel) {
      for (const auto& gpu : placed->gpus)
        if (gpu.used_bytes > 0) truth.gpus.push_back(gpu.physical_index);
    } else if (const auto* x = placed->tensor("x"); x != nullptr && x->physical_index) {
      truth.gpus.push_back(*x->physical_index);
    }
    std::sort(truth.gpus.begin(), truth.gpus.end());
  }
  return truth;
}

std::string truth_text(const Truth& truth) {
  if (truth.error) return "error";
  return truth.gpus.empty() ? "none" : join(truth.gpus);
}

// One line of why. The visibility part is explain_visibility()'s wording (an explanation,
// not the answer); every GPU number in it is what the probe observed.
std::string why_text(const Scenario& s, const Node& node, const Truth& t) {
  const DeviceOrder order = parse_device_order(s.order ? s.order->c_str() : nullptr);
  const bool alike = std::all_of(node.gpus.begin(), node.gpus.end(), [&](const Gpu& g) { return g.name == node.gpus[0].name; });
  const bool uuids = s.visible && (s.visible->rfind("GPU-", 0) == 0 || s.visible->rfind("MIG-", 0) == 0);
  std::string why = s.visible ? "CUDA_VISIBLE_DEVICES=" + (s.visible->empty() ? std::string("\"\"") : *s.visible) + ": "
                              : "CUDA_VISIBLE_DEVICES is unset: ";
  if (const auto note = explain_visibility(node, s.visible, order))
    why = note->rfind("CUDA_VISIBLE_DEVICES", 0) == 0 ? *note : why + *note;
  else if (!s.visible) why += "every GPU is visible";
  else if (s.visible->rfind("GPU-", 0) == 0) why += "each UUID prefix names one GPU, in the order listed";
  else if (s.visible->rfind("MIG-", 0) == 0) why += "a MIG- UUID names one MIG instance, which lives on its physical GPU";
  else why += "the GPUs listed, in that order";
  // On unlike GPUs CUDA_DEVICE_ORDER decides what an index counts in.
  if (!alike && !uuids && !(s.visible && s.visible->empty()))
    why += order == DeviceOrder::PciBusId ? " (indices count in PCI_BUS_ID order, nvidia-smi's numbering)"
                                          : " (indices count in FASTEST_FIRST order, CUDA's default: the fastest GPU first, "
                                            "the rest in PCI order)";
  std::string sees = t.visible.empty() ? "no GPU" : "";
  bool identity = !t.visible.empty();
  for (std::size_t i = 0; i < t.visible.size(); ++i) {
    sees += fmt::format("{}cuda:{} = GPU {}", i == 0 ? "" : ", ", i, t.visible[i]);
    identity = identity && t.visible[i] == static_cast<int>(i);
  }
  if (identity && t.visible.size() > 2) sees = fmt::format("cuda:N = GPU N for all {}", t.visible.size());
  why += "; this process sees " + sees + "; ";
  const std::string p = join(t.gpus, ", ");
  const bool exists = s.index < static_cast<int>(t.visible.size());
  switch (s.code) {
    case Code::Ones:
      return why + (t.error ? cuda(s.index) + (exists ? " fails" : " does not exist") : cuda(s.index) + " is GPU " + p);
    case Code::SetDevice:
      return why + (t.error ? "set_device(" + std::to_string(s.index) + ") fails: there is no " + cuda(s.index)
                            : "torch::kCUDA without an index is the current device, " + cuda(s.index) + " after set_device: GPU " + p);
    case Code::LocalRank:
      return why + "LOCAL_RANK=" + std::to_string(s.index) + " picks " + cuda(s.index) +
             (t.error ? ", which " + std::string(exists ? "fails" : "does not exist") : ": GPU " + p);
    case Code::DataParallel: {
      const int count = static_cast<int>(t.visible.size());
      const int missing = *std::max_element(s.device_ids.begin(), s.device_ids.end());
      if (!t.error)
        return why + "a replica runs on each GPU of device_ids (GPU " + p + ") and the output is gathered on " + cuda(s.device_ids[0]);
      if (!s.model_on_cuda0 && s.device_ids[0] >= count) return why + "model->to(" + cuda(s.device_ids[0]) + ") fails: there is no such device";
      if (missing >= count) return why + "device_ids names " + cuda(missing) + ", which this process does not have";
      if (s.model_on_cuda0)
        return why + "the model is on cuda:0, but DataParallel needs it on device_ids[0], " + cuda(s.device_ids[0]);
      return why + "DataParallel raises the error shown";
    }
  }
  return why;
}

// ---- answers -------------------------------------------------------------------------

struct Answer {
  enum Kind { Gpus, Error, Unparsable } kind = Unparsable;
  std::vector<int> gpus;  // sorted, unique; empty: "none" (the CPU)
};

// "3", " GPU 3 ", "2, 3", "gpus 2 3", "error", "ERR", "none".
Answer parse_answer(std::string line) {
  for (char& c : line) c = c == ',' || c == ';' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  Answer answer;
  if (words.size() == 1 && words[0].rfind("err", 0) == 0) return {Answer::Error, {}};
  if (words.size() == 1 && (words[0] == "none" || words[0] == "cpu")) return {Answer::Gpus, {}};
  for (std::string w : words) {
    if (w == "gpu" || w == "gpus" || w == "physical" || w == "and") continue;
    if (w.rfind("gpu", 0) == 0) w = w.substr(3);
    if (w.empty() || w.size() > 3 || !std::all_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return {};
    answer.gpus.push_back(std::stoi(w));
  }
  if (answer.gpus.empty()) return {};
  std::sort(answer.gpus.begin(), answer.gpus.end());
  answer.gpus.erase(std::unique(answer.gpus.begin(), answer.gpus.end()), answer.gpus.end());
  answer.kind = Answer::Gpus;
  return answer;
}

bool correct(const Answer& answer, const Truth& truth) {
  if (truth.error) return answer.kind == Answer::Error;
  return answer.kind == Answer::Gpus && answer.gpus == truth.gpus;
}

constexpr const char* kExpected = "a GPU number such as 3, a list such as 2,3, or 'error'";

// ---- the quiz ------------------------------------------------------------------------

void run_quiz(const QuizOptions& options) {
  const bool interactive = isatty(STDIN_FILENO) != 0;
  // With --json the transcript goes to stderr and stdout carries only the JSON document.
  std::ostream& out = options.json ? std::cerr : std::cout;
  const bool color = interactive && !options.json && isatty(STDOUT_FILENO) != 0;
  const auto paint = [&](const char* code, const std::string& text) {
    return color ? fmt::format("\033[{}m{}\033[0m", code, text) : text;
  };
  const auto seed = static_cast<std::uint32_t>(
      options.seed.value_or(std::chrono::system_clock::now().time_since_epoch().count() % 1000000));
  out << fmt::format("seed {} — replay with --seed {}\n", seed, seed);
  Draw draw(seed);
  nlohmann::json rounds = nlohmann::json::array();
  int score = 0, asked = 0;
  bool ended_early = false;
  for (int round = 1; round <= options.rounds; ++round) {
    const Scenario s = draw_scenario(draw);
    const Node node = load(s.node);
    const Truth truth = run_scenario(s);
    const bool uuids = s.visible && (s.visible->rfind("GPU-", 0) == 0 || s.visible->rfind("MIG-", 0) == 0);
    const auto node_lines = node_text(node, uuids);
    out << fmt::format("\nRound {} of {}\n  node: {}\n", round, options.rounds, node_lines[0]);
    for (std::size_t i = 1; i < node_lines.size(); ++i) out << "      " << node_lines[i] << '\n';
    out << "  env:  " << env_text(s) << "\n  code:\n";
    for (const auto& line : code_text(s)) out << "      " << line << '\n';
    out << "  question: " << question_text(s) << '\n';

    std::string line;
    Answer answer;
    bool got = false;
    for (;;) {
      out << paint("1", fmt::format("Which physical GPU(s)? ({}) ", "a number, a comma list, or 'error'")) << std::flush;
      if (!std::getline(std::cin, line)) break;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!interactive) out << line << '\n';  // a transcript shows what the script answered
      got = true;
      answer = parse_answer(line);
      // On a terminal a typo gets another try; a script's line counts as given.
      if (answer.kind != Answer::Unparsable || !interactive) break;
      out << "  expected " << kExpected << "; try again\n";
    }
    if (!got) {
      ended_early = true;
      out << fmt::format("\nend of input: the quiz stops after {} of {} rounds\n", asked, options.rounds);
      break;
    }
    ++asked;
    const bool right = correct(answer, truth);
    score += right ? 1 : 0;
    out << "  result: " << (right ? paint("32", "correct") : paint("31", "incorrect"))
        << (answer.kind == Answer::Unparsable ? fmt::format(" (could not read '{}': expected {})", line, kExpected) : "") << '\n';
    out << "  truth: " << truth_text(truth) << '\n';
    if (truth.error) out << "  error: " << truth.message << '\n';
    const std::string why = why_text(s, node, truth);
    out << "  why: " << why << '\n';
    rounds.push_back({{"round", round},
                      {"node", s.node},
                      {"env", {{"CUDA_VISIBLE_DEVICES", s.visible ? nlohmann::json(*s.visible) : nlohmann::json()},
                               {"CUDA_DEVICE_ORDER", s.order ? nlohmann::json(*s.order) : nlohmann::json()}}},
                      {"code", code_text(s)},
                      {"answer", line},
                      {"truth", truth_text(truth)},
                      {"error", truth.error ? nlohmann::json(truth.message) : nlohmann::json()},
                      {"correct", right},
                      {"why", why}});
    auto& scenario = rounds.back()["scenario"] = {{"code", code_name(s.code)}};
    if (s.code == Code::DataParallel) {
      scenario["device_ids"] = s.device_ids;
      scenario["model_on_cuda0"] = s.model_on_cuda0;
    } else {
      scenario["index"] = s.index;
    }
    if (s.code == Code::LocalRank) rounds.back()["env"]["LOCAL_RANK"] = std::to_string(s.index);
  }
  out << fmt::format("\nscore: {}/{}\n", score, asked);
  if (options.json)
    std::cout << nlohmann::json{{"seed", seed}, {"rounds", rounds}, {"score", score}, {"asked", asked}, {"ended_early", ended_early}}.dump(2)
              << '\n';
}

}  // namespace

void setup_quiz(CLI::App& app) {
  auto options = std::make_shared<QuizOptions>();
  auto* cmd = app.add_subcommand("quiz", "which physical GPU? random scenarios, answered by running them on the simulated node");
  cmd->add_option("--seed", options->seed, "replay the quiz of this seed (default: from the clock)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{4294967295}));
  cmd->add_option("--rounds", options->rounds, "how many scenarios")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_flag("--json", options->json, "print each round's result as JSON on stdout (the transcript goes to stderr)");
  cmd->callback([options] { run_quiz(*options); });
}

}  // namespace gpulab::cli
