// What the view tests share: a rendered text's lines, the one line holding a piece, and a
// hand-built report on a shipped node.
#pragma once

#include <catch2/catch.hpp>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "report/report_reader.h"

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

/// A lesson report on the simulated node `node` under CUDA_VISIBLE_DEVICES=`visible`, unchanged
/// at exit, with no observation yet.
inline gpulab::Report report_on(const std::string& node, std::optional<std::string> visible) {
  gpulab::Report report;
  report.lesson = "04";
  report.backend = Backend::kSim;
  report.node = node;
  report.env.cuda_visible_devices = std::move(visible);
  report.env_at_exit = report.env;
  return report;
}

}  // namespace gpulab::view_test
