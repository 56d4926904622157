#include "report/launch_summary.h"

#include <cstdint>
#include <limits>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "report/report_reader.h"

namespace gpulab {
namespace {
using nlohmann::json;

json optional_int(const std::optional<int>& value) { return value ? json(*value) : json(nullptr); }

// A field of `object`, checked: ReportError names "workers[2].pid" and what was wrong.
template <typename T>
T field(const json& object, const std::string& where, const char* key, T fallback) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return fallback;
  const std::string name = where.empty() ? key : where + "." + key;
  if constexpr (std::is_same_v<T, int>) {  // nlohmann converts 1e67 or 2.5 to int unchecked (UB)
    if (!found->is_number_integer()) throw ReportError(name, "expected an integer");
    if (found->is_number_unsigned() ? found->get<std::uint64_t>() > std::numeric_limits<int>::max()
                                    : found->get<std::int64_t>() < std::numeric_limits<int>::min() ||
                                          found->get<std::int64_t>() > std::numeric_limits<int>::max())
      throw ReportError(name, "is out of range");
  }
  try {
    return found->get<T>();
  } catch (const json::exception&) {
    throw ReportError(name, "has the wrong type");
  }
}

std::optional<int> optional_field(const json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return std::nullopt;
  if (!found->is_number_integer()) throw ReportError(key, "expected an integer or null");
  return field(object, "", key, 0);
}

WorkerSummary parse_worker(const json& w, const std::string& where) {
  if (!w.is_object()) throw ReportError(where, "expected an object");
  WorkerSummary worker;
  worker.rank = field(w, where, "rank", -1);
  worker.local_rank = field(w, where, "local_rank", 0);
  worker.node_rank = field(w, where, "node_rank", 0);
  worker.host = field<std::string>(w, where, "host", "");
  worker.node = field<std::string>(w, where, "node", "");
  worker.pid = field(w, where, "pid", 0);
  worker.exit_code = field(w, where, "exit_code", -1);
  worker.signal = field(w, where, "signal", 0);
  worker.stopped = field(w, where, "stopped", false);
  const json gpus = w.value("gpus", json::array());
  if (!gpus.is_array()) throw ReportError(where + ".gpus", "expected an array");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string at = where + ".gpus[" + std::to_string(i) + "]";
    if (!gpus[i].is_object()) throw ReportError(at, "expected an object");
    worker.gpus.push_back({field(gpus[i], at, "physical_index", -1), field<std::uint64_t>(gpus[i], at, "peak_bytes", 0)});
  }
  const json wrote = w.value("wrote", json::array());
  if (!wrote.is_array()) throw ReportError(where + ".wrote", "expected an array");
  for (std::size_t i = 0; i < wrote.size(); ++i) {
    if (!wrote[i].is_string()) throw ReportError(where + ".wrote[" + std::to_string(i) + "]", "expected a file name");
    worker.wrote.push_back(wrote[i].get<std::string>());
  }
  return worker;
}

}  // namespace

const WorkerSummary* LaunchSummary::worker(int rank) const {
  for (const auto& w : workers)
    if (w.rank == rank) return &w;
  return nullptr;
}

std::string launch_summary_json(const LaunchSummary& summary) {
  json workers = json::array();
  for (const auto& w : summary.workers) {
    json gpus = json::array();
    for (const auto& gpu : w.gpus) gpus.push_back({{"physical_index", gpu.physical_index}, {"peak_bytes", gpu.peak_bytes}});
    workers.push_back({{"rank", w.rank},
                       {"local_rank", w.local_rank},
                       {"node_rank", w.node_rank},
                       {"host", w.host},
                       {"node", w.node},
                       {"pid", w.pid},
                       {"exit_code", w.exit_code},
                       {"signal", w.signal},
                       {"stopped", w.stopped},
                       {"gpus", gpus},
                       {"wrote", w.wrote}});
  }
  const json out = {{"backend", summary.backend ? backend_name(*summary.backend) : ""},
                    {"nnodes", summary.nnodes},
                    {"node_rank", optional_int(summary.node_rank)},
                    {"nproc_per_node", summary.nproc_per_node},
                    {"master_addr", summary.master_addr},
                    {"master_port", summary.master_port},
                    {"exit_code", summary.exit_code},
                    {"first_failure", optional_int(summary.first_failure)},
                    {"interrupted_by", summary.interrupted_by},
                    {"workers", workers}};
  return out.dump(2) + '\n';
}

LaunchSummary parse_launch_summary(const std::string& text) {
  const json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) throw ReportError("(document)", "not a JSON object");
  LaunchSummary summary;
  const std::string backend = field<std::string>(document, "", "backend", "");
  summary.backend = backend_named(backend);
  if (!backend.empty() && !summary.backend) throw ReportError("backend", "\"sim\", \"cuda\" or \"\", not \"" + backend + "\"");
  summary.nnodes = field(document, "", "nnodes", 1);
  summary.node_rank = optional_field(document, "node_rank");
  summary.nproc_per_node = field(document, "", "nproc_per_node", 1);
  summary.master_addr = field<std::string>(document, "", "master_addr", "");
  summary.master_port = field(document, "", "master_port", 0);
  summary.exit_code = field(document, "", "exit_code", 0);
  summary.first_failure = optional_field(document, "first_failure");
  summary.interrupted_by = field(document, "", "interrupted_by", 0);
  const json workers = document.value("workers", json::array());
  if (!workers.is_array()) throw ReportError("workers", "expected an array");
  for (std::size_t i = 0; i < workers.size(); ++i)
    summary.workers.push_back(parse_worker(workers[i], "workers[" + std::to_string(i) + "]"));
  return summary;
}

}  // namespace gpulab
