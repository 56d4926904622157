// The lesson report reader: docs/report-schema.md, checked field by field.
#include "report/report_reader.h"

#include <limits>

#include <nlohmann/json.hpp>

namespace gpulab {
namespace {

using Json = nlohmann::json;

// A value as a message shows it: scalars as written (long strings shortened), containers
// by kind (dumping one could be huge, or deep enough to exhaust the stack).
std::string describe(const Json& value) {
  constexpr std::size_t kShown = 40;
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text.size() <= kShown) return value.dump(-1, ' ', false, Json::error_handler_t::replace);
    return Json(text.substr(0, kShown)).dump(-1, ' ', false, Json::error_handler_t::replace) + " (shortened)";
  }
  return value.dump();
}

[[noreturn]] void fail(const std::string& path, const std::string& expected, const Json& got) {
  throw ReportError(path, "expected " + expected + ", got " + describe(got));
}

std::string field(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }
std::string item(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

const Json& object_at(const Json& value, const std::string& path) {
  if (!value.is_object()) fail(path.empty() ? "(document)" : path, "an object", value);
  return value;
}

const Json& array_at(const Json& value, const std::string& path) {
  if (!value.is_array()) fail(path, "an array", value);
  return value;
}

// A required member of an object.
const Json& member(const Json& object, const std::string& path, const char* key) {
  const auto found = object.find(key);
  if (found == object.end()) throw ReportError(field(path, key), "missing");
  return *found;
}

std::string string_at(const Json& value, const std::string& path) {
  if (!value.is_string()) fail(path, "a string", value);
  return value.get<std::string>();
}

std::string string_member(const Json& object, const std::string& path, const char* key) {
  return string_at(member(object, path, key), field(path, key));
}

// An integer in [min, max]; `expected` says so in words. Floats (even 3.0) are not integers.
std::int64_t integer_at(const Json& value, const std::string& path, std::int64_t min, std::int64_t max,
                        const char* expected) {
  if (!value.is_number_integer()) fail(path, expected, value);
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
    fail(path, expected, value);
  const auto number = value.get<std::int64_t>();
  if (number < min || number > max) fail(path, expected, value);
  return number;
}

int index_at(const Json& value, const std::string& path) {
  return static_cast<int>(integer_at(value, path, 0, std::numeric_limits<int>::max(), "a non-negative integer"));
}

// Byte counts may use the whole unsigned 64-bit range.
std::uint64_t bytes_at(const Json& value, const std::string& path) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  return static_cast<std::uint64_t>(
      integer_at(value, path, 0, std::numeric_limits<std::int64_t>::max(), "a non-negative integer"));
}

bool bool_at(const Json& value, const std::string& path) {
  if (!value.is_boolean()) fail(path, "true or false", value);
  return value.get<bool>();
}

std::optional<std::string> setting_at(const Json& object, const std::string& path, const char* name) {
  const Json& value = member(object, path, name);
  if (value.is_null()) return std::nullopt;
  if (!value.is_string()) fail(field(path, name), "a string or null (unset)", value);
  return value.get<std::string>();
}

ReportEnvironment environment_at(const Json& value, const std::string& path) {
  object_at(value, path);
  // NVIDIA_VISIBLE_DEVICES came later: a report without it was written outside a container.
  const bool container = value.contains("NVIDIA_VISIBLE_DEVICES");
  return {setting_at(value, path, "CUDA_VISIBLE_DEVICES"), setting_at(value, path, "CUDA_DEVICE_ORDER"),
          setting_at(value, path, "GPULAB_NODE"),
          container ? setting_at(value, path, "NVIDIA_VISIBLE_DEVICES") : std::nullopt};
}

std::map<std::string, FactValue> facts_at(const Json& value, const std::string& path) {
  object_at(value, path);
  std::map<std::string, FactValue> facts;
  for (const auto& [key, fact] : value.items()) {
    const std::string where = path + "[" + Json(key).dump(-1, ' ', false, Json::error_handler_t::replace) + "]";
    if (fact.is_string()) {
      facts.emplace(key, fact.get<std::string>());
    } else {
      facts.emplace(key, integer_at(fact, where, std::numeric_limits<std::int64_t>::min(),
                                    std::numeric_limits<std::int64_t>::max(), "an integer or a string"));
    }
  }
  return facts;
}

std::vector<GpuUsage> gpus_at(const Json& value, const std::string& path) {
  std::vector<GpuUsage> gpus;
  const Json& list = array_at(value, path);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = item(path, i);
    const Json& entry = object_at(list[i], where);
    GpuUsage gpu;
    gpu.physical_index = index_at(member(entry, where, "physical_index"), field(where, "physical_index"));
    gpu.used_bytes = bytes_at(member(entry, where, "used_bytes"), field(where, "used_bytes"));
    gpu.context = bool_at(member(entry, where, "context"), field(where, "context"));
    // The list holds the GPUs the process uses, each once.
    if (gpu.used_bytes == 0 && !gpu.context)
      throw ReportError(where, "lists a GPU the process does not use (used_bytes 0, no context)");
    for (std::size_t j = 0; j < gpus.size(); ++j)
      if (gpus[j].physical_index == gpu.physical_index)
        throw ReportError(field(where, "physical_index"), "GPU " + std::to_string(gpu.physical_index) +
                                                              " is listed already, at " + item(path, j));
    gpus.push_back(gpu);
  }
  return gpus;
}

std::vector<TensorLocation> tensors_at(const Json& value, const std::string& path) {
  std::vector<TensorLocation> tensors;
  const Json& list = array_at(value, path);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = item(path, i);
    const Json& entry = object_at(list[i], where);
    TensorLocation tensor;
    tensor.name = string_member(entry, where, "name");
    tensor.device = string_member(entry, where, "device");
    if (tensor.device.empty()) throw ReportError(field(where, "device"), "expected a device such as \"cuda:1\", got \"\"");
    const Json& physical = member(entry, where, "physical_index");
    if (!physical.is_null()) {
      tensor.physical_index = index_at(physical, field(where, "physical_index"));
      // Only a CUDA tensor lives on a physical GPU.
      if (tensor.device.compare(0, 4, "cuda") != 0)
        throw ReportError(field(where, "physical_index"),
                          "a tensor on '" + tensor.device + "' is on no GPU: expected null, got " + describe(physical));
    }
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

std::vector<Observation> observations_at(const Json& value, const std::string& path) {
  std::vector<Observation> observations;
  const Json& list = array_at(value, path);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = item(path, i);
    const Json& entry = object_at(list[i], where);
    Observation observation;
    observation.label = string_member(entry, where, "label");
    observation.gpus = gpus_at(member(entry, where, "gpus"), field(where, "gpus"));
    observation.tensors = tensors_at(member(entry, where, "tensors"), field(where, "tensors"));
    observations.push_back(std::move(observation));
  }
  return observations;
}

std::vector<CaughtError> errors_at(const Json& value, const std::string& path) {
  std::vector<CaughtError> errors;
  const Json& list = array_at(value, path);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = item(path, i);
    const Json& entry = object_at(list[i], where);
    errors.push_back({string_member(entry, where, "label"), string_member(entry, where, "type"),
                      string_member(entry, where, "message")});
  }
  return errors;
}

}  // namespace

const GpuUsage* Observation::gpu(int physical_index) const {
  for (const auto& usage : gpus)
    if (usage.physical_index == physical_index) return &usage;
  return nullptr;
}

const TensorLocation* Observation::tensor(std::string_view name) const {
  for (const auto& location : tensors)
    if (location.name == name) return &location;
  return nullptr;
}

const Observation* Report::observation(std::string_view label) const {
  for (const auto& taken : observations)
    if (taken.label == label) return &taken;
  return nullptr;
}

Report parse_report(std::string_view text) {
  Json document;
  try {
    document = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    throw ReportError("(document)", std::string("not valid JSON: ") + e.what());
  }
  object_at(document, "");
  Report report;
  report.lesson = string_member(document, "", "lesson");
  const auto backend = backend_named(string_member(document, "", "backend"));
  if (!backend) fail("backend", "\"sim\" or \"cuda\"", document.at("backend"));
  report.backend = *backend;
  report.node = string_member(document, "", "node");
  report.pid = static_cast<int>(
      integer_at(member(document, "", "pid"), "pid", 1, std::numeric_limits<int>::max(), "a positive integer"));
  report.env = environment_at(member(document, "", "env"), "env");
  report.env_at_exit = environment_at(member(document, "", "env_at_exit"), "env_at_exit");
  report.facts = facts_at(member(document, "", "facts"), "facts");
  report.observations = observations_at(member(document, "", "observations"), "observations");
  report.errors = errors_at(member(document, "", "errors"), "errors");
  report.exit_code = static_cast<int>(
      integer_at(member(document, "", "exit_code"), "exit_code", 0, 255, "an exit code from 0 to 255"));
  return report;
}

}  // namespace gpulab
