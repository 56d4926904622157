// Every rank of a launched lesson on one picture (render_ranks_picture, node_picture.h):
// their common environment, a line per rank for its devices, then a memory row per
// (physical GPU, rank). Each rank's node file is read once, at the entry (picture_mapping.h),
// and its facts passed down. Split from node_picture.cpp: one rank's picture is that file's.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "view/node_picture.h"
#include "view/picture_bars.h"
#include "view/picture_diagram.h"
#include "view/picture_legend.h"
#include "view/picture_mapping.h"
#include "view/picture_text.h"

namespace gpulab::view::picture {
namespace {

// A rank with the facts of its report, read once.
struct RankFacts {
  const RankReport& rank;
  ReportFacts facts;
};

// The ranks' common environment, once; a rank that differs says so on its own line.
void ranks_header(std::string& out, const RankFacts& first_rank, std::size_t ranks, std::size_t host_count,
                  const PictureStyle& style) {
  const Report& first = first_rank.rank.report;
  const std::optional<Node>& node = first_rank.facts.node;
  const Mapping shared = map_devices(node, first.env, first.backend == Backend::kSim);
  std::string node_text = node_summary(node, first);
  if (host_count > 1) node_text += fmt::format(" (each of {} hosts)", host_count);
  Line line;
  line.add(fmt::format("{} ranks, ", ranks)).add(variable_text(first.env.cuda_visible_devices), Tone::Bold);
  if (first.env.cuda_device_order) line.add("  CUDA_DEVICE_ORDER=" + *first.env.cuda_device_order, Tone::Bold);
  const int gap = style.width - line.width() - columns(node_text);
  if (gap >= 3) out += line.add(std::string(static_cast<std::size_t>(gap), ' ')).add(node_text, Tone::Dim).render(style);
  else out += line.render(style) + Line().add("  " + node_text, Tone::Dim).render(style);
  if (shared.note && style.explain)
    for (const auto& text : wrap("note: " + *shared.note, style.width, "  ")) out += Line().add(text, Tone::Warn).render(style);
}

// "rank 1", with its host when the ranks ran on several.
std::string rank_label(const RankReport& r, bool several_hosts) {
  return several_hosts ? fmt::format("rank {} {}", r.rank, r.host.empty() ? "(here)" : "@" + r.host)
                       : fmt::format("rank {}", r.rank);
}

// A rank's CUDA devices holding tensors, plus those it has only a context on (empty names).
std::map<int, std::vector<std::string>> tensors_by_cuda_device(const Report& report, const Mapping& m,
                                                               std::vector<std::string>& on_cpu) {
  std::map<int, std::vector<std::string>> on_cuda;
  for (const auto& t : last_locations(report)) {
    if (const auto index = cuda_index(t.device)) on_cuda[*index].push_back(t.name);
    else on_cpu.push_back(t.name);
  }
  std::set<int> used;
  if (!report.observations.empty())
    for (const auto& usage : report.observations.back().gpus) used.insert(usage.physical_index);
  for (std::size_t i = 0; i < m.physical.size(); ++i)
    if (used.count(m.physical[i]) && !on_cuda.count(static_cast<int>(i))) on_cuda[static_cast<int>(i)] = {};
  return on_cuda;
}

// One rank's line: its CUDA devices holding tensors (or a context), and the physical GPU behind each.
std::string rank_devices_line(const RankFacts& r, const std::string& label, const Report& first, const PictureStyle& style) {
  const Report& report = r.rank.report;
  const Mapping& m = r.facts.mapping;
  std::vector<std::string> on_cpu;
  const auto on_cuda = tensors_by_cuda_device(report, m, on_cpu);
  Line line;
  line.add("  ").add(label, Tone::Bold).add("  ");
  if (report.env.cuda_visible_devices != first.env.cuda_visible_devices)
    line.add(variable_text(report.env.cuda_visible_devices) + "  ", Tone::Dim);
  bool any = false;
  for (const auto& [index, names] : on_cuda) {
    if (any) line.add("   ");
    any = true;
    const bool known = static_cast<std::size_t>(index) < m.physical.size() && m.physical[static_cast<std::size_t>(index)] >= 0;
    line.add(fmt::format("cuda:{}", index), Tone::Cuda).add(" ─► ");
    line.add(known ? gpu_name(m, static_cast<std::size_t>(index), r.facts.node) : "GPU ?", Tone::Gpu);
    line.add(names.empty() ? "  (context only)" : "  ◄ " + join(names));
  }
  if (!on_cpu.empty()) line.add(any ? "   " : "").add("cpu ◄ " + join(on_cpu));
  if (!any && on_cpu.empty()) line.add("no tensor, no GPU", Tone::Dim);
  return line.render(style);
}

// One memory row: a rank's usage of one physical GPU at its last observation.
struct RankMemoryRow {
  std::string host;
  int physical;
  const RankFacts* rank;
  const GpuUsage* usage;
};

// Every rank's last observation, a row per GPU it used: GPUs in order, host by host.
std::vector<RankMemoryRow> rank_memory_rows(const std::vector<RankFacts>& ranks) {
  std::vector<RankMemoryRow> rows;
  for (const auto& r : ranks)
    if (!r.rank.report.observations.empty())
      for (const auto& usage : r.rank.report.observations.back().gpus) rows.push_back({r.rank.host, usage.physical_index, &r, &usage});
  std::stable_sort(rows.begin(), rows.end(), [](const RankMemoryRow& a, const RankMemoryRow& b) {
    return std::tie(a.host, a.physical) < std::tie(b.host, b.physical);
  });
  return rows;
}

// The label and rank columns' widths, and the bar's layout for what is left.
struct RankMemoryColumns {
  int label_width = 0;
  int rank_width = 0;
  BarLayout layout;
};

RankMemoryColumns rank_memory_columns(const std::vector<RankMemoryRow>& rows, int width) {
  RankMemoryColumns c;
  std::uint64_t largest = 0;
  for (const RankMemoryRow& row : rows) {
    c.label_width = std::max(c.label_width, columns(fmt::format("{} GPU {}", row.host, row.physical)));
    c.rank_width = std::max(c.rank_width, columns(fmt::format("rank {}", row.rank->rank.rank)));
    largest = std::max(largest, row.usage->used_bytes);
  }
  const int fixed = 2 + c.label_width + 2 + c.rank_width + 2 + 2 + 10 + 5 + 8;
  c.layout = bar_layout(width, fixed, largest);
  return c;
}

std::string rank_memory_line(const RankMemoryRow& row, const RankMemoryColumns& c, bool several_hosts, bool shared,
                             const PictureStyle& style) {
  Line line;
  const std::string label = several_hosts && !row.host.empty() ? fmt::format("{} GPU {}", row.host, row.physical)
                                                               : fmt::format("GPU {}", row.physical);
  line.add("  ").add(pad(label, c.label_width), Tone::Gpu).add("  ").add(pad(fmt::format("rank {}", row.rank->rank.rank), c.rank_width)).add("  ");
  line.add(memory_bar(row.usage->used_bytes, context_share(row.rank->facts.node, row.physical, *row.usage), c.layout.scale,
                      c.layout.cells, style.color))
      .add("  ")
      .add(fmt::format("{:>10}", memory_amount(row.usage->used_bytes)), Tone::Bold);
  if (row.usage->context) line.add("  ctx", Tone::Context);
  if (shared) line.add("  shared", Tone::Warn);
  return line.render(style);
}

// Memory: a row per (physical GPU, rank) that used it, GPUs in order, host by host.
void ranks_memory(std::string& out, const std::vector<RankFacts>& ranks, bool several_hosts, const PictureStyle& style) {
  const std::vector<RankMemoryRow> rows = rank_memory_rows(ranks);
  const RankMemoryColumns c = rank_memory_columns(rows, style.width);
  legend(out, "each rank on each physical GPU (its last observation):", c.layout, style);
  if (rows.empty()) out += Line().add("  no rank used a GPU", Tone::Dim).render(style);
  std::map<std::pair<std::string, int>, int> sharing;  // ranks per GPU: two on one GPU is worth a mark
  for (const RankMemoryRow& row : rows) ++sharing[{row.host, row.physical}];
  for (const RankMemoryRow& row : rows) out += rank_memory_line(row, c, several_hosts, sharing[{row.host, row.physical}] > 1, style);
}

}  // namespace
}  // namespace gpulab::view::picture

namespace gpulab::view {

std::string render_ranks_picture(const std::vector<RankReport>& ranks, const PictureStyle& style) {
  using namespace picture;
  if (ranks.empty()) return Line().add("no rank wrote a report: nothing to picture", Tone::Dim).render(style);
  std::vector<RankFacts> facts;  // each rank's node file, read once
  facts.reserve(ranks.size());
  for (const auto& r : ranks) facts.push_back({r, facts_of(r.report)});
  std::set<std::string> hosts;
  for (const auto& r : ranks) hosts.insert(r.host);
  const bool several_hosts = hosts.size() > 1;
  std::string out;
  ranks_header(out, facts.front(), ranks.size(), hosts.size(), style);
  int label_width = 0;
  for (const auto& r : ranks) label_width = std::max(label_width, columns(rank_label(r, several_hosts)));
  for (const auto& r : facts) out += rank_devices_line(r, pad(rank_label(r.rank, several_hosts), label_width), ranks.front().report, style);
  ranks_memory(out, facts, several_hosts, style);
  return out;
}

}  // namespace gpulab::view
