// The picture of the node after a run: CUDA_VISIBLE_DEVICES -> CUDA index -> physical GPU as
// one aligned diagram, then bars of the process's memory on each physical GPU (contexts
// marked) and where each named tensor lives. `gpulab run` and the tutorial both print it.
// See docs/node-picture.md for what each part shows and the bar scale. Drawn by
// node_picture.cpp and ranks_picture.cpp from parts internal to view/: picture_mapping.h
// (each report's node, read once, and the mapping), picture_diagram.h (header and diagram),
// picture_bars.h and picture_legend.h (the memory rows' bars and key), picture_text.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/report_reader.h"
#include "report/run_document.h"

namespace gpulab::view {

struct PictureStyle {
  bool color = false;  ///< ANSI colours (only on a terminal); false: no escape code at all
  int width = 80;      ///< columns available; no line is wider
  bool explain = true; ///< say where CUDA cut CUDA_VISIBLE_DEVICES short (`gpulab run` holds it back, see run.cpp)
};

/// The style for stdout: colour when stdout is a terminal and NO_COLOR is unset (or empty);
/// the terminal's width there, else COLUMNS, else 80.
PictureStyle stdout_style();

/// The picture for one lesson report (its environment, node and observations): the mapping,
/// where each named tensor was last seen, and the memory of the last observation.
std::string render_node_picture(const Report& report, const PictureStyle& style = {});

/// One rank of a launched lesson: its report and the simulated host it ran on ("" for this one).
struct RankReport {
  int rank = 0;
  std::string host;
  Report report;
};

/// Every rank on one picture: each rank's CUDA devices and the physical GPUs behind them,
/// then each physical GPU's memory per rank (a row per rank that used it).
std::string render_ranks_picture(const std::vector<RankReport>& ranks, const PictureStyle& style = {});

/// `gpulab run`'s picture of what one run (a step, the one process, or every rank) wrote:
/// `out` the picture (after a blank line), `problems` a "gpulab: no node picture: …" line
/// per report that is not valid.
struct RunPicture {
  std::string out;
  std::string problems;
};
RunPicture render_run_picture(const RunDocument& document, const PictureStyle& style);

/// The bar scale the pictures use: the smallest power of two of GiB, at least 1 GiB, that
/// holds `largest_bytes`. Linear below it, so a context (~0.4 GiB) fills about 40% of a bar.
std::uint64_t bar_scale_bytes(std::uint64_t largest_bytes);
/// A bar of `cells` columns for `used_bytes` of `scale_bytes`: ▓ the part that is the CUDA
/// context (`context_bytes`, 0 for none), █ the rest, ░ what is free. Anything above zero
/// takes at least one cell, and memory beyond the context one more, so neither vanishes.
std::string memory_bar(std::uint64_t used_bytes, std::uint64_t context_bytes, std::uint64_t scale_bytes, int cells,
                       bool color);
/// "0 MiB", "438.0 MiB", "12.5 GiB".
std::string memory_amount(std::uint64_t bytes);
/// Display columns of UTF-8 text without ANSI escape sequences (every character one column).
int display_width(const std::string& text);

}  // namespace gpulab::view
