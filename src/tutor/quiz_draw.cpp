// Drawing a quiz: the ideas, each with the scenarios that show it (quiz_draw.h).
#include "tutor/quiz_draw.h"

#include <algorithm>

namespace gpulab::tutor {
namespace {

using quiz::join;

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

}  // namespace gpulab::tutor
