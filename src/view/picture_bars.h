// The memory bars' layout (internal to view/): how many cells a bar gets beside the fixed
// columns of its row, the scale it is drawn to, and how much of a GPU's use is the CUDA
// context. The bar itself, its scale and the amounts are public (node_picture.h: smi --watch
// draws them too); split from node_picture.cpp so that both pictures lay out bars one way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/node.h"
#include "report/report_reader.h"

namespace gpulab::view::picture {

constexpr std::uint64_t kMiB = 1024ull * 1024ull;
constexpr std::uint64_t kGiB = 1024ull * kMiB;

/// A bar's cells and the bytes a full bar stands for.
struct BarLayout {
  int cells = 24;
  std::uint64_t scale = kGiB;
};

/// Bars for a row of `width` columns of which `fixed` are taken: 6 to 30 cells, to the scale
/// that holds `largest` bytes (bar_scale_bytes).
BarLayout bar_layout(int width, int fixed, std::uint64_t largest);
/// "4 GiB".
std::string scale_text(std::uint64_t scale);
/// How much of `usage` the bar marks as context: none without a context, the node's context
/// size on `physical` (at most what was used), everything when the node does not say.
std::uint64_t context_share(const std::optional<Node>& node, int physical, const GpuUsage& usage);

}  // namespace gpulab::view::picture
