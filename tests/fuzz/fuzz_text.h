// What the class report's harnesses ask of every output: valid UTF-8 (shortest forms, no
// surrogates, at most U+10FFFF) and no control character but the newline. Checked here on
// its own, not with the printable() the outputs go through.
#pragma once

#include <cstddef>
#include <string>

namespace gpulab::fuzz {

inline bool shown_safely(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = b(i);
    const std::size_t n = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
    if (n == 0 || i + n > text.size()) return false;
    for (std::size_t k = 1; k < n; ++k)
      if ((b(i + k) & 0xC0) != 0x80) return false;
    if ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) >= 0xA0) || (c == 0xF0 && b(i + 1) < 0x90) ||
        (c == 0xF4 && b(i + 1) >= 0x90))
      return false;
    if ((c < 0x20 && c != '\n') || c == 0x7F) return false;
    if (c == 0xC2 && b(i + 1) <= 0x9F) return false;  // C1
    i += n;
  }
  return true;
}

}  // namespace gpulab::fuzz
