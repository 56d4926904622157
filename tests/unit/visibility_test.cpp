// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER rules (docs/reference.md, "Visibility").
// Vectors from the CUDA Programming Guide and PyTorch's test_cuda_nvml_based_avail.py.
#include <catch2/catch.hpp>

#include "gpulab/visibility.h"

using namespace gpulab;

namespace {
Node load(const std::string& name) { return load_node_file(std::string(GPULAB_TEST_SOURCE_DIR) + "/nodes/" + name + ".json"); }

std::vector<int> physical(const Node& node, const std::optional<std::string>& cvd,
                          DeviceOrder order = DeviceOrder::FastestFirst) {
  std::vector<int> out;
  for (const auto& device : visible_devices(node, cvd, order)) out.push_back(device.physical_index);
  return out;
}
}  // namespace

TEST_CASE("integer lists are renumbered in list order and stop at the first invalid entry", "[visibility]") {
  const Node node = load("dgx-a100");
  CHECK(physical(node, std::nullopt) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(physical(node, std::string("2,3,4,5")) == std::vector<int>{2, 3, 4, 5});
  CHECK(physical(node, std::string("5,2")) == std::vector<int>{5, 2});
  CHECK(physical(node, std::string("0,2,-1,1")) == std::vector<int>{0, 2});  // the Guide's example
  CHECK(physical(node, std::string("")).empty());
  CHECK(physical(node, std::string("-1")).empty());
  CHECK(physical(node, std::string("4,3,two")) == std::vector<int>{4, 3});
  CHECK(physical(node, std::string("1gpu2,2ampere")) == std::vector<int>{1, 2});
  CHECK(physical(node, std::string("+3")) == std::vector<int>{3});
  CHECK(physical(node, std::string("-0")) == std::vector<int>{0});
  CHECK(physical(node, std::string(" 1, 2")) == std::vector<int>{1, 2});
  CHECK(physical(node, std::string("0,9,1")) == std::vector<int>{0});  // out of range ends the list
  CHECK(physical(node, std::string("0,1,2,1")).empty());                // any duplicate empties it
  CHECK(physical(node, std::string("0,0")).empty());
}
