#include "tutor/quiz.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <tuple>
#include <variant>

#include <fmt/format.h>

#include "course/predictions.h"
#include "model/visibility.h"
#include "proc/process.h"

namespace gpulab::tutor {
namespace {

std::string join(const std::vector<int>& values, const std::string& separator = ",") {
  std::string text;
  for (int v : values) text += (text.empty() ? "" : separator) + std::to_string(v);
  return text;
}

std::string cuda(int index) { return "cuda:" + std::to_string(index); }

bool all_alike(const Node& node) {
  return std::all_of(node.gpus.begin(), node.gpus.end(), [&](const Gpu& g) { return g.name == node.gpus[0].name; });
}

bool names_uuids(const QuizScenario& s) {
  return s.visible && (s.visible->rfind("GPU-", 0) == 0 || s.visible->rfind("MIG-", 0) == 0);
}

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

// The GPU lines of an unlike node end with its speed ranking (display only: CUDA's order is the probe's).
std::string speed_text(const Node& node) {
  const auto& g = node.gpus;
  std::vector<std::size_t> fastest(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) fastest[i] = i;
  std::stable_sort(fastest.begin(), fastest.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(g[a].cc_major, g[a].cc_minor, g[a].sm_count) > std::tie(g[b].cc_major, g[b].cc_minor, g[b].sm_count);
  });
  std::string order;
  for (std::size_t i : fastest) order += (order.empty() ? "GPU " : ", GPU ") + std::to_string(i);
  return "  speed, fastest first: " + order;
}

std::vector<int> int_list(const std::string& text) {
  std::vector<int> values;
  std::istringstream in(text);
  for (std::string entry; std::getline(in, entry, ',');) values.push_back(std::stoi(entry));
  return values;
}

// The why's first half: how CUDA read CUDA_VISIBLE_DEVICES (explain_visibility()'s wording).
std::string visibility_why(const QuizScenario& s, const Node& node) {
  const DeviceOrder order = parse_device_order(s.order ? s.order->c_str() : nullptr);
  std::string why = s.visible ? "CUDA_VISIBLE_DEVICES=" + (s.visible->empty() ? std::string("\"\"") : *s.visible) + ": "
                              : "CUDA_VISIBLE_DEVICES is unset: ";
  if (const auto note = explain_visibility(node, s.visible, order))
    why = note->rfind("CUDA_VISIBLE_DEVICES", 0) == 0 ? *note : why + *note;
  else if (!s.visible) why += "every GPU is visible";
  else if (s.visible->rfind("GPU-", 0) == 0) why += "each UUID prefix names one GPU, in the order listed";
  else if (s.visible->rfind("MIG-", 0) == 0) why += "a MIG- UUID names one MIG instance, which lives on its physical GPU";
  else why += "the GPUs listed, in that order";
  // On unlike GPUs CUDA_DEVICE_ORDER decides what an index counts in.
  if (!all_alike(node) && !names_uuids(s) && !(s.visible && s.visible->empty()))
    why += order == DeviceOrder::PciBusId ? " (indices count in PCI_BUS_ID order, nvidia-smi's numbering)"
                                          : " (indices count in FASTEST_FIRST order, CUDA's default; NVIDIA documents only "
                                            "\"fastest first\", and the order here is gpulab's model of what is observed: "
                                            "higher compute capability, then more SMs, ties in PCI order)";
  return why;
}

// "cuda:0 = GPU 2, cuda:1 = GPU 3", or "cuda:N = GPU N for all 8".
std::string sees_text(const QuizTruth& t) {
  std::string sees = t.visible.empty() ? "no GPU" : "";
  bool identity = !t.visible.empty();
  for (std::size_t i = 0; i < t.visible.size(); ++i) {
    sees += fmt::format("{}cuda:{} = GPU {}", i == 0 ? "" : ", ", i, t.visible[i]);
    identity = identity && t.visible[i] == static_cast<int>(i);
  }
  if (identity && t.visible.size() > 2) sees = fmt::format("cuda:N = GPU N for all {}", t.visible.size());
  return sees;
}

std::string data_parallel_why(const QuizScenario& s, const QuizTruth& t) {
  const int count = static_cast<int>(t.visible.size());
  const int missing = *std::max_element(s.device_ids.begin(), s.device_ids.end());
  if (!t.error)
    return "a replica runs on each GPU of device_ids (GPU " + join(t.gpus, ", ") + ") and the output is gathered on " +
           cuda(s.device_ids[0]);
  if (!s.model_on_cuda0 && s.device_ids[0] >= count) return "model->to(" + cuda(s.device_ids[0]) + ") fails: there is no such device";
  if (missing >= count) return "device_ids names " + cuda(missing) + ", which this process does not have";
  if (s.model_on_cuda0) return "the model is on cuda:0, but DataParallel needs it on device_ids[0], " + cuda(s.device_ids[0]);
  return "DataParallel raises the error shown";
}

// The why's second half: what the code did with the devices this process sees.
std::string code_why(const QuizScenario& s, const QuizTruth& t) {
  const std::string p = join(t.gpus, ", ");
  const bool exists = s.index < static_cast<int>(t.visible.size());
  switch (s.code) {
    case QuizCode::kOnes: return t.error ? cuda(s.index) + (exists ? " fails" : " does not exist") : cuda(s.index) + " is GPU " + p;
    case QuizCode::kSetDevice:
      return t.error ? "set_device(" + std::to_string(s.index) + ") fails: there is no " + cuda(s.index)
                     : "torch::kCUDA without an index is the current device, " + cuda(s.index) + " after set_device: GPU " + p;
    case QuizCode::kLocalRank:
      return "LOCAL_RANK=" + std::to_string(s.index) + " picks " + cuda(s.index) +
             (t.error ? ", which " + std::string(exists ? "fails" : "does not exist") : ": GPU " + p);
    case QuizCode::kDataParallel: return data_parallel_why(s, t);
  }
  return {};
}

}  // namespace

int Draw::below(int n) { return static_cast<int>(rng_() % static_cast<std::uint32_t>(n)); }

std::vector<int> Draw::distinct(int n, int count) {
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

Node quiz_node(const std::string& name) { return load_node_file(resolve_node_path(name)); }

QuizScenario draw_scenario(Draw& draw) {
  QuizScenario s;
  const char* nodes[] = {"dgx-a100", "dgx-a100", "workstation-mixed", "workstation-mixed", "mig-a100"};
  s.node = nodes[draw.below(5)];
  const Node node = quiz_node(s.node);
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
  s.code = static_cast<QuizCode>(draw.below(s.node == "mig-a100" ? 3 : 4));
  // Indices mostly within the entries listed; now and then one past them.
  const int past = draw.below(4) == 0 ? 1 : 0;
  s.index = draw.below(std::max(listed, 1) + past);
  if (s.code == QuizCode::kDataParallel) {
    s.device_ids = draw.distinct(std::max(listed, 2) + past, 2 + draw.below(2));
    s.model_on_cuda0 = draw.below(3) == 0;
  }
  return s;
}

// ---- a round's text ------------------------------------------------------------------------

const char* code_name(QuizCode code) {
  const char* names[] = {"ones", "set_device", "local_rank", "data_parallel"};
  return names[static_cast<int>(code)];
}

std::string env_text(const QuizScenario& s) {
  const auto show = [](const char* name, const std::optional<std::string>& value) {
    if (!value) return fmt::format("{} unset", name);
    return value->empty() || value->find(' ') != std::string::npos ? fmt::format("{}=\"{}\"", name, *value)
                                                                   : fmt::format("{}={}", name, *value);
  };
  std::string text = show("CUDA_VISIBLE_DEVICES", s.visible) + "  " + show("CUDA_DEVICE_ORDER", s.order);
  if (s.code == QuizCode::kLocalRank) text += "  LOCAL_RANK=" + std::to_string(s.index);
  return text;
}

std::vector<std::string> node_text(const Node& node, bool with_uuids) {
  const auto& g = node.gpus;
  const bool alike = all_alike(node);
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
  if (!alike) lines.push_back(speed_text(node));
  return lines;
}

std::vector<std::string> code_text(const QuizScenario& s) {
  const std::string i = std::to_string(s.index);
  switch (s.code) {
    case QuizCode::kOnes: return {"auto x = torch::ones({1}, torch::Device(torch::kCUDA, " + i + "));"};
    case QuizCode::kSetDevice:
      return {"gpulab::cuda::set_device(" + i + ");  // torch.cuda.set_device(" + i + ")",
              "auto x = torch::ones({1}, torch::kCUDA);"};
    case QuizCode::kLocalRank:
      return {"const int local_rank = std::stoi(std::getenv(\"LOCAL_RANK\"));",
              "auto x = torch::ones({1}, torch::Device(torch::kCUDA, local_rank));"};
    case QuizCode::kDataParallel:
      return {"torch::nn::Linear model(16, 4);",
              s.model_on_cuda0 ? "model->to(torch::kCUDA);"
                               : "model->to(torch::Device(torch::kCUDA, " + std::to_string(s.device_ids[0]) + "));",
              "gpulab::DataParallel parallel(model, {" + join(s.device_ids, ", ") + "});  // nn.DataParallel(model, device_ids=[" +
                  join(s.device_ids, ", ") + "])",
              "auto y = parallel.forward(torch::randn({8, 16}));"};
  }
  return {};
}

std::string question_text(const QuizScenario& s) {
  return s.code == QuizCode::kDataParallel ? "the physical GPUs that run a replica (that hold this process's memory after forward)"
                                           : "the physical GPU that holds x";
}

std::string round_text(int round, int rounds, const QuizScenario& s, const Node& node) {
  const auto node_lines = node_text(node, names_uuids(s));
  std::string text = fmt::format("\nRound {} of {}\n  node: {}\n", round, rounds, node_lines[0]);
  for (std::size_t i = 1; i < node_lines.size(); ++i) text += "      " + node_lines[i] + '\n';
  text += "  env:  " + env_text(s) + "\n  code:\n";
  for (const auto& line : code_text(s)) text += "      " + line + '\n';
  return text + "  question: " + question_text(s) + '\n';
}

// ---- the truth -----------------------------------------------------------------------------

QuizTruth run_scenario(const QuizScenario& s, const std::string& probe) {
  ProcessOptions process;
  process.argv = {probe, "--json", "--code", code_name(s.code)};
  if (s.code == QuizCode::kDataParallel) {
    process.argv.insert(process.argv.end(), {"--device-ids", join(s.device_ids)});
    if (s.model_on_cuda0) process.argv.push_back("--model-on-cuda0");
  } else {
    process.argv.insert(process.argv.end(), {"--index", std::to_string(s.index)});
  }
  process.env = {{"GPULAB_NODE", s.node}, {"CUDA_VISIBLE_DEVICES", s.visible}, {"CUDA_DEVICE_ORDER", s.order},
                 {"LOCAL_RANK", s.code == QuizCode::kLocalRank ? std::optional<std::string>(std::to_string(s.index)) : std::nullopt}};
  process.timeout_s = 60;
  const ProcessResult result = run_process(process);
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
  if (!truth.error && placed != nullptr) {
    if (s.code == QuizCode::kDataParallel) {
      for (const auto& gpu : placed->gpus)
        if (gpu.used_bytes > 0) truth.gpus.push_back(gpu.physical_index);
    } else if (const auto* x = placed->tensor("x"); x != nullptr && x->physical_index) {
      truth.gpus.push_back(*x->physical_index);
    }
    std::sort(truth.gpus.begin(), truth.gpus.end());
  }
  return truth;
}

std::string truth_text(const QuizTruth& truth) {
  if (truth.error) return "error";
  return truth.gpus.empty() ? "none" : join(truth.gpus);
}

std::string why_text(const QuizScenario& s, const Node& node, const QuizTruth& t) {
  return visibility_why(s, node) + "; this process sees " + sees_text(t) + "; " + code_why(s, t);
}

// ---- answers -------------------------------------------------------------------------------

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

bool rests_on_fastest_first(const QuizScenario& s, const Node& node) {
  if (all_alike(node) || names_uuids(s) || (s.visible && s.visible->empty())) return false;
  return parse_device_order(s.order ? s.order->c_str() : nullptr) == DeviceOrder::FastestFirst;
}

bool correct(const QuizAnswer& answer, const QuizTruth& truth) {
  if (truth.error) return answer.kind == QuizAnswer::kError;
  return answer.kind == QuizAnswer::kGpus && answer.gpus == truth.gpus;
}

nlohmann::json round_json(int round, const QuizScenario& s, const std::string& answer, const QuizTruth& truth,
                          bool right, bool scored, const std::string& why) {
  const auto optional = [](const std::optional<std::string>& value) { return value ? nlohmann::json(*value) : nlohmann::json(); };
  nlohmann::json json = {{"round", round},
                         {"node", s.node},
                         {"env", {{"CUDA_VISIBLE_DEVICES", optional(s.visible)}, {"CUDA_DEVICE_ORDER", optional(s.order)}}},
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
  } else {
    scenario["index"] = s.index;
  }
  if (s.code == QuizCode::kLocalRank) json["env"]["LOCAL_RANK"] = std::to_string(s.index);
  return json;
}

}  // namespace gpulab::tutor
