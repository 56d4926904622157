#include "report/message_text.h"

#include <sstream>

namespace gpulab {

std::string without_prefixes(std::string text, const std::vector<std::string>& prefixes) {
  for (const auto& prefix : prefixes) {
    if (prefix.empty()) continue;
    for (auto at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at)) text.erase(at, prefix.size());
  }
  return text;
}

std::string first_lines(const std::string& text, std::size_t count) {
  std::istringstream in(text);
  std::string kept;
  std::string line;
  for (std::size_t n = 0; n < count && std::getline(in, line); ++n) kept += line + '\n';
  return kept;
}

}  // namespace gpulab
