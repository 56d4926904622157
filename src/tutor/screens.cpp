#include "tutor/screens.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "view/node_picture.h"
#include "workspace/rules.h"

namespace gpulab::tutor {
namespace {

std::string errors_text(const Report& report, const std::string& who) {
  std::string text;
  for (const auto& error : report.errors) text += fmt::format("  error{} ({}): {}\n", who, error.label, error.message);
  return text;
}

std::string no_picture(const RunPart& part) { return "(no picture: " + part.problem + ")\n"; }

std::string ranks_text(const RunDocument& document, const view::PictureStyle& style) {
  std::string text;
  std::vector<view::RankReport> ranks;
  for (const auto& part : document.parts) {
    if (!part.report) {
      text += no_picture(part);
      continue;
    }
    const int rank = part.rank >= 0 ? part.rank : static_cast<int>(ranks.size());
    ranks.push_back({rank, document.host_of(rank), *part.report});
  }
  text += view::render_ranks_picture(ranks, style);
  for (const auto& rank : ranks) text += errors_text(rank.report, " in rank " + std::to_string(rank.rank));
  return text;
}

}  // namespace

std::string bar(int done, int total, int width) {
  const int filled = total > 0 ? done * width / total : 0;
  return std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(width - filled), '.');
}

std::string compile_error_text(const grading::BuildResult& result) {
  return result.messages + "the exercise does not compile yet (the compiler's messages are above).\n";
}

std::optional<std::string> run_failure_text(const LessonEntry& lesson, const grading::RunResult& result,
                                            double timeout_s) {
  const std::string how = !result.what.empty() ? result.what : result.last.outcome(timeout_s);
  const std::string& err = !result.err.empty() ? result.err : result.last.err;  // the programs' own, else the launcher's
  if (result.outcome == Outcome::kTimedOut || result.last.timed_out)
    return fmt::format("lesson {} did not finish within {} s (a loop that never ends?). It was stopped; "
                       "your file is untouched and the tutorial goes on.\n", lesson.id, timeout_s);
  if (result.outcome == Outcome::kCrashed)
    return err + crash_line(lesson, how) +
           fmt::format("lesson {} crashed (the message is above). Your file is untouched; the tutorial goes on.\n", lesson.id);
  if (nlohmann::json::parse(result.document.json(), nullptr, /*allow_exceptions=*/false).is_discarded())
    return err + fmt::format("lesson {} {} before it wrote a report; the tutorial goes on.\n", lesson.id, how);
  return std::nullopt;
}

std::string pictures_text(const RunDocument& document, const view::PictureStyle& style) {
  std::string text = "\n";
  if (document.kind == RunDocument::Kind::kRanks) return text + ranks_text(document, style);
  const auto& parts = document.parts;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!parts[i].report) {
      text += no_picture(parts[i]);
      continue;
    }
    if (parts.size() > 1) text += fmt::format("-- step {} of {}\n", i + 1, parts.size());
    text += view::render_node_picture(*parts[i].report, style);
    text += errors_text(*parts[i].report, "");
  }
  return text;
}

std::string checks_text(const LessonEntry& lesson, const grading::ChecksResult& result, bool stretch,
                        double timeout_s) {
  if (stretch && result.no_stretch_task) return verdict_lines(lesson, result, stretch);
  if (!result.has_verdict) {
    std::string text = result.message;
    if (!text.empty() && text.back() != '\n') text += '\n';
    if (result.outcome == Outcome::kTimedOut)
      text += fmt::format("lesson {}'s {}checks did not finish within {} s; the tutorial goes on.\n", lesson.id,
                          stretch ? "stretch " : "", timeout_s);
    return text;
  }
  return verdict_lines(lesson, result, stretch);
}

}  // namespace gpulab::tutor
