// What the view tests share: a rendered text's lines, and the one line holding a piece.
#pragma once

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

namespace gpulab::view_test {

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// The only line of `text` containing `piece`; fails the test when none or several do.
inline std::string line_with(const std::string& text, const std::string& piece) {
  std::vector<std::string> found;
  for (const auto& line : lines_of(text))
    if (line.find(piece) != std::string::npos) found.push_back(line);
  INFO("looking for '" << piece << "' in:\n" << text);
  REQUIRE(found.size() == 1);
  return found.front();
}

inline bool contains(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

}  // namespace gpulab::view_test
