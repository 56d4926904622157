// gpulab start: the interactive tutorial. For each lesson it shows the goal, asks the
// lesson's predictions before the first run, runs the exercise and scores each answer
// against what the run's report shows, draws the node, then watches the exercise file:
// every save rebuilds that lesson, runs its checks and shows the verdict and the picture.
// Keys: n next, p previous, h hint, l list, r run, c check, a check all, x reset, q quit.
// Without a terminal or inotify (or with --no-watch) it reads the same commands as lines.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "exit_codes.h"
#include "gpulab/manifest.h"
#include "gpulab/process.h"
#include "gpulab/report_reader.h"
#include "node_picture.h"
#include "gpulab/predictions.h"
#include "progress.h"
#include "terminal.h"

namespace gpulab::cli {
namespace {

struct StartOptions {
  bool no_watch = false;
  std::string lesson;        ///< start here instead of at the first lesson not passed
  double timeout_s = 300;    ///< per build + run or build + checks: a hang is stopped, the tutorial goes on
};

constexpr const char* kKeys =
    "keys: [n]ext [p]revious [h]int [l]ist [r]un [c]heck [s]tretch [a]ll checks [x] reset [q]uit";

std::string bar(int done, int total, int width = 20) {
  const int filled = total > 0 ? done * width / total : 0;
  return std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(width - filled), '.');
}

// The goal, in the lesson's own words: the exercise's TODO comment block.
std::string goal_of(const std::string& file) {
  std::ifstream in(file);
  std::string line, goal;
  bool inside = false;
  while (std::getline(in, line)) {
    const auto start = line.find_first_not_of(' ');
    const std::string text = start == std::string::npos ? "" : line.substr(start);
    if (!inside && text.rfind("// TODO:", 0) == 0) {
      inside = true;
      goal = text.substr(8);
    } else if (inside && text.rfind("//", 0) == 0) {
      goal += " " + text.substr(text.find_first_not_of("/ "));
    } else if (inside) {
      break;
    }
  }
  const auto first = goal.find_first_not_of(' ');
  return first == std::string::npos ? "" : goal.substr(first);
}

class Tutorial {
 public:
  Tutorial(const StartOptions& options)
      : options_(options), manifest_(load_manifest()), script_(manifest_.root + "/gpulab"),
        progress_file_(progress_path(manifest_.root)), progress_(load_progress(progress_file_)) {
    if (manifest_.lessons.empty()) throw std::runtime_error("the lesson manifest lists no lessons");
    const std::string wanted = !options.lesson.empty() ? options.lesson : progress_.current;
    index_ = 0;
    if (!wanted.empty()) {
      const std::string id = manifest_.find(wanted).id;
      while (manifest_.lessons[index_].id != id) ++index_;
    } else {
      while (index_ + 1 < manifest_.lessons.size() && progress_.lessons[lesson().id].passed) ++index_;
    }
  }

  int run() {
    welcome();
    enter_lesson();
    for (;;) {
      std::optional<FileWatcher> watcher;
      if (!options_.no_watch) {
        watcher.emplace(exercise_file());
        if (watcher->fd() < 0 && !warned_watch_) {
          std::cout << "(not watching the file: " << watcher->why() << "; type c to check after you save)\n";
          warned_watch_ = true;
        }
      }
      Input input;
      {
        RawKeys keys;  // only while waiting: questions and commands' output use the normal terminal
        std::cout << (keys.active() ? "> " : "command (n p h l r c s a x q, Enter = check)> ") << std::flush;
        input = next_input(keys.active(), watcher && watcher->fd() >= 0 ? &*watcher : nullptr);
      }
      if (input.kind == Input::kEnd) {
        std::cout << "\nbye — your progress is in " << progress_file_ << '\n';
        return kOk;
      }
      if (input.kind == Input::kSaved) {
        std::cout << "\nsaved: " << relative_exercise() << " — rebuilding lesson " << lesson().id << '\n';
        check_and_picture();
        continue;
      }
      const char key = input.text.empty() ? 'c' : input.text[0];
      std::cout << (input.kind == Input::kKey ? std::string(1, key) + "\n" : isatty(STDIN_FILENO) ? "" : input.text + "\n");
      if (!command(key)) return kOk;
    }
  }

 private:
  const LessonEntry& lesson() const { return manifest_.lessons[index_]; }
  std::string relative_exercise() const { return "lessons/" + lesson().directory() + "/main.cpp"; }
  std::string exercise_file() const { return manifest_.root + "/" + relative_exercise(); }

  void save() {
    progress_.current = lesson().id;
    try {
      save_progress(progress_file_, progress_);
    } catch (const std::exception& e) {
      std::cout << "(progress not saved: " << e.what() << ")\n";
    }
  }

  void welcome() {
    const int total = static_cast<int>(manifest_.lessons.size());
    std::cout << "Welcome to gpulab — where do my tensors land?\n"
              << "You will predict where LibTorch puts tensors, models and processes on a GPU node,\n"
              << "run the lesson on the simulated node, see what really happened, then fix the code.\n\n"
              << fmt::format("progress {}/{} [{}]\n", progress_.passed_count(), total, bar(progress_.passed_count(), total));
  }

  void enter_lesson() {
    const LessonEntry& l = lesson();
    const int total = static_cast<int>(manifest_.lessons.size());
    std::cout << fmt::format("\n== lesson {} of {}: {}\n", l.id, total, l.title);
    std::cout << fmt::format("   file: {}   (background: lessons/{}/README.md)\n", relative_exercise(), l.directory());
    std::string scenario;
    for (const auto& [name, value] : l.env) scenario += fmt::format(" {}={}", name, value);
    if (l.launched()) scenario += fmt::format(" launched: {} node(s) x {} processes", l.nnodes, l.nproc_per_node);
    if (!scenario.empty()) std::cout << "   scenario:" << scenario << '\n';
    const std::string goal = l.goal.empty() ? goal_of(exercise_file()) : l.goal;
    if (!goal.empty()) std::cout << "   goal: " << goal << '\n';
    save();
    if (!progress_.lessons[l.id].predictions_right && !l.predictions.empty()) predict_then_observe();
    else run_and_picture();
    std::cout << "\nEdit " << relative_exercise() << " and save: " << (options_.no_watch ? "then press c to check." : "it is checked as you save.")
              << '\n' << kKeys << '\n';
  }

  // Asks each question, runs the exercise as it is, and scores every answer against the report.
  void predict_then_observe() {
    const LessonEntry& l = lesson();
    std::cout << "\nBefore it runs, predict (" << l.predictions.size() << (l.predictions.size() == 1 ? " question" : " questions") << "):\n";
    std::vector<std::optional<std::string>> answers;
    for (std::size_t i = 0; i < l.predictions.size(); ++i) {
      const Prediction& p = l.predictions[i];
      std::optional<std::string> answer;
      for (int attempt = 0; attempt < 3 && !answer; ++attempt) {
        std::cout << fmt::format("  {}. {}\n     ({})> ", i + 1, p.question, answer_format(p)) << std::flush;
        const Input line = next_input(/*raw=*/false, nullptr);
        if (line.kind == Input::kEnd) break;
        if (!isatty(STDIN_FILENO)) std::cout << line.text << '\n';  // a script's answers, shown as typed
        answer = canonical_answer(p, line.text);
        if (!answer) std::cout << "     please answer with " << answer_format(p) << '\n';
      }
      answers.push_back(answer);
    }
    std::cout << "\nrunning lesson " << l.id << " as it is now...\n";
    const auto report = run_report();
    if (!report) return;
    int right = 0, scored = 0;
    for (std::size_t i = 0; i < l.predictions.size(); ++i) {
      const Prediction& p = l.predictions[i];
      const auto observed = observed_answer(p, *report);
      if (!observed) {
        std::cout << fmt::format("  {}. the run did not get far enough to tell.\n", i + 1);
        continue;
      }
      ++scored;
      const bool ok = answers[i] && *answers[i] == *observed;
      right += ok ? 1 : 0;
      std::cout << fmt::format("  {}. you said {}, the run shows {}: {}\n", i + 1, answers[i].value_or("(no answer)"), *observed,
                               ok ? "right." : "not quite.");
      if (!ok) std::cout << "     why: " << p.why << '\n';
    }
    std::cout << fmt::format("  predictions: {} of {} right\n", right, scored);
    progress_.lessons[l.id].predictions_right = right;
    progress_.lessons[l.id].predictions_asked = static_cast<int>(l.predictions.size());
    save();
    print_pictures(*report);
  }

  // `./gpulab run NN --json`, through the script so it rebuilds what changed.
  std::optional<nlohmann::json> run_report() {
    ProcessOptions run;
    run.argv = {script_, "run", lesson().id, "--json", "--timeout", fmt::format("{}", options_.timeout_s)};
    run.timeout_s = options_.timeout_s + 60;
    const ProcessResult result = run_process(run);
    auto document = nlohmann::json::parse(result.out, nullptr, /*allow_exceptions=*/false);
    if (result.exit_code == kBuildFailed) {
      std::cout << result.err << "the exercise does not compile yet (the compiler's messages are above).\n";
      return std::nullopt;
    }
    if (result.exit_code == kTimedOut || result.timed_out) {
      std::cout << fmt::format("lesson {} did not finish within {} s (a loop that never ends?). It was stopped; "
                               "your file is untouched and the tutorial goes on.\n", lesson().id, options_.timeout_s);
      return std::nullopt;
    }
    if (result.exit_code == kCrashed) {
      std::cout << result.err << fmt::format("lesson {} crashed (the message is above). Your file is untouched; the tutorial goes on.\n", lesson().id);
      return std::nullopt;
    }
    if (document.is_discarded()) {
      std::cout << result.err << fmt::format("lesson {} {} before it wrote a report; the tutorial goes on.\n", lesson().id,
                                             result.outcome(run.timeout_s));
      return std::nullopt;
    }
    return document;
  }

  void print_pictures(const nlohmann::json& document) {
    const PictureStyle style = stdout_style();
    auto parsed = [](const nlohmann::json& one) -> std::optional<Report> {
      try {
        return parse_report(one.dump());
      } catch (const std::exception& e) {
        std::cout << "(no picture: " << e.what() << ")\n";
        return std::nullopt;
      }
    };
    auto errors = [](const Report& report, const std::string& who) {
      for (const auto& error : report.errors) std::cout << "  error" << who << " (" << error.label << "): " << error.message << '\n';
    };
    std::cout << '\n';
    if (document.contains("ranks")) {
      std::map<int, std::string> hosts;  // the simulated host of each rank, from the launcher's summary
      for (const auto& worker : document.value("launch", nlohmann::json::object()).value("workers", nlohmann::json::array()))
        if (worker.is_object() && worker.contains("host") && worker.at("host").is_string())
          hosts[worker.value("rank", -1)] = worker.at("host").get<std::string>();
      std::vector<RankReport> ranks;
      for (const auto& one : document.at("ranks"))
        if (auto report = parsed(one)) {
          const int rank = one.value("facts", nlohmann::json::object()).value("rank", static_cast<int>(ranks.size()));
          ranks.push_back({rank, hosts.count(rank) ? hosts[rank] : "", *report});
        }
      std::cout << render_ranks_picture(ranks, style);
      for (const auto& rank : ranks) errors(rank.report, " in rank " + std::to_string(rank.rank));
      return;
    }
    const nlohmann::json parts = document.contains("steps") ? document.at("steps") : nlohmann::json::array({document});
    for (std::size_t i = 0; i < parts.size(); ++i)
      if (const auto report = parsed(parts[i])) {
        if (parts.size() > 1) std::cout << fmt::format("-- step {} of {}\n", i + 1, parts.size());
        std::cout << render_node_picture(*report, style);
        errors(*report, "");
      }
  }

  void run_and_picture() {
    if (const auto report = run_report()) print_pictures(*report);
  }

  // The verdict in the lesson's terms (`./gpulab check NN` rebuilds only this lesson).
  void check_and_picture() {
    // The run first: it shows the picture, and a hang or crash is caught at --timeout, not
    // after every check scenario has waited for it.
    const auto report = run_report();
    if (!report) return;
    print_pictures(*report);
    ProcessOptions check;
    check.argv = {script_, "check", lesson().id};
    check.capture = false;
    check.timeout_s = 360;  // the checks stop each program at their own limit
    const ProcessResult result = run_process(check);
    if (result.timed_out) std::cout << fmt::format("lesson {}'s checks {}; the tutorial goes on.\n", lesson().id, result.outcome(check.timeout_s));
    if (result.ok()) {
      const bool first_time = !progress_.lessons[lesson().id].passed;
      progress_.lessons[lesson().id].passed = true;
      save();
      const int total = static_cast<int>(manifest_.lessons.size());
      std::cout << fmt::format("\nlesson {} passed{}. progress {}/{} [{}]. Press n for the next lesson.\n", lesson().id,
                               first_time ? "" : " again", progress_.passed_count(), total, bar(progress_.passed_count(), total));
    }
  }

  // The optional stretch task: its own checks; never needed for progress.
  void check_stretch() {
    const LessonEntry& l = lesson();
    if (l.stretch.empty()) {
      std::cout << "this lesson has no stretch task.\n";
      return;
    }
    std::cout << "stretch: " << l.stretch << '\n';
    ProcessOptions check;
    check.argv = {script_, "check", l.id, "--stretch"};
    check.capture = false;
    check.timeout_s = 360;
    const ProcessResult result = run_process(check);
    if (result.timed_out) std::cout << fmt::format("lesson {}'s stretch checks {}; the tutorial goes on.\n", l.id, result.outcome(check.timeout_s));
  }

  void hint() {
    const LessonEntry& l = lesson();
    if (l.hints.empty()) {
      std::cout << "this lesson has no hints.\n";
      return;
    }
    int& level = hint_level_[l.id];
    level = std::min<int>(level + 1, static_cast<int>(l.hints.size()));
    std::cout << fmt::format("hint {} of {}: {}\n", level, l.hints.size(), l.hints[static_cast<std::size_t>(level - 1)]);
  }

  void list() {
    for (std::size_t i = 0; i < manifest_.lessons.size(); ++i) {
      const LessonEntry& l = manifest_.lessons[i];
      const auto found = progress_.lessons.find(l.id);
      const bool passed = found != progress_.lessons.end() && found->second.passed;
      std::string predicted;
      if (found != progress_.lessons.end() && found->second.predictions_right)
        predicted = fmt::format("  predictions {}/{}", *found->second.predictions_right, found->second.predictions_asked);
      std::cout << fmt::format("{} {} {}  {}{}\n", i == index_ ? '>' : ' ', passed ? "[x]" : "[ ]", l.id, l.title, predicted);
    }
  }

  void run_all_checks() {
    ProcessOptions all;
    all.argv = {script_, "check", "all"};
    all.capture = false;
    all.timeout_s = options_.timeout_s * static_cast<double>(manifest_.lessons.size()) + 60;
    run_process(all);
  }

  void reset() {
    std::cout << fmt::format("reset {}? Your file is backed up first. [y/N] ", relative_exercise()) << std::flush;
    Input answer;
    {
      RawKeys keys;
      answer = next_input(keys.active(), nullptr);
    }
    if (answer.text.empty() || (answer.text[0] != 'y' && answer.text[0] != 'Y')) {
      std::cout << "\nnot reset.\n";
      return;
    }
    std::cout << '\n';
    ProcessOptions reset;
    reset.argv = {script_, "reset", lesson().id};
    reset.capture = false;
    run_process(reset);
  }

  bool command(char key) {
    switch (key) {
      case 'q': std::cout << "bye — your progress is in " << progress_file_ << '\n'; return false;
      case 'n':
      case 'p': {
        if (key == 'n' && index_ + 1 >= manifest_.lessons.size()) {
          std::cout << "that was the last lesson. l lists them all.\n";
          return true;
        }
        if (key == 'p' && index_ == 0) {
          std::cout << "this is the first lesson.\n";
          return true;
        }
        index_ = key == 'n' ? index_ + 1 : index_ - 1;
        enter_lesson();
        return true;
      }
      case 'h': hint(); return true;
      case 'l': list(); return true;
      case 'r': run_and_picture(); return true;
      case 'c': check_and_picture(); return true;
      case 's': check_stretch(); return true;
      case 'a': run_all_checks(); return true;
      case 'x': reset(); return true;
      default: std::cout << kKeys << '\n'; return true;
    }
  }

  StartOptions options_;
  Manifest manifest_;
  std::string script_;
  std::string progress_file_;
  Progress progress_;
  std::size_t index_ = 0;
  std::map<std::string, int> hint_level_;
  bool warned_watch_ = false;
};

}  // namespace

void setup_start(CLI::App& app) {
  auto options = std::make_shared<StartOptions>();
  auto* cmd = app.add_subcommand("start", "the interactive tutorial: predict, run, see the node, fix, with watch mode");
  cmd->add_flag("--no-watch", options->no_watch, "do not watch the exercise file; check with c (or Enter)");
  cmd->add_option("--lesson", options->lesson, "start at this lesson (default: the first one not passed)");
  cmd->add_option("--timeout", options->timeout_s, "seconds a run or the checks may take before they are stopped")->capture_default_str();
  cmd->callback([options] {
    Tutorial tutorial(*options);
    throw Exit{tutorial.run()};
  });
}

}  // namespace gpulab::cli
