// The pictures' text: spans, widths, wrapping (picture_text.h), and display_width.
#include "view/picture_text.h"

#include <algorithm>

#include <fmt/format.h>

namespace gpulab::view {
namespace picture {

const char* ansi(Tone tone) {
  switch (tone) {
    case Tone::Plain: return "";
    case Tone::Dim: return "\x1b[2m";
    case Tone::Bold: return "\x1b[1m";
    case Tone::Cuda: return "\x1b[36m";
    case Tone::Gpu: return "\x1b[1;32m";
    case Tone::Context: return "\x1b[33m";
    case Tone::Memory: return "\x1b[32m";
    case Tone::Warn: return "\x1b[1;31m";
  }
  return "";
}

int columns(const std::string& text) {
  int n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

std::string first_columns(const std::string& text, int keep) {
  std::size_t at = 0;
  for (int seen = 0; at < text.size(); ++at) {
    if ((static_cast<unsigned char>(text[at]) & 0xC0) != 0x80) {
      if (seen == keep) break;
      ++seen;
    }
  }
  return text.substr(0, at);
}

std::string pad(const std::string& text, int to) {
  const int have = columns(text);
  return have >= to ? text : text + std::string(static_cast<std::size_t>(to - have), ' ');
}

Line& Line::add(std::string text, Tone tone) {
  spans_.emplace_back(std::move(text), tone);
  return *this;
}

Line& Line::append(const Line& other) {
  spans_.insert(spans_.end(), other.spans_.begin(), other.spans_.end());
  return *this;
}

int Line::width() const {
  int n = 0;
  for (const auto& span : spans_) n += columns(span.first);
  return n;
}

std::string Line::render(const PictureStyle& style) const {
  const int limit = std::max(style.width, 1);
  const bool cut = width() > limit;
  int room = cut ? limit - 1 : limit;
  std::string out;
  for (const auto& [text, tone] : spans_) {
    if (room <= 0) break;
    const std::string part = columns(text) > room ? first_columns(text, room) : text;
    room -= columns(part);
    const bool colored = style.color && tone != Tone::Plain;
    if (colored) out += ansi(tone);
    out += part;
    if (colored) out += "\x1b[0m";
  }
  if (cut) out += "…";
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + '\n';
}

std::vector<std::string> wrap(const std::string& text, int width, const std::string& indent) {
  std::vector<std::string> lines;
  std::string line = indent;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t space = text.find(' ', at);
    const std::string word = text.substr(at, space == std::string::npos ? std::string::npos : space - at);
    at = space == std::string::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    if (line != indent && columns(line) + 1 + columns(word) > width) {
      lines.push_back(line);
      line = indent;
    }
    line += (line == indent ? "" : " ") + word;
  }
  if (line != indent) lines.push_back(line);
  return lines;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

std::string ranges(const std::vector<int>& sorted) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(sorted[i]) : fmt::format("{}-{}", sorted[i], sorted[j]));
    i = j + 1;
  }
  return join(parts);
}

}  // namespace picture

int display_width(const std::string& text) {
  int n = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;
      continue;
    }
    n += (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 ? 1 : 0;
  }
  return n;
}

}  // namespace gpulab::view
