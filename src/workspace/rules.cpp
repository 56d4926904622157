#include "workspace/rules.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "view/verdict_text.h"

namespace gpulab {

int hints_allowed(const std::optional<ClassSettings>& settings, const LessonEntry& lesson) {
  const int count = static_cast<int>(lesson.hints.size());
  return settings ? settings->hints_allowed(lesson.id, count) : count;
}

HintReply hint_reply(const std::optional<ClassSettings>& settings, const LessonEntry& lesson, int level) {
  if (lesson.hints.empty()) return {"Lesson " + lesson.id + " has no hints.\n", "", Outcome::kOk};
  const int count = static_cast<int>(lesson.hints.size());
  if (level < 1 || level > count)
    return {"", fmt::format("gpulab: lesson {} has hints 1 to {}; there is no hint {}\n", lesson.id, count, level), Outcome::kUsage};
  const int allowed = hints_allowed(settings, lesson);
  if (allowed == 0)
    return {"",
            fmt::format("gpulab: your class has no hints for lesson {} ({}); ./gpulab check {} says what is still wrong\n",
                        lesson.id, kClassFileName, lesson.id),
            Outcome::kUsage};
  if (level > allowed)
    return {"",
            fmt::format("gpulab: your class allows hints 1 to {} of lesson {}'s {} ({}); there is no hint {} here\n", allowed,
                        lesson.id, count, kClassFileName, level),
            Outcome::kUsage};
  HintReply reply;
  for (std::size_t i = 0; i < static_cast<std::size_t>(level); ++i)
    reply.out += fmt::format("Hint {}/{}: {}\n", i + 1, lesson.hints.size(), lesson.hints[i]);
  if (level < allowed) reply.out += fmt::format("(more: ./gpulab hint {} {})\n", lesson.id, level + 1);
  else if (allowed < count)
    reply.out += fmt::format("(that is the last hint your class allows for this lesson: {} of {})\n", allowed, count);
  return reply;
}

bool predicted(const LessonProgress& mine) { return mine.predictions_right.has_value(); }

bool predicted(const Progress& progress, const std::string& lesson_id) {
  const auto found = progress.lessons.find(lesson_id);
  return found != progress.lessons.end() && predicted(found->second);
}

std::string run_banner(const LessonEntry& lesson, bool solution, const std::string& banner, const std::vector<std::string>& args) {
  std::string text = fmt::format("== lesson {}: {} ({})\n", lesson.id, lesson.title, lesson.source_file(solution));
  std::string shown = banner;
  for (const auto& arg : args.empty() ? lesson.args : args) shown += " " + arg;
  if (!shown.empty()) text += "   scenario:" + shown + '\n';
  return text;
}

std::string crash_line(const LessonEntry& lesson, const std::string& what) {
  return fmt::format("gpulab: lesson {} {}. Your files are untouched; fix the code and run it again.\n", lesson.id, what);
}

std::string checks_header(const LessonEntry& lesson, bool stretch, bool solution) {
  return fmt::format("== lesson {}: checking {}'s {} ({})\n", lesson.id, solution ? "the solution" : "your exercise",
                     stretch ? "stretch task" : "task", lesson.source_file(solution));
}

std::string verdict_lines(const LessonEntry& lesson, const grading::ChecksResult& result, bool stretch, bool raw) {
  if (result.no_stretch_task) return fmt::format("lesson {} has no stretch task.\n", lesson.id);
  const CheckVerdict& verdict = result.verdict;
  std::string text = raw ? "" : view::render_verdict(verdict);
  const char* what = stretch ? "stretch task" : "task";
  if (result.outcome == Outcome::kOk && (raw || verdict.failed() == 0)) {
    const std::string count = raw ? "" : fmt::format(" ({} of {})", verdict.passed(), verdict.cases.size());
    text += fmt::format("\nlesson {}: the {} passes its checks{}.\n", lesson.id, what, count);
    if (!stretch && !lesson.stretch.empty())
      text += fmt::format("Stretch (optional): {}\n  ./gpulab check {} --stretch\n", lesson.stretch, lesson.id);
    return text;
  }
  if (raw) return text + fmt::format("\nlesson {}: not yet. Stuck? ./gpulab hint {}\n", lesson.id, lesson.id);
  if (!result.program_ends.empty()) text += "\nYour program " + result.program_ends;
  return text + fmt::format("\nlesson {}: not yet — {} of {} checks failed. Stuck? ./gpulab hint {}\n", lesson.id,
                            verdict.failed(), verdict.cases.size(), lesson.id);
}

std::string grading_summary(const grading::Grading& grading) {
  const std::size_t failed = grading.failed();
  return fmt::format("\n{} lessons: {} passed, {} failed ({}s of {})\n", grading.lessons.size(), grading.lessons.size() - failed,
                     failed, grading.target, grading.root);
}

std::string build_failure_text(const grading::BuildResult& result, const std::vector<std::string>& targets) {
  std::string target = !result.failures.empty() && !result.failures.front().first.empty() ? result.failures.front().first : "";
  if (target.empty() && !targets.empty()) target = targets.front();
  return result.messages +
         fmt::format("gpulab: error: could not build {} (the compiler's messages are above; your file is unchanged)\n", target);
}

std::string goal_of_text(const std::string& exercise_text) {
  std::string goal;
  bool inside = false;
  std::size_t at = 0;
  while (at < exercise_text.size()) {
    const auto end = std::min(exercise_text.find('\n', at), exercise_text.size());
    const std::string line = exercise_text.substr(at, end - at);
    at = end + 1;
    const auto start = line.find_first_not_of(' ');
    const std::string text = start == std::string::npos ? "" : line.substr(start);
    if (!inside && text.rfind("// TODO:", 0) == 0) {
      inside = true;
      goal = text.substr(8);
    } else if (inside && text.rfind("//", 0) == 0) {
      const auto words = text.find_first_not_of("/ ");
      goal += " " + (words == std::string::npos ? std::string() : text.substr(words));
    } else if (inside) {
      break;
    }
  }
  const auto first = goal.find_first_not_of(' ');
  return first == std::string::npos ? "" : goal.substr(first);
}

std::string explanation_text(const LessonEntry& lesson, const std::string& explain_md) {
  std::string text = std::regex_replace(explain_md, std::regex(" ?<!-- run: [^>]*-->"), "");
  text += "\nThe predictions' answers, as the tutorial explains them:\n";
  for (std::size_t i = 0; i < lesson.predictions.size(); ++i)
    text += fmt::format("  {}. {}\n     {}\n", i + 1, lesson.predictions[i].question, lesson.predictions[i].why);
  return text;
}

std::vector<std::string> targets_ahead(const Manifest& manifest, std::size_t first, bool solutions) {
  const std::size_t count = manifest.lessons.size();
  std::vector<std::string> targets = {manifest.lessons[first].checks_target()};
  for (std::size_t k = 1; k < count; ++k) {  // the next lessons first, then the earlier ones
    const LessonEntry& lesson = manifest.lessons[(first + k) % count];
    targets.push_back(lesson.program_target());
    targets.push_back(lesson.checks_target());
  }
  if (solutions)
    for (std::size_t k = 0; k < count; ++k) targets.push_back(manifest.lessons[(first + k) % count].program_target(true));
  return targets;
}

}  // namespace gpulab
