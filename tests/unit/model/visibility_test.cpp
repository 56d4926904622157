// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER rules (docs/reference.md "Visibility", "Order"). Vectors from the CUDA Programming Guide ("CUDA Environment Variables") and
// PyTorch's test/test_cuda_nvml_based_avail.py (TestVisibleDeviceParses), which encodes the
// driver's observed parsing.
#include <tuple>

#include <catch2/catch.hpp>

#include "model/visibility.h"

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
  SECTION("the legacy MIG-<GPU UUID>/<gi>/<ci> form accepts a unique prefix of the GPU UUID (nvitop)") {
    const std::string ids = "/" + std::to_string(gpu.mig[1].gpu_instance) + "/" + std::to_string(gpu.mig[1].compute_instance);
    const auto devices = visible("MIG-" + gpu.uuid.substr(0, 12) + ids);
    REQUIRE(devices.size() == 1);
    CHECK(devices[0].mig_index == 1);
    CHECK(visible("MIG-GPU-" + ids).empty());               // a prefix of every GPU's UUID
    CHECK(visible("MIG-" + gpu.uuid + "/99/0").empty());     // no such instance
  }
}

TEST_CASE("a GPU in MIG mode is never a whole GPU: reaching it shows its first instance only and drops every "
          "GPU not in MIG mode",
          "[visibility][mig]") {
  const Node node = load("mig-a100");
  REQUIRE(node.gpus[0].mig_mode);
  REQUIRE_FALSE(node.gpus[1].mig_mode);
  const auto visible = [&](const std::optional<std::string>& cvd) {
    return visible_devices(node, cvd, DeviceOrder::PciBusId);
  };
  const auto first_instance_of_gpu_0 = [](const std::vector<VisibleDevice>& devices) {
    return devices.size() == 1 && devices[0].physical_index == 0 && devices[0].mig_index == 0;
  };

  SECTION("variable unset: one device, the first instance (nvitop PR #8: device_count() is 1)") {
    CHECK(first_instance_of_gpu_0(visible(std::nullopt)));
  }
  SECTION("by index or GPU- UUID, in any position of the list (pytorch PR 92315)") {
    CHECK(first_instance_of_gpu_0(visible(std::string("0"))));
    CHECK(first_instance_of_gpu_0(visible(std::string("1,0"))));
    CHECK(first_instance_of_gpu_0(visible(node.gpus[1].uuid + "," + node.gpus[0].uuid)));
  }
  SECTION("a list that never reaches the MIG GPU shows whole GPUs") {
    const auto devices = visible(std::string("1"));
    REQUIRE(devices.size() == 1);
    CHECK(devices[0].physical_index == 1);
    CHECK(devices[0].mig_index == -1);
    CHECK(total_bytes(node, devices[0]) == node.gpus[1].total_bytes);
  }
  SECTION("an instance has its own memory slice") {
    const auto devices = visible(std::nullopt);
    REQUIRE(devices.size() == 1);
    CHECK(total_bytes(node, devices[0]) == node.gpus[0].mig[0].total_bytes);
    CHECK(capacity_bytes(node, devices[0]) == node.gpus[0].mig[0].capacity_bytes);
    CHECK(capacity_bytes(node, devices[0]) < node.gpus[0].mig[0].total_bytes);
  }
  SECTION("a GPU in MIG mode without instances is skipped, and still hides the GPUs not in MIG mode") {
    Node empty_first = node;
    std::swap(empty_first.gpus[0].mig, empty_first.gpus[1].mig);
    empty_first.gpus[1].mig_mode = true;  // both in MIG mode, only GPU 1 has instances
    const auto devices = visible_devices(empty_first, std::nullopt, DeviceOrder::PciBusId);
    REQUIRE(devices.size() == 1);
    CHECK(devices[0].physical_index == 1);
    CHECK(devices[0].mig_index == 0);
    Node none = node;
    none.gpus[0].mig.clear();
    CHECK(visible_devices(none, std::nullopt, DeviceOrder::PciBusId).empty());
  }
  SECTION("explain_visibility says why the other GPUs disappeared") {
    const auto note = explain_visibility(node, std::nullopt, DeviceOrder::PciBusId);
    REQUIRE(note);
    CHECK_THAT(*note, Catch::Contains("GPU 0 is in MIG mode") && Catch::Contains(node.gpus[0].mig[0].uuid));
  }
}

namespace {
// A node of `count` GPUs with these compute capabilities and SM counts, in PCI order.
Node node_of(const std::vector<std::tuple<int, int, int>>& cc_and_sms) {
  Node node = node_with_uuids({kPytorchUuids.begin(), kPytorchUuids.begin() + static_cast<std::ptrdiff_t>(cc_and_sms.size())});
  for (std::size_t i = 0; i < cc_and_sms.size(); ++i)
    std::tie(node.gpus[i].cc_major, node.gpus[i].cc_minor, node.gpus[i].sm_count) = cc_and_sms[i];
  return node;
}

// What FASTEST_FIRST is documented to do, written independently of the implementation: the
// GPU with the highest (compute capability, SM count), the first in PCI order among equals,
// then every other GPU in PCI order.
std::vector<int> fastest_then_pci(const Node& node) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < node.gpus.size(); ++i) {
    const Gpu& a = node.gpus[i];
    const Gpu& b = node.gpus[best];
    if (a.cc_major * 100 + a.cc_minor > b.cc_major * 100 + b.cc_minor ||
        (a.cc_major == b.cc_major && a.cc_minor == b.cc_minor && a.sm_count > b.sm_count))
      best = i;
  }
  std::vector<int> order{static_cast<int>(best)};
  for (std::size_t i = 0; i < node.gpus.size(); ++i)
    if (i != best) order.push_back(static_cast<int>(i));
  return order;
}
}  // namespace

TEST_CASE("FASTEST_FIRST puts the fastest GPU first and keeps the rest in PCI order, PCI_BUS_ID is nvidia-smi's order",
          "[visibility][order]") {
  const Node mixed = load("workstation-mixed");
  const std::vector<int> fastest = fastest_then_pci(mixed);
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
  SECTION("not a full sort: after the fastest, a slower GPU may precede a faster one") {
    const Node node = node_of({{7, 5, 40}, {8, 9, 128}, {6, 1, 28}, {8, 6, 82}});
    CHECK(enumeration_order(node, DeviceOrder::FastestFirst) == std::vector<int>{1, 0, 2, 3});
  }
  SECTION("ethminer#283: one compute capability, so the SM count picks the 1080 Ti over the 1080") {
    const Node node = node_of({{6, 1, 20}, {6, 1, 28}, {6, 1, 28}, {6, 1, 28}});
    CHECK(enumeration_order(node, DeviceOrder::FastestFirst) == std::vector<int>{1, 0, 2, 3});
    CHECK(enumeration_order(node, DeviceOrder::FastestFirst) == fastest_then_pci(node));
  }
  SECTION("compute capability decides before the SM count; identical GPUs keep PCI order") {
    CHECK(enumeration_order(node_of({{7, 5, 80}, {8, 0, 40}}), DeviceOrder::FastestFirst) == std::vector<int>{1, 0});
    CHECK(enumeration_order(node_of({{7, 5, 40}, {7, 0, 80}}), DeviceOrder::FastestFirst) == std::vector<int>{0, 1});
    CHECK(enumeration_order(node_of({{8, 0, 108}, {8, 0, 108}, {8, 0, 108}}), DeviceOrder::FastestFirst) ==
          std::vector<int>{0, 1, 2});
  }
  SECTION("a node file's observed cuda_order wins over the heuristic, for FASTEST_FIRST only") {
    const Node rig = load("pascal-rig");
    REQUIRE_FALSE(rig.cuda_order.empty());
    CHECK(enumeration_order(rig, DeviceOrder::FastestFirst) == rig.cuda_order);
    CHECK(enumeration_order(rig, DeviceOrder::PciBusId) == std::vector<int>{0, 1, 2, 3});
    Node stated = node_of({{8, 0, 108}, {8, 0, 108}, {8, 0, 108}});
    stated.cuda_order = {2, 0, 1};
    CHECK(physical(stated, "0,1", DeviceOrder::FastestFirst) == std::vector<int>{2, 0});
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
