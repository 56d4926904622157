// The pictures' text (internal to view/): lines of coloured spans cut to the terminal's width,
// column counting of UTF-8, word wrapping and lists. Split from node_picture.cpp so that the
// diagram, the bars, the legend and the ranks' picture share one way of laying out text.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "view/node_picture.h"

namespace gpulab::view::picture {

/// What a span is coloured as (ANSI only with PictureStyle::color).
enum class Tone { Plain, Dim, Bold, Cuda, Gpu, Context, Memory, Warn };

/// The ANSI escape that starts `tone` ("" for Plain).
const char* ansi(Tone tone);
/// Columns of plain UTF-8 (no escapes): code points, every one a column wide here.
int columns(const std::string& text);
/// The first `keep` columns of plain UTF-8 text.
std::string first_columns(const std::string& text, int keep);
/// `text` padded with spaces to `to` columns (never cut).
std::string pad(const std::string& text, int to);

/// A line of coloured spans.
class Line {
 public:
  Line& add(std::string text, Tone tone = Tone::Plain);
  Line& append(const Line& other);
  int width() const;
  /// Cut to `style.width` columns, the last one an ellipsis when something was cut; no
  /// trailing spaces; ends with a newline.
  std::string render(const PictureStyle& style) const;

 private:
  std::vector<std::pair<std::string, Tone>> spans_;
};

/// Words of `text` over lines of at most `width` columns, each starting with `indent`.
std::vector<std::string> wrap(const std::string& text, int width, const std::string& indent);
/// `items` joined with `separator`.
std::string join(const std::vector<std::string>& items, const char* separator = ", ");
/// "0-1, 6-7" for the sorted {0, 1, 6, 7}.
std::string ranges(const std::vector<int>& sorted);

}  // namespace gpulab::view::picture
