// Any text given as a lesson report either parses into a report that keeps the schema's
// promises (docs/report-schema.md) or is rejected with a ReportError naming a field.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "report/report_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gpulab::Report report;
  try {
    report = gpulab::parse_report(text);
  } catch (const gpulab::ReportError& e) {
    if (e.field().empty()) std::abort();
    return 0;
  }
  if (report.pid < 1 || report.exit_code < 0 || report.exit_code > 255) std::abort();
  if (report.backend != gpulab::Backend::kSim && report.backend != gpulab::Backend::kCuda) std::abort();
  for (const auto& observation : report.observations) {
    if (report.observation(observation.label) == nullptr) std::abort();
    for (const auto& gpu : observation.gpus) {
      if (gpu.physical_index < 0 || (gpu.used_bytes == 0 && !gpu.context)) std::abort();
      if (observation.gpu(gpu.physical_index) != &gpu) std::abort();  // each GPU once
    }
    for (const auto& tensor : observation.tensors) {
      if (tensor.device.empty()) std::abort();
      if (tensor.physical_index && (*tensor.physical_index < 0 || tensor.device.compare(0, 4, "cuda") != 0))
        std::abort();
    }
  }
  return 0;
}
