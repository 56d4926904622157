#include "report/message_text.h"

#include <algorithm>
#include <sstream>

namespace gpulab {

std::string without_prefixes(std::string text, const std::vector<std::string>& prefixes) {
  for (const auto& prefix : prefixes) {
    if (prefix.empty()) continue;
    for (auto at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at)) text.erase(at, prefix.size());
  }
  return text;
}

namespace {

// The length of the valid UTF-8 sequence at the start of `text`, its code point in `point`;
// 0 when it is not one.
std::size_t utf8_sequence(std::string_view text, char32_t& point) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  char32_t minimum = 0;
  if (lead < 0x80) {
    point = lead;
    return 1;
  }
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    point = lead & 0x1F;
    minimum = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    point = lead & 0x0F;
    minimum = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    point = lead & 0x07;
    minimum = 0x10000;
  } else {
    return 0;  // a continuation byte, an overlong lead (C0, C1) or past U+10FFFF (F5..FF)
  }
  if (text.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    point = (point << 6) | (byte(i) & 0x3F);
  }
  if (point < minimum || point > 0x10FFFF || (point >= 0xD800 && point <= 0xDFFF)) return 0;
  return length;
}

bool is_control(char32_t point) {
  return point < 0x20 || (point >= 0x7F && point <= 0x9F) ||  // C0, DEL, C1
         point == 0x200E || point == 0x200F || point == 0x061C ||  // the bidirectional marks
         (point >= 0x202A && point <= 0x202E) ||                  // embeddings and overrides
         (point >= 0x2066 && point <= 0x2069);                    // isolates
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

std::string printable(std::string_view text, std::size_t max_points) {
  std::string out;
  out.reserve(std::min(text.size(), max_points == std::string_view::npos ? text.size() : max_points * 4 + 3));
  std::size_t points = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (points == max_points) {
      out += "…";
      break;
    }
    char32_t point = 0;
    const std::size_t length = utf8_sequence(text.substr(i), point);
    if (length == 0 || is_control(point)) out += kReplacement;
    else out.append(text.substr(i, length));
    i += length == 0 ? 1 : length;
    ++points;
  }
  return out;
}

std::string first_lines(const std::string& text, std::size_t count) {
  std::istringstream in(text);
  std::string kept;
  std::string line;
  for (std::size_t n = 0; n < count && std::getline(in, line); ++n) kept += line + '\n';
  return kept;
}

}  // namespace gpulab
