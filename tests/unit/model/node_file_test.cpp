// Node files: every error names the file and the field and says what was expected
// (docs/nodes.md); every node shipped in nodes/ loads.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "model/node.h"

using namespace gpulab;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A folder of its own under the system's temporary directory, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "gpulab-unit-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = (path_ / name).string();
    std::ofstream(file) << text;
    return file;
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

json gpu(int i) {
  char uuid[64];
  std::snprintf(uuid, sizeof uuid, "GPU-%08x-0000-0000-0000-000000000000", static_cast<unsigned>(i));
  char bus[32];
  std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", static_cast<unsigned>(16 + i));
  return {{"name", "Test GPU"}, {"uuid", uuid},      {"pci_bus_id", bus}, {"memory_mib", 1024},
          {"compute_capability", "8.0"}, {"sm_count", 10}, {"context_mib", 100}};
}

json valid_node() {
  json mig = json::array({{{"uuid", "MIG-00000000-0000-0000-0000-000000000001"},
                           {"gpu_instance", 1},
                           {"compute_instance", 0},
                           {"memory_mib", 512},
                           {"sm_count", 5}}});
  json node = {{"name", "test"}, {"description", "two test GPUs"}, {"gpus", json::array({gpu(0), gpu(1)})}};
  node["gpus"][0]["mig"] = mig;
  return node;
}

// The NodeError message loading `document` gives; fails the test if it loads.
std::string error_loading(const TempDir& dir, const std::string& text) {
  const std::string file = dir.write("node.json", text);
  try {
    (void)load_node_file(file);
  } catch (const NodeError& e) {
    return e.what();
  }
  FAIL("the node file loaded:\n" << text);
  return {};
}

}  // namespace

TEST_CASE("a valid node file loads with every field", "[node]") {
  TempDir dir;
  const std::string file = dir.write("node.json", valid_node().dump(2));
  const Node node = load_node_file(file);
  CHECK(node.name == "test");
  CHECK(node.description == "two test GPUs");
  CHECK(node.source == file);
  REQUIRE(node.gpus.size() == 2);
  CHECK(node.gpus[1].uuid == gpu(1)["uuid"]);
  CHECK(node.gpus[1].pci_bus_id == gpu(1)["pci_bus_id"]);
  CHECK(node.gpus[0].total_bytes == 1024ull << 20);
  CHECK(node.gpus[0].context_bytes == 100ull << 20);
  CHECK(node.gpus[0].cc_major == 8);
  CHECK(node.gpus[0].cc_minor == 0);
  CHECK(node.gpus[0].sm_count == 10);
  REQUIRE(node.gpus[0].mig.size() == 1);
  CHECK(node.gpus[0].mig[0].gpu_instance == 1);
  CHECK(node.gpus[0].mig[0].total_bytes == 512ull << 20);
  CHECK(node.gpus[0].mig_mode);
  CHECK(node.gpus[1].mig.empty());
  CHECK_FALSE(node.gpus[1].mig_mode);
  CHECK(node.cuda_order.empty());
}

TEST_CASE("total capacity is the node file's cudaMemGetInfo figure, or derived a little below nvidia-smi's",
          "[node]") {
  TempDir dir;
  json document = valid_node();
  document["gpus"][1]["total_capacity_bytes"] = 1000ull << 20;
  const Node node = load_node_file(dir.write("node.json", document.dump()));
  CHECK(node.gpus[1].capacity_bytes == 1000ull << 20);
  for (const std::uint64_t total : {node.gpus[0].total_bytes, node.gpus[0].mig[0].total_bytes}) {
    const std::uint64_t derived = derived_capacity_bytes(total);
    INFO("nvidia-smi total " << total << ", derived capacity " << derived);
    CHECK(derived < total);
    CHECK(derived >= total / 100 * 98);  // the driver keeps about 1% (0.6–1.7% measured)
  }
  CHECK(node.gpus[0].capacity_bytes == derived_capacity_bytes(node.gpus[0].total_bytes));
  CHECK(node.gpus[0].mig[0].capacity_bytes == derived_capacity_bytes(node.gpus[0].mig[0].total_bytes));
}

TEST_CASE("a node file may state CUDA's observed FASTEST_FIRST order, and MIG mode without instances", "[node]") {
  TempDir dir;
  json document = valid_node();
  document["cuda_order"] = {1, 0};
  document["gpus"][1]["mig"] = json::array();
  const Node node = load_node_file(dir.write("node.json", document.dump()));
  CHECK(node.cuda_order == std::vector<int>{1, 0});
  CHECK(node.gpus[1].mig_mode);
  CHECK(node.gpus[1].mig.empty());
}

TEST_CASE("every node shipped in nodes/ loads", "[node]") {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(std::string(GPULAB_TEST_SOURCE_DIR) + "/nodes")) {
    if (entry.path().extension() != ".json") continue;
    INFO(entry.path());
    const Node node = load_node_file(entry.path().string());
    CHECK(node.name == entry.path().stem().string());
    CHECK_FALSE(node.gpus.empty());
    ++count;
  }
  CHECK(count >= 4);
}

TEST_CASE("a broken node file is refused with an error naming the file and the field", "[node]") {
  TempDir dir;
  const std::string file = (fs::path(dir.path()) / "node.json").string();
  struct Case {
    const char* what;
    std::function<void(json&)> breaks;
    const char* field;  // as the message names it
  };
  const std::vector<Case> cases = {
      {"no name", [](json& n) { n.erase("name"); }, "name: missing"},
      {"a numeric name", [](json& n) { n["name"] = 7; }, "name: expected a string"},
      {"no gpus", [](json& n) { n.erase("gpus"); }, "gpus: missing"},
      {"an empty gpus list", [](json& n) { n["gpus"] = json::array(); }, "gpus: expected a non-empty array"},
      {"gpus as an object", [](json& n) { n["gpus"] = gpu(0); }, "gpus: expected a non-empty array"},
      {"more GPUs than the state file holds",
       [](json& n) {
         n["gpus"] = json::array();
         for (int i = 0; i <= kMaxGpus; ++i) n["gpus"].push_back(gpu(i));
       },
       "gpus: at most"},
      {"a GPU that is not an object", [](json& n) { n["gpus"][1] = "A100"; }, "gpus[1]: expected an object"},
      {"a GPU without a name", [](json& n) { n["gpus"][1].erase("name"); }, "gpus[1].name: missing"},
      {"a short UUID", [](json& n) { n["gpus"][1]["uuid"] = "GPU-1234"; }, "gpus[1].uuid: expected GPU-"},
      {"an upper-case UUID", [](json& n) { n["gpus"][0]["uuid"] = "GPU-ABCDEF00-0000-0000-0000-000000000000"; },
       "gpus[0].uuid: expected GPU-"},
      {"a UUID without GPU-", [](json& n) { n["gpus"][0]["uuid"] = "00000000-0000-0000-0000-000000000000"; },
       "gpus[0].uuid"},
      {"a repeated UUID", [](json& n) { n["gpus"][1]["uuid"] = n["gpus"][0]["uuid"]; },
       "gpus[1].uuid: duplicates gpus[0].uuid"},
      {"a CUDA-style PCI bus id", [](json& n) { n["gpus"][0]["pci_bus_id"] = "0000:10:00.0"; },
       "gpus[0].pci_bus_id: expected NVML form"},
      {"a lower-case PCI bus id", [](json& n) { n["gpus"][1]["pci_bus_id"] = "00000000:1a:00.0"; },
       "gpus[1].pci_bus_id: expected NVML form"},
      {"GPUs out of PCI order", [](json& n) { std::swap(n["gpus"][0]["pci_bus_id"], n["gpus"][1]["pci_bus_id"]); },
       "gpus[1].pci_bus_id: GPUs must be listed in ascending PCI bus order"},
      {"two GPUs on one bus id", [](json& n) { n["gpus"][1]["pci_bus_id"] = n["gpus"][0]["pci_bus_id"]; },
       "gpus[1].pci_bus_id"},
      {"zero memory", [](json& n) { n["gpus"][0]["memory_mib"] = 0; }, "gpus[0].memory_mib: expected an integer"},
      {"negative memory", [](json& n) { n["gpus"][0]["memory_mib"] = -80; }, "gpus[0].memory_mib: expected an integer"},
      {"fractional memory", [](json& n) { n["gpus"][0]["memory_mib"] = 1.5; }, "gpus[0].memory_mib: expected an integer"},
      {"memory as text", [](json& n) { n["gpus"][0]["memory_mib"] = "80GB"; }, "gpus[0].memory_mib: expected an integer"},
      {"memory whose byte count overflows", [](json& n) { n["gpus"][0]["memory_mib"] = 1ull << 60; },
       "gpus[0].memory_mib: expected an integer"},
      {"a compute capability without a minor version", [](json& n) { n["gpus"][0]["compute_capability"] = "8"; },
       "gpus[0].compute_capability: expected MAJOR.MINOR"},
      {"a numeric compute capability", [](json& n) { n["gpus"][0]["compute_capability"] = 8.0; },
       "gpus[0].compute_capability: expected a string"},
      {"a compute capability too large for an int",
       [](json& n) { n["gpus"][0]["compute_capability"] = "99999999999.0"; },
       "gpus[0].compute_capability: expected MAJOR.MINOR"},
      {"a two-digit minor version", [](json& n) { n["gpus"][0]["compute_capability"] = "7.10"; },
       "gpus[0].compute_capability: expected MAJOR.MINOR"},
      {"no SMs", [](json& n) { n["gpus"][1]["sm_count"] = 0; }, "gpus[1].sm_count: expected an integer"},
      {"an SM count too large for an int", [](json& n) { n["gpus"][1]["sm_count"] = 1ull << 32; },
       "gpus[1].sm_count: expected an integer"},
      {"no context size", [](json& n) { n["gpus"][1].erase("context_mib"); }, "gpus[1].context_mib: missing"},
      {"a context as large as the GPU", [](json& n) { n["gpus"][1]["context_mib"] = n["gpus"][1]["memory_mib"]; },
       "gpus[1].context_mib: must be smaller than the GPU's total capacity"},
      {"a total capacity above nvidia-smi's total", [](json& n) { n["gpus"][1]["total_capacity_bytes"] = 2048ull << 20; },
       "gpus[1].total_capacity_bytes: expected an integer from 1 to"},
      {"a total capacity as text", [](json& n) { n["gpus"][1]["total_capacity_bytes"] = "1 GiB"; },
       "gpus[1].total_capacity_bytes: expected an integer"},
      {"a MIG slice too small for a context", [](json& n) { n["gpus"][0]["mig"][0]["memory_mib"] = 100; },
       "gpus[0].mig[0].memory_mib: must leave room for a context"},
      {"a cuda_order that is not a list", [](json& n) { n["cuda_order"] = 1; }, "cuda_order: expected each physical GPU"},
      {"a cuda_order missing a GPU", [](json& n) { n["cuda_order"] = {1}; }, "cuda_order: expected each physical GPU"},
      {"a cuda_order naming a GPU twice", [](json& n) { n["cuda_order"] = {1, 1}; }, "cuda_order: expected each"},
      {"a cuda_order naming no GPU", [](json& n) { n["cuda_order"] = {0, 2}; }, "cuda_order: expected each"},
      {"a cuda_order of text", [](json& n) { n["cuda_order"] = {"0", "1"}; }, "cuda_order: expected each"},
      {"mig as an object", [](json& n) { n["gpus"][0]["mig"] = json::object(); }, "gpus[0].mig: expected an array"},
      {"a MIG entry that is not an object", [](json& n) { n["gpus"][0]["mig"][0] = 1; }, "gpus[0].mig[0]: expected an object"},
      {"a MIG instance with a GPU UUID",
       [](json& n) { n["gpus"][0]["mig"][0]["uuid"] = n["gpus"][0]["uuid"]; }, "gpus[0].mig[0].uuid: expected MIG-"},
      {"a negative GPU instance id", [](json& n) { n["gpus"][0]["mig"][0]["gpu_instance"] = -1; },
       "gpus[0].mig[0].gpu_instance: expected an integer"},
      {"a compute instance id too large for an int", [](json& n) { n["gpus"][0]["mig"][0]["compute_instance"] = 1ull << 40; },
       "gpus[0].mig[0].compute_instance: expected an integer"},
      {"a MIG instance larger than its GPU", [](json& n) { n["gpus"][0]["mig"][0]["memory_mib"] = 2048; },
       "gpus[0].mig[0].memory_mib"},
      {"a MIG instance without SMs", [](json& n) { n["gpus"][0]["mig"][0].erase("sm_count"); },
       "gpus[0].mig[0].sm_count: missing"},
  };
  for (const auto& c : cases) {
    INFO("node file with " << c.what);
    json node = valid_node();
    c.breaks(node);
    const std::string message = error_loading(dir, node.dump(2));
    CHECK_THAT(message, Catch::StartsWith("node file '" + file + "': "));
    CHECK_THAT(message, Catch::Contains(c.field));
  }
}

TEST_CASE("a node file that is missing, not JSON or not an object is refused naming the file", "[node]") {
  TempDir dir;
  const std::string missing = dir.path() + "/absent.json";
  CHECK_THROWS_WITH(load_node_file(missing), Catch::StartsWith("node file '" + missing + "': cannot be opened"));
  CHECK_THAT(error_loading(dir, ""), Catch::Contains("not valid JSON"));
  CHECK_THAT(error_loading(dir, "{\"name\": \"x\", \"gpus\": [}"), Catch::Contains("not valid JSON"));
  CHECK_THAT(error_loading(dir, "[1, 2]"), Catch::Contains("(top level): expected an object"));
  CHECK_THAT(error_loading(dir, "[1, 2]"), Catch::Contains(dir.path() + "/node.json"));
}

// Found by tests/fuzz/node_file_fuzz.cpp: nlohmann::json reports a number too large for a
// double as out_of_range, not parse_error, and it escaped load_node_file.
TEST_CASE("a number too large for a double is refused as not valid JSON", "[node]") {
  TempDir dir;
  CHECK_THAT(error_loading(dir, "1e999"), Catch::Contains("not valid JSON"));
  json node = valid_node();
  const std::string text = node.dump();
  CHECK_THAT(error_loading(dir, text.substr(0, text.size() - 1) + ", \"extra\": 1e999}"), Catch::Contains("not valid JSON"));
}

TEST_CASE("a node spec is a path when it looks like one, else a name in GPULAB_NODES_DIR or nodes/", "[node]") {
  TempDir dir;
  CHECK(resolve_node_path("./here.json") == "./here.json");
  CHECK(resolve_node_path("elsewhere.json") == "elsewhere.json");
  CHECK(resolve_node_path("/abs/dir/node") == "/abs/dir/node");
  CHECK(load_node_file(resolve_node_path("tiny2")).name == "tiny2");
  CHECK_THROWS_AS(resolve_node_path(""), NodeError);
  CHECK_THROWS_WITH(resolve_node_path("no-such-node"), Catch::Contains("no node named 'no-such-node'"));

  SECTION("GPULAB_NODES_DIR is searched first") {
    json custom = valid_node();
    custom["name"] = "tiny2";
    const std::string file = dir.write("tiny2.json", custom.dump());
    setenv("GPULAB_NODES_DIR", dir.path().c_str(), /*overwrite=*/1);
    const std::string resolved = resolve_node_path("tiny2");
    unsetenv("GPULAB_NODES_DIR");
    CHECK(resolved == file);
  }
}
