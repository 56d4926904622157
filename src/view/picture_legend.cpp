// The memory rows' title and the bars' key (picture_legend.h).
#include "view/picture_legend.h"

#include <fmt/format.h>

#include "view/picture_text.h"

namespace gpulab::view::picture {

void legend(std::string& out, const std::string& title, const BarLayout& layout, const PictureStyle& style) {
  Line key;
  key.add(fmt::format("bar: 0 to {}, linear; ", scale_text(layout.scale)), Tone::Dim)
      .add("▓", Tone::Context)
      .add(" context ", Tone::Dim)
      .add("█", Tone::Memory)
      .add(" memory", Tone::Dim);
  Line line;
  line.add(title);
  if (style.width - line.width() - key.width() >= 2) {
    out += line.add("  ").append(key).render(style);
  } else {
    out += line.render(style) + Line().add("  ").append(key).render(style);
  }
}

}  // namespace gpulab::view::picture
