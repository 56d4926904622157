// Lesson 07: CUDA numbers GPUs FASTEST_FIRST unless CUDA_DEVICE_ORDER=PCI_BUS_ID, while
// nvidia-smi numbers them in PCI bus order (claim A2.8). The learner writes the map from a
// CUDA index to nvidia-smi's number through the GPU's UUID (the task) and through its PCI bus
// id (the stretch); the program is given nvidia-smi's UUIDs (--smi-uuids) and bus ids
// (--smi-bus-ids) as nvidia-smi would print them. The checks compare each number the
// program claims with where its tensor on that CUDA device was observed from outside, on
// workstation-mixed, pascal-rig, dgx-a100 and aws-p4d, under every CUDA_DEVICE_ORDER and several
// CUDA_VISIBLE_DEVICES lists. On real GPUs only this machine's scenarios run, and only when
// CUDA numbers its GPUs differently from nvidia-smi.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "generated.h"
#include "gpu_requirements.h"
#include "proc/process.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {
const std::string kNode = "workstation-mixed";
const Env kNodeEnv = {{"GPULAB_NODE", kNode}};

struct Order {
  const char* name;
  std::optional<std::string> value;  // CUDA_DEVICE_ORDER, or unset
};
const Order kOrders[] = {{"CUDA_DEVICE_ORDER unset", std::nullopt},
                         {"CUDA_DEVICE_ORDER=FASTEST_FIRST", "FASTEST_FIRST"},
                         {"CUDA_DEVICE_ORDER=PCI_BUS_ID", "PCI_BUS_ID"}};

// Physical (nvidia-smi) numbers in CUDA's order under `order`. Node files list GPUs in PCI
// bus order; FASTEST_FIRST puts the fastest GPU first and the rest in PCI order
// (docs/reference.md "Order"; gpulab::enumeration_order, through lesson_run.cpp).
std::vector<int> cuda_order(const Order& order, const std::string& node_name = kNode) {
  return gpulab::test::cuda_order({{"GPULAB_NODE", node_name}, {"CUDA_DEVICE_ORDER", order.value}});
}

// nvidia-smi's bus ids and UUIDs, in nvidia-smi's order (what `nvidia-smi --query-gpu=pci.bus_id`
// and `nvidia-smi -L` print): the node file's on the simulated node, `gpulab smi --json`'s on
// real GPUs.
struct SmiLists {
  std::string bus_ids;
  std::string uuids;
};
SmiLists smi_lists(const std::string& node_name) {
  SmiLists lists;
  const auto add = [](std::string& list, const std::string& item) { list += (list.empty() ? "" : ",") + item; };
  if (simulated({{"GPULAB_NODE", node_name}})) {
    for (const auto& gpu : node(node_name).gpus) {
      add(lists.bus_ids, gpu.pci_bus_id);
      add(lists.uuids, gpu.uuid);
    }
    return lists;
  }
  gpulab::ProcessOptions options;
  options.argv = {bin_dir() + "/gpulab", "smi", "--json"};
  options.env = {{"GPULAB_STATE_DIR", fresh_state_dir()}};
  const auto result = gpulab::run_process(options);
  REQUIRE(result.ok());
  for (const auto& gpu : nlohmann::json::parse(result.out).at("gpus")) {
    add(lists.bus_ids, gpu.at("pci_bus_id").get<std::string>());
    add(lists.uuids, gpu.at("uuid").get<std::string>());
  }
  return lists;
}

// Why this machine cannot show the lesson, if it cannot. The simulated node has the four
// GPUs of the node file; real GPUs must include some that CUDA's default order moves from
// their PCI position: a faster GPU (compute capability, SMs) later on the bus than another.
std::optional<std::string> missing_mixed_gpus() {
  if (simulated(kNodeEnv)) return missing_gpus(static_cast<int>(node(kNode).gpus.size()), kNodeEnv);
  if (auto missing = missing_gpus(2, kNodeEnv)) return missing;
  const auto order = cuda_order(kOrders[0]);
  int moved = 0;
  for (int i = 0; i < static_cast<int>(order.size()); ++i) moved += order[static_cast<std::size_t>(i)] != i;
  if (moved > 0) return std::nullopt;
  return "needs 2 GPUs, found 0 that CUDA's default FASTEST_FIRST order numbers differently from nvidia-smi"
         " (the fastest GPU later on the PCI bus than another); CUDA numbers"
         " this machine's " + std::to_string(order.size()) + " GPUs in PCI order";
}

// "cuda:0 is nvidia-smi's GPU 1, cuda:1 is nvidia-smi's GPU 0, ...".
std::string numbering(const std::vector<int>& physical) {
  std::string text;
  for (std::size_t i = 0; i < physical.size(); ++i)
    text +=
        (i == 0 ? "" : ", ") + ("cuda:" + std::to_string(i)) + " is nvidia-smi's GPU " + std::to_string(physical[i]);
  return text.empty() ? "no GPU" : text;
}

// Where the lesson found the GPU it wanted: "found at cuda:1", "not found" for -1, any other
// value as it reads.
std::string where_found(const nlohmann::json& index) {
  if (!index.is_number_integer()) return "the lesson recorded " + index.dump();
  const int i = index.get<int>();
  return i == -1 ? "not found" : "found at cuda:" + std::to_string(i);
}

// nvidia-smi's number a fact recorded: "nvidia-smi's GPU 1", any other value as it reads.
std::string smi_number(const nlohmann::json& number) {
  return number.is_number_integer() ? "nvidia-smi's GPU " + std::to_string(number.get<int>()) : number.dump();
}

std::string contexts_on(const std::vector<int>& physical) {
  return "CUDA contexts on " + gpus(std::set<int>(physical.begin(), physical.end()));
}

LessonRun run_under(const Order& order, std::optional<std::string> visible, std::vector<std::string> args = {},
                    const std::string& node_name = kNode) {
  const auto lists = smi_lists(node_name);
  args.insert(args.end(), {"--smi-bus-ids", lists.bus_ids, "--smi-uuids", lists.uuids});
  return run_scenario("07", {{"GPULAB_NODE", node_name}, {"CUDA_DEVICE_ORDER", order.value},
                           {"CUDA_VISIBLE_DEVICES", std::move(visible)}},
                    args);
}

// Every cuda:i's number, as the program claims it (fact `key` + i), is nvidia-smi's number of
// the GPU its tensor on cuda:i was observed on — and the one the node's order predicts.
void check_map(const Order& order, const std::optional<std::string>& visible, const std::string& node_name,
               const std::string& key = "nvidia_smi_number_of_cuda:") {
  const std::string when = " (" + std::string(node_name) + ", " + order.name + ", " +
                           (visible ? "CUDA_VISIBLE_DEVICES=" + *visible : std::string("CUDA_VISIBLE_DEVICES unset")) +
                           ")";
  const auto run = run_under(order, visible, {}, node_name);
  const auto expected = visible_physical(visible, {{"GPULAB_NODE", node_name}, {"CUDA_DEVICE_ORDER", order.value}});
  const auto& count = run.fact("device_count");
  require_that(count == static_cast<int>(expected.size()),
               "torch::cuda::device_count() = " + std::to_string(expected.size()) + when,
               "torch::cuda::device_count() = " + count.dump());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const std::string cuda = "cuda:" + std::to_string(i);
    const int observed_gpu = run.physical_of("one tensor per CUDA device", cuda);
    expect_that(observed_gpu == expected[i], "the tensor made on " + cuda + " " + placement(expected[i]) + when,
                "it is " + placement(observed_gpu));
    const auto& claimed = run.fact(key + std::to_string(i));
    expect_that(claimed == observed_gpu,
                cuda + " mapped to nvidia-smi's GPU " + std::to_string(observed_gpu) + ", where its tensor is" + when,
                "mapped to " + smi_number(claimed));
  }
}
}  // namespace

// Ends the test case, as GPULAB_REQUIRE_GPUS does, on a machine that cannot show the lesson.
#define GPULAB_REQUIRE_MIXED_GPUS()                              \
  do {                                                           \
    if (const auto lesson07_missing_ = missing_mixed_gpus()) {   \
      WARN(*lesson07_missing_);                                  \
      return;                                                    \
    }                                                            \
  } while (false)

TEST_CASE("the node's fastest GPU is not its first on the PCI bus, so the two orders differ", "[lesson07]") {
  GPULAB_REQUIRE_MIXED_GPUS();
  const auto fastest_first = cuda_order(kOrders[0]);
  const auto pci = cuda_order(kOrders[2]);
  expect_that(fastest_first != pci,
              "CUDA numbers the GPUs of " + kNode + " differently by default (FASTEST_FIRST) than under PCI_BUS_ID",
              "both orders say " + numbering(pci));
}

TEST_CASE("CUDA_VISIBLE_DEVICES=0 is the fastest GPU by default and nvidia-smi's GPU 0 under PCI_BUS_ID",
          "[lesson07]") {
  GPULAB_REQUIRE_MIXED_GPUS();
  for (const auto& order : kOrders) {
    const std::string when = std::string(" (CUDA_VISIBLE_DEVICES=0, ") + order.name + ")";
    const auto run = run_under(order, "0");
    const auto& count = run.fact("device_count");
    expect_that(count == 1, "torch::cuda::device_count() = 1" + when, "torch::cuda::device_count() = " + count.dump());
    const int expected = cuda_order(order).front();
    const int observed = run.physical_of("on cuda:0", "first");
    expect_that(observed == expected, "the tensor made on cuda:0 lands " + placement(expected) + when,
                "it is " + placement(observed));
    const auto contexts = run.contexts("on cuda:0");
    expect_that(contexts == std::vector<int>{expected}, "a CUDA context on " + gpus({expected}) + " only" + when,
                contexts_on(contexts));
  }
}

TEST_CASE("workstation-mixed: every cuda:i mapped to nvidia-smi's number, in every order and for several lists",
          "[lesson07]") {
  GPULAB_REQUIRE_MIXED_GPUS();
  for (const auto& order : kOrders)
    for (const std::optional<std::string>& visible : {std::optional<std::string>{}, std::optional<std::string>{"2,0"},
                                                      std::optional<std::string>{"3,1,2"}})
      check_map(order, visible, kNode);
}

TEST_CASE("workstation-mixed: lists that name GPUs by UUID, alone or beside an index, in every order", "[lesson07]") {
  GPULAB_REQUIRE_MIXED_GPUS();
  const auto uuids = gpu_uuids(kNodeEnv);
  for (const auto& order : kOrders) {
    check_map(order, uuids.at(2) + "," + uuids.at(0), kNode);
    check_map(order, uuids.at(3) + ",1", kNode);  // an index after a UUID ends the list
  }
}

TEST_CASE("pascal-rig, dgx-a100 and aws-p4d: every cuda:i mapped to nvidia-smi's number", "[lesson07]") {
  if (!simulated()) {
    WARN("needs 4 GPUs, found 0 of pascal-rig: these nodes are simulated ones");
    return;
  }
  for (const auto& order : {kOrders[0], kOrders[2]})
    for (const std::optional<std::string>& visible : {std::optional<std::string>{}, std::optional<std::string>{"3,1"}})
      check_map(order, visible, "pascal-rig");
  check_map(kOrders[0], std::string("6,2,7"), "dgx-a100");
  check_map(kOrders[0], std::string("5,2"), "aws-p4d");
}

TEST_CASE("the batch lands on the GPU nvidia-smi names, whatever CUDA's order", "[lesson07]") {
  GPULAB_REQUIRE_MIXED_GPUS();
  const int gpus_on_node = physical_gpus(kNodeEnv);
  for (const auto& order : {kOrders[0], kOrders[2]}) {  // FASTEST_FIRST is the unset default
    for (int smi = 0; smi < gpus_on_node; ++smi) {
      const std::string when = std::string(" (") + order.name + ")";
      const auto run = run_under(order, std::nullopt, {"--gpu", std::to_string(smi)});
      const auto cuda = cuda_order(order);
      const auto expected_index = std::find(cuda.begin(), cuda.end(), smi) - cuda.begin();
      const auto& found = run.fact("cuda_index_of_wanted_gpu");
      expect_that(found == expected_index,
                  "nvidia-smi's GPU " + std::to_string(smi) + " found at cuda:" + std::to_string(expected_index) + when,
                  where_found(found));
      if (!found.is_number_integer() || found.get<int>() < 0) continue;  // reported just above
      const int observed = run.physical_of("on the wanted GPU", "batch");
      expect_that(observed == smi,
                  "the batch " + placement(smi) + ", the one nvidia-smi numbers " + std::to_string(smi) + when,
                  "the batch " + placement(observed));
    }
  }
}

TEST_CASE("nvidia-smi's GPU 0 is not found when CUDA_VISIBLE_DEVICES=0 selects another GPU", "[lesson07]") {
  GPULAB_REQUIRE_MIXED_GPUS();
  for (const auto& order : kOrders) {
    const auto cuda = cuda_order(order);
    if (cuda.front() == 0) continue;  // under this order the variable does select nvidia-smi's GPU 0
    const std::string when =
        std::string(" (CUDA_VISIBLE_DEVICES=0 shows only ") + gpus({cuda.front()}) + ", " + order.name + ")";
    const auto run = run_under(order, "0", {"--gpu", "0"});
    const auto& found = run.fact("cuda_index_of_wanted_gpu");
    expect_that(found == -1, "nvidia-smi's GPU 0 not found" + when, where_found(found));
    const auto contexts = run.contexts("on cuda:0");
    expect_that(contexts == std::vector<int>{cuda.front()},
                "a CUDA context on " + gpus({cuda.front()}) + " only" + when, contexts_on(contexts));
    // Not found, so no batch: not on cuda:0 nor anywhere else.
    std::string batch;
    for (const auto& o : run.report.at("observations"))
      for (const auto& t : o.at("tensors"))
        if (t.value("name", "") == "batch") batch = t.value("device", "");
    expect_that(batch.empty(), "no batch on any GPU: the GPU asked for is not visible" + when, "a batch on " + batch);
  }
}

TEST_CASE("stretch: the same map through the GPUs' PCI bus ids", "[lesson07][stretch]") {
  const std::string key = "nvidia_smi_number_by_bus_id_of_cuda:";
  GPULAB_REQUIRE_MIXED_GPUS();
  for (const auto& order : {kOrders[0], kOrders[2]})
    for (const std::optional<std::string>& visible : {std::optional<std::string>{}, std::optional<std::string>{"2,0"}})
      check_map(order, visible, kNode, key);
  if (!simulated()) return;
  check_map(kOrders[0], std::string("3,1"), "pascal-rig", key);
  // Two GPUs on each PCI bus (00000000:10:1C.0, 00000000:10:1D.0, ...): only the whole
  // location, device number included, tells them apart.
  check_map(kOrders[0], std::nullopt, "aws-p4d", key);
  check_map(kOrders[0], std::string("5,2"), "aws-p4d", key);
}

// Generated: nodes of like and unlike GPUs, CUDA_DEVICE_ORDER, lists of every kind but MIG,
// and the GPU asked for; nvidia-smi's number of every cuda:i, the wanted GPU's index and
// where its batch lands, as the reference solution. The stretch's: the same through bus ids.
namespace {
Family lesson07_family(bool stretch) {
  Family family;
  family.lesson = "07";
  family.what = stretch ? "nodes, orders and lists, mapped through the PCI bus ids" : "nodes, orders, lists and the GPU asked for";
  for (int i = 0; i < 8; ++i)
    family.facts.push_back((stretch ? "nvidia_smi_number_by_bus_id_of_cuda:" : "nvidia_smi_number_of_cuda:") + std::to_string(i));
  if (!stretch) family.facts.push_back("cuda_index_of_wanted_gpu");
  family.draw = [](Rng& rng) {
    const std::string name = draw_one(rng, {"workstation-mixed", "pascal-rig", "dgx-a100", "aws-p4d"});
    ListKinds kinds = every_kind();
    kinds.mig = false;
    Drawn drawn;
    drawn.env = {{"GPULAB_NODE", name}};
    if (draw_int(rng, 0, 2) != 0) drawn.env.emplace_back("CUDA_VISIBLE_DEVICES", draw_visible_list(rng, name, kinds, 4));
    if (draw_int(rng, 0, 2) != 0) drawn.env.emplace_back("CUDA_DEVICE_ORDER", draw_one(rng, {"PCI_BUS_ID", "FASTEST_FIRST"}));
    std::string uuids, bus_ids;
    const gpulab::Node drawn_on = node(name);
    for (const auto& gpu : drawn_on.gpus) {
      uuids += (uuids.empty() ? "" : ",") + gpu.uuid;
      bus_ids += (bus_ids.empty() ? "" : ",") + gpu.pci_bus_id;
    }
    drawn.args = {"--smi-bus-ids", bus_ids, "--smi-uuids", uuids, "--gpu",
                  std::to_string(draw_int(rng, 0, static_cast<int>(drawn_on.gpus.size()) - 1))};
    return drawn;
  };
  return family;
}
}  // namespace

TEST_CASE("generated scenarios: nodes, CUDA_DEVICE_ORDER, lists of every kind and the GPU asked for", "[lesson07]") {
  check_against_reference(lesson07_family(/*stretch=*/false));
}

TEST_CASE("stretch: generated scenarios, the map through the PCI bus ids", "[lesson07][stretch]") {
  check_against_reference(lesson07_family(/*stretch=*/true));
}
