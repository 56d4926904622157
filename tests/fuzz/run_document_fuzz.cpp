// Any text given as `gpulab run --json`'s output either parses into a run document that
// keeps the promises of src/report/run_document.h, or is rejected with a ReportError naming
// a field; and what the document prints back (json()) reads as the same document.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "report/run_document.h"

namespace {

void check(const gpulab::RunDocument& document) {
  using Kind = gpulab::RunDocument::Kind;
  if (document.kind == Kind::kSingle && document.parts.size() != 1) std::abort();
  if (document.launch && document.kind != Kind::kRanks) std::abort();  // only a launched lesson has one
  for (const auto& part : document.parts) {
    if (!part.report && part.problem.empty()) std::abort();  // an invalid part says why
    if (document.kind != Kind::kRanks && part.rank != -1) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gpulab::RunDocument document;
  try {
    document = gpulab::parse_run_document(text);
  } catch (const gpulab::ReportError& e) {
    if (e.field().empty()) std::abort();
    return 0;
  }
  check(document);
  // Printed and read again (`gpulab run --json`, then a tool reading it): the same document.
  gpulab::RunDocument again;
  try {
    again = gpulab::parse_run_document(document.json());
  } catch (const gpulab::ReportError&) {
    std::abort();
  }
  check(again);
  if (again.kind != document.kind || again.parts.size() != document.parts.size() ||
      again.launch.has_value() != document.launch.has_value())
    std::abort();
  for (std::size_t i = 0; i < document.parts.size(); ++i)
    if (again.parts[i].report.has_value() != document.parts[i].report.has_value()) std::abort();
  return 0;
}
