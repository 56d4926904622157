// The picture of the node after a run: CUDA_VISIBLE_DEVICES -> CUDA index -> physical GPU as
// one aligned diagram, then bars of the process's memory on each physical GPU (contexts
// marked) and where each named tensor lives. `gpulab run` and the tutorial both print it.
#pragma once

#include <string>

#include "gpulab/report_reader.h"

namespace gpulab::cli {

struct PictureStyle {
  bool color = false;  ///< ANSI colours (only on a terminal)
  int width = 80;      ///< columns available
};

/// The picture for one lesson report (its environment, node and last observation).
std::string render_node_picture(const Report& report, const PictureStyle& style = {});

}  // namespace gpulab::cli
