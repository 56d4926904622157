// Lesson 07: CUDA numbers GPUs FASTEST_FIRST unless CUDA_DEVICE_ORDER=PCI_BUS_ID, while
// nvidia-smi numbers them in PCI bus order (claim A2.8). On the simulated node expectations
// come from the workstation-mixed node file: its compute capabilities and its PCI order. On
// real GPUs they come from CUDA's order as `gpulab devices` sees it, and the checks need GPUs
// that CUDA numbers differently from nvidia-smi.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "gpu_requirements.h"
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
std::vector<int> cuda_order(const Order& order) {
  return gpulab::test::cuda_order({{"GPULAB_NODE", kNode}, {"CUDA_DEVICE_ORDER", order.value}});
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

LessonRun run_under(const Order& order, std::optional<std::string> visible, const std::vector<std::string>& args = {}) {
  return run_lesson("07", {{"GPULAB_NODE", kNode}, {"CUDA_DEVICE_ORDER", order.value},
                           {"CUDA_VISIBLE_DEVICES", std::move(visible)}},
                    args);
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

TEST_CASE("the lesson maps every CUDA number to nvidia-smi's number in the order in force", "[lesson07]") {
  GPULAB_REQUIRE_MIXED_GPUS();
  for (const auto& order : kOrders) {
    const std::string when = std::string(" (") + order.name + ")";
    const auto run = run_under(order, std::nullopt);
    const auto expected = cuda_order(order);
    const auto& count = run.fact("device_count");
    if (!(count == static_cast<int>(expected.size())))
      FAIL("expected: torch::cuda::device_count() = " << expected.size() << when
                                                      << " — observed: torch::cuda::device_count() = " << count.dump());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const auto& observed = run.fact("nvidia_smi_number_of_cuda:" + std::to_string(i));
      expect_that(observed == expected[i],
                  "cuda:" + std::to_string(i) + " mapped to nvidia-smi's GPU " + std::to_string(expected[i]) + when,
                  "mapped to " + smi_number(observed));
    }
  }
}

TEST_CASE("the batch lands on the GPU nvidia-smi names, whatever CUDA's order", "[lesson07]") {
  GPULAB_REQUIRE_MIXED_GPUS();
  const int gpus_on_node = physical_gpus(kNodeEnv);
  for (const auto& order : {kOrders[0], kOrders[2]}) {  // FASTEST_FIRST is the unset default
    for (int smi = 0; smi < gpus_on_node; ++smi) {
      const std::string when = std::string(" (") + order.name + ")";
      const auto run = run_under(order, std::nullopt, {std::to_string(smi)});
      const auto cuda = cuda_order(order);
      const auto expected_index = std::find(cuda.begin(), cuda.end(), smi) - cuda.begin();
      const auto& found = run.fact("cuda_index_of_wanted_gpu");
      expect_that(found == expected_index,
                  "nvidia-smi's GPU " + std::to_string(smi) + " found at cuda:" + std::to_string(expected_index) + when,
                  where_found(found));
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
    const auto run = run_under(order, "0", {"0"});
    const auto& found = run.fact("cuda_index_of_wanted_gpu");
    expect_that(found == -1, "nvidia-smi's GPU 0 not found" + when, where_found(found));
    const auto contexts = run.contexts("on cuda:0");
    expect_that(contexts == std::vector<int>{cuda.front()},
                "a CUDA context on " + gpus({cuda.front()}) + " only" + when, contexts_on(contexts));
  }
}
