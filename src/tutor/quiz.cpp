#include "tutor/quiz.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <tuple>
#include <variant>

#include <sys/stat.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "course/predictions.h"
#include "model/container.h"
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

// CUDA_VISIBLE_DEVICES for a round: unset, a plain list, or (`edge`) one of the lists CUDA
// handles silently. `kind` names which, for telling near-duplicate rounds apart.
std::optional<std::string> draw_visible(Draw& draw, const Node& node, bool edge, std::string& kind) {
  const int n = static_cast<int>(node.gpus.size());
  const auto uuid = [&](int gpu) { return node.gpus[static_cast<std::size_t>(gpu)].uuid.substr(0, 12); };
  if (node.name == "mig-a100") {  // a MIG GPU in the list hides every whole GPU
    const std::optional<std::string> choices[] = {std::nullopt, "1", "1,0", "0,1", node.gpus[0].mig.at(1).uuid.substr(0, 12)};
    const int pick = draw.below(5);
    kind = "mig" + std::to_string(pick);
    return choices[pick];
  }
  const auto pair = draw.distinct(n, 2);
  const std::string a = std::to_string(pair[0]), b = std::to_string(pair[1]);
  if (!edge) {
    if (draw.below(3) == 0) {
      kind = "unset";
      return std::nullopt;
    }
    kind = "list";
    return join(draw.distinct(n, 2 + draw.below(std::min(3, n - 1))));
  }
  switch (draw.below(6)) {
    case 0: kind = "duplicate"; return a + "," + a + (draw.below(2) ? "" : "," + b);
    case 1: kind = "invalid"; return a + "," + (draw.below(2) ? "-1" : "x") + "," + b;
    case 2: kind = "out of range"; return a + "," + std::to_string(n + draw.below(3)) + "," + b;
    case 3: kind = "empty"; return std::string();
    case 4: kind = "uuid"; return draw.below(2) ? uuid(pair[0]) : uuid(pair[0]) + "," + uuid(pair[1]);
    default: kind = "index past the last"; return std::to_string(n);
  }
}

// How many entries a CUDA_VISIBLE_DEVICES value lists (every GPU of the node when unset).
int listed_count(const std::optional<std::string>& visible, const Node& node) {
  if (!visible) return static_cast<int>(node.gpus.size());
  if (visible->empty()) return 0;
  return 1 + static_cast<int>(std::count(visible->begin(), visible->end(), ','));
}

// An index within the entries listed, and now and then one past them: no such device.
int draw_index(Draw& draw, int listed) { return draw.below(std::max(listed, 1) + (draw.below(4) == 0 ? 1 : 0)); }

// The ideas a round can ask about: one per lesson (two for lesson 05), each with the
// scenarios that show it.
struct Topic {
  const char* lesson;
  const char* name;
  void (*fill)(Draw&, QuizScenario&);
};

void on_node(Draw& draw, QuizScenario& s, const char* node, bool edge = false) {
  s.node = node;
  s.visible = draw_visible(draw, quiz_node(node), edge, s.kind);
}

int listed(const QuizScenario& s) { return listed_count(s.visible, quiz_node(s.node)); }

const Topic kTopics[] = {
    {"01", "the first visible GPU (torch::kCUDA, no index)",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, "dgx-a100", d.below(4) == 0);
       s.code = QuizCode::kDefault;
     }},
    {"02", "cuda:i under CUDA_VISIBLE_DEVICES",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, "dgx-a100");
       s.code = QuizCode::kOnes;
       s.index = draw_index(d, listed(s));
     }},
    {"03", "setting CUDA_VISIBLE_DEVICES in code after CUDA started",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, "dgx-a100");
       s.code = QuizCode::kSetenvLate;
       s.setenv = join(d.distinct(8, 1 + d.below(2)));
       s.index = d.below(2);
     }},
    {"05", "set_device, the current device and explicit indices",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, "dgx-a100");
       s.code = d.below(2) == 0 ? QuizCode::kSetDevice : QuizCode::kOnes;
       s.index = draw_index(d, listed(s));
     }},
    {"05", "a new thread's current device",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, "dgx-a100");
       s.code = QuizCode::kThread;
       s.index = d.below(listed(s));
     }},
    {"06", "device strings",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, "dgx-a100");
       const char* strings[] = {"cuda:1,2", "cuda:2,1", "cuda:01", "cuda:1", "cuda", "cuda:2"};
       s.code = QuizCode::kDeviceString;
       s.device_string = strings[d.below(6)];
     }},
    {"07", "CUDA_DEVICE_ORDER on unlike GPUs",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, d.below(2) == 0 ? "workstation-mixed" : "pascal-rig");
       const std::optional<std::string> orders[] = {std::nullopt, "FASTEST_FIRST", "PCI_BUS_ID", "PCI_BUS_ID"};
       s.order = orders[d.below(4)];
       s.code = QuizCode::kOnes;
       s.index = d.below(listed(s));
     }},
    {"08", "lists CUDA cuts short or empties",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, d.below(5) == 0 ? "mig-a100" : "dgx-a100", /*edge=*/true);
       s.code = QuizCode::kOnes;
       s.index = d.below(2);
     }},
    {"09", "where DataParallel's model must be",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, "dgx-a100");
       s.code = QuizCode::kDataParallel;
       s.device_ids = d.distinct(std::max(listed(s), 2) + (d.below(4) == 0 ? 1 : 0), 2 + d.below(2));
       s.model_on_cuda0 = d.below(2) == 0;
     }},
    {"10", "the batch moved with an index-less torch::kCUDA",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, "dgx-a100");
       s.code = QuizCode::kDataParallel;
       const int n = listed(s);
       s.device_ids = d.distinct(n, 2);
       std::sort(s.device_ids.begin(), s.device_ids.end(), [](int x, int y) { return x > y; });  // rarely cuda:0 first
       s.batch_to_cuda = true;
     }},
    {"11", "where DataParallel gathers the output",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, "dgx-a100");
       s.code = QuizCode::kDataParallel;
       s.device_ids = d.distinct(listed(s), 2 + d.below(2));
       s.ask_output = true;
     }},
    {"12", "DataParallel with device_ids omitted",
     [](Draw& d, QuizScenario& s) {
       s.node = "dgx-a100";
       const int count = 2 + d.below(3);
       s.kind = "list of " + std::to_string(count);
       s.visible = join(d.distinct(8, count));
       s.code = QuizCode::kDefaultIds;
     }},
    {"13", "LOCAL_RANK under CUDA_VISIBLE_DEVICES",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, "dgx-a100");
       s.code = QuizCode::kLocalRank;
       s.index = draw_index(d, listed(s));
     }},
    {"14", "a rank that never calls set_device",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, "dgx-a100");
       s.code = QuizCode::kNoSetDevice;
       s.index = 1 + d.below(std::max(listed(s) - 1, 1));
     }},
    {"15", "RANK on a job of two nodes",
     [](Draw& d, QuizScenario& s) {
       s.node = d.below(2) == 0 ? "pascal-rig" : "tiny2";
       s.kind = "unset";
       s.order = "PCI_BUS_ID";
       s.code = QuizCode::kRank;
       s.index = d.below(2 * static_cast<int>(quiz_node(s.node).gpus.size()));
     }},
    {"16", "a checkpoint remembers its devices",
     [](Draw& d, QuizScenario& s) {
       const char* nodes[] = {"tiny2", "dgx-a100", "pascal-rig"};
       s.node = nodes[d.below(3)];
       s.kind = "unset";
       s.order = "PCI_BUS_ID";
       s.code = QuizCode::kLoad;
       s.index = d.below(8);
     }},
    {"17", "cuda:i inside a container",
     [](Draw& d, QuizScenario& s) {
       s.node = "dgx-a100";
       const int count = 2 + d.below(3);
       s.container = join(d.distinct(8, count));  // in drawn order, rarely the bus's
       const bool inside = d.below(2) == 0;     // CUDA_VISIBLE_DEVICES set inside the container
       s.kind = inside ? "container, list inside" : "container";
       if (inside) s.visible = std::to_string(d.below(count));
       s.code = QuizCode::kOnes;
       s.index = inside ? 0 : d.below(count);
     }},
    {"18", "tensors of one op on two devices",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, d.below(3) == 0 ? "tiny2" : "dgx-a100");
       s.code = QuizCode::kMixedDevice;
       s.index = d.below(std::max(listed(s), 1));
       s.batch_to_cuda = d.below(2) == 0;
       s.cpu_mask = d.below(3) == 0;
     }},
    {"19", "a worker forked after CUDA started",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, "dgx-a100");
       s.code = QuizCode::kFork;
       s.fork_after_init = d.below(3) != 0;
       s.index = draw_index(d, listed(s));
     }},
    {"20", "a helper's set_device outlives it, a device guard does not",
     [](Draw& d, QuizScenario& s) {
       on_node(d, s, "dgx-a100");
       s.code = QuizCode::kGuard;
       const int n = std::max(listed(s), 2);
       const auto pair = d.distinct(n, 2);
       s.index = pair[0];
       s.borrowed = pair[1];
       s.scoped = d.below(2) == 0;
       s.ask_memory = d.below(3) == 0;
     }},
};

constexpr int kTopicCount = static_cast<int>(sizeof(kTopics) / sizeof(kTopics[0]));

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

// In a container: which host GPUs it has, and how it numbers them (model/container.h).
std::string container_why(const QuizScenario& s, const Node& host) {
  const ContainerView view = container_view(host, s.container);
  std::string gpus;
  for (const int g : view.host_gpus) gpus += (gpus.empty() ? "" : ", ") + std::to_string(g);
  return "NVIDIA_VISIBLE_DEVICES=" + *s.container + ": the container has the host's GPUs " + gpus +
         ", numbered 0.. in PCI order whatever the list's order; CUDA_VISIBLE_DEVICES counts in those numbers. ";
}

// The why's first half: how CUDA read CUDA_VISIBLE_DEVICES (explain_visibility()'s wording).
std::string visibility_why(const QuizScenario& s, const Node& host) {
  if (s.container) {
    const Node node = container_node(host, container_view(host, s.container));
    QuizScenario inside = s;
    inside.container.reset();
    std::string why = visibility_why(inside, node);
    if (const auto at = why.find("every GPU is visible"); at != std::string::npos)
      why.replace(at, 20, "every GPU of the container is visible");
    return container_why(s, host) + why;
  }
  const Node& node = host;
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
  if (!t.error && s.ask_output)
    return "the output is gathered on device_ids[0], " + cuda(s.device_ids[0]) + ": GPU " + join(t.gpus, ", ");
  if (!t.error && s.batch_to_cuda)
    return "the replicas run on device_ids, and the batch moved with torch::kCUDA went to the current device, cuda:0, "
           "first: GPU " + join(t.gpus, ", ") + " in all";
  if (!t.error)
    return "a replica runs on each GPU of device_ids (GPU " + join(t.gpus, ", ") + ") and the output is gathered on " +
           cuda(s.device_ids[0]);
  if (!s.model_on_cuda0 && s.device_ids[0] >= count) return "model->to(" + cuda(s.device_ids[0]) + ") fails: there is no such device";
  if (missing >= count) return "device_ids names " + cuda(missing) + ", which this process does not have";
  if (s.model_on_cuda0) return "the model is on cuda:0, but DataParallel needs it on device_ids[0], " + cuda(s.device_ids[0]);
  return "DataParallel raises the error shown";
}

std::string guard_why(const QuizScenario& s, const QuizTruth& t) {
  const int count = static_cast<int>(t.visible.size());
  if (t.error) return cuda(std::max(s.index, s.borrowed) >= count ? std::max(s.index, s.borrowed) : s.index) + " does not exist here";
  const std::string helper = s.scoped ? "the guard selected " + cuda(s.borrowed) + " for the helper's block only and restored " +
                                            cuda(s.index) + " when it ended"
                                      : "set_device(" + std::to_string(s.borrowed) + ") is not scoped: the thread stays on " +
                                            cuda(s.borrowed) + " after the helper";
  if (!s.ask_memory) return helper + "; torch::kCUDA is the current device: GPU " + join(t.gpus, ", ");
  return helper + "; selecting a GPU is a cudaSetDevice, which creates its context on CUDA 12 and later builds, not on "
                  "CUDA 11: this process holds memory on GPU " + (t.gpus.empty() ? std::string("none") : join(t.gpus, ", "));
}

// The why's second half: what the code did with the devices this process sees.
std::string code_why(const QuizScenario& s, const QuizTruth& t) {
  const std::string p = join(t.gpus, ", ");
  const bool exists = s.index < static_cast<int>(t.visible.size());
  const std::string gpu = t.error ? "" : ": GPU " + p;
  switch (s.code) {
    case QuizCode::kDefault: return t.error ? "torch::kCUDA fails: this process sees no GPU" : "torch::kCUDA with no index is the current device, cuda:0" + gpu;
    case QuizCode::kSetenvLate:
      return "is_available() started CUDA, which read CUDA_VISIBLE_DEVICES then; the setenv after it changes nothing, so " +
             cuda(s.index) + (t.error ? " does not exist" : gpu);
    case QuizCode::kThread:
      return "set_device is per thread, and a new std::thread starts on cuda:0; torch::kCUDA there is cuda:0" +
             (t.error ? std::string(", which fails") : gpu);
    case QuizCode::kDeviceString:
      return t.error ? "\"" + s.device_string + "\" is refused: a device string is cuda or cuda:N, one plain index"
                     : "\"" + s.device_string + "\" is " + (s.device_string == "cuda" ? "the current device, cuda:0" : "that one index") + gpu;
    case QuizCode::kRank:
      return "RANK counts across both nodes, but each node has only its own cuda:0 to cuda:" +
             std::to_string(std::max<int>(0, static_cast<int>(t.visible.size()) - 1)) + "; " + cuda(s.index) +
             (t.error ? " does not exist here" : gpu);
    case QuizCode::kNoSetDevice:
      return "LOCAL_RANK is never used: with no set_device the current device is cuda:0" + (t.error ? std::string(", which fails") : gpu);
    case QuizCode::kDefaultIds:
      return t.error ? "DataParallel fails: " + t.message
                     : "device_ids omitted means every visible GPU, and the output is gathered on the first, cuda:0" + gpu;
    case QuizCode::kLoad:
      return "torch::load puts each tensor back on the device it was saved from, " + cuda(s.index) +
             (t.error ? ", which this node does not have" : gpu);
    case QuizCode::kFork:
      if (s.fork_after_init)
        return "is_available() started CUDA in the parent before fork(): CUDA cannot be used in such a child, whose first "
               "CUDA call fails (\"initialization error\")";
      return "CUDA had not started when the parent forked: the child starts its own, with the inherited "
             "CUDA_VISIBLE_DEVICES, and " + cuda(s.index) + (t.error ? (exists ? " fails" : " does not exist") : " is GPU " + p);
    case QuizCode::kMixedDevice:
      if (t.error && t.message.rfind("Expected all tensors", 0) != 0) return cuda(s.index) + " fails: " + t.message;
      return t.error ? "a CUDA op moves no tensor, it checks that all are on one device: " + t.message
                     : std::string("every tensor of each op is on the model's device (a CPU 0-dim scalar may join an "
                                   "element-wise op)") + gpu;
    case QuizCode::kOnes: return t.error ? cuda(s.index) + (exists ? " fails" : " does not exist") : cuda(s.index) + " is GPU " + p;
    case QuizCode::kSetDevice:
      return t.error ? "set_device(" + std::to_string(s.index) + ") fails: there is no " + cuda(s.index)
                     : "torch::kCUDA without an index is the current device, " + cuda(s.index) + " after set_device: GPU " + p;
    case QuizCode::kLocalRank:
      return "LOCAL_RANK=" + std::to_string(s.index) + " picks " + cuda(s.index) +
             (t.error ? ", which " + std::string(exists ? "fails" : "does not exist") : ": GPU " + p);
    case QuizCode::kDataParallel: return data_parallel_why(s, t);
    case QuizCode::kGuard: return guard_why(s, t);
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

int quiz_topic_count() { return kTopicCount; }

QuizScenario QuizPlan::next() {
  if (order_.empty()) {  // a new pass over every idea, in a shuffled order
    std::vector<int> all(static_cast<std::size_t>(kTopicCount));
    for (int i = 0; i < kTopicCount; ++i) all[static_cast<std::size_t>(i)] = i;
    for (int i = kTopicCount - 1; i > 0; --i) std::swap(all[static_cast<std::size_t>(i)], all[static_cast<std::size_t>(draw_.below(i + 1))]);
    order_.assign(all.rbegin(), all.rend());
  }
  const Topic& topic = kTopics[order_.back()];
  order_.pop_back();
  QuizScenario s;
  // A near-duplicate of an earlier round (the same idea, the same kind of list) is drawn again.
  for (int attempt = 0; attempt < 20; ++attempt) {
    s = QuizScenario{};
    s.lesson = topic.lesson;
    s.topic = topic.name;
    topic.fill(draw_, s);
    const std::string signature = s.topic + "|" + s.kind + "|" + s.node;
    if (std::find(seen_.begin(), seen_.end(), signature) == seen_.end()) {
      seen_.push_back(signature);
      break;
    }
  }
  return s;
}

// ---- a round's text ------------------------------------------------------------------------

const char* code_name(QuizCode code) {
  const char* names[] = {"ones",   "set_device", "local_rank",    "data_parallel", "default",     "setenv_late",
                         "thread", "device_string", "rank",       "no_set_device", "default_ids", "load",
                         "fork", "guard", "mixed_device"};
  return names[static_cast<int>(code)];
}

std::string env_text(const QuizScenario& s) {
  const auto show = [](const char* name, const std::optional<std::string>& value) {
    if (!value) return fmt::format("{} unset", name);
    return value->empty() || value->find(' ') != std::string::npos ? fmt::format("{}=\"{}\"", name, *value)
                                                                   : fmt::format("{}={}", name, *value);
  };
  std::string text = show("CUDA_VISIBLE_DEVICES", s.visible) + "  " + show("CUDA_DEVICE_ORDER", s.order);
  if (s.container) text = "in a container: NVIDIA_VISIBLE_DEVICES=" + *s.container + "  " + text;
  if (s.code == QuizCode::kLocalRank || s.code == QuizCode::kNoSetDevice) text += "  LOCAL_RANK=" + std::to_string(s.index);
  if (s.code == QuizCode::kRank) {
    const auto per_node = static_cast<int>(quiz_node(s.node).gpus.size());
    text += fmt::format("  RANK={} LOCAL_RANK={} (two nodes like this one, {} ranks each)", s.index, s.index % per_node, per_node);
  }
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
              s.batch_to_cuda ? "auto y = parallel.forward(torch::randn({8, 16}).to(torch::kCUDA));"
                              : "auto y = parallel.forward(torch::randn({8, 16}));"};
    case QuizCode::kDefault: return {"auto x = torch::ones({1}, torch::kCUDA);"};
    case QuizCode::kSetenvLate:
      return {"std::cout << torch::cuda::is_available() << '\\n';",
              "setenv(\"CUDA_VISIBLE_DEVICES\", \"" + s.setenv + "\", 1);",
              "auto x = torch::ones({1}, torch::Device(torch::kCUDA, " + i + "));"};
    case QuizCode::kThread:
      return {"gpulab::cuda::set_device(" + i + ");", "torch::Tensor x;",
              "std::thread([&] { x = torch::ones({1}, torch::kCUDA); }).join();"};
    case QuizCode::kDeviceString: return {"auto x = torch::ones({1}, torch::Device(\"" + s.device_string + "\"));"};
    case QuizCode::kRank:
      return {"const int rank = std::stoi(std::getenv(\"RANK\"));",
              "auto x = torch::ones({1}, torch::Device(torch::kCUDA, rank));"};
    case QuizCode::kNoSetDevice:
      return {"const int local_rank = std::stoi(std::getenv(\"LOCAL_RANK\"));  // never used for the device",
              "auto x = torch::ones({1}, torch::kCUDA);"};
    case QuizCode::kDefaultIds:
      return {"torch::nn::Linear model(16, 4);", "model->to(torch::kCUDA);",
              "gpulab::DataParallel parallel(model);  // device_ids omitted", "auto y = parallel.forward(torch::randn({8, 16}));"};
    case QuizCode::kGuard: {
      const std::string j = std::to_string(s.borrowed);
      std::vector<std::string> lines = {"gpulab::cuda::set_device(" + i + ");  // this process's GPU"};
      if (s.ask_memory) lines.push_back("auto x = torch::ones({1}, torch::kCUDA);");
      lines.push_back("{  // a helper borrows cuda:" + j);
      lines.push_back(s.scoped ? "  const c10::DeviceGuard guard(torch::Device(torch::kCUDA, " + j + "));"
                               : "  gpulab::cuda::set_device(" + j + ");");
      lines.push_back(s.ask_memory ? "  auto reserved = gpulab::cuda::memory_reserved();  // reads a counter, allocates nothing"
                                   : "  auto tmp = torch::ones({1}, torch::kCUDA);");
      lines.push_back("}");
      if (!s.ask_memory) lines.push_back("auto x = torch::ones({1}, torch::kCUDA);");
      return lines;
    }
    case QuizCode::kMixedDevice:
      return {"torch::nn::Linear model(16, 4);", "model->to(torch::Device(torch::kCUDA, " + i + "));",
              s.batch_to_cuda ? "auto x = torch::randn({8, 16}).to(torch::kCUDA);"
                              : "auto x = torch::randn({8, 16}).to(model->weight.device());",
              s.cpu_mask ? "auto y = model(x) * torch::ones({8, 4});  // a mask made on the CPU"
                         : "auto y = model(x) * torch::tensor(2.0f);  // a CPU 0-dim scalar"};
    case QuizCode::kLoad:
      return {"// saved earlier on dgx-a100 (every GPU visible): model->to(torch::Device(torch::kCUDA, " + i + ")); torch::save(model, \"ckpt.pt\");",
              "torch::nn::Linear model(16, 4);  // on the CPU", "torch::load(model, \"ckpt.pt\");"};
    case QuizCode::kFork: {
      std::vector<std::string> lines;
      if (s.fork_after_init) lines.push_back("std::cout << torch::cuda::is_available() << '\\n';");
      lines.push_back("if (fork() == 0) {  // a worker process");
      lines.push_back("  auto x = torch::ones({1}, torch::Device(torch::kCUDA, " + i + "));");
      lines.push_back("}");
      return lines;
    }
  }
  return {};
}

std::string question_text(const QuizScenario& s) {
  if (s.code == QuizCode::kDataParallel && s.ask_output) return "the physical GPU that holds the output y";
  if (s.code == QuizCode::kDataParallel && s.batch_to_cuda) return "the physical GPUs that hold this process's memory after forward";
  if (s.code == QuizCode::kDataParallel) return "the physical GPUs that run a replica (that hold this process's memory after forward)";
  if (s.code == QuizCode::kDefaultIds) return "the physical GPU that holds the output y";
  if (s.code == QuizCode::kLoad) return "the physical GPU that holds the loaded model's weight";
  if (s.container) return "the host's GPU (the host nvidia-smi's number) that holds x";
  if (s.code == QuizCode::kFork) return "the physical GPU that holds the worker's x";
  if (s.code == QuizCode::kGuard && s.ask_memory) return "the physical GPUs where this process holds memory (a CUDA context counts) after the helper";
  if (s.code == QuizCode::kMixedDevice) return "the physical GPU that holds y (or does an op fail?)";
  return "the physical GPU that holds x";
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
    if (s.batch_to_cuda) process.argv.push_back("--batch-to-cuda");
  } else {
    process.argv.insert(process.argv.end(), {"--index", std::to_string(s.index)});
  }
  if (s.code == QuizCode::kSetenvLate) process.argv.insert(process.argv.end(), {"--setenv", s.setenv});
  if (s.code == QuizCode::kFork && s.fork_after_init) process.argv.push_back("--after-init");
  if (s.code == QuizCode::kDeviceString) process.argv.insert(process.argv.end(), {"--device", s.device_string});
  if (s.code == QuizCode::kGuard) {
    process.argv.insert(process.argv.end(), {"--borrow", std::to_string(s.borrowed)});
    if (s.scoped) process.argv.push_back("--scoped");
    if (s.ask_memory) process.argv.push_back("--reads-only");
  }
  if (s.code == QuizCode::kMixedDevice) {
    if (s.batch_to_cuda) process.argv.push_back("--batch-to-cuda");
    if (s.cpu_mask) process.argv.push_back("--cpu-mask");
  }
  const bool ranked = s.code == QuizCode::kLocalRank || s.code == QuizCode::kNoSetDevice;
  const auto per_node = static_cast<int>(quiz_node(s.node).gpus.size());
  process.env = {{"GPULAB_NODE", s.node}, {"CUDA_VISIBLE_DEVICES", s.visible}, {"CUDA_DEVICE_ORDER", s.order},
                 {"NVIDIA_VISIBLE_DEVICES", s.container},
                 {"LOCAL_RANK", ranked ? std::optional<std::string>(std::to_string(s.index))
                                : s.code == QuizCode::kRank ? std::optional<std::string>(std::to_string(s.index % per_node))
                                                            : std::nullopt},
                 {"RANK", s.code == QuizCode::kRank ? std::optional<std::string>(std::to_string(s.index)) : std::nullopt}};
  process.timeout_s = 60;
  std::string checkpoint;
  if (s.code == QuizCode::kLoad) {  // saved first on dgx-a100 with every GPU visible, as the round says
    char folder[] = "/tmp/gpulab-quiz-XXXXXX";
    if (mkdtemp(folder) == nullptr) throw ProbeFailed(Outcome::kCrashed, "quiz-probe: cannot make a folder for the checkpoint\n");
    checkpoint = std::string(folder) + "/ckpt.pt";
    ProcessOptions save = process;
    save.argv = {probe, "--json", "--code", "save", "--index", std::to_string(s.index), "--file", checkpoint};
    save.env = {{"GPULAB_NODE", "dgx-a100"}, {"CUDA_VISIBLE_DEVICES", std::nullopt}, {"CUDA_DEVICE_ORDER", std::nullopt},
                {"NVIDIA_VISIBLE_DEVICES", std::nullopt},
                {"LOCAL_RANK", std::nullopt}, {"RANK", std::nullopt}};
    const ProcessResult saved = run_process(save);
    if (!saved.ok()) throw ProbeFailed(Outcome::kCrashed, "quiz-probe could not save the checkpoint:\n" + saved.err);
    process.argv.insert(process.argv.end(), {"--file", checkpoint});
  }
  const ProcessResult result = run_process(process);
  if (!checkpoint.empty()) {
    std::remove(checkpoint.c_str());
    rmdir(checkpoint.substr(0, checkpoint.rfind('/')).c_str());
  }
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
  if (s.code == QuizCode::kFork && !truth.error) {  // the worker's own report (gpulab::WorkerPool)
    if (const auto fact = report.facts.find("worker0_x_gpu"); fact != report.facts.end())
      if (const auto* gpu = std::get_if<std::string>(&fact->second)) truth.gpus = int_list(*gpu);
  } else if (!truth.error && placed != nullptr) {
    const bool y = s.code == QuizCode::kDefaultIds || s.code == QuizCode::kMixedDevice || s.ask_output;
    const char* tensor = s.code == QuizCode::kLoad ? "weight" : y ? "y" : "x";
    if ((s.code == QuizCode::kDataParallel && !s.ask_output) || (s.code == QuizCode::kGuard && s.ask_memory)) {
      for (const auto& gpu : placed->gpus)
        if (gpu.used_bytes > 0 || gpu.context) truth.gpus.push_back(gpu.physical_index);
    } else if (const auto* x = placed->tensor(tensor); x != nullptr && x->physical_index) {
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

}  // namespace gpulab::tutor
