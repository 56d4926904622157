// The class's predictions (classroom/class_report.h): read, run once per lesson, counted.
#include "classroom/class_report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "course/predictions.h"
#include "grading/class_grade.h"
#include "proc/process.h"

namespace fs = std::filesystem;

namespace gpulab::classroom {
namespace {

// "alice" for "class/alice/", "class/alice" or "alice"; "." and ".." as the folder they name.
std::string folder_name(const std::string& dir) {
  fs::path path = fs::path(dir).lexically_normal();
  if (path.has_filename() == false) path = path.parent_path();
  std::string name = path.filename().string();
  if (name.empty() || name == "." || name == "..") {
    std::error_code error;
    const fs::path absolute = fs::weakly_canonical(fs::absolute(dir, error), error);
    name = absolute.filename().string();
  }
  return name.empty() ? dir : name;
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

std::optional<std::string> at(const std::vector<std::string>& answers, std::size_t index) {
  if (index >= answers.size()) return std::nullopt;
  return answers[index];
}

}  // namespace

StudentTree read_student(const std::string& dir) {
  StudentTree student;
  student.name = folder_name(dir);
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    student.problem = fs::exists(dir, error) ? "not a folder" : "no such folder";
    return student;
  }
  const fs::path file = fs::path(dir) / kProgressFile;
  if (!fs::exists(file, error)) {
    student.problem = std::string("no progress file (") + kProgressFile + "): not started, or not this student's checkout";
    return student;
  }
  std::ifstream in(file, std::ios::binary);
  if (!fs::is_regular_file(file, error) || !in) {
    student.problem = std::string("cannot read its progress file (") + kProgressFile + ")";
    return student;
  }
  std::ostringstream text;
  text << in.rdbuf();  // an empty file reads as no progress
  student.progress = tutor::parse_progress(text.str(), &student.skipped);
  return student;
}

std::vector<StudentTree> read_students(const std::vector<std::string>& dirs) {
  std::vector<StudentTree> students;
  std::vector<std::string> names;
  for (const auto& dir : dirs) {
    students.push_back(read_student(dir));
    names.push_back(students.back().name);
  }
  names = grading::unique_names(names);  // as class grade calls them
  for (std::size_t i = 0; i < students.size(); ++i) students[i].name = names[i];
  return students;
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
    run = grading::run_lesson(lesson, request, programs);
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
    const grading::BuildResult built = builder.build({"lesson-" + id});
    if (!built.ok) {
      found[id].predictions.resize(lesson.predictions.size());
      found[id].note = fmt::format("unknown: lesson-{} does not build (lessons/{}/main.cpp)", id, lesson.directory());
      continue;
    }
    LessonTruth truth = run_truth(lesson, programs, timeout_s);
    const std::string relative = "lessons/" + lesson.directory() + "/main.cpp";
    if (differs_from_head(manifest.root, relative).value_or(false))
      truth.note += fmt::format("; note: {} differs from the shipped one (git HEAD), so the truth may too", relative);
    found[id] = std::move(truth);
  }
  return found;
}

view::ClassReport tally(const Manifest& manifest, const std::vector<StudentTree>& students,
                        const std::map<std::string, LessonTruth>& truths, bool truth_run, const std::string& profile) {
  view::ClassReport report;
  report.profile = profile;
  report.truth_run = truth_run;
  std::set<std::string> known;
  for (const auto& lesson : manifest.lessons) known.insert(lesson.id);

  std::vector<const StudentTree*> read;
  for (const auto& student : students) {
    report.names.push_back(student.name);
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
    if (!unknown.empty()) {
      std::string ids;
      for (const auto& id : unknown) ids += (ids.empty() ? "" : ", ") + id;
      report.problems.push_back({student.name, fmt::format("names lesson{} {}, which this course does not have: left out",
                                                           unknown.size() == 1 ? "" : "s", ids),
                                 {}, true});
    }
  }
  report.students = static_cast<int>(read.size());

  for (const auto& id : lessons_started(manifest, students)) {
    const LessonEntry& entry = manifest.find(id);
    view::LessonTally lesson;
    lesson.id = entry.id;
    lesson.title = entry.title;
    lesson.scenario = entry.scenario_text();
    lesson.students = report.students;
    std::vector<const tutor::LessonProgress*> started;
    for (const StudentTree* student : read) {
      const auto found = student->progress->lessons.find(id);
      if (found == student->progress->lessons.end()) continue;
      started.push_back(&found->second);
      lesson.passed += found->second.passed ? 1 : 0;
    }
    lesson.started = static_cast<int>(started.size());
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

}  // namespace gpulab::classroom
