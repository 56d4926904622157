// Lesson 07: CUDA numbers GPUs FASTEST_FIRST unless CUDA_DEVICE_ORDER=PCI_BUS_ID, while
// nvidia-smi numbers them in PCI bus order (claim A2.8). On the simulated node expectations
// come from the workstation-mixed node file: its compute capabilities and its PCI order. On
// real GPUs they come from CUDA's order as `gpulab devices` sees it, and the checks need GPUs
// that CUDA numbers differently from nvidia-smi.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

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
  CHECK(cuda_order(kOrders[0]) != cuda_order(kOrders[2]));
}

TEST_CASE("CUDA_VISIBLE_DEVICES=0 is the fastest GPU by default and nvidia-smi's GPU 0 under PCI_BUS_ID",
          "[lesson07]") {
  GPULAB_REQUIRE_MIXED_GPUS();
  for (const auto& order : kOrders) {
    INFO(order.name);
    const auto run = run_under(order, "0");
    CHECK(run.fact("device_count") == 1);
    const int expected = cuda_order(order).front();
    CHECK(run.physical_of("on cuda:0", "first") == expected);
    CHECK(run.contexts("on cuda:0") == std::vector<int>{expected});
  }
}

TEST_CASE("the lesson maps every CUDA number to nvidia-smi's number in the order in force", "[lesson07]") {
  GPULAB_REQUIRE_MIXED_GPUS();
  for (const auto& order : kOrders) {
    INFO(order.name);
    const auto run = run_under(order, std::nullopt);
    const auto expected = cuda_order(order);
    REQUIRE(run.fact("device_count") == static_cast<int>(expected.size()));
    for (std::size_t i = 0; i < expected.size(); ++i) {
      INFO("cuda:" << i);
      CHECK(run.fact("nvidia_smi_number_of_cuda:" + std::to_string(i)) == expected[i]);
    }
  }
}

TEST_CASE("the batch lands on the GPU nvidia-smi names, whatever CUDA's order", "[lesson07]") {
  GPULAB_REQUIRE_MIXED_GPUS();
  const int gpus = physical_gpus(kNodeEnv);
  for (const auto& order : {kOrders[0], kOrders[2]}) {  // FASTEST_FIRST is the unset default
    for (int smi = 0; smi < gpus; ++smi) {
      INFO(order.name << ", nvidia-smi's GPU " << smi);
      const auto run = run_under(order, std::nullopt, {std::to_string(smi)});
      const auto cuda = cuda_order(order);
      const auto expected_index = std::find(cuda.begin(), cuda.end(), smi) - cuda.begin();
      CHECK(run.fact("cuda_index_of_wanted_gpu") == expected_index);
      CHECK(run.physical_of("on the wanted GPU", "batch") == smi);
    }
  }
}

TEST_CASE("nvidia-smi's GPU 0 is not found when CUDA_VISIBLE_DEVICES=0 selects another GPU", "[lesson07]") {
  GPULAB_REQUIRE_MIXED_GPUS();
  for (const auto& order : kOrders) {
    const auto cuda = cuda_order(order);
    if (cuda.front() == 0) continue;  // under this order the variable does select nvidia-smi's GPU 0
    INFO(order.name);
    const auto run = run_under(order, "0", {"0"});
    CHECK(run.fact("cuda_index_of_wanted_gpu") == -1);
    CHECK(run.contexts("on cuda:0") == std::vector<int>{cuda.front()});
  }
}
