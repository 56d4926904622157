// The verdict as the learner reads it: one line per check, failures indented below.
#include "view/verdict_text.h"

#include <sstream>

namespace gpulab::view {
namespace {

void append_context(std::ostringstream& out, const std::string& text) {
  constexpr int kMaxLines = 8;
  std::istringstream lines(text);
  std::string line;
  int shown = 0;
  while (std::getline(lines, line)) {
    if (shown++ == kMaxLines) {
      out << "          … (--verbose shows everything)\n";
      return;
    }
    out << "          " << line << '\n';
  }
}

}  // namespace

std::string render_verdict(const CheckVerdict& verdict) {
  std::ostringstream out;
  for (const auto& c : verdict.cases) {
    if (c.skipped) {
      out << "  - " << c.name << "  (skipped: " << c.skip_reason << ")\n";
      continue;
    }
    out << (c.passed ? "  ✓ " : "  ✗ ") << c.name << '\n';
    for (const auto& failure : c.failures) {
      out << "      " << failure.text << '\n';
      for (const auto& line : failure.context) append_context(out, line);
    }
  }
  return out.str();
}

}  // namespace gpulab::view
