// NVIDIA_VISIBLE_DEVICES, a container's view (docs/reference.md "Containers and schedulers"):
// the toolkit's reading (nvidia-container-toolkit internal/config/image) and
// libnvidia-container's device selection (src/cli/common.c select_devices).
#include <catch2/catch.hpp>

#include "model/container.h"

using namespace gpulab;

namespace {

Node load(const std::string& name) { return load_node_file(std::string(GPULAB_TEST_SOURCE_DIR) + "/nodes/" + name + ".json"); }

ContainerView view_of(const Node& host, const char* value) { return container_view(host, std::string(value)); }

std::vector<int> host_gpus(const Node& host, const char* value) { return view_of(host, value).host_gpus; }

std::vector<int> cuda_on_host(const Node& host, const char* nvd, const std::optional<std::string>& cvd,
                              DeviceOrder order = DeviceOrder::FastestFirst) {
  std::vector<int> out;
  for (const auto& device : visible_devices(host, view_of(host, nvd), cvd, order)) out.push_back(device.physical_index);
  return out;
}

}  // namespace

TEST_CASE("an unset NVIDIA_VISIBLE_DEVICES is the host's view", "[container]") {
  const Node host = load("dgx-a100");
  const ContainerView view = container_view(host, std::nullopt);
  CHECK_FALSE(view.in_container());
  CHECK(view.has_driver());
  CHECK(visible_devices(host, view, std::string("3"), DeviceOrder::FastestFirst).front().physical_index == 3);
  CHECK(container_node(host, view).gpus.size() == 8);
}

TEST_CASE("a container gets the listed host GPUs, numbered from 0 in PCI order", "[container]") {
  const Node host = load("dgx-a100");
  CHECK(host_gpus(host, "2,3") == std::vector<int>{2, 3});
  SECTION("whatever order the list names them in") { CHECK(host_gpus(host, "5,1") == std::vector<int>{1, 5}); }
  SECTION("by full GPU- UUID, in any case") {
    CHECK(host_gpus(host, "GPU-7c8e4071-2b59-6ba9-31fe-97ea8c90cab1,GPU-693D8605-B771-EAA5-90BF-CA56AD9548C5") ==
          std::vector<int>{2, 7});
  }
  SECTION("by PCI bus id, with or without the long domain") {
    CHECK(host_gpus(host, "00000000:4E:00.0") == std::vector<int>{3});
    CHECK(host_gpus(host, "0000:b7:00.0") == std::vector<int>{6});
  }
  SECTION("spaces and empty entries are dropped, repeats count once") {
    CHECK(host_gpus(host, " 2 ,,3,2") == std::vector<int>{2, 3});
  }
  SECTION("the container's node keeps each GPU's real identity") {
    const Node inside = container_node(host, view_of(host, "6,2"));
    REQUIRE(inside.gpus.size() == 2);
    CHECK(inside.gpus[0].uuid == host.gpus[2].uuid);
    CHECK(inside.gpus[1].pci_bus_id == host.gpus[6].pci_bus_id);
  }
}

TEST_CASE("CUDA_VISIBLE_DEVICES inside a container counts in the container's GPUs", "[container]") {
  const Node host = load("dgx-a100");
  CHECK(cuda_on_host(host, "2,3", std::nullopt) == std::vector<int>{2, 3});
  CHECK(cuda_on_host(host, "2,3", std::string("1")) == std::vector<int>{3});
  CHECK(cuda_on_host(host, "3,2", std::string("1,0")) == std::vector<int>{3, 2});
  SECTION("an index past the container's GPUs ends the list, as on a host") {
    CHECK(cuda_on_host(host, "2,3", std::string("1,2,0")) == std::vector<int>{3});
    const auto note = explain_visibility(host, view_of(host, "2,3"), std::string("1,2,0"), DeviceOrder::FastestFirst);
    REQUIRE(note);
    CHECK_THAT(*note, Catch::Contains("this node has 2 (0 to 1)"));
  }
  SECTION("CUDA's FASTEST_FIRST order applies among the container's GPUs") {
    const Node mixed = load("workstation-mixed");  // GPU 1 (RTX 4090) is the fastest
    CHECK(cuda_on_host(mixed, "0,2", std::nullopt) == std::vector<int>{2, 0});
    CHECK(cuda_on_host(mixed, "0,2", std::nullopt, DeviceOrder::PciBusId) == std::vector<int>{0, 2});
    CHECK(cuda_on_host(mixed, "all", std::nullopt) == std::vector<int>{1, 0, 2, 3});
  }
  SECTION("a node's observed CUDA order keeps its relative order") {
    const Node rig = load("pascal-rig");  // observed 1, 0, 2, 3
    CHECK(cuda_on_host(rig, "3,0,1", std::nullopt) == std::vector<int>{1, 0, 3});
  }
}

TEST_CASE("all, none, void and empty", "[container]") {
  const Node host = load("dgx-a100");
  CHECK(view_of(host, "all").kind == ContainerView::Kind::All);
  CHECK(host_gpus(host, "all").size() == 8);
  CHECK(view_of(host, "2,all").kind == ContainerView::Kind::All);
  CHECK(view_of(host, "2,ALL").kind == ContainerView::Kind::All);  // nvidia-container-cli's case-blind "all"
  CHECK(view_of(host, "none").kind == ContainerView::Kind::None);
  CHECK(view_of(host, "none,all").kind == ContainerView::Kind::None);  // the first of the two wins
  CHECK(view_of(host, "none").has_driver());
  for (const char* no_gpu_container : {"", "void", "2,void", " , "}) {
    const ContainerView view = view_of(host, no_gpu_container);
    CHECK(view.kind == ContainerView::Kind::Void);
    CHECK_FALSE(view.has_driver());
    CHECK(view.host_gpus.empty());
    CHECK(visible_devices(host, view, std::nullopt, DeviceOrder::FastestFirst).empty());
    CHECK(explain_visibility(host, view, std::nullopt, DeviceOrder::FastestFirst));
  }
  CHECK_THAT(*explain_visibility(host, view_of(host, "none"), std::nullopt, DeviceOrder::FastestFirst),
             Catch::Contains("no GPU"));
}

TEST_CASE("an entry the host does not have fails the container's start, naming the variable", "[container]") {
  const Node host = load("dgx-a100");
  for (const char* bad : {"2,8", "-1", "2x", "GPU-693d8605", "0000:99:00.0", "MIG-nothing", "0:0", "1.5"}) {
    CAPTURE(bad);
    try {
      (void)view_of(host, bad);
      FAIL("accepted");
    } catch (const ContainerError& e) {
      const std::string what = e.what();
      CHECK_THAT(what, Catch::StartsWith(std::string("NVIDIA_VISIBLE_DEVICES=") + bad));
      CHECK_THAT(what, Catch::Contains("unknown device"));
      CHECK_THAT(what, Catch::Contains("GPUs 0 to 7"));
    }
  }
  CHECK(host_gpus(host, "+2,-0") == std::vector<int>{0, 2});  // strtoumax reads the sign
}

TEST_CASE("MIG devices by GPU:MIG or full MIG- UUID bring their GPU with that instance only", "[container]") {
  const Node host = load("mig-a100");
  const ContainerView by_index = view_of(host, "0:1");
  REQUIRE(by_index.host_gpus == std::vector<int>{0});
  CHECK(by_index.mig_instances.front() == std::vector<int>{1});
  const auto devices = visible_devices(host, by_index, std::nullopt, DeviceOrder::FastestFirst);
  REQUIRE(devices.size() == 1);
  CHECK(devices.front().physical_index == 0);
  CHECK(devices.front().mig_index == 1);
  const ContainerView by_uuid = view_of(host, "MIG-3caefc2b-8575-8ea9-1c58-85592eba167a,1");
  CHECK(by_uuid.host_gpus == std::vector<int>{0, 1});
  CHECK(by_uuid.mig_instances.front() == std::vector<int>{1});
  CHECK(view_of(host, "0").mig_instances.front() == std::vector<int>{0, 1});
  CHECK_THROWS_AS(view_of(host, "0:2"), ContainerError);
}
