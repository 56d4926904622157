// The class's predictions (classroom/class_report.h): read, run once per lesson, counted.
#include "classroom/class_report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "course/predictions.h"
#include "grading/class_names.h"
#include "proc/process.h"
#include "report/message_text.h"
#include "report/outcome.h"

namespace fs = std::filesystem;

namespace gpulab::classroom {
namespace {

// "1 MiB", "2.0 GiB": a file's size.
std::string bytes_text(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  if (bytes < (1u << 20)) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  if (bytes < (1u << 30)) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  return fmt::format("{:.1f} GiB", bytes / 1073741824.0);
}

std::string kind_text(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a named pipe";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

// Whether a JSON text nests deeper than `limit` (outside its strings): refused before it is
// parsed, so that no document costs a deep recursion.
bool nests_deeper_than(const std::string& text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

const std::set<std::string>& student_statuses() {
  static const std::set<std::string> statuses = {"graded", "over_limit", "no_result", "not_a_tree"};
  return statuses;
}

const std::set<std::string>& lesson_statuses() {
  static const std::set<std::string> statuses = {"passed", "failed", "build_failed", "crashed", "timed_out"};
  return statuses;
}

// A JSON object {"id": "status", …} of known lesson statuses; false when it is not one.
bool read_lesson_map(const nlohmann::json& lessons, std::map<std::string, std::string>& into) {
  if (!lessons.is_object()) return false;
  for (const auto& [id, status] : lessons.items()) {
    if (id.empty() || !status.is_string() || lesson_statuses().count(status.get<std::string>()) == 0) return false;
    into[id] = status.get<std::string>();
  }
  return true;
}

// "a, b, c and 12 more": at most `shown` of `items`, each printable and short.
std::string listed(const std::vector<std::string>& items, std::size_t shown) {
  std::string text;
  for (std::size_t i = 0; i < items.size() && i < shown; ++i) text += (i == 0 ? "" : ", ") + printable(items[i], 16);
  if (items.size() > shown) text += fmt::format(" and {} more", items.size() - shown);
  return text;
}

// Whether the exercise differs from git's HEAD (nullopt: git cannot tell, not a clone).
std::optional<bool> differs_from_head(const std::string& root, const std::string& relative) {
  ProcessOptions git;
  git.argv = {"git", "-C", root, "diff", "--quiet", "HEAD", "--", relative};
  git.timeout_s = 30;
  try {
    const ProcessResult result = run_process(git);
    if (result.exit_code == 0) return false;
    if (result.exit_code == 1) return true;
  } catch (const std::exception&) {
    // no git
  }
  return std::nullopt;
}

// Counts answers into a question: `given` in order, one per student who started the lesson.
void count_answers(view::QuestionTally& question, const std::vector<std::optional<std::string>>& given,
                   const std::vector<std::string>& listed_first) {
  std::map<std::string, int> counts;
  for (const auto& answer : given) {
    if (!answer || answer->empty() || *answer == "-") ++question.no_answer;
    else ++counts[*answer];
  }
  question.asked = static_cast<int>(given.size());
  for (const auto& answer : listed_first) {  // explain choices in order, with their counts, 0 or not
    const auto found = counts.find(answer);
    question.answers.push_back({answer, found == counts.end() ? 0 : found->second, false});
    if (found != counts.end()) counts.erase(found);
  }
  std::vector<view::AnswerCount> rest;
  for (const auto& [answer, count] : counts) rest.push_back({answer, count, false});
  if (question.truth && listed_first.empty() &&
      std::none_of(rest.begin(), rest.end(), [&](const view::AnswerCount& a) { return a.answer == *question.truth; }))
    rest.push_back({*question.truth, 0, false});  // the truth, even when nobody gave it
  std::stable_sort(rest.begin(), rest.end(), [](const view::AnswerCount& a, const view::AnswerCount& b) {
    return a.count > b.count;
  });
  question.answers.insert(question.answers.end(), rest.begin(), rest.end());
  for (auto& answer : question.answers) answer.right = question.truth && answer.answer == *question.truth;
}

// A student's answer, as counted and shown: printable and at most 40 characters (a real
// answer is a few: "3", "none", "0,2", "b").
std::optional<std::string> at(const std::vector<std::string>& answers, std::size_t index) {
  if (index >= answers.size()) return std::nullopt;
  return printable(answers[index], 40);
}

}  // namespace

UntrustedFile read_untrusted_file(const std::string& path, std::size_t max_bytes) {
  UntrustedFile file;
  auto too_large = [&](std::uint64_t size) {
    file.problem = fmt::format("is {}, more than the {} read: not read", bytes_text(size), bytes_text(max_bytes));
  };
  struct stat status {};
  if (lstat(path.c_str(), &status) != 0) {
    file.missing = errno == ENOENT || errno == ENOTDIR;
    file.problem = file.missing ? "does not exist" : fmt::format("cannot be read ({})", std::strerror(errno));
    return file;
  }
  if (!S_ISREG(status.st_mode)) {  // never opened: a named pipe would block, a device answer
    file.problem = "is " + kind_text(status.st_mode) + ", not a regular file: not read";
    return file;
  }
  if (static_cast<std::uint64_t>(status.st_size) > max_bytes) {
    too_large(static_cast<std::uint64_t>(status.st_size));
    return file;
  }
  // Opened so that it cannot have become a link or a pipe since: then checked again.
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    file.problem = errno == ELOOP ? "is a symbolic link, not a regular file: not read"
                                  : fmt::format("cannot be read ({})", std::strerror(errno));
    return file;
  }
  std::string text;
  if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    file.problem = "is " + kind_text(status.st_mode) + ", not a regular file: not read";
  } else if (static_cast<std::uint64_t>(status.st_size) > max_bytes) {
    too_large(static_cast<std::uint64_t>(status.st_size));
  } else {
    // At most max_bytes + 1: a file that grows while it is read is still read no further.
    text.resize(max_bytes + 1);
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        file.problem = fmt::format("cannot be read ({})", std::strerror(errno));
        break;
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
    if (file.problem.empty() && got > max_bytes) too_large(got);
    else if (file.problem.empty()) file.text = std::move(text);
  }
  close(fd);
  return file;
}

StudentTree read_student(const std::string& dir, const std::string& name) {
  StudentTree student;
  student.name = name.empty() ? grading::student_name(dir) : name;
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    student.problem = fs::exists(dir, error) ? "not a folder" : "no such folder";
    return student;
  }
  const UntrustedFile file = read_untrusted_file((fs::path(dir) / kProgressFile).string(), kMaxProgressBytes);
  if (file.missing) {
    student.problem = std::string("no progress file (") + kProgressFile + "): not started, or not this student's checkout";
    return student;
  }
  if (!file.text) {
    student.problem = std::string("its progress file (") + kProgressFile + ") " + file.problem;
    return student;
  }
  student.progress = parse_progress(*file.text, &student.skipped);  // an empty file reads as no progress
  return student;
}

std::vector<StudentTree> read_students(const std::vector<std::string>& dirs) {
  const std::vector<std::string> names = grading::student_names(dirs);  // as class grade calls them
  std::vector<StudentTree> students;
  for (std::size_t i = 0; i < dirs.size(); ++i) students.push_back(read_student(dirs[i], names[i]));
  return students;
}

namespace {

// A class grade file's JSON, or null with `why` (too deeply nested to parse safely, or not JSON).
nlohmann::json parse_grade_file(const std::string& text, std::string& why) {
  if (nests_deeper_than(text, 32)) {
    why = "nested too deep";
    return nullptr;
  }
  auto document = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) {
    why = "not JSON";
    return nullptr;
  }
  return document;
}

}  // namespace

std::optional<std::map<std::string, Grade>> parse_class_summary(const std::string& text, std::string& why) {
  const auto document = parse_grade_file(text, why);
  if (document.is_null()) return std::nullopt;
  if (!document.is_object() || !document.contains("students") || !document["students"].is_array()) {
    why = "no \"students\" list";
    return std::nullopt;
  }
  std::map<std::string, Grade> grades;
  for (const auto& entry : document["students"]) {
    if (!entry.is_object() || !entry.contains("student") || !entry["student"].is_string() || !entry.contains("status") ||
        !entry["status"].is_string() || student_statuses().count(entry["status"].get<std::string>()) == 0 ||
        !entry.contains("lessons")) {
      why = "a student's entry is not class grade's";
      return std::nullopt;
    }
    Grade grade;
    grade.status = entry["status"].get<std::string>();
    if (!read_lesson_map(entry["lessons"], grade.lessons)) {
      why = "a student's lessons are not class grade's";
      return std::nullopt;
    }
    if (!grades.emplace(entry["student"].get<std::string>(), std::move(grade)).second) {
      why = "a student is listed twice";
      return std::nullopt;
    }
  }
  return grades;
}

std::optional<Grade> parse_student_grading(const std::string& text, const std::string& name, std::string& why) {
  const auto document = parse_grade_file(text, why);
  if (document.is_null()) return std::nullopt;
  if (!document.is_object() || !document.contains("student") || !document["student"].is_string() ||
      !document.contains("status") || !document["status"].is_string() ||
      student_statuses().count(document["status"].get<std::string>()) == 0 || !document.contains("grading")) {
    why = "not class grade's grading.json";
    return std::nullopt;
  }
  if (document["student"].get<std::string>() != name) {
    why = "it is another student's";
    return std::nullopt;
  }
  Grade grade;
  grade.status = document["status"].get<std::string>();
  const auto& grading = document["grading"];
  if (grading.is_null()) return grade;  // no result: no lesson graded
  if (!grading.is_object() || !grading.contains("lessons") || !grading["lessons"].is_array()) {
    why = "its \"grading\" is not a grading document";
    return std::nullopt;
  }
  for (const auto& lesson : grading["lessons"]) {
    if (!lesson.is_object() || !lesson.contains("id") || !lesson["id"].is_string() || lesson["id"].get<std::string>().empty() ||
        !lesson.contains("status") || !lesson["status"].is_string() ||
        lesson_statuses().count(lesson["status"].get<std::string>()) == 0 ||
        !grade.lessons.emplace(lesson["id"].get<std::string>(), lesson["status"].get<std::string>()).second) {
      why = "a lesson of its \"grading\" is not a graded lesson (or is there twice)";
      return std::nullopt;
    }
  }
  return grade;
}

GradesRead read_grades(const std::string& dir, std::vector<StudentTree>& students) {
  GradesRead read;
  const std::string summary_file = grading::kClassSummary;
  const UntrustedFile summary = read_untrusted_file((fs::path(dir) / summary_file).string(), kMaxGradesBytes);
  std::optional<std::map<std::string, Grade>> listed_grades;
  std::string why;
  if (!summary.text) {
    why = summary.problem;
  } else {
    listed_grades = parse_class_summary(*summary.text, why);
    if (!listed_grades) why = "cannot be read as class grade's summary (" + why + ")";
  }
  if (!listed_grades) {
    read.problem = fmt::format("class grade's summary ({}) {}: no student's grade is counted", summary_file, why);
    for (auto& student : students) student.grade_problem = "no grade counted: class grade's summary was not read";
    return read;
  }
  std::set<std::string> given;
  for (auto& student : students) {
    given.insert(student.name);
    const auto listed = listed_grades->find(student.name);
    if (listed == listed_grades->end()) {
      student.grade_problem = "no grade counted: class grade's results (class.json) do not name this student";
      continue;
    }
    const UntrustedFile file = read_untrusted_file((fs::path(dir) / student.name / "grading.json").string(), kMaxGradesBytes);
    std::optional<Grade> grade;
    if (!file.text) why = "its grading.json " + file.problem;
    else if (!(grade = parse_student_grading(*file.text, student.name, why))) why = "its grading.json is refused: " + why;
    if (!grade) {
      student.grade_problem = "no grade counted: " + why;
      continue;
    }
    if (grade->status != listed->second.status || grade->lessons != listed->second.lessons) {
      student.grade_problem = "no grade counted: its grading.json and class.json disagree";
      continue;
    }
    if (grade->status != "graded" && grade->status != "over_limit") {
      student.grade_problem = fmt::format("no grade counted: class grade has no result for this student ({})", grade->status);
      continue;
    }
    student.grade = std::move(grade);
  }
  for (const auto& [name, grade] : *listed_grades)
    if (given.count(name) == 0) read.not_given.push_back(name);
  return read;
}

std::vector<std::string> lessons_started(const Manifest& manifest, const std::vector<StudentTree>& students) {
  std::set<std::string> named;
  for (const auto& student : students)
    if (student.progress)
      for (const auto& [id, lesson] : student.progress->lessons) named.insert(id);
  std::vector<std::string> ids;
  for (const auto& lesson : manifest.lessons)
    if (named.count(lesson.id) > 0) ids.push_back(lesson.id);
  return ids;
}

LessonTruth run_truth(const LessonEntry& lesson, const grading::Programs& programs, double timeout_s) {
  LessonTruth truth;
  truth.predictions.resize(lesson.predictions.size());
  grading::RunRequest request;
  request.json = true;
  request.learner_env = false;  // the lesson's scenario, whatever this shell has set
  request.timeout_s = timeout_s;
  grading::RunResult run;
  try {
    run = grading::run_lesson_program(lesson, request, programs);
  } catch (const std::exception& e) {
    truth.note = fmt::format("unknown: lesson-{} could not run ({})", lesson.id, e.what());
    return truth;
  }
  if (run.outcome == Outcome::kTimedOut || run.last.timed_out) {
    truth.note = fmt::format("unknown: lesson-{} did not finish within {} s", lesson.id, timeout_s);
    return truth;
  }
  if (run.outcome == Outcome::kCrashed) {
    truth.note = fmt::format("unknown: lesson-{} {}", lesson.id, run.what.empty() ? "crashed" : run.what);
    return truth;
  }
  int told = 0;
  for (std::size_t i = 0; i < lesson.predictions.size(); ++i) {
    truth.predictions[i] = observed_answer(lesson.predictions[i], run.document);
    told += truth.predictions[i] ? 1 : 0;
  }
  truth.note = fmt::format("the run of lesson-{}, the exercise, in its scenario", lesson.id);
  if (told < static_cast<int>(lesson.predictions.size()))
    truth.note += fmt::format(" ({} of {} predictions: the run did not get far enough to tell the others)", told,
                              lesson.predictions.size());
  return truth;
}

std::map<std::string, LessonTruth> truths(const Manifest& manifest, const std::vector<std::string>& ids,
                                          grading::Builder& builder, const grading::Programs& programs,
                                          double timeout_s, std::ostream& log) {
  std::map<std::string, LessonTruth> found;
  for (const auto& id : ids) {
    const LessonEntry& lesson = manifest.find(id);
    if (lesson.predictions.empty()) continue;
    log << fmt::format("class report: running lesson {}'s exercise for the truth...\n", id) << std::flush;
    const grading::BuildResult built = builder.build({lesson.program_target()});
    if (!built.ok) {
      found[id].predictions.resize(lesson.predictions.size());
      found[id].note = fmt::format("unknown: {} does not build ({})", lesson.program_target(), lesson.source_file());
      continue;
    }
    LessonTruth truth = run_truth(lesson, programs, timeout_s);
    const std::string relative = lesson.source_file();
    if (differs_from_head(manifest.root, relative).value_or(false))
      truth.note += fmt::format("; note: {} differs from the shipped one (git HEAD), so the truth may too", relative);
    found[id] = std::move(truth);
  }
  return found;
}

view::ClassReport tally(const Manifest& manifest, const std::vector<StudentTree>& students,
                        const std::map<std::string, LessonTruth>& truths, bool truth_run, const std::string& profile,
                        const GradesRead* grades) {
  view::ClassReport report;
  report.profile = profile;
  report.truth_run = truth_run;
  report.passed_from_grades = grades != nullptr;
  std::set<std::string> known;
  for (const auto& lesson : manifest.lessons) known.insert(lesson.id);
  if (grades != nullptr && !grades->problem.empty())
    report.problems.push_back({grading::kClassSummary, grades->problem, {}, false});

  std::vector<const StudentTree*> read;
  for (const auto& student : students) {
    report.names.push_back(student.name);
    if (grades != nullptr && !student.grade_problem.empty() && grades->problem.empty())
      report.problems.push_back({student.name, student.grade_problem, {}, student.progress.has_value()});
    if (!student.progress) {
      report.problems.push_back({student.name, student.problem, {}, false});
      continue;
    }
    read.push_back(&student);
    if (!student.skipped.empty()) {
      std::vector<int> lines;
      for (const auto& line : student.skipped) lines.push_back(line.number);
      report.problems.push_back(
          {student.name, std::string("skipped lines of its progress file (") + kProgressFile + ") it cannot read", lines, true});
    }
    std::vector<std::string> unknown;
    for (const auto& [id, lesson] : student.progress->lessons)
      if (known.count(id) == 0) unknown.push_back(id);
    if (!unknown.empty())
      report.problems.push_back({student.name, fmt::format("names lesson{} {}, which this course does not have: left out",
                                                           unknown.size() == 1 ? "" : "s", listed(unknown, 5)),
                                 {}, true});
  }
  if (grades != nullptr)
    for (const auto& name : grades->not_given)
      report.problems.push_back({name, "graded by class grade (class.json), but its folder was not given: left out", {}, false});
  report.students = static_cast<int>(read.size());

  // The lessons: those some student started, and with class grade's results those graded.
  std::set<std::string> shown;
  for (const auto& id : lessons_started(manifest, students)) shown.insert(id);
  if (grades != nullptr)
    for (const auto& student : students)
      if (student.grade)
        for (const auto& [id, status] : student.grade->lessons) shown.insert(id);
  for (const auto& entry : manifest.lessons) {
    if (shown.count(entry.id) == 0) continue;
    const std::string& id = entry.id;
    view::LessonTally lesson;
    lesson.id = entry.id;
    lesson.title = entry.title;
    lesson.scenario = entry.scenario_text();
    lesson.students = report.students;
    std::vector<const LessonProgress*> started;
    for (const StudentTree* student : read) {
      const auto found = student->progress->lessons.find(id);
      if (found == student->progress->lessons.end()) continue;
      started.push_back(&found->second);
      if (grades == nullptr) lesson.passed += found->second.passed ? 1 : 0;  // self-reported
    }
    lesson.started = static_cast<int>(started.size());
    if (grades != nullptr) {  // class grade's: every student with a grade of this lesson
      lesson.graded = 0;
      for (const auto& student : students) {
        if (!student.grade) continue;
        const auto found = student.grade->lessons.find(id);
        if (found == student.grade->lessons.end()) continue;
        ++*lesson.graded;
        lesson.passed += found->second == "passed" ? 1 : 0;
      }
    }
    if (started.empty()) {
      lesson.truth_note = "no student started it in the tutorial: no answers to count";
      report.lessons.push_back(std::move(lesson));
      continue;
    }
    const auto truth = truths.find(id);
    if (!truth_run) lesson.truth_note = "predictions not run (--no-truth); explain questions from the answer key";
    else if (truth != truths.end()) lesson.truth_note = truth->second.note;
    else if (!entry.predictions.empty()) lesson.truth_note = "unknown: not run";

    std::size_t explain_index = 0;  // the progress file lists explain answers for the questions that have one
    for (std::size_t i = 0; i < entry.predictions.size(); ++i) {
      const Prediction& p = entry.predictions[i];
      view::QuestionTally prediction;
      prediction.kind = view::QuestionTally::Kind::kPrediction;
      prediction.number = static_cast<int>(i) + 1;
      prediction.question = p.question;
      if (truth_run && truth != truths.end() && i < truth->second.predictions.size())
        prediction.truth = truth->second.predictions[i];
      std::vector<std::optional<std::string>> given;
      for (const auto* mine : started) given.push_back(at(mine->predicted, i));
      count_answers(prediction, given, {});
      lesson.questions.push_back(std::move(prediction));
      if (!p.explain) continue;

      view::QuestionTally explain;
      explain.kind = view::QuestionTally::Kind::kExplain;
      explain.number = static_cast<int>(i) + 1;
      explain.question = p.explain->question;
      explain.choices = p.explain->choices;
      explain.truth = std::string(1, static_cast<char>('a' + p.explain->answer));
      std::vector<std::string> letters;
      for (std::size_t c = 0; c < p.explain->choices.size(); ++c) letters.emplace_back(1, static_cast<char>('a' + c));
      given.clear();
      for (const auto* mine : started) given.push_back(at(mine->explained, explain_index));
      count_answers(explain, given, letters);
      lesson.questions.push_back(std::move(explain));
      ++explain_index;
    }
    report.lessons.push_back(std::move(lesson));
  }
  return report;
}

view::ClassReport make_report(const Workspace& workspace, const ReportRequest& request, std::ostream& log,
                              std::size_t& students_given) {
  const Manifest& manifest = workspace.manifest();
  auto students = read_students(request.dirs);
  students_given = students.size();
  std::optional<GradesRead> grades;
  if (!request.grades_dir.empty()) {
    std::error_code error;
    if (!fs::is_directory(request.grades_dir, error))
      throw Failure(Outcome::kUsage, "--grades " + request.grades_dir + ": no such folder (class grade's --out)");
    grades = read_grades(request.grades_dir, students);
  }
  std::map<std::string, LessonTruth> lesson_truths;
  if (!request.no_truth)
    lesson_truths = truths(manifest, lessons_started(manifest, students), workspace.builder(), workspace.programs(),
                           request.timeout_s, log);
  return tally(manifest, students, lesson_truths, !request.no_truth, request.profile, grades ? &*grades : nullptr);
}

void write_report(const view::ClassReport& report, const std::string& json_file, const std::string& html_file,
                  std::size_t students_given, std::ostream& out) {
  const auto write = [](const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw Failure(Outcome::kUsage, "cannot write " + path);
  };
  if (!json_file.empty()) {
    write(json_file, view::class_report_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    out << "\nwrote " << json_file << '\n';
  }
  if (!html_file.empty()) {
    write(html_file, view::class_report_html(report));
    out << (json_file.empty() ? "\n" : "") << "wrote " << html_file << '\n';
  }
  const std::size_t problems = report.problems.size();
  out << fmt::format("\nclass report: {} of {} student{} read{}\n", report.students, students_given,
                     students_given == 1 ? "" : "s",
                     problems == 0 ? "" : fmt::format("; {} problem{} (listed above)", problems, problems == 1 ? "" : "s"));
}

}  // namespace gpulab::classroom
