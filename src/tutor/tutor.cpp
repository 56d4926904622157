#include "tutor/tutor.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "course/predictions.h"
#include "tutor/screens.h"

namespace gpulab::tutor {
namespace {

constexpr const char* kKeys =
    "keys: [n]ext [p]revious [h]int [l]ist [r]un [c]heck [s]tretch [a]ll checks [x] reset [q]uit";
constexpr int kAttempts = 3;  // tries at a prediction before it counts as unanswered

Action print(std::string text) { return {Action::Kind::kPrint, std::move(text), {}, false}; }

// "a, b or c"
std::string letters(std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i)
    text += (i == 0 ? "" : i + 1 == count ? " or " : ", ") + std::string(1, static_cast<char>('a' + i));
  return text;
}

// "b", "B", "b)" or "2": the choice's index; nullopt when it names none of `count`.
std::optional<std::size_t> choice_of(const std::string& line, std::size_t count) {
  std::string word;
  for (char c : line)
    if (!std::isspace(static_cast<unsigned char>(c)) && c != ')' && c != '.') word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (word.size() == 1 && word[0] >= 'a' && static_cast<std::size_t>(word[0] - 'a') < count) return static_cast<std::size_t>(word[0] - 'a');
  if (word.size() == 1 && word[0] >= '1' && static_cast<std::size_t>(word[0] - '1') < count) return static_cast<std::size_t>(word[0] - '1');
  return std::nullopt;
}


}  // namespace

Tutor::Tutor(Manifest manifest, Progress progress, TutorOptions options, std::string progress_file,
             view::PictureStyle style, std::map<std::string, std::string> goals)
    : manifest_(std::move(manifest)), progress_(std::move(progress)), options_(std::move(options)),
      progress_file_(std::move(progress_file)), style_(style), goals_(std::move(goals)) {
  index_ = starting_lesson(manifest_, progress_, options_.lesson);
}

namespace {
TutorOptions with_class(TutorOptions options, const Workspace& workspace) {
  options.class_settings = workspace.class_settings();
  return options;
}
}  // namespace

Tutor::Tutor(const Workspace& workspace, TutorOptions options, view::PictureStyle style)
    : Tutor(workspace.manifest(), workspace.progress(), with_class(std::move(options), workspace), workspace.progress_file(),
            style, workspace.exercise_goals()) {}

std::size_t starting_lesson(const Manifest& manifest, const Progress& progress, const std::string& lesson) {
  if (manifest.lessons.empty()) throw std::runtime_error("the lesson manifest lists no lessons");
  const std::string wanted = !lesson.empty() ? lesson : progress.current;
  std::size_t index = 0;
  if (!wanted.empty()) {
    const std::string id = manifest.find(wanted).id;
    while (manifest.lessons[index].id != id) ++index;
    return index;
  }
  auto passed = [&](std::size_t i) {
    const auto found = progress.lessons.find(manifest.lessons[i].id);
    return found != progress.lessons.end() && found->second.passed;
  };
  while (index + 1 < manifest.lessons.size() && passed(index)) ++index;
  return index;
}

std::string Tutor::relative_exercise() const { return lesson().source_file(); }

grading::RunRequest Tutor::run_request() const {
  grading::RunRequest request;
  request.json = true;
  request.timeout_s = options_.timeout_s;
  return request;
}

grading::ChecksRequest Tutor::checks_request(const Action& action) const {
  grading::ChecksRequest request;
  request.stretch = action.stretch;
  request.timeout_s = options_.timeout_s;
  return request;
}

int Tutor::hint_level(const std::string& id) const {
  const auto found = hint_level_.find(id);
  return found == hint_level_.end() ? 0 : found->second;
}

std::string Tutor::progress_line() const {
  const int total = static_cast<int>(manifest_.lessons.size());
  return fmt::format("progress {}/{} [{}]", progress_.passed_count(), total, bar(progress_.passed_count(), total));
}

Action Tutor::save() {
  progress_.current = lesson().id;
  return {Action::Kind::kSave, {}, {}, false};
}

Actions Tutor::start() {
  Actions actions = {print("Welcome to gpulab — where do my tensors land?\n"
                           "You will predict where LibTorch puts tensors, models and processes on a GPU node,\n"
                           "run the lesson on the simulated node, see what really happened, then fix the code.\n\n" +
                           progress_line() + "\n")};
  for (auto& action : enter_lesson()) actions.push_back(std::move(action));
  return actions;
}

Actions Tutor::enter_lesson() {
  const LessonEntry& l = lesson();
  // "lesson 02 of 17"; where the numbers skip some (no lessons 17 and 18), "lesson 19 (17 of
  // 17)" rather than "lesson 19 of 17".
  const std::size_t position = index_ + 1;
  const std::size_t lessons = manifest_.lessons.size();
  const bool numbered_in_order = l.id == fmt::format("{:02}", position) || l.id == std::to_string(position);
  const std::string place = numbered_in_order ? fmt::format("lesson {} of {}", l.id, lessons)
                                              : fmt::format("lesson {} ({} of {})", l.id, position, lessons);
  std::string text = fmt::format("\n== {}: {}\n", place, l.title);
  const std::string scenario = l.scenario_text();
  if (!scenario.empty()) text += "   scenario:" + scenario + '\n';
  Actions actions = {print(text), save()};
  footer_pending_ = true;
  explaining_ = false;
  // Before the predictions, nothing but the title and the scenario: the goal, the file's
  // TODO and the lesson's text would give the answers away.
  if (!predicted(progress_.lessons[l.id]) && !l.predictions.empty()) {  // (the lesson is entered in the progress)
    const std::size_t count = l.predictions.size();
    actions.push_back(print(fmt::format("\nBefore it runs, predict ({} {}):\n", count, count == 1 ? "question" : "questions")));
    question_ = 0;
    attempt_ = 0;
    answers_.clear();
    awaiting_ = Awaiting::kAnswer;
    actions.push_back(ask_question().front());
    return actions;
  }
  for (auto& action : task_text()) actions.push_back(std::move(action));
  for (auto& action : build_then(Job::kRun, {l.program_target()})) actions.push_back(std::move(action));
  return actions;
}

// The lesson's file, where its explanation is, and its goal.
Actions Tutor::task_text() {
  const LessonEntry& l = lesson();
  std::string text = fmt::format("   file: {}   (the lesson: lessons/{}/README.md; why: ./gpulab explain {})\n",
                                 relative_exercise(), l.directory(), l.id);
  const auto fallback = goals_.find(l.id);
  const std::string goal = !l.goal.empty() ? l.goal : fallback != goals_.end() ? fallback->second : "";
  if (!goal.empty()) text += "   goal: " + goal + '\n';
  return {print(text)};
}

// ---- predictions ---------------------------------------------------------------------------

Actions Tutor::ask_question() {
  const Prediction& p = lesson().predictions[question_];
  return {print(fmt::format("  {}. {}\n     ({})> ", question_ + 1, p.question, answer_format(p)))};
}

Actions Tutor::on_answer(const std::string& line) {
  if (awaiting_ != Awaiting::kAnswer) return {};
  if (explaining_) {
    const auto& explain = *lesson().predictions[question_].explain;
    const auto choice = choice_of(line, explain.choices.size());
    if (!choice && ++attempt_ < kAttempts) {
      Actions actions = {print(fmt::format("     please answer with a letter, {}\n", letters(explain.choices.size())))};
      actions.push_back(ask_explain().front());
      return actions;
    }
    return take_explain(choice);
  }
  const Prediction& p = lesson().predictions[question_];
  auto answer = canonical_answer(p, line);
  if (!answer && ++attempt_ < kAttempts) {
    Actions actions = {print("     please answer with " + answer_format(p) + '\n')};
    actions.push_back(ask_question().front());
    return actions;
  }
  Actions actions;
  if (!answer) actions.push_back(print("     please answer with " + answer_format(p) + '\n'));
  for (auto& action : take_answer(std::move(answer))) actions.push_back(std::move(action));
  return actions;
}

// The answer to the current question (nullopt: none); then the next question, or the run.
Actions Tutor::take_answer(std::optional<std::string> answer) {
  answers_.push_back(std::move(answer));
  attempt_ = 0;
  if (++question_ < lesson().predictions.size()) return ask_question();
  awaiting_ = Awaiting::kCommand;
  Actions actions = {print("\nrunning lesson " + lesson().id + " as it is now...\n")};
  for (auto& action : build_then(Job::kPredictions, {lesson().program_target()})) actions.push_back(std::move(action));
  return actions;
}

Actions Tutor::score_predictions(const RunDocument& document) {
  const LessonEntry& l = lesson();
  std::string text;
  int right = 0, scored = 0;
  for (std::size_t i = 0; i < l.predictions.size(); ++i) {
    const Prediction& p = l.predictions[i];
    const auto observed = observed_answer(p, document);
    if (!observed) {
      text += fmt::format("  {}. the run did not get far enough to tell.\n", i + 1);
      continue;
    }
    ++scored;
    const auto& answer = i < answers_.size() ? answers_[i] : std::nullopt;
    const bool ok = answer && *answer == *observed;
    right += ok ? 1 : 0;
    text += fmt::format("  {}. you said {}, the run shows {}: {}\n", i + 1, answer.value_or("(no answer)"), *observed,
                        ok ? "right." : "not quite.");
  }
  text += fmt::format("  predictions: {} of {} right\n", right, scored);
  LessonProgress& mine = progress_.lessons[l.id];
  mine.predictions_right = right;
  mine.predictions_asked = static_cast<int>(l.predictions.size());
  mine.predicted.clear();
  for (const auto& answer : answers_) mine.predicted.push_back(answer.value_or("-"));
  return {print(text), save()};
}

// ---- explain: after the run, why it came out so ----------------------------------------------

// The next prediction with an explain question from question_ on, asked; or, when none is
// left, the explanations and the task.
Actions Tutor::ask_explain() {
  const auto& predictions = lesson().predictions;
  while (question_ < predictions.size() && !predictions[question_].explain) ++question_;
  if (question_ >= predictions.size()) return explained();
  const auto& explain = *predictions[question_].explain;
  std::string text = fmt::format("  {}. {}\n", question_ + 1, explain.question);
  for (std::size_t i = 0; i < explain.choices.size(); ++i)
    text += fmt::format("     {}) {}\n", static_cast<char>('a' + i), explain.choices[i]);
  text += fmt::format("     ({})> ", letters(explain.choices.size()));
  return {print(text)};
}

Actions Tutor::take_explain(std::optional<std::size_t> choice) {
  const auto& explain = *lesson().predictions[question_].explain;
  const bool ok = choice && *choice == explain.answer;
  explained_right_ += ok ? 1 : 0;
  if (choices_.size() <= question_) choices_.resize(question_ + 1);
  choices_[question_] = choice;
  Actions actions = {print(ok ? "     right.\n"
                              : fmt::format("     not quite: it is {}).\n", static_cast<char>('a' + explain.answer)))};
  attempt_ = 0;
  ++question_;
  for (auto& action : ask_explain()) actions.push_back(std::move(action));
  return actions;
}

// Every prediction's why, to everyone, right or wrong; then the task.
Actions Tutor::explained() {
  const LessonEntry& l = lesson();
  explaining_ = false;
  awaiting_ = Awaiting::kCommand;
  std::string text = "\nWhy:\n";
  for (std::size_t i = 0; i < l.predictions.size(); ++i) text += fmt::format("  {}. {}\n", i + 1, l.predictions[i].why);
  text += fmt::format("  The whole story: ./gpulab explain {}\n\n", l.id);
  Actions actions = {print(text)};
  int asked = 0;
  for (const auto& p : l.predictions) asked += p.explain ? 1 : 0;
  if (asked > 0) {
    LessonProgress& mine = progress_.lessons[l.id];
    mine.explained_right = explained_right_;
    mine.explained_asked = asked;
    mine.explained.clear();
    for (std::size_t i = 0; i < l.predictions.size(); ++i) {
      if (!l.predictions[i].explain) continue;
      const auto choice = i < choices_.size() ? choices_[i] : std::nullopt;
      mine.explained.push_back(choice ? std::string(1, static_cast<char>('a' + *choice)) : "-");
    }
    actions.push_back(print(fmt::format("  explained: {} of {} right\n", explained_right_, asked)));
    actions.push_back(save());
  }
  for (auto& action : task_text()) actions.push_back(std::move(action));
  return finish_job(std::move(actions));
}

// ---- building, running and checking --------------------------------------------------------

Actions Tutor::build_then(Job job, std::vector<std::string> targets) {
  job_ = job;
  return {{Action::Kind::kBuild, {}, std::move(targets), false}};
}

// The job is over: the lesson's "Edit ... and save" lines when it was the lesson's first run.
Actions Tutor::finish_job(Actions actions) {
  job_ = Job::kNone;
  if (footer_pending_) {
    footer_pending_ = false;
    actions.push_back(print(fmt::format("\nEdit {} and save: {}\n{}\n", relative_exercise(),
                                        options_.no_watch ? "then press c to check." : "it is checked as you save.", kKeys)));
  }
  return actions;
}

Actions Tutor::on_built(const grading::BuildResult& result) {
  if (job_ == Job::kNone) return {};
  if (!result.ok) {
    Actions actions = {print(compile_error_text(result))};
    if (job_ == Job::kPredictions) actions.push_back(task_text().front());  // no run to explain: on to the task
    return finish_job(std::move(actions));
  }
  if (job_ == Job::kStretch) return {print(checks_header(lesson(), true)), {Action::Kind::kCheck, {}, {}, true}};
  Action run{Action::Kind::kRun, {}, {}, false};
  run.checks_follow = job_ == Job::kCheck;  // the verdict need not wait for the picture
  return {run};
}

Actions Tutor::on_run(const grading::RunResult& result) {
  if (job_ == Job::kNone) return {};
  if (auto failure = run_failure_text(lesson(), result, options_.timeout_s)) {
    Actions actions = {print(*failure)};
    if (job_ == Job::kPredictions) actions.push_back(task_text().front());  // nothing to explain: on to the task
    return finish_job(std::move(actions));
  }
  Actions actions;
  if (job_ == Job::kPredictions) actions = score_predictions(result.document);
  actions.push_back(print(pictures_text(result.document, style_)));
  if (job_ == Job::kPredictions) {  // observed: now why
    const auto& predictions = lesson().predictions;
    if (std::any_of(predictions.begin(), predictions.end(), [](const Prediction& p) { return p.explain.has_value(); }))
      actions.push_back(print("\nWhy did it come out so? Pick the mechanism:\n"));
    job_ = Job::kNone;
    explaining_ = true;
    awaiting_ = Awaiting::kAnswer;
    question_ = 0;
    attempt_ = 0;
    choices_.clear();
    explained_right_ = 0;
    for (auto& action : ask_explain()) actions.push_back(std::move(action));
    return actions;
  }
  if (job_ != Job::kCheck) return finish_job(std::move(actions));
  actions.push_back(print(checks_header(lesson(), false)));
  actions.push_back({Action::Kind::kCheck, {}, {}, false});
  return actions;
}

Actions Tutor::on_checks(const grading::ChecksResult& result) {
  if (job_ != Job::kCheck && job_ != Job::kStretch) return {};
  const bool stretch = job_ == Job::kStretch;
  Actions actions = {print(checks_text(lesson(), result, stretch, options_.timeout_s))};
  if (!stretch && result.outcome == Outcome::kOk && result.has_verdict && result.verdict.failed() == 0) {
    LessonProgress& mine = progress_.lessons[lesson().id];
    const bool first_time = !mine.passed;
    mine.passed = true;
    actions.push_back(save());
    actions.push_back(print(fmt::format("\nlesson {} passed{}. {}. Press n for the next lesson.\n", lesson().id,
                                        first_time ? "" : " again", progress_line())));
  }
  return finish_job(std::move(actions));
}

Actions Tutor::on_error(const std::string& what) {
  Actions actions = {print("(" + what + "; the tutorial goes on)\n")};
  if (job_ == Job::kPredictions) actions.push_back(task_text().front());
  return finish_job(std::move(actions));
}

Actions Tutor::check() { return build_then(Job::kCheck, {lesson().program_target(), lesson().checks_target()}); }

Actions Tutor::stretch() {
  const LessonEntry& l = lesson();
  if (l.stretch.empty()) return {print("this lesson has no stretch task.\n")};
  Actions actions = {print("stretch: " + l.stretch + '\n')};
  for (auto& action : build_then(Job::kStretch, {l.program_target(), l.checks_target()})) actions.push_back(std::move(action));
  return actions;
}

// ---- commands ------------------------------------------------------------------------------

Actions Tutor::hint() {
  const LessonEntry& l = lesson();
  if (l.hints.empty()) return {print("this lesson has no hints.\n")};
  const int count = static_cast<int>(l.hints.size());
  const int allowed = hints_allowed(options_.class_settings, l);
  if (allowed == 0)
    return {print(fmt::format("your class has no hints for this lesson ({}); c checks your file and says what is still wrong.\n",
                              kClassFileName))};
  int& level = hint_level_[l.id];
  if (level >= allowed && allowed < count)
    return {print(fmt::format("that was the last hint your class allows for this lesson: {} of {} ({}).\n", allowed, count,
                              kClassFileName))};
  level = std::min<int>(level + 1, allowed);
  return {print(fmt::format("hint {} of {}: {}\n", level, l.hints.size(), l.hints[static_cast<std::size_t>(level - 1)]))};
}

Actions Tutor::list() const {
  std::string text;
  for (std::size_t i = 0; i < manifest_.lessons.size(); ++i) {
    const LessonEntry& l = manifest_.lessons[i];
    const auto found = progress_.lessons.find(l.id);
    const bool passed = found != progress_.lessons.end() && found->second.passed;
    std::string score;
    if (found != progress_.lessons.end() && gpulab::predicted(found->second))
      score = fmt::format("  predictions {}/{}", *found->second.predictions_right, found->second.predictions_asked);
    text += fmt::format("{} {} {}  {}{}\n", i == index_ ? '>' : ' ', passed ? "[x]" : "[ ]", l.id, l.title, score);
  }
  return {print(text)};
}

Actions Tutor::move(char key) {
  if (key == 'n' && index_ + 1 >= manifest_.lessons.size()) return {print("that was the last lesson. l lists them all.\n")};
  if (key == 'p' && index_ == 0) return {print("this is the first lesson.\n")};
  index_ = key == 'n' ? index_ + 1 : index_ - 1;
  return enter_lesson();
}

Actions Tutor::on_key(char key) {
  if (awaiting_ != Awaiting::kCommand) return {};
  switch (key) {
    case 'q': return {print("bye — your progress is in " + progress_file_ + '\n'), {Action::Kind::kQuit, {}, {}, false}};
    case 'n':
    case 'p': return move(key);
    case 'h': return hint();
    case 'l': return list();
    case 'r': return build_then(Job::kRun, {lesson().program_target()});
    case 'c': return check();
    case 's': return stretch();
    case 'a': return {{Action::Kind::kCheckAll, {}, {}, false}};
    case 'x':
      awaiting_ = Awaiting::kConfirm;
      return {print(fmt::format("reset {}? Your file is backed up first. [y/N] ", relative_exercise()))};
    default: return {print(std::string(kKeys) + '\n')};
  }
}

Actions Tutor::on_saved() {
  if (awaiting_ != Awaiting::kCommand) return {};
  Actions actions = {print("\nsaved: " + relative_exercise() + " — rebuilding lesson " + lesson().id + '\n')};
  for (auto& action : check()) actions.push_back(std::move(action));
  return actions;
}

Actions Tutor::on_confirm(const std::string& text) {
  if (awaiting_ != Awaiting::kConfirm) return {};
  awaiting_ = Awaiting::kCommand;
  if (text.empty() || (text[0] != 'y' && text[0] != 'Y')) return {print("\nnot reset.\n")};
  return {print("\n"), {Action::Kind::kReset, {}, {}, false}};
}

Actions Tutor::on_end() {
  switch (awaiting_) {
    case Awaiting::kAnswer: return explaining_ ? take_explain(std::nullopt) : take_answer(std::nullopt);
    case Awaiting::kConfirm: return on_confirm("");
    case Awaiting::kCommand: break;
  }
  return {print("\nbye — your progress is in " + progress_file_ + '\n'), {Action::Kind::kQuit, {}, {}, false}};
}

}  // namespace gpulab::tutor
