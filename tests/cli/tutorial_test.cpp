// The interactive tutorial (`gpulab start`) driven as a learner drives it: through a
// pseudo-terminal, answering its questions, pressing keys and saving the exercise file.
// Expected answers come from running the lesson program directly, never from a copy of
// the tutorial's output. These tests write lesson 01's exercise, so CTest gives them the
// lesson01-source lock with every test that builds that file; the file is restored after.
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "course/manifest.h"
#include "proc/process.h"
#include "lesson_run.h"

using namespace gpulab;
using namespace gpulab::test;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) {
  // As an editor that writes a new file and renames it over the old one (vim, VS Code).
  const std::string temporary = path + ".saving";
  std::ofstream(temporary) << text;
  std::filesystem::rename(temporary, path);
}

// Puts a lesson's exercise back however the test ends.
class ExerciseGuard {
 public:
  explicit ExerciseGuard(std::string path) : path_(std::move(path)), original_(read_text(path_)) {}
  ~ExerciseGuard() { write_text(path_, original_); }
  const std::string& original() const { return original_; }

 private:
  std::string path_;
  std::string original_;
};

// `gpulab start` on a pseudo-terminal: what it printed so far, and keys to type.
class Session {
 public:
  Session(const std::vector<std::string>& args, const std::string& progress_file) : state_dir_(fresh_state_dir()) {
    pid_ = forkpty(&master_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      setenv("GPULAB_BUILD_DIR", GPULAB_TEST_BUILD_DIR, 1);
      setenv("GPULAB_STATE_DIR", state_dir_.c_str(), 1);
      setenv("GPULAB_PROGRESS_FILE", progress_file.c_str(), 1);
      setenv("NO_COLOR", "1", 1);
      unsetenv("CUDA_VISIBLE_DEVICES");
      unsetenv("CUDA_DEVICE_ORDER");
      unsetenv("GPULAB_NODE");
      std::vector<char*> argv;
      const std::string binary = bin_dir() + "/gpulab";
      argv.push_back(const_cast<char*>(binary.c_str()));
      for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~Session() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) close(master_);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Processes still alive that the session started, however far down: every one inherits
  /// the session's node state folder (GPULAB_STATE_DIR), so /proc/PID/environ tells.
  std::vector<std::string> processes_left() const {
    std::vector<std::string> left;
    const std::string mark = "GPULAB_STATE_DIR=" + state_dir_;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream environ_file(entry.path() / "environ", std::ios::binary);
      std::string variable;
      while (std::getline(environ_file, variable, '\0')) {
        if (variable == mark) {
          std::ifstream cmdline(entry.path() / "cmdline");
          std::string program;
          std::getline(cmdline, program, '\0');
          left.push_back(name + " " + program);
          break;
        }
      }
    }
    return left;
  }

  // Reads until `text` appears after everything already waited for; false at the deadline
  // (a safety net for a broken tutorial, not a timing assertion).
  bool wait_for(const std::string& text, double seconds = 300) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      const auto found = output_.find(text, consumed_);
      if (found != std::string::npos) {
        consumed_ = found + text.size();
        return true;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd fd{master_, POLLIN, 0};
      if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[4096];
      const ssize_t n = read(master_, buffer, sizeof buffer);
      if (n <= 0) return false;  // the tutorial ended
      output_.append(buffer, static_cast<std::size_t>(n));
    }
  }
  void type(const std::string& keys) { REQUIRE(write(master_, keys.data(), keys.size()) == static_cast<ssize_t>(keys.size())); }
  int exit_code() {
    int status = 0;
    waitpid(pid_, &status, 0);
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  const std::string& output() const { return output_; }

 private:
  int master_ = -1;
  std::string state_dir_;
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string output_;
  std::size_t consumed_ = 0;
};

// Waits for the text; on failure the message is everything the tutorial printed.
#define SEEN(session, ...)                        \
  do {                                            \
    const bool seen = (session).wait_for(__VA_ARGS__); \
    INFO("the tutorial printed:\n" << (session).output()); \
    REQUIRE(seen);                                \
  } while (false)

std::string temp_progress_file() {
  return fresh_state_dir() + "/progress";
}

}  // namespace

TEST_CASE("start: predictions are scored against the run, a save is checked, and the verdict turns to passed", "[tutorial]") {
  // The truth, from the exercise itself: what device_count() returns and where x lands.
  // Through ./gpulab, which rebuilds the exercise as shipped (an earlier test may have left a
  // build of another version behind).
  ProcessOptions shipped;
  shipped.argv = {source_dir() + "/gpulab", "run", "01", "--json"};
  shipped.env = {{"GPULAB_BUILD_DIR", std::string(GPULAB_TEST_BUILD_DIR)}, {"GPULAB_STATE_DIR", fresh_state_dir()},
                 {"CUDA_VISIBLE_DEVICES", std::nullopt}, {"GPULAB_NODE", std::nullopt}};
  shipped.timeout_s = 600;
  const auto truth = parse_run(run_process(shipped));
  const std::string visible = truth.fact("visible_devices").dump();
  const std::string last = truth.report.at("observations").back().at("label").get<std::string>();
  const int x_gpu = truth.physical_of(last, "x");
  REQUIRE(x_gpu >= 0);

  const std::string exercise = source_dir() + "/lessons/01-meet-the-node/main.cpp";
  ExerciseGuard guard(exercise);
  const std::string progress = temp_progress_file();
  Session session({"start", "--lesson", "01"}, progress);

  // The explain questions' right letters, from the manifest.
  const LessonEntry lesson = load_manifest().find("01");
  REQUIRE(lesson.predictions.size() == 2);
  REQUIRE(lesson.predictions[0].explain);
  REQUIRE(lesson.predictions[1].explain);
  const char right = static_cast<char>('a' + lesson.predictions[0].explain->answer);
  const char wrong = static_cast<char>('a' + (lesson.predictions[1].explain->answer + 1) % lesson.predictions[1].explain->choices.size());

  SEEN(session, "progress 0/" + std::to_string(load_manifest().lessons.size()));
  SEEN(session, "(a number)>");
  // Nothing before the first question gives the answers away: no goal, no file, no text.
  CHECK(session.output().find("goal:") == std::string::npos);
  CHECK(session.output().find("main.cpp") == std::string::npos);
  session.type(visible + "\n");
  SEEN(session, "(a physical GPU number, or cpu)>");
  session.type(std::to_string(x_gpu + 1) + "\n");  // wrong on purpose
  SEEN(session, "you said " + visible + ", the run shows " + visible + ": right.");
  SEEN(session, "the run shows " + std::to_string(x_gpu) + ": not quite.");
  SEEN(session, "predictions: 1 of 2 right");
  // Observed; now the learner commits to a reason, before any why is shown.
  SEEN(session, "Pick the mechanism:");
  SEEN(session, lesson.predictions[0].explain->question);
  SEEN(session, "(a, b");
  CHECK(session.output().find(lesson.predictions[0].why) == std::string::npos);
  session.type(std::string(1, right) + "\n");
  SEEN(session, "     right.");
  SEEN(session, lesson.predictions[1].explain->question);
  session.type(std::string(1, wrong) + "\n");
  SEEN(session, std::string("not quite: it is ") + static_cast<char>('a' + lesson.predictions[1].explain->answer) + ").");
  SEEN(session, lesson.predictions[0].why);  // every why, right or wrong
  SEEN(session, lesson.predictions[1].why);
  SEEN(session, "explained: 1 of 2 right");
  SEEN(session, "goal: ");
  SEEN(session, "it is checked as you save");
  SEEN(session, "> ");

  {  // saving the shipped code again fails its checks; saving a fix passes
    write_text(exercise, guard.original() + "\n// saved again, unchanged\n");
    SEEN(session, "saved: lessons/01-meet-the-node/main.cpp");
    SEEN(session, "lesson 01: not yet");
    SEEN(session, "> ");
    write_text(exercise, read_text(source_dir() + "/solutions/01-meet-the-node/main.cpp"));
    SEEN(session, "saved: lessons/01-meet-the-node/main.cpp");
    SEEN(session, "lesson 01 passed. progress 1/" + std::to_string(load_manifest().lessons.size()));
    SEEN(session, "> ");
    session.type("h");
    SEEN(session, "hint 1 of 3");
    session.type("h");
    SEEN(session, "hint 2 of 3");
    session.type("q");
    SEEN(session, "bye");
    CHECK(session.exit_code() == 0);
    const std::string recorded = read_text(progress);
    CHECK(recorded.find("lesson 01 passed predictions 1/2 explained 1/2") != std::string::npos);
    CHECK(recorded.find(fmt::format("answers 01 predicted {} {} explained {} {}", visible, x_gpu + 1, right, wrong)) !=
          std::string::npos);
  }
}

TEST_CASE("start: a program that never ends is stopped at the time limit and the tutorial goes on", "[tutorial]") {
  const std::string exercise = source_dir() + "/lessons/01-meet-the-node/main.cpp";
  ExerciseGuard guard(exercise);
  const std::string progress = temp_progress_file();
  std::ofstream(progress) << "lesson 01 started predictions 2/2\n";  // asked already: no questions
  Session session({"start", "--lesson", "01", "--timeout", "10"}, progress);
  SEEN(session, "it is checked as you save");
  SEEN(session, "> ");
  // A loop that never ends at the top of main, in a file that compiles.
  std::string hanging = guard.original();
  const auto main_at = hanging.find("int main(");
  REQUIRE(main_at != std::string::npos);
  hanging.insert(hanging.find('{', main_at) + 1, "\n  for (volatile bool forever = true; forever;) {\n  }\n");
  write_text(exercise, hanging);
  SEEN(session, "saved: lessons/01-meet-the-node/main.cpp");
  SEEN(session, "did not finish within 10 s");
  SEEN(session, "> ");
  session.type("l");
  SEEN(session, "01  Meet the node");
  session.type("q");
  CHECK(session.exit_code() == 0);
  // The checks started beside the run met the same loop: stopped with it, nothing left
  // spinning (a leftover once took a core each until the machine restarted).
  CHECK(session.processes_left() == std::vector<std::string>{});
}

TEST_CASE("start without a terminal reads commands as lines and ends cleanly at the end of input", "[tutorial]") {
  const std::string progress = temp_progress_file();
  std::ofstream(progress) << "current 02\nlesson 01 passed predictions 2/2\nthis line is not progress\n";
  const std::string typed = fresh_state_dir() + "/typed";
  // Lesson 02: a GPU, then three unreadable lists; its two explain questions: a letter, then
  // three unreadable ones; then the commands h and q.
  std::ofstream(typed) << "3\n\nnot an answer\nnope\nb\nz\n\n9\nh\nq\n";
  ProcessOptions options;
  options.argv = {"sh", "-c", "exec \"$0\" start --no-watch < \"$1\"", bin_dir() + "/gpulab", typed};
  options.env = {{"GPULAB_BUILD_DIR", std::string(GPULAB_TEST_BUILD_DIR)}, {"GPULAB_STATE_DIR", fresh_state_dir()},
                 {"GPULAB_PROGRESS_FILE", progress}, {"CUDA_VISIBLE_DEVICES", std::nullopt}, {"GPULAB_NODE", std::nullopt}};
  options.timeout_s = 300;
  const ProcessResult result = run_process(options);
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  const std::string lessons = std::to_string(load_manifest().lessons.size());
  CHECK(result.out.find("progress 1/" + lessons) != std::string::npos);  // the file's lesson 01, despite the unreadable line
  CHECK(result.err.find("skipped a line it cannot read") != std::string::npos);
  CHECK(result.out.find("== lesson 02 of " + lessons) != std::string::npos);  // "current 02"
  CHECK(result.out.find("please answer with physical GPU numbers separated by commas, or none") != std::string::npos);
  CHECK(result.out.find("please answer with a letter") != std::string::npos);
  CHECK(result.out.find("explained: ") != std::string::npos);
  CHECK(result.out.find("hint 1 of 3") != std::string::npos);
  CHECK(read_text(progress).find("lesson 02 started predictions") != std::string::npos);
  CHECK(read_text(progress).find("answers 02 predicted 3 - explained b -") != std::string::npos);
}

TEST_CASE("start refuses a lesson that does not exist, naming the lessons", "[tutorial]") {
  ProcessOptions options;
  options.argv = {bin_dir() + "/gpulab", "start", "--lesson", "42"};
  options.env = {{"GPULAB_PROGRESS_FILE", temp_progress_file()}};
  const ProcessResult result = run_process(options);
  CHECK(result.exit_code == 2);
  CHECK(result.err.find("there is no lesson '42'") != std::string::npos);
}

TEST_CASE("reset backs up the learner's file, says where, then restores the exercise as shipped", "[tutorial]") {
  const std::string relative = "lessons/01-meet-the-node/main.cpp";
  const std::string exercise = source_dir() + "/" + relative;
  ExerciseGuard guard(exercise);
  ProcessOptions git;
  git.argv = {"git", "-C", source_dir(), "show", "HEAD:" + relative};
  const ProcessResult shipped = run_process(git);
  REQUIRE(shipped.ok());
  const std::string mine = guard.original() + "\n// my work in progress\n";
  write_text(exercise, mine);

  ProcessOptions reset;
  reset.argv = {bin_dir() + "/gpulab", "reset", "1"};
  const ProcessResult result = run_process(reset);
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const std::string said = "is saved as ";
  const auto at = result.out.find(said);
  REQUIRE(at != std::string::npos);
  const std::string backup = result.out.substr(at + said.size(), result.out.find(".\n", at) - at - said.size());
  const std::string backup_path = source_dir() + "/" + backup;
  CHECK(read_text(backup_path) == mine);            // nothing of the learner's is lost
  CHECK(read_text(exercise) == shipped.out);        // and the exercise is as shipped
  const ProcessResult again = run_process(reset);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("already as shipped") != std::string::npos);
  std::filesystem::remove(backup_path);
  std::error_code ignored;
  std::filesystem::remove(source_dir() + "/.gpulab-backups", ignored);  // only if empty

  reset.argv = {bin_dir() + "/gpulab", "reset", "42"};
  CHECK(run_process(reset).exit_code == 2);
}
