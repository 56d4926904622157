// The memory rows' title and the bars' key (src/view/picture_legend.h).
#include <catch2/catch.hpp>

#include "test_lines.h"
#include "view/picture_legend.h"

using namespace gpulab::view;
using namespace gpulab::view::picture;
using namespace gpulab::view_test;

TEST_CASE("picture legend: the key beside the title when it fits, else on the next line", "[view][picture]") {
  const BarLayout layout{20, 4 * kGiB};
  std::string wide;
  legend(wide, "this process on each physical GPU (end):", layout, {false, 100, true});
  CHECK(wide == "this process on each physical GPU (end):  bar: 0 to 4 GiB, linear; ▓ context █ memory\n");
  std::string narrow;
  legend(narrow, "this process on each physical GPU (end):", layout, {false, 60, true});
  CHECK(lines_of(narrow) ==
        std::vector<std::string>{"this process on each physical GPU (end):", "  bar: 0 to 4 GiB, linear; ▓ context █ memory"});
  std::string colored;
  legend(colored, "title", layout, {true, 100, true});
  CHECK(contains(colored, "\x1b[33m▓\x1b[0m"));
}
