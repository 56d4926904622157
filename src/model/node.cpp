// Node files: JSON descriptions of a machine's physical GPUs (see docs/nodes.md).
#include "model/node.h"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpulab {
namespace {

using nlohmann::json;

constexpr std::uint64_t kMiB = 1024ull * 1024ull;

// Every error names the file and the field, and says what was expected.
[[noreturn]] void fail(const std::string& file, const std::string& field, const std::string& what) {
  throw NodeError("node file '" + file + "': " + field + ": " + what);
}

const json& member(const json& object, const char* key, const std::string& file,
                   const std::string& where) {
  if (!object.contains(key)) fail(file, where + key, "missing");
  return object.at(key);
}

std::string string_field(const json& object, const char* key, const std::string& file,
                         const std::string& where) {
  const auto& value = member(object, key, file, where);
  if (!value.is_string()) fail(file, where + key, "expected a string, got " + value.dump());
  return value.get<std::string>();
}

// An integer in [min, max]; larger values would overflow where the field is used.
std::uint64_t integer_field(const json& object, const char* key, const std::string& file, const std::string& where,
                            std::uint64_t min, std::uint64_t max) {
  const auto& value = member(object, key, file, where);
  const bool integer = value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
  const std::uint64_t number = integer ? value.get<std::uint64_t>() : 0;
  if (!integer || number < min || number > max)
    fail(file, where + key,
         "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " + value.dump());
  return number;
}

// A size in MiB, returned in bytes.
std::uint64_t mib_field(const json& object, const char* key, const std::string& file, const std::string& where) {
  return integer_field(object, key, file, where, 1, std::numeric_limits<std::uint64_t>::max() / kMiB) * kMiB;
}

// cudaMemGetInfo's total in bytes when given (at most `total`), else derived from `total`.
std::uint64_t capacity_field(const json& object, const std::string& file, const std::string& where,
                             std::uint64_t total) {
  if (!object.contains("total_capacity_bytes")) return derived_capacity_bytes(total);
  return integer_field(object, "total_capacity_bytes", file, where, 1, total);
}

int int_field(const json& object, const char* key, const std::string& file, const std::string& where, int min = 0) {
  return static_cast<int>(integer_field(object, key, file, where, static_cast<std::uint64_t>(min),
                                        static_cast<std::uint64_t>(std::numeric_limits<int>::max())));
}

constexpr std::string_view kGpuUuid = "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
constexpr std::string_view kMigUuid = "MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
constexpr std::string_view kPciBusId = "XXXXXXXX:XX:XX.X";

// True when `text` has `shape`'s length and, at each position, what `shape` has there:
// 'x' a lower-case hex digit, 'X' an upper-case hex digit, any other character itself.
bool has_shape(const std::string& text, std::string_view shape) {
  if (text.size() != shape.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool digit = c >= '0' && c <= '9';
    const bool ok = shape[i] == 'x'   ? digit || (c >= 'a' && c <= 'f')
                    : shape[i] == 'X' ? digit || (c >= 'A' && c <= 'F')
                                      : c == shape[i];
    if (!ok) return false;
  }
  return true;
}

// "MAJOR.MINOR" as CUDA writes compute capabilities: "8.0", "8.6", "12.0" (one minor digit).
bool parse_compute_capability(const std::string& text, int* major, int* minor) {
  const auto dot = text.find('.');
  if (dot == std::string::npos || dot == 0 || dot > 3 || text.size() != dot + 2) return false;
  int value = 0;
  for (std::size_t i = 0; i < dot; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + (text[i] - '0');
  }
  if (text[dot + 1] < '0' || text[dot + 1] > '9') return false;
  *major = value;
  *minor = text[dot + 1] - '0';
  return true;
}

MigInstance parse_mig(const json& entry, const std::string& file, const std::string& where) {
  if (!entry.is_object()) fail(file, where, "expected an object");
  MigInstance mig;
  mig.uuid = string_field(entry, "uuid", file, where + ".");
  if (!has_shape(mig.uuid, kMigUuid))
    fail(file, where + ".uuid", "expected MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, got '" + mig.uuid + "'");
  mig.gpu_instance = int_field(entry, "gpu_instance", file, where + ".");
  mig.compute_instance = int_field(entry, "compute_instance", file, where + ".");
  mig.total_bytes = mib_field(entry, "memory_mib", file, where + ".");
  mig.capacity_bytes = capacity_field(entry, file, where + ".", mig.total_bytes);
  mig.sm_count = int_field(entry, "sm_count", file, where + ".", /*min=*/1);
  return mig;
}

Gpu parse_gpu(const json& entry, const std::string& file, const std::string& where) {
  if (!entry.is_object()) fail(file, where, "expected an object");
  const std::string prefix = where + ".";
  Gpu gpu;
  gpu.name = string_field(entry, "name", file, prefix);
  gpu.uuid = string_field(entry, "uuid", file, prefix);
  if (!has_shape(gpu.uuid, kGpuUuid))
    fail(file, prefix + "uuid", "expected GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (lower-case hex), got '" + gpu.uuid + "'");
  gpu.pci_bus_id = string_field(entry, "pci_bus_id", file, prefix);
  if (!has_shape(gpu.pci_bus_id, kPciBusId))
    fail(file, prefix + "pci_bus_id", "expected NVML form 00000000:07:00.0 (upper-case hex), got '" + gpu.pci_bus_id + "'");
  gpu.total_bytes = mib_field(entry, "memory_mib", file, prefix);
  gpu.capacity_bytes = capacity_field(entry, file, prefix, gpu.total_bytes);
  const std::string cc = string_field(entry, "compute_capability", file, prefix);
  if (!parse_compute_capability(cc, &gpu.cc_major, &gpu.cc_minor))
    fail(file, prefix + "compute_capability", "expected MAJOR.MINOR such as \"8.0\", got '" + cc + "'");
  gpu.sm_count = int_field(entry, "sm_count", file, prefix, /*min=*/1);
  gpu.context_bytes = mib_field(entry, "context_mib", file, prefix);
  if (gpu.context_bytes >= gpu.capacity_bytes)
    fail(file, prefix + "context_mib", "must be smaller than the GPU's total capacity (memory_mib, total_capacity_bytes)");
  if (entry.contains("mig")) {
    const auto& list = entry.at("mig");
    if (!list.is_array()) fail(file, prefix + "mig", "expected an array (empty: MIG mode without instances)");
    gpu.mig_mode = true;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string mig_where = prefix + "mig[" + std::to_string(i) + "]";
      gpu.mig.push_back(parse_mig(list[i], file, mig_where));
      if (gpu.mig.back().total_bytes > gpu.total_bytes)
        fail(file, mig_where + ".memory_mib", "a MIG instance cannot have more memory than its GPU's memory_mib");
      if (gpu.context_bytes >= gpu.mig.back().capacity_bytes)
        fail(file, mig_where + ".memory_mib", "must leave room for a context (the GPU's context_mib)");
    }
  }
  return gpu;
}

// An observed CUDA order: every physical index exactly once.
std::vector<int> parse_cuda_order(const json& document, const std::string& file, std::size_t gpus) {
  const auto& list = document.at("cuda_order");
  const std::string what = "expected each physical GPU index from 0 to " + std::to_string(gpus - 1) +
                           " exactly once, in CUDA's FASTEST_FIRST order, got " + list.dump();
  if (!list.is_array() || list.size() != gpus) fail(file, "cuda_order", what);
  std::vector<int> order;
  std::vector<bool> seen(gpus, false);
  for (const auto& entry : list) {
    if (!entry.is_number_integer() || entry.get<std::int64_t>() < 0 ||
        entry.get<std::int64_t>() >= static_cast<std::int64_t>(gpus) || seen[entry.get<std::size_t>()])
      fail(file, "cuda_order", what);
    seen[entry.get<std::size_t>()] = true;
    order.push_back(entry.get<int>());
  }
  return order;
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

}  // namespace

std::uint64_t derived_capacity_bytes(std::uint64_t total_bytes) {
  constexpr std::uint64_t kTwoMiB = 2 * kMiB;
  const std::uint64_t capacity = total_bytes / 100 * 99 / kTwoMiB * kTwoMiB;
  return capacity > 0 ? capacity : total_bytes;
}

Node load_node_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw NodeError("node file '" + path + "': cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_node_file(text.str(), path);
}

Node parse_node_file(std::string_view text, const std::string& path) {
  json document;
  try {
    document = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    throw NodeError("node file '" + path + "': not valid JSON: " + e.what());
  }
  if (!document.is_object()) fail(path, "(top level)", "expected an object");
  Node node;
  node.source = path;
  node.name = string_field(document, "name", path, "");
  if (document.contains("description") && document.at("description").is_string())
    node.description = document.at("description").get<std::string>();
  const auto& gpus = member(document, "gpus", path, "");
  if (!gpus.is_array() || gpus.empty()) fail(path, "gpus", "expected a non-empty array");
  if (gpus.size() > static_cast<std::size_t>(kMaxGpus))
    fail(path, "gpus", "at most " + std::to_string(kMaxGpus) + " GPUs are supported");
  for (std::size_t i = 0; i < gpus.size(); ++i)
    node.gpus.push_back(parse_gpu(gpus[i], path, "gpus[" + std::to_string(i) + "]"));
  // Physical indices are nvidia-smi's, which follow the PCI bus id; the file must agree.
  for (std::size_t i = 1; i < node.gpus.size(); ++i) {
    if (node.gpus[i].pci_bus_id <= node.gpus[i - 1].pci_bus_id)
      fail(path, "gpus[" + std::to_string(i) + "].pci_bus_id",
           "GPUs must be listed in ascending PCI bus order (nvidia-smi order), but '" +
               node.gpus[i].pci_bus_id + "' follows '" + node.gpus[i - 1].pci_bus_id + "'");
    for (std::size_t j = 0; j < i; ++j)
      if (node.gpus[i].uuid == node.gpus[j].uuid)
        fail(path, "gpus[" + std::to_string(i) + "].uuid", "duplicates gpus[" + std::to_string(j) + "].uuid");
  }
  if (document.contains("cuda_order")) node.cuda_order = parse_cuda_order(document, path, node.gpus.size());
  return node;
}

std::string resolve_node_path(const std::string& spec) {
  if (spec.empty()) throw NodeError("GPULAB_NODE is set but empty: give a node name or a path to a .json file");
  const bool is_path = spec.find('/') != std::string::npos ||
                       (spec.size() > 5 && spec.compare(spec.size() - 5, 5, ".json") == 0);
  if (is_path) return spec;
  std::vector<std::string> dirs;
  if (const char* custom = std::getenv("GPULAB_NODES_DIR"); custom != nullptr && *custom != '\0')
    dirs.emplace_back(custom);
  dirs.emplace_back(GPULAB_BUILTIN_NODES_DIR);
  dirs.emplace_back(GPULAB_INSTALLED_NODES_DIR);
  for (const auto& dir : dirs) {
    const std::string candidate = dir + "/" + spec + ".json";
    if (exists(candidate)) return candidate;
  }
  throw NodeError("no node named '" + spec + "' (looked in " + dirs.front() +
                  "); list them with `gpulab nodes`, or give a path to a .json file");
}

Node load_selected_node() {
  const char* spec = std::getenv("GPULAB_NODE");
  return load_node_file(resolve_node_path(spec != nullptr ? spec : kDefaultNodeName));
}

namespace {

/// The *.json files in `dir`, sorted; `readable` says whether the folder could be read.
std::vector<std::string> node_files(const std::string& dir, bool& readable) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  readable = d != nullptr;
  if (d == nullptr) return files;
  while (const dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) files.push_back(name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::string nodes_listing(const std::string& custom_dir, const std::string& shipped_dir, std::string& problem) {
  struct Entry {
    std::string file;  // name.json: GPULAB_NODE=name picks it
    std::string dir;
    bool custom;
  };
  std::vector<Entry> entries;
  const auto add = [&entries](const std::string& dir, bool custom) {
    bool readable = false;
    for (auto& file : node_files(dir, readable))
      if (std::none_of(entries.begin(), entries.end(), [&file](const Entry& e) { return e.file == file; }))
        entries.push_back({file, dir, custom});
    return readable;
  };
  if (!custom_dir.empty() && !add(custom_dir, true))
    problem = "GPULAB_NODES_DIR '" + custom_dir + "' is not a folder gpulab can read";
  add(shipped_dir, false);
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.file < b.file; });
  const auto padded = [](std::string name) { return name.size() < 20 ? name + std::string(20 - name.size(), ' ') : name; };
  std::string text;
  for (const auto& entry : entries) {
    const std::string from = entry.custom ? "  (GPULAB_NODES_DIR)" : "";
    try {
      const Node node = load_node_file(entry.dir + "/" + entry.file);
      text += padded(node.name) + " " + std::to_string(node.gpus.size()) + " GPUs  " + node.description + from + "\n";
    } catch (const NodeError& e) {
      text += padded(entry.file) + " broken: " + e.what() + from + "\n";
    }
  }
  return text;
}

}  // namespace gpulab
