// The pictures' text (src/view/picture_text.h): columns of UTF-8, lines cut to the width
// with an ellipsis, colour only when asked, word wrapping and GPU ranges.
#include <catch2/catch.hpp>

#include "view/picture_text.h"

using namespace gpulab::view;
using namespace gpulab::view::picture;

TEST_CASE("picture text: columns count code points, first_columns and pad keep UTF-8 whole", "[view][picture]") {
  CHECK(columns("cuda:0 ─► GPU 2") == 15);
  CHECK(first_columns("─►ab", 2) == "─►");
  CHECK(first_columns("abc", 5) == "abc");
  CHECK(pad("─►", 4) == "─►  ");
  CHECK(pad("abcdef", 3) == "abcdef");  // never cut
  CHECK(display_width("\x1b[1;32mGPU 3\x1b[0m ◄") == 7);
}

TEST_CASE("picture text: a line is cut to the width with an ellipsis, coloured only with colour on", "[view][picture]") {
  Line line;
  line.add("CUDA_VISIBLE_DEVICES=2,3", Tone::Bold).add("  ").add("node dgx-a100", Tone::Dim);
  CHECK(line.width() == 39);
  CHECK(line.render({false, 80, true}) == "CUDA_VISIBLE_DEVICES=2,3  node dgx-a100\n");
  CHECK(line.render({false, 10, true}) == "CUDA_VISI…\n");
  CHECK(display_width(line.render({true, 10, true})) == 11);  // ten columns and the newline
  CHECK(line.render({true, 80, true}).find("\x1b[1mCUDA_VISIBLE_DEVICES=2,3\x1b[0m") == 0);
  CHECK(Line().add("trailing   ").render({false, 80, true}) == "trailing\n");
}

TEST_CASE("picture text: wrap, join and ranges", "[view][picture]") {
  CHECK(wrap("note: entry '-1' is negative", 14, "  ") == std::vector<std::string>{"  note: entry", "  '-1' is", "  negative"});
  CHECK(wrap("", 10, "  ").empty());
  CHECK(join({"a", "b"}) == "a, b");
  CHECK(join({"a", "b"}, " + ") == "a + b");
  CHECK(ranges({0, 1, 3, 6, 7, 8}) == "0-1, 3, 6-8");
  CHECK(ranges({}).empty());
}
