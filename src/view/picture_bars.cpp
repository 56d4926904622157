// The memory bars: their layout (picture_bars.h) and the public bar, scale and amounts
// (node_picture.h) that the pictures and smi --watch draw.
#include "view/picture_bars.h"

#include <algorithm>

#include <fmt/format.h>

#include "view/node_picture.h"
#include "view/picture_text.h"

namespace gpulab::view {
namespace picture {

BarLayout bar_layout(int width, int fixed, std::uint64_t largest) {
  return {std::clamp(width - fixed, 6, 30), bar_scale_bytes(largest)};
}

std::string scale_text(std::uint64_t scale) { return fmt::format("{} GiB", scale / kGiB); }

std::uint64_t context_share(const std::optional<Node>& node, int physical, const GpuUsage& usage) {
  if (!usage.context) return 0;
  if (!node || physical < 0 || static_cast<std::size_t>(physical) >= node->gpus.size()) return usage.used_bytes;
  return std::min(usage.used_bytes, node->gpus[static_cast<std::size_t>(physical)].context_bytes);
}

}  // namespace picture

std::uint64_t bar_scale_bytes(std::uint64_t largest_bytes) {
  std::uint64_t scale = picture::kGiB;
  while (scale < largest_bytes && scale < (1ull << 62)) scale *= 2;
  return scale;
}

std::string memory_amount(std::uint64_t bytes) {
  if (bytes == 0) return "0 MiB";
  constexpr std::uint64_t kGiB = picture::kGiB, kMiB = picture::kMiB;
  if (bytes >= 10 * kGiB) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / static_cast<double>(kMiB));
}

std::string memory_bar(std::uint64_t used_bytes, std::uint64_t context_bytes, std::uint64_t scale_bytes, int cells, bool color) {
  cells = std::max(cells, 2);
  const auto share = [&](std::uint64_t bytes) {
    if (bytes == 0 || scale_bytes == 0) return 0;
    const double exact = static_cast<double>(bytes) * cells / static_cast<double>(scale_bytes);
    return std::clamp(static_cast<int>(exact + 0.5), 1, cells);
  };
  context_bytes = std::min(context_bytes, used_bytes);
  int context = share(context_bytes);
  int total = std::max(share(used_bytes), context);
  if (used_bytes > context_bytes && total == context) {  // memory beyond the context shows too
    if (total < cells) ++total;
    else --context;
  }
  auto repeat = [](const char* glyph, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += glyph;
    return s;
  };
  const std::string ctx = repeat("▓", context), mem = repeat("█", total - context), free = repeat("░", cells - total);
  if (!color) return ctx + mem + free;
  using picture::ansi;
  using picture::Tone;
  return (ctx.empty() ? "" : ansi(Tone::Context) + ctx + "\x1b[0m") + (mem.empty() ? "" : ansi(Tone::Memory) + mem + "\x1b[0m") +
         ansi(Tone::Dim) + free + "\x1b[0m";
}

}  // namespace gpulab::view
