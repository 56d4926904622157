// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER rules (BEHAVIOUR.md §1-2, docs/reference.md
// "Visibility"). Vectors from the CUDA Programming Guide ("CUDA Environment Variables") and
// PyTorch's test/test_cuda_nvml_based_avail.py (TestVisibleDeviceParses), which encodes the
// driver's observed parsing.
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

std::vector<int> physical(const Node& node, const char* cvd, DeviceOrder order = DeviceOrder::FastestFirst) {
  return physical(node, std::optional<std::string>(cvd), order);
}

// A node of identical GPUs with these UUIDs, in this (PCI) order.
Node node_with_uuids(const std::vector<std::string>& uuids) {
  Node node;
  node.name = "uuids";
  for (std::size_t i = 0; i < uuids.size(); ++i) {
    Gpu gpu;
    gpu.name = "GPU " + std::to_string(i);
    gpu.uuid = uuids[i];
    gpu.cc_major = 8;
    gpu.total_bytes = 1ull << 30;
    node.gpus.push_back(gpu);
  }
  return node;
}

// The GPU UUIDs of PyTorch's test_partial_uuid_resolver, in NVML order.
const std::vector<std::string> kPytorchUuids = {
    "GPU-9942190a-aa31-4ff1-4aa9-c388d80f85f1", "GPU-9e8d35e3-a134-0fdd-0e01-23811fdbd293",
    "GPU-e429a63e-c61c-4795-b757-5132caeb8e70", "GPU-eee1dfbc-0a0f-6ad8-5ff6-dc942a8b9d98",
    "GPU-bbcd6503-5150-4e92-c266-97cc4390d04e", "GPU-472ea263-58d7-410d-cc82-f7fdece5bd28",
    "GPU-e56257c4-947f-6a5b-7ec9-0f45567ccf4e", "GPU-1c20e77d-1c1a-d9ed-fe37-18b8466a78ad"};

}  // namespace

TEST_CASE("unset CUDA_VISIBLE_DEVICES shows every GPU and set but empty shows none", "[visibility]") {
  const Node node = load("dgx-a100");
  CHECK(physical(node, std::nullopt) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(physical(node, "").empty());
}

TEST_CASE("integer lists are renumbered in list order and stop at the first invalid entry", "[visibility]") {
  const Node node = load("dgx-a100");
  CHECK(physical(node, "2,3,4,5") == std::vector<int>{2, 3, 4, 5});
  CHECK(physical(node, "5,2") == std::vector<int>{5, 2});
  CHECK(physical(node, "0,2,-1,1") == std::vector<int>{0, 2});  // the Guide's example
  CHECK(physical(node, "-1").empty());
  CHECK(physical(node, "-1,0").empty());

  SECTION("PyTorch's test_env_var_parsing vectors") {
    CHECK(physical(node, "1gpu2,2ampere") == std::vector<int>{1, 2});  // the rest of an entry is ignored
    CHECK(physical(node, "0, 1, 2, -1, 3") == std::vector<int>{0, 1, 2});  // a negative ends the list
    CHECK(physical(node, "0, 1, 2, 1").empty());                          // a repeated ordinal empties it
    CHECK(physical(node, "2, +3, -0, 5") == std::vector<int>{2, 3, 0, 5});  // unary plus and minus
    CHECK(physical(node, "one,two,3,4").empty());                         // no leading number: ends the list
    CHECK(physical(node, "4,3,two,one") == std::vector<int>{4, 3});
  }
  SECTION("entries are read like strtoul: leading whitespace skipped, sign, then leading digits") {
    CHECK(physical(node, " 1, 2") == std::vector<int>{1, 2});
    CHECK(physical(node, "\t3,\n4") == std::vector<int>{3, 4});
    CHECK(physical(node, "+3") == std::vector<int>{3});
    CHECK(physical(node, "-0") == std::vector<int>{0});
    CHECK(physical(node, "007,1") == std::vector<int>{7, 1});
    CHECK(physical(node, "3 ,4") == std::vector<int>{3, 4});
  }
  SECTION("entries with no number end the list") {
    CHECK(physical(node, "1,,2") == std::vector<int>{1});
    CHECK(physical(node, ",1").empty());
    CHECK(physical(node, "2,") == std::vector<int>{2});
    CHECK(physical(node, "1,+,2") == std::vector<int>{1});
    CHECK(physical(node, "1,-,2") == std::vector<int>{1});
    CHECK(physical(node, "1, x2") == std::vector<int>{1});
    CHECK(physical(node, "1,-3,2") == std::vector<int>{1});
  }
  SECTION("an index past the last GPU ends the list (PyTorch's test_ordinal_parse_visible_devices)") {
    CHECK(physical(node, "0,9,1") == std::vector<int>{0});
    CHECK(physical(node, "0,8") == std::vector<int>{0});
    CHECK(physical(node, "7,0") == std::vector<int>{7, 0});
    CHECK(physical(node, "99999999999999999999,1").empty());
    const Node two = load("tiny2");
    CHECK(physical(two, "1, 0") == std::vector<int>{1, 0});
    CHECK(physical(two, "1, 5, 0") == std::vector<int>{1});
  }
  SECTION("any duplicate before the list ends empties it, even after an out-of-range index") {
    CHECK(physical(node, "0,0").empty());
    CHECK(physical(node, "0,1,2,1").empty());
    CHECK(physical(node, "3,+3").empty());
    CHECK(physical(node, "0,-0").empty());
    CHECK(physical(node, "0,9,0").empty());
    CHECK(physical(node, "0,x,0") == std::vector<int>{0});  // the list had ended before the repeat
  }
}

TEST_CASE("GPU UUID entries select GPUs by unique prefix, in list order", "[visibility]") {
  const Node node = node_with_uuids(kPytorchUuids);

  SECTION("PyTorch's test_partial_uuid_resolver vectors") {
    CHECK(physical(node, "GPU-9e8d35e3") == std::vector<int>{1});
    CHECK(physical(node, "GPU-e4,GPU-9e8d35e3") == std::vector<int>{2, 1});
    CHECK(physical(node, "GPU-9e8d35e3,GPU-1,GPU-47") == std::vector<int>{1, 7, 5});
    CHECK(physical(node, "GPU-123,GPU-9e8d35e3").empty());                      // unknown first: none
    CHECK(physical(node, "GPU-9e8d35e3,GPU-123,GPU-47") == std::vector<int>{1});  // unknown ends the list
    CHECK(physical(node, "GPU-9e8d35e3,GPU-e,GPU-47") == std::vector<int>{1});    // ambiguous ends it
    CHECK(physical(node, "GPU-9e8d35e3,GPU-47,GPU-9e8").empty());                // one GPU twice: none
    // PyTorch drops a list that repeats an entry verbatim before it resolves any of them.
    CHECK(physical(node, "GPU-9e8d35e3,GPU-123,GPU-9e8d35e3").empty());
  }
  SECTION("full UUIDs, and the bare prefix GPU- that matches every GPU") {
    CHECK(physical(node, kPytorchUuids[6] + "," + kPytorchUuids[0]) == std::vector<int>{6, 0});
    CHECK(physical(node, "GPU-").empty());
    CHECK(physical(node, kPytorchUuids[3] + "," + kPytorchUuids[3]).empty());
  }
  SECTION("an entry that does not start with GPU- ends a UUID list") {
    CHECK(physical(node, "GPU-9e8d35e3, 2") == std::vector<int>{1});  // PyTorch: "GPU-123, 2" keeps no ordinal
    CHECK(physical(node, "GPU-9e8d35e3,2,GPU-47") == std::vector<int>{1});
    CHECK(physical(node, "GPU-9e8d35e3, GPU-47") == std::vector<int>{1});  // not stripped: " GPU-" is no UUID
  }
  SECTION("UUIDs ignore CUDA_DEVICE_ORDER: they name physical GPUs") {
    const Node mixed = load("workstation-mixed");
    for (const auto order : {DeviceOrder::FastestFirst, DeviceOrder::PciBusId}) {
      CHECK(physical(mixed, std::optional<std::string>(mixed.gpus[0].uuid), order) == std::vector<int>{0});
      CHECK(physical(mixed, std::optional<std::string>(mixed.gpus[3].uuid + "," + mixed.gpus[2].uuid), order) ==
            std::vector<int>{3, 2});
    }
  }
}

TEST_CASE("MIG entries select one MIG instance at most", "[visibility][mig]") {
  const Node node = load("mig-a100");
  const Gpu& gpu = node.gpus.at(0);
  REQUIRE(gpu.mig.size() >= 2);
  const auto visible = [&](const std::string& cvd) { return visible_devices(node, cvd, DeviceOrder::FastestFirst); };

  SECTION("a MIG UUID selects its instance") {
    const auto devices = visible(gpu.mig[1].uuid);
    REQUIRE(devices.size() == 1);
    CHECK(devices[0].physical_index == 0);
    CHECK(devices[0].mig_index == 1);
    CHECK(total_bytes(node, devices[0]) == gpu.mig[1].total_bytes);
  }
  SECTION("the MIG-<GPU UUID>/<gi>/<ci> form selects the instance with those ids") {
    const std::string entry = "MIG-" + gpu.uuid + "/" + std::to_string(gpu.mig[1].gpu_instance) + "/" +
                              std::to_string(gpu.mig[1].compute_instance);
    const auto devices = visible(entry);
    REQUIRE(devices.size() == 1);
    CHECK(devices[0].mig_index == 1);
  }
  SECTION("a unique prefix selects an instance; an unknown or ambiguous one selects none") {
    const auto devices = visible(gpu.mig[0].uuid.substr(0, 7));
    REQUIRE(devices.size() == 1);
    CHECK(devices[0].mig_index == 0);
    CHECK(visible("MIG-").empty());
    CHECK(visible("MIG-ffffffff").empty());
  }
  SECTION("two MIG instances listed: the process sees only the first") {
    const auto devices = visible(gpu.mig[1].uuid + "," + gpu.mig[0].uuid);
    REQUIRE(devices.size() == 1);
    CHECK(devices[0].mig_index == 1);
  }
  SECTION("a repeated MIG instance empties the list") {
    CHECK(visible(gpu.mig[0].uuid + "," + gpu.mig[0].uuid).empty());
  }
  SECTION("a whole GPU has its full memory") {
    const auto devices = visible_devices(node, std::nullopt, DeviceOrder::FastestFirst);
    REQUIRE(devices.size() == node.gpus.size());
    CHECK(devices[1].mig_index == -1);
    CHECK(total_bytes(node, devices[1]) == node.gpus[1].total_bytes);
  }
}

TEST_CASE("FASTEST_FIRST enumerates higher compute capability first, PCI_BUS_ID in nvidia-smi order",
          "[visibility][order]") {
  const Node mixed = load("workstation-mixed");
  // Expected from the node file: sort by compute capability, descending; ties keep PCI order.
  std::vector<int> fastest{0, 1, 2, 3};
  std::stable_sort(fastest.begin(), fastest.end(), [&](int a, int b) {
    const Gpu& ga = mixed.gpus[static_cast<std::size_t>(a)];
    const Gpu& gb = mixed.gpus[static_cast<std::size_t>(b)];
    return std::make_pair(ga.cc_major, ga.cc_minor) > std::make_pair(gb.cc_major, gb.cc_minor);
  });
  REQUIRE(fastest != std::vector<int>{0, 1, 2, 3});

  CHECK(enumeration_order(mixed, DeviceOrder::FastestFirst) == fastest);
  CHECK(enumeration_order(mixed, DeviceOrder::PciBusId) == std::vector<int>{0, 1, 2, 3});
  CHECK(physical(mixed, std::nullopt, DeviceOrder::FastestFirst) == fastest);
  CHECK(physical(mixed, std::nullopt, DeviceOrder::PciBusId) == std::vector<int>{0, 1, 2, 3});

  SECTION("integer entries index CUDA's enumeration, not nvidia-smi's") {
    CHECK(physical(mixed, "0", DeviceOrder::FastestFirst) == std::vector<int>{fastest[0]});
    CHECK(physical(mixed, "0", DeviceOrder::PciBusId) == std::vector<int>{0});
    CHECK(physical(mixed, "3,1", DeviceOrder::FastestFirst) == std::vector<int>{fastest[3], fastest[1]});
    CHECK(physical(mixed, "3,1", DeviceOrder::PciBusId) == std::vector<int>{3, 1});
  }
  SECTION("ties in compute capability keep PCI bus order") {
    Node node = node_with_uuids({kPytorchUuids[0], kPytorchUuids[1], kPytorchUuids[2], kPytorchUuids[3]});
    const int cc_minor[] = {5, 0, 5, 0};
    const int cc_major[] = {7, 8, 7, 8};
    for (std::size_t i = 0; i < 4; ++i) {
      node.gpus[i].cc_major = cc_major[i];
      node.gpus[i].cc_minor = cc_minor[i];
    }
    CHECK(enumeration_order(node, DeviceOrder::FastestFirst) == std::vector<int>{1, 3, 0, 2});
  }
  SECTION("a minor version counts only within its major version") {
    Node node = node_with_uuids({kPytorchUuids[0], kPytorchUuids[1]});
    node.gpus[0].cc_major = 7;
    node.gpus[0].cc_minor = 5;
    node.gpus[1].cc_major = 8;
    node.gpus[1].cc_minor = 0;
    CHECK(enumeration_order(node, DeviceOrder::FastestFirst) == std::vector<int>{1, 0});
  }
}

TEST_CASE("CUDA_DEVICE_ORDER is PCI_BUS_ID only when it says exactly that", "[visibility][order]") {
  CHECK(parse_device_order("PCI_BUS_ID") == DeviceOrder::PciBusId);
  CHECK(parse_device_order("FASTEST_FIRST") == DeviceOrder::FastestFirst);
  CHECK(parse_device_order(nullptr) == DeviceOrder::FastestFirst);
  for (const char* unknown : {"", "bogus", "PCI", "BUS_ID", "FASTEST"}) {
    INFO("CUDA_DEVICE_ORDER='" << unknown << "'");
    CHECK(parse_device_order(unknown) == DeviceOrder::FastestFirst);
  }
  CHECK(std::string(to_string(DeviceOrder::PciBusId)) == "PCI_BUS_ID");
  CHECK(std::string(to_string(DeviceOrder::FastestFirst)) == "FASTEST_FIRST");
}

TEST_CASE("explain_visibility says which entry CUDA silently dropped and why", "[visibility]") {
  const Node node = load_node_file(std::string(GPULAB_TEST_SOURCE_DIR) + "/nodes/dgx-a100.json");
  const auto explain = [&](const char* value) {
    return explain_visibility(node, std::string(value), DeviceOrder::FastestFirst).value_or("");
  };
  CHECK_FALSE(explain_visibility(node, std::nullopt, DeviceOrder::FastestFirst));
  CHECK_FALSE(explain_visibility(node, std::string("2,3,4,5"), DeviceOrder::FastestFirst));
  CHECK_THAT(explain("0,2,-1,1"), Catch::StartsWith("entry '-1' is negative: CUDA ignores it and every entry after it"));
  CHECK_THAT(explain("0,9"), Catch::Contains("names GPU 9, but this node has 8"));
  CHECK_THAT(explain("1,x,2"), Catch::StartsWith("entry 'x' is not a GPU index"));
  CHECK_THAT(explain("0,1,0"), Catch::StartsWith("entry '0' repeats an earlier one"));
  CHECK_THAT(explain("two"), Catch::EndsWith("so no GPU is visible"));
  CHECK_THAT(explain(""), Catch::Contains("hides every GPU"));
  CHECK_THAT(explain("GPU-"), Catch::Contains("matches no GPU of this node, or several"));
}
