#include "report/run_document.h"

#include <nlohmann/json.hpp>

namespace gpulab {
namespace {
using nlohmann::json;

RunPart part_of(std::string text, int rank) {
  RunPart part;
  part.json = std::move(text);
  part.rank = rank;
  try {
    part.report = parse_report(part.json);
    if (rank < 0) return part;
    const auto fact = part.report->facts.find("rank");  // each rank says which it is
    if (fact != part.report->facts.end() && std::holds_alternative<std::int64_t>(fact->second))
      part.rank = static_cast<int>(std::get<std::int64_t>(fact->second));
  } catch (const ReportError& e) {
    part.problem = e.what();
  }
  return part;
}

// A part as it sits inside the document: its own JSON, or null when it was not JSON.
json embedded(const RunPart& part) {
  json value = json::parse(part.json, nullptr, /*allow_exceptions=*/false);
  return value.is_discarded() ? json(nullptr) : value;
}

}  // namespace

std::string RunDocument::json() const {
  if (kind == Kind::kSingle) return parts.empty() ? std::string() : parts.front().json;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& part : parts) list.push_back(embedded(part));
  if (kind == Kind::kSteps) return nlohmann::json{{"steps", list}}.dump(2) + '\n';
  nlohmann::json out = {{"ranks", list}};
  if (launch) out["launch"] = nlohmann::json::parse(launch_summary_json(*launch));
  return out.dump(2) + '\n';
}

std::string RunDocument::host_of(int rank) const {
  const WorkerSummary* worker = launch ? launch->worker(rank) : nullptr;
  return worker != nullptr ? worker->host : "";
}

RunDocument parse_run_document(const std::string& text) {
  const nlohmann::json document = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) throw ReportError("(document)", "not a JSON object");
  RunDocument run;
  const bool steps = document.contains("steps");
  const bool ranks = document.contains("ranks");
  if (!steps && !ranks) {
    run.parts.push_back(part_of(text, -1));
    return run;
  }
  const char* key = steps ? "steps" : "ranks";
  const auto& list = document.at(key);
  if (!list.is_array()) throw ReportError(key, "expected an array");
  run.kind = steps ? RunDocument::Kind::kSteps : RunDocument::Kind::kRanks;
  for (std::size_t i = 0; i < list.size(); ++i) run.parts.push_back(part_of(list[i].dump(), steps ? -1 : static_cast<int>(i)));
  if (ranks && document.contains("launch") && document.at("launch").is_object())
    run.launch = parse_launch_summary(document.at("launch").dump());
  return run;
}

}  // namespace gpulab
