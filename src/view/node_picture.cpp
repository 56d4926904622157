// The picture of one lesson process (docs/node-picture.md): render_node_picture reads the
// report's node once (picture_mapping.h) and draws the header and diagram
// (picture_diagram.h), then this process's memory on each physical GPU (here, with the bars
// of picture_bars.h under the legend of picture_legend.h). Also the style for stdout.
#include "view/node_picture.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "view/picture_bars.h"
#include "view/picture_diagram.h"
#include "view/picture_legend.h"
#include "view/picture_mapping.h"
#include "view/picture_text.h"

namespace gpulab::view::picture {
namespace {

// The memory rows: this process on each physical GPU at the last observation.
void memory(std::string& out, const ReportFacts& facts, const PictureStyle& style) {
  const Report& report = facts.report;
  const Mapping& m = facts.mapping;
  const std::optional<Node>& node = facts.node;
  if (report.observations.empty()) {
    out += Line().add("this process recorded no observation: no memory to show", Tone::Dim).render(style);
    return;
  }
  const Observation& last = report.observations.back();
  std::map<int, int> cuda_of;  // physical -> CUDA index (whole GPU or MIG)
  for (std::size_t i = 0; i < m.physical.size(); ++i)
    if (m.physical[i] >= 0 && !cuda_of.count(m.physical[i])) cuda_of[m.physical[i]] = static_cast<int>(i);
  const int gpus = node ? static_cast<int>(node->gpus.size()) : 0;
  std::set<int> rows;
  for (const auto& [physical, cuda] : cuda_of) rows.insert(physical);
  for (const GpuUsage& usage : last.gpus) rows.insert(usage.physical_index);
  std::vector<int> folded;  // neither visible nor used: one line together
  for (int p = 0; p < gpus; ++p)
    if (!rows.count(p)) folded.push_back(p);
  std::uint64_t largest = 0;
  for (const GpuUsage& usage : last.gpus) largest = std::max(largest, usage.used_bytes);
  const int label_width = static_cast<int>(fmt::format("GPU {}", rows.empty() ? 0 : *rows.rbegin()).size());
  const int cuda_width = std::max(6, static_cast<int>(fmt::format("cuda:{}", m.physical.size()).size()));
  // "  GPU 3  cuda:1  <bar>  438.0 MiB  ctx"
  const int fixed = 2 + label_width + 2 + cuda_width + 2 + 2 + 10 + 5;
  const BarLayout layout = bar_layout(style.width, fixed, largest);
  legend(out, fmt::format("this process on each physical GPU ({}):", last.label), layout, style);
  for (int physical : rows) {
    const GpuUsage* usage = last.gpu(physical);
    const auto cuda = cuda_of.find(physical);
    Line line;
    line.add("  ").add(pad(fmt::format("GPU {}", physical), label_width), Tone::Gpu).add("  ");
    if (cuda != cuda_of.end()) line.add(pad(fmt::format("cuda:{}", cuda->second), cuda_width), Tone::Cuda);
    else line.add(pad(usage != nullptr ? "hidden" : "-", cuda_width), Tone::Dim);
    line.add("  ");
    if (usage == nullptr && cuda == cuda_of.end()) {
      line.add("·  not visible, unused", Tone::Dim);
    } else {
      const std::uint64_t used = usage != nullptr ? usage->used_bytes : 0;
      const std::uint64_t context = usage != nullptr ? context_share(node, physical, *usage) : 0;
      line.add(memory_bar(used, context, layout.scale, layout.cells, style.color)).add("  ");
      line.add(fmt::format("{:>10}", memory_amount(used)), used > 0 ? Tone::Bold : Tone::Dim);
      if (usage != nullptr && usage->context) line.add("  ctx", Tone::Context);
      if (usage != nullptr && cuda == cuda_of.end()) line.add("  (not visible, yet used!)", Tone::Warn);
    }
    out += line.render(style);
  }
  if (!folded.empty())
    out += Line()
               .add(fmt::format("  GPU {}  ·  not visible, unused ({} GPUs)", ranges(folded), folded.size()), Tone::Dim)
               .render(style);
}

}  // namespace
}  // namespace gpulab::view::picture

namespace gpulab::view {

PictureStyle stdout_style() {
  PictureStyle style;
  const char* no_color = std::getenv("NO_COLOR");
  style.color = isatty(STDOUT_FILENO) == 1 && (no_color == nullptr || *no_color == '\0');
  winsize size{};
  if (isatty(STDOUT_FILENO) == 1 && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    style.width = size.ws_col;
  } else if (const char* columns_variable = std::getenv("COLUMNS")) {
    const int value = std::atoi(columns_variable);
    if (value > 0) style.width = value;
  }
  style.width = std::clamp(style.width, 40, 160);
  return style;
}

std::string render_node_picture(const Report& report, const PictureStyle& style) {
  using namespace picture;
  const ReportFacts facts = facts_of(report);  // the node file, read once
  std::string out;
  header(out, facts.mapping, node_summary(facts.node, report), style);
  diagram(out, facts, style);
  memory(out, facts, style);
  return out;
}

RunPicture render_run_picture(const RunDocument& document, const PictureStyle& style) {
  RunPicture picture;
  if (document.kind == RunDocument::Kind::kRanks) {
    std::vector<RankReport> ranks;
    for (const auto& part : document.parts)
      if (part.report) ranks.push_back({part.rank, document.host_of(part.rank), *part.report});
      else picture.problems += "gpulab: no node picture: a rank's report is not valid (" + part.problem + ")\n";
    picture.out = "\n" + render_ranks_picture(ranks, style);
    return picture;
  }
  if (document.parts.empty() || !document.parts.front().report) {
    if (!document.parts.empty())
      picture.problems = "gpulab: no node picture: the report is not valid (" + document.parts.front().problem + ")\n";
    picture.out = "\n(no node picture: the program wrote no report)\n";
    return picture;
  }
  picture.out = "\n" + render_node_picture(*document.parts.front().report, style);
  return picture;
}

}  // namespace gpulab::view
