// The class report as text, JSON and HTML (view/class_report.h).
#include "view/class_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/message_text.h"

namespace gpulab::view {
namespace {

constexpr int kBarWidth = 24;  // characters of the text table's bars at 100%
constexpr std::size_t kChoiceWidth = 48;  // an explain choice's text in the table, at most

const char* kind_name(QuestionTally::Kind kind) {
  return kind == QuestionTally::Kind::kPrediction ? "prediction" : "explain";
}

// The UTF-8 text cut to `width` code points, "…" marking the cut.
std::string cut(const std::string& text, std::size_t width) {
  std::size_t points = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (points++ == width) return text.substr(0, i) + "…";
  }
  return text;
}

// Code points of UTF-8 text: the columns fmt pads it to.
std::size_t points(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// An explain answer's letter's choice, or "" (an answer no choice has).
std::string choice_text(const QuestionTally& question, const std::string& letter) {
  if (letter.size() != 1 || letter[0] < 'a') return "";
  const auto index = static_cast<std::size_t>(letter[0] - 'a');
  return index < question.choices.size() ? question.choices[index] : "";
}

std::string answer_label(const QuestionTally& question, const AnswerCount& answer) {
  if (question.kind == QuestionTally::Kind::kPrediction) return answer.answer;
  const std::string choice = choice_text(question, answer.answer);
  return answer.answer + ")" + (choice.empty() ? "" : " " + cut(choice, kChoiceWidth));
}

std::string bar(int count, int of, int width) {
  if (of <= 0 || count <= 0) return "";
  const int cells = std::max(1, static_cast<int>(std::lround(static_cast<double>(count) * width / of)));
  std::string text;
  for (int i = 0; i < cells; ++i) text += "#";
  return text;
}

double percent_value(int count, int of) {
  return of <= 0 ? 0.0 : std::round(1000.0 * count / of) / 10.0;
}

std::string truth_text(const QuestionTally& question) {
  if (!question.truth) return "unknown";
  return question.kind == QuestionTally::Kind::kExplain ? *question.truth + ")" : *question.truth;
}

// Text for the page: printable (report/message_text.h), then HTML-escaped.
std::string html_escaped(const std::string& raw) {
  const std::string text = printable(raw);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

constexpr std::size_t kLinesListed = 10;  // a problem's line numbers shown, at most

std::string lines_text(const std::vector<int>& lines) {
  std::string text;
  for (std::size_t i = 0; i < lines.size() && i < kLinesListed; ++i) text += (i == 0 ? "" : ", ") + std::to_string(lines[i]);
  if (lines.size() > kLinesListed) text += fmt::format(" and {} more", lines.size() - kLinesListed);
  return text;
}

// Every line of the table printable: a student's answer, name or lesson id (and anything
// else of the report) never reaches the terminal raw.
std::string printable_lines(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out += printable(std::string_view(text).substr(start, end - start));
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

// Every string of the document printable (its keys are gpulab's own).
void printable_strings(nlohmann::json& json) {
  if (json.is_string()) json = printable(json.get_ref<const std::string&>());
  else if (json.is_structured())
    for (auto& item : json) printable_strings(item);
}

std::string passed_text(const ClassReport& report, const LessonTally& lesson) {
  if (report.passed_from_grades) {
    const int graded = lesson.graded.value_or(0);
    return fmt::format("passed {} of {} graded ({}, class grade); {} of {} student{} started it", lesson.passed, graded,
                       percent_text(lesson.passed, graded), lesson.started, lesson.students, lesson.students == 1 ? "" : "s");
  }
  return fmt::format("passed {} of {} started ({}, self-reported), {} student{}", lesson.passed, lesson.started,
                     percent_text(lesson.passed, lesson.started), lesson.students, lesson.students == 1 ? "" : "s");
}

std::string problem_text(const StudentProblem& problem) {
  std::string text = problem.student + ": " + problem.what;
  if (!problem.lines.empty())
    text += fmt::format(" (line{} {})", problem.lines.size() == 1 ? "" : "s", lines_text(problem.lines));
  if (!problem.counted) text += "; not counted";
  else if (!problem.lines.empty()) text += "; the rest is counted";
  return text;
}

std::string header_text(const ClassReport& report) {
  return fmt::format("{} student{}, truth: {}; passed: {}", report.students, report.students == 1 ? "" : "s",
                     report.truth_run ? "the shipped exercises run on " + report.profile
                                      : "explain questions only (--no-truth: the predictions were not run)",
                     report.passed_from_grades ? "class grade's results (--grades)"
                                               : "self-reported, as each student's progress file says (--grades DIR: class grade's)");
}

// ---- HTML ------------------------------------------------------------------------------------

constexpr const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #1b1f23; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #d0d7de; }
.meta, .note { color: #57606a; } .question { margin: 1.2em 0 0.3em; font-weight: 600; }
.kind { font-size: 0.8em; text-transform: uppercase; color: #57606a; margin-right: 0.5em; }
ol.choices { margin: 0.2em 0 0.4em; color: #24292f; } ol.choices li.right { font-weight: 600; color: #1a7f37; }
svg.bars text { font-size: 13px; font-family: ui-monospace, monospace; fill: #24292f; }
svg.bars rect.right { fill: #2da44e; } svg.bars rect.other { fill: #8c959f; } svg.bars rect.none { fill: #d0d7de; }
table.rates { border-collapse: collapse; } table.rates td, table.rates th { padding: 0.2em 0.8em; text-align: left; }
.problems li { color: #9a6700; }
)";

constexpr int kSvgWidth = 720;
constexpr int kLabelWidth = 220;
constexpr int kBarsWidth = 380;
constexpr int kRowHeight = 24;

std::string svg_row(int row, const std::string& label, const std::string& css, int count, int of, bool right) {
  const int y = row * kRowHeight;
  const int width = of <= 0 ? 0 : static_cast<int>(std::lround(static_cast<double>(count) * kBarsWidth / of));
  return fmt::format(
      "<g><title>{0}: {1} of {2}</title>"
      "<text x=\"0\" y=\"{3}\">{4}{0}</text>"
      "<rect class=\"{5}\" x=\"{6}\" y=\"{7}\" width=\"{8}\" height=\"{9}\"/>"
      "<text x=\"{10}\" y=\"{3}\">{1} ({11})</text></g>\n",
      html_escaped(label), count, of, y + 16, right ? "✓ " : "", css, kLabelWidth, y + 4, width, kRowHeight - 8,
      kLabelWidth + width + 6, percent_text(count, of));
}

std::string question_html(const QuestionTally& question) {
  std::string html = fmt::format("<div class=\"question\"><span class=\"kind\">{} {}</span>{}</div>\n",
                                 kind_name(question.kind), question.number, html_escaped(question.question));
  if (question.kind == QuestionTally::Kind::kExplain) {
    html += "<ol class=\"choices\" type=\"a\">\n";
    for (std::size_t i = 0; i < question.choices.size(); ++i) {
      const bool right = question.truth && *question.truth == std::string(1, static_cast<char>('a' + i));
      html += fmt::format("<li{}>{}{}</li>\n", right ? " class=\"right\"" : "", right ? "✓ " : "",
                          html_escaped(question.choices[i]));
    }
    html += "</ol>\n";
  }
  const int rows = static_cast<int>(question.answers.size()) + 1;
  html += fmt::format("<svg class=\"bars\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                      "viewBox=\"0 0 {0} {1}\" role=\"img\">\n",
                      kSvgWidth, rows * kRowHeight);
  int row = 0;
  for (const auto& answer : question.answers) {
    const std::string label = question.kind == QuestionTally::Kind::kExplain ? answer.answer + ")" : answer.answer;
    html += svg_row(row++, label, answer.right ? "right" : "other", answer.count, question.asked, answer.right);
  }
  html += svg_row(row, "(no answer)", "none", question.no_answer, question.asked, false);
  html += "</svg>\n";
  html += fmt::format("<p class=\"note\">truth: {}</p>\n", html_escaped(truth_text(question)));
  return html;
}

}  // namespace

std::string percent_text(int count, int of) {
  if (of <= 0) return "-";
  return fmt::format("{}%", std::lround(100.0 * count / of));
}

std::string class_report_text(const ClassReport& report) {
  std::string out = "gpulab class report — " + header_text(report) + "\n";
  if (report.lessons.empty()) out += "\nNo student has started a lesson yet.\n";
  for (const auto& lesson : report.lessons) {
    out += fmt::format("\n== lesson {}: {}\n", lesson.id, lesson.title);
    out += fmt::format("   {}; scenario:{}\n", passed_text(report, lesson), lesson.scenario.empty() ? " none" : lesson.scenario);
    if (!lesson.truth_note.empty()) out += "   truth: " + lesson.truth_note + "\n";
    for (const auto& question : lesson.questions) {
      out += fmt::format("  {}. {}{}\n", question.number,
                         question.kind == QuestionTally::Kind::kExplain ? "why? " : "", question.question);
      std::size_t width = std::string("(no answer)").size();
      std::vector<std::string> labels;
      for (const auto& answer : question.answers) {
        labels.push_back(answer_label(question, answer));
        width = std::max(width, points(labels.back()));
      }
      auto row = [&](const std::string& mark, const std::string& label, int count) {
        return fmt::format("     {} {:<{}}  {:>3}  {:>4}  {}\n", mark, label, width, count, percent_text(count, question.asked),
                           bar(count, question.asked, kBarWidth));
      };
      for (std::size_t i = 0; i < question.answers.size(); ++i)
        out += row(question.answers[i].right ? "✓" : " ", labels[i], question.answers[i].count);
      out += row(" ", "(no answer)", question.no_answer);
      if (!question.truth) out += "       (truth unknown)\n";
    }
  }
  if (!report.problems.empty()) {
    out += "\nproblems:\n";
    for (const auto& problem : report.problems) out += "  " + problem_text(problem) + "\n";
  }
  return printable_lines(out);
}

nlohmann::json class_report_json(const ClassReport& report) {
  nlohmann::json lessons = nlohmann::json::array();
  for (const auto& lesson : report.lessons) {
    nlohmann::json questions = nlohmann::json::array();
    for (const auto& question : lesson.questions) {
      nlohmann::json answers = nlohmann::json::array();
      for (const auto& answer : question.answers)
        answers.push_back({{"answer", answer.answer}, {"count", answer.count},
                           {"percent", percent_value(answer.count, question.asked)}, {"right", answer.right}});
      nlohmann::json entry = {{"kind", kind_name(question.kind)}, {"number", question.number},
                              {"question", question.question}, {"asked", question.asked},
                              {"answers", std::move(answers)}, {"no_answer", question.no_answer},
                              {"truth", question.truth ? nlohmann::json(*question.truth) : nlohmann::json()}};
      if (question.kind == QuestionTally::Kind::kExplain) entry["choices"] = question.choices;
      questions.push_back(std::move(entry));
    }
    lessons.push_back({{"id", lesson.id}, {"title", lesson.title}, {"scenario", lesson.scenario},
                       {"students", lesson.students}, {"started", lesson.started}, {"passed", lesson.passed},
                       {"graded", lesson.graded ? nlohmann::json(*lesson.graded) : nlohmann::json()},
                       {"truth_note", lesson.truth_note}, {"questions", std::move(questions)}});
  }
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& problem : report.problems)
    problems.push_back({{"student", problem.student}, {"what", problem.what}, {"lines", problem.lines},
                        {"counted", problem.counted}});
  nlohmann::json json = {{"students", report.students}, {"names", report.names}, {"profile", report.profile},
                         {"truth_run", report.truth_run},
                         {"passed_from", report.passed_from_grades ? "class grade" : "self-reported"},
                         {"lessons", std::move(lessons)}, {"problems", std::move(problems)}};
  printable_strings(json);
  return json;
}

std::string class_report_html(const ClassReport& report) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<title>gpulab class report</title>\n<style>" +
                     std::string(kStyle) + "</style>\n</head>\n<body>\n<h1>gpulab class report</h1>\n";
  html += "<p class=\"meta\">" + html_escaped(header_text(report)) + "</p>\n";
  if (!report.lessons.empty()) {
    const bool graded = report.passed_from_grades;
    html += fmt::format("<table class=\"rates\"><tr><th>lesson</th><th>passed ({})</th>{}<th>started</th><th>students</th>"
                        "<th>pass rate</th></tr>\n",
                        graded ? "class grade" : "self-reported", graded ? "<th>graded</th>" : "");
    for (const auto& lesson : report.lessons) {
      const int of = graded ? lesson.graded.value_or(0) : lesson.started;
      html += fmt::format("<tr><td><a href=\"#lesson{0}\">{0}</a></td><td>{1}</td>{2}<td>{3}</td><td>{4}</td><td>{5}</td></tr>\n",
                          html_escaped(lesson.id), lesson.passed,
                          graded ? fmt::format("<td>{}</td>", lesson.graded.value_or(0)) : "", lesson.started,
                          lesson.students, percent_text(lesson.passed, of));
    }
    html += "</table>\n";
  } else {
    html += "<p>No student has started a lesson yet.</p>\n";
  }
  for (const auto& lesson : report.lessons) {
    html += fmt::format("<section id=\"lesson{}\">\n<h2>Lesson {}: {}</h2>\n", html_escaped(lesson.id),
                        html_escaped(lesson.id), html_escaped(lesson.title));
    html += fmt::format("<p class=\"meta\">{}; scenario:{}</p>\n", html_escaped(passed_text(report, lesson)),
                        html_escaped(lesson.scenario.empty() ? " none" : lesson.scenario));
    if (!lesson.truth_note.empty()) html += "<p class=\"note\">truth: " + html_escaped(lesson.truth_note) + "</p>\n";
    for (const auto& question : lesson.questions) html += question_html(question);
    html += "</section>\n";
  }
  if (!report.problems.empty()) {
    html += "<h2>Students with problems</h2>\n<ul class=\"problems\">\n";
    for (const auto& problem : report.problems) html += "<li>" + html_escaped(problem_text(problem)) + "</li>\n";
    html += "</ul>\n";
  }
  html += "</body>\n</html>\n";
  return html;
}

}  // namespace gpulab::view
