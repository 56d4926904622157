// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER end to end: read once, at the first CUDA call,
// and applied in CUDA's enumeration order. Each case runs its own process.
#include <catch2/catch.hpp>

#include "model/visibility.h"
#include "sim_support.h"

using namespace gpulab::test;

namespace {

std::vector<int> physical_of(const nlohmann::json& report) {
  std::vector<int> physical;
  for (const auto& device : report.at("devices")) physical.push_back(device.at("physical_index").get<int>());
  return physical;
}

std::vector<int> cuda_indices(const nlohmann::json& report) {
  std::vector<int> indices;
  for (const auto& device : report.at("devices")) indices.push_back(device.at("cuda_index").get<int>());
  return indices;
}

}  // namespace

TEST_CASE("CUDA_VISIBLE_DEVICES set by a program before its first CUDA call takes effect", "[sim][environment]") {
  const auto results = probe({}, {"setenv:CUDA_VISIBLE_DEVICES=5,6", "count", "physical"});
  INFO(results.dump(2));
  CHECK(results[1]["count"] == 2);
  CHECK(results[2]["physical"] == std::vector<int>{5, 6});
}

TEST_CASE("CUDA_VISIBLE_DEVICES set by a program after its first CUDA call is ignored", "[sim][environment]") {
  const auto gpus = static_cast<int>(node().gpus.size());
  std::vector<int> all(static_cast<std::size_t>(gpus));
  for (int i = 0; i < gpus; ++i) all[static_cast<std::size_t>(i)] = i;  // identical GPUs: PCI order

  const auto results = probe({}, {"count", "setenv:CUDA_VISIBLE_DEVICES=5,6", "count", "physical", "ones:cuda:7"});
  INFO(results.dump(2));
  CHECK(results[0]["count"] == gpus);
  CHECK(results[2]["count"] == gpus);
  CHECK(results[3]["physical"] == all);
  CHECK(results[4]["physical"] == 7);
}

TEST_CASE("gpulab devices under CUDA_VISIBLE_DEVICES=2,3,4,5 lists physical GPUs 2-5 as CUDA 0-3",
          "[sim][environment][cli]") {
  const auto report = devices_report({{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}});
  INFO(report.dump(2));
  CHECK(report["physical_gpus"] == node().gpus.size());
  CHECK(cuda_indices(report) == std::vector<int>{0, 1, 2, 3});
  CHECK(physical_of(report) == std::vector<int>{2, 3, 4, 5});
  for (const auto& device : report["devices"])
    CHECK(device["uuid"] == node().gpus.at(device["physical_index"].get<std::size_t>()).uuid);
}

TEST_CASE("on the mixed workstation FASTEST_FIRST numbers the fastest GPU 0, PCI_BUS_ID follows nvidia-smi",
          "[sim][environment][cli]") {
  const auto mixed = node("workstation-mixed");
  const auto fastest = fastest_first(mixed);
  std::vector<int> pci(mixed.gpus.size());
  for (std::size_t i = 0; i < pci.size(); ++i) pci[i] = static_cast<int>(i);
  REQUIRE(fastest != pci);  // the node exists to make the two orders differ

  SECTION("unset, FASTEST_FIRST and unknown values give the fastest-first order") {
    for (const Env& order : {Env{}, Env{{"CUDA_DEVICE_ORDER", "FASTEST_FIRST"}}, Env{{"CUDA_DEVICE_ORDER", "pci-bus"}}}) {
      Env env{{"GPULAB_NODE", "workstation-mixed"}};
      env.insert(env.end(), order.begin(), order.end());
      const auto report = devices_report(env);
      INFO(report.dump(2));
      CHECK(physical_of(report) == fastest);
      CHECK(report["devices"][0]["name"] == mixed.gpus.at(static_cast<std::size_t>(fastest[0])).name);
    }
  }
  SECTION("PCI_BUS_ID gives nvidia-smi's order") {
    const auto report = devices_report({{"GPULAB_NODE", "workstation-mixed"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}});
    INFO(report.dump(2));
    CHECK(report["device_order"] == "PCI_BUS_ID");
    CHECK(physical_of(report) == pci);
  }
  SECTION("CUDA_VISIBLE_DEVICES indices count in the chosen order") {
    const auto by_speed = devices_report({{"GPULAB_NODE", "workstation-mixed"}, {"CUDA_VISIBLE_DEVICES", "0,2"}});
    CHECK(physical_of(by_speed) == std::vector<int>{fastest[0], fastest[2]});
    const auto by_bus = devices_report(
        {{"GPULAB_NODE", "workstation-mixed"}, {"CUDA_VISIBLE_DEVICES", "0,2"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}});
    CHECK(physical_of(by_bus) == std::vector<int>{0, 2});
  }
  SECTION("a tensor on cuda:0 lands on the fastest GPU, or on GPU 0 by PCI order") {
    const auto by_speed = probe({{"GPULAB_NODE", "workstation-mixed"}}, {"ones:cuda:0"});
    CHECK(by_speed[0]["physical"] == fastest[0]);
    const auto by_bus = probe({{"GPULAB_NODE", "workstation-mixed"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}, {"ones:cuda:0"});
    CHECK(by_bus[0]["physical"] == 0);
  }
}
