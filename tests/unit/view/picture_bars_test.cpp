// The memory bars' layout (src/view/picture_bars.h): cells beside the fixed columns, the
// scale, and how much of a GPU's use is the context. The bar itself: memory_bar_test.cpp.
#include <catch2/catch.hpp>

#include "view/picture_bars.h"

using namespace gpulab;
using namespace gpulab::view::picture;

TEST_CASE("picture bars: 6 to 30 cells beside the fixed columns, to the scale of the largest", "[view][picture][bar]") {
  CHECK(bar_layout(80, 40, 0).cells == 30);
  CHECK(bar_layout(80, 60, 0).cells == 20);
  CHECK(bar_layout(40, 60, 0).cells == 6);
  CHECK(bar_layout(80, 40, 3 * kGiB).scale == 4 * kGiB);
  CHECK(scale_text(4 * kGiB) == "4 GiB");
}

TEST_CASE("picture bars: the context share is the node's context size, at most what was used", "[view][picture][bar]") {
  const Node node = load_node_file(resolve_node_path("dgx-a100"));
  const std::uint64_t context = node.gpus[2].context_bytes;
  REQUIRE(context > 0);
  CHECK(context_share(node, 2, {2, context + 100 * kMiB, true}) == context);
  CHECK(context_share(node, 2, {2, context / 2, true}) == context / 2);
  CHECK(context_share(node, 2, {2, 5 * kGiB, false}) == 0);
  CHECK(context_share(std::nullopt, 2, {2, 5 * kGiB, true}) == 5 * kGiB);  // no node: all of it
  CHECK(context_share(node, 99, {99, kGiB, true}) == kGiB);
}
