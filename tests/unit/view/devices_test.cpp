// `gpulab devices`' table and JSON document, rendered from a hand-built listing.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "test_lines.h"
#include "view/devices.h"

using namespace gpulab;
using namespace gpulab::view;
using namespace gpulab::view_test;

namespace {

// CUDA_VISIBLE_DEVICES=3,1 on an 8-GPU node: cuda:0 is GPU 3, cuda:1 is GPU 1.
DevicesListing two_of_eight() {
  DevicesListing listing;
  listing.backend = Backend::kSim;
  listing.node = "dgx-a100";
  listing.profile.torch_major = 1;
  listing.profile.torch_minor = 13;
  listing.profile.torch_patch = 1;
  listing.profile.cuda = {11, 7};
  listing.cuda_visible_devices = "3,1";
  listing.device_order = DeviceOrder::PciBusId;
  listing.physical_gpus = 8;
  listing.devices = {{0, 3, "NVIDIA A100-SXM4-80GB", "GPU-three", "00000000:4E:00.0", 80ull << 30},
                     {1, 1, "NVIDIA A100-SXM4-80GB", "GPU-one", "00000000:0F:00.0", 80ull << 30}};
  return listing;
}

}  // namespace

TEST_CASE("devices table: the counts, the profile, the variables and a row per CUDA device", "[view][devices]") {
  const std::string text = render_devices_table(two_of_eight());
  const auto lines = lines_of(text);
  REQUIRE(lines.size() == 7);
  CHECK(lines[0] == "node dgx-a100 (sim backend): 8 physical GPUs, 2 visible to CUDA");
  CHECK(lines[1] == "profile: PyTorch 1.13.1 (CUDA 11.7 build)");
  CHECK(lines[2] == "CUDA_VISIBLE_DEVICES=3,1  CUDA_DEVICE_ORDER=PCI_BUS_ID");
  CHECK(lines[3].empty());
  CHECK(lines[4].rfind("CUDA     physical   name", 0) == 0);
  CHECK(lines[5] == "cuda:0   GPU 3      NVIDIA A100-SXM4-80GB      00000000:4E:00.0   GPU-three");
  CHECK(lines[6] == "cuda:1   GPU 1      NVIDIA A100-SXM4-80GB      00000000:0F:00.0   GPU-one");
}

TEST_CASE("devices table: unset variable, a note, and no device visible", "[view][devices]") {
  DevicesListing listing = two_of_eight();
  listing.cuda_visible_devices.reset();
  listing.device_order = DeviceOrder::FastestFirst;
  listing.devices.clear();
  listing.note = "entry '-1' is negative: CUDA ignores it and every entry after it";
  const std::string text = render_devices_table(listing);
  CHECK(contains(text, "8 physical GPUs, 0 visible to CUDA\n"));
  CHECK(contains(text, "CUDA_VISIBLE_DEVICES=(unset)  CUDA_DEVICE_ORDER=FASTEST_FIRST\n\n"));
  CHECK(contains(text, "\nnote: entry '-1' is negative: CUDA ignores it and every entry after it\n\n"));
  CHECK(contains(text, "No CUDA device is visible: torch::cuda::is_available() is false.\n"));
  CHECK_FALSE(contains(text, "GPU 3"));
}

TEST_CASE("devices --json: the same facts, null for an unset variable, the note only when there is one", "[view][devices]") {
  auto doc = nlohmann::json::parse(render_devices_json(two_of_eight()));
  CHECK(doc["node"] == "dgx-a100");
  CHECK(doc["profile"]["torch"] == "1.13.1");
  CHECK(doc["profile"]["cuda"] == "11.7");
  CHECK(doc["cuda_visible_devices"] == "3,1");
  CHECK(doc["device_order"] == "PCI_BUS_ID");
  CHECK(doc["physical_gpus"] == 8);
  REQUIRE(doc["devices"].size() == 2);
  CHECK(doc["devices"][0]["cuda_index"] == 0);
  CHECK(doc["devices"][0]["physical_index"] == 3);
  CHECK(doc["devices"][1]["uuid"] == "GPU-one");
  CHECK(doc["devices"][1]["total_bytes"] == 80ull << 30);
  CHECK_FALSE(doc.contains("note"));

  DevicesListing unset = two_of_eight();
  unset.cuda_visible_devices.reset();
  unset.note = "a note";
  doc = nlohmann::json::parse(render_devices_json(unset));
  CHECK(doc["cuda_visible_devices"].is_null());
  CHECK(doc["note"] == "a note");
}
