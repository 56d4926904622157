// The node picture's top half (internal to view/): the header (what CUDA_VISIBLE_DEVICES and
// CUDA_DEVICE_ORDER mean, the node on the right) and the diagram laid out in aligned columns,
// list entry -> CUDA index -> physical GPU, with the tensors last seen on each device. Split
// from node_picture.cpp; the ranks picture reuses its names of variables, nodes and GPUs.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "view/node_picture.h"
#include "view/picture_mapping.h"

namespace gpulab::view::picture {

/// "CUDA_VISIBLE_DEVICES=2,3" or "CUDA_VISIBLE_DEVICES unset".
std::string variable_text(const std::optional<std::string>& value);
/// "node dgx-a100: 8 x NVIDIA A100-SXM4-80GB", with a simulated container's share; "" when unknown.
std::string node_summary(const std::optional<Node>& node, const Report& report);
/// "GPU 3", "GPU 0 MIG 1/0", or "GPU ?" for CUDA index `cuda` of the mapping.
std::string gpu_name(const Mapping& m, std::size_t cuda, const std::optional<Node>& node);

/// Appends the header: the variable's meaning on the left, `node_text` on the right when both
/// fit, and what the program changed with setenv.
void header(std::string& out, const Mapping& m, const std::string& node_text, const PictureStyle& style);
/// Appends the diagram: one row per list entry (or per CUDA device when the variable is
/// unset), each CUDA device pointing at its physical GPU, with the tensors last seen there.
void diagram(std::string& out, const ReportFacts& facts, const PictureStyle& style);

}  // namespace gpulab::view::picture
