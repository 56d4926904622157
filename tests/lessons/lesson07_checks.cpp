// Lesson 07: CUDA numbers GPUs FASTEST_FIRST unless CUDA_DEVICE_ORDER=PCI_BUS_ID, while
// nvidia-smi numbers them in PCI bus order (claim A2.8). Expectations come from the
// workstation-mixed node file: its compute capabilities and its PCI order.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "lesson_run.h"

using namespace gpulab::test;

namespace {
const std::string kNode = "workstation-mixed";

struct Order {
  const char* name;
  std::optional<std::string> value;  // CUDA_DEVICE_ORDER, or unset
};
const Order kOrders[] = {{"CUDA_DEVICE_ORDER unset", std::nullopt},
                         {"CUDA_DEVICE_ORDER=FASTEST_FIRST", "FASTEST_FIRST"},
                         {"CUDA_DEVICE_ORDER=PCI_BUS_ID", "PCI_BUS_ID"}};

// Physical (nvidia-smi) numbers in CUDA's order. Node files list GPUs in PCI bus order;
// FASTEST_FIRST puts higher compute capability first, ties in PCI order (BEHAVIOUR.md §2).
std::vector<int> cuda_order(const Order& order) {
  const auto gpus = node(kNode).gpus;
  std::vector<int> physical;
  for (int p = 0; p < static_cast<int>(gpus.size()); ++p) physical.push_back(p);
  if (order.value == std::optional<std::string>("PCI_BUS_ID")) return physical;
  const auto capability = [&](int p) {
    const auto& gpu = gpus[static_cast<std::size_t>(p)];
    return gpu.cc_major * 10 + gpu.cc_minor;
  };
  std::stable_sort(physical.begin(), physical.end(), [&](int a, int b) { return capability(a) > capability(b); });
  return physical;
}

LessonRun run_under(const Order& order, std::optional<std::string> visible, const std::vector<std::string>& args = {}) {
  return run_lesson("07", {{"GPULAB_NODE", kNode}, {"CUDA_DEVICE_ORDER", order.value},
                           {"CUDA_VISIBLE_DEVICES", std::move(visible)}},
                    args);
}
}  // namespace

TEST_CASE("the node's fastest GPU is not its first on the PCI bus, so the two orders differ", "[lesson07]") {
  CHECK(cuda_order(kOrders[0]) != cuda_order(kOrders[2]));
}

TEST_CASE("CUDA_VISIBLE_DEVICES=0 is the fastest GPU by default and nvidia-smi's GPU 0 under PCI_BUS_ID",
          "[lesson07]") {
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
  const int gpus = static_cast<int>(node(kNode).gpus.size());
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
  for (const auto& order : kOrders) {
    const auto cuda = cuda_order(order);
    if (cuda.front() == 0) continue;  // under this order the variable does select nvidia-smi's GPU 0
    INFO(order.name);
    const auto run = run_under(order, "0", {"0"});
    CHECK(run.fact("cuda_index_of_wanted_gpu") == -1);
    CHECK(run.contexts("on cuda:0") == std::vector<int>{cuda.front()});
  }
}
