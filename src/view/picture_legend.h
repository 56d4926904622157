// The memory rows' title line (internal to view/): the title, then the bars' key (scale and
// glyphs) on the same line when it fits, else on the next. Split from node_picture.cpp: the
// node picture and the ranks picture title their memory rows the same way.
#pragma once

#include <string>

#include "view/node_picture.h"
#include "view/picture_bars.h"

namespace gpulab::view::picture {

/// Appends to `out` "<title>  bar: 0 to 4 GiB, linear; ▓ context █ memory" (wrapped as above).
void legend(std::string& out, const std::string& title, const BarLayout& layout, const PictureStyle& style);

}  // namespace gpulab::view::picture
