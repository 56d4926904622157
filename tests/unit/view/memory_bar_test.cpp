// The bars and amounts the pictures and smi --watch share (view/node_picture.h).
#include <catch2/catch.hpp>

#include <string>

#include "view/node_picture.h"

using namespace gpulab::view;

namespace {

constexpr std::uint64_t kMiB = 1024ull * 1024ull;
constexpr std::uint64_t kGiB = 1024ull * kMiB;

// How many times `glyph` occurs in `text`.
int count(const std::string& text, const std::string& glyph) {
  int n = 0;
  for (auto at = text.find(glyph); at != std::string::npos; at = text.find(glyph, at + glyph.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("bar_scale_bytes: the smallest power of two of GiB, at least 1 GiB, that holds the largest", "[view][bar]") {
  CHECK(bar_scale_bytes(0) == kGiB);
  CHECK(bar_scale_bytes(400 * kMiB) == kGiB);
  CHECK(bar_scale_bytes(kGiB) == kGiB);
  CHECK(bar_scale_bytes(kGiB + 1) == 2 * kGiB);
  CHECK(bar_scale_bytes(30 * kGiB) == 32 * kGiB);
  CHECK(bar_scale_bytes(80 * kGiB) == 128 * kGiB);
}

TEST_CASE("memory_amount: MiB with one decimal below 10 GiB, GiB from there", "[view][bar]") {
  CHECK(memory_amount(0) == "0 MiB");
  CHECK(memory_amount(438 * kMiB) == "438.0 MiB");
  CHECK(memory_amount(kMiB / 2) == "0.5 MiB");
  CHECK(memory_amount(10 * kGiB - kMiB) == "10239.0 MiB");
  CHECK(memory_amount(10 * kGiB) == "10.0 GiB");
  CHECK(memory_amount(12 * kGiB + kGiB / 2) == "12.5 GiB");
}

TEST_CASE("memory_bar: context, memory and free cells, always `cells` wide", "[view][bar]") {
  const std::string empty = memory_bar(0, 0, kGiB, 10, false);
  CHECK(empty == "░░░░░░░░░░");
  // 400 MiB context + 112 MiB of memory of 1 GiB, 10 cells: 4 context, 1 memory, 5 free.
  const std::string half = memory_bar(512 * kMiB, 400 * kMiB, kGiB, 10, false);
  CHECK(count(half, "▓") == 4);
  CHECK(count(half, "█") == 1);
  CHECK(count(half, "░") == 5);
  CHECK(display_width(half) == 10);
  // A sliver still takes a cell; memory beyond a context takes one more.
  CHECK(memory_bar(1, 0, 128 * kGiB, 10, false) == "█░░░░░░░░░");
  CHECK(memory_bar(kMiB + 1, kMiB, 128 * kGiB, 10, false) == "▓█░░░░░░░░");
  // Full: the memory beyond the context takes a cell from the context.
  CHECK(memory_bar(kGiB, kGiB - 1, kGiB, 4, false) == "▓▓▓█");
  CHECK(memory_bar(2 * kGiB, 0, kGiB, 4, false) == "████");
}

TEST_CASE("memory_bar: colour adds escapes, not columns", "[view][bar]") {
  const std::string colored = memory_bar(512 * kMiB, 400 * kMiB, kGiB, 10, true);
  CHECK(colored.find("\x1b[33m") != std::string::npos);  // the context
  CHECK(colored.find("\x1b[32m") != std::string::npos);  // the memory
  CHECK(display_width(colored) == 10);
  CHECK(display_width("\x1b[1;31mab\x1b[0m…") == 3);
}
