// Any text given as the lesson checks' output either reads as Catch2's XML report, a
// verdict that keeps its own promises, or is rejected with std::runtime_error ("the checks
// did not produce a readable result"): `gpulab check` never crashes on what a broken or
// killed checks program printed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "report/verdict.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string xml(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> strip = {"/home/learner/gpulab/", "/src/", ""};
  gpulab::CheckVerdict verdict;
  try {
    verdict = gpulab::parse_check_xml(xml, strip);
  } catch (const std::runtime_error&) {
    return 0;
  }
  for (const auto& c : verdict.cases) {
    if (c.passed && !c.failures.empty()) std::abort();  // a failure fails the case
    // Skipped: a "needs N GPUs" warning and no failure.
    if (c.skipped && (!c.failures.empty() || c.skip_reason.rfind("needs ", 0) != 0)) std::abort();
  }
  if (verdict.passed() > verdict.cases.size() || verdict.failed() > verdict.cases.size() - verdict.passed())
    std::abort();
  return 0;
}
