// Grading a class: the grader's programs built once, then a box per student (box.h), a few
// at a time, each building the student's exercises with this build's recipes (recipes.h)
// and running `gpulab class grade-in-box` there, which grades them with the one engine
// (grading.h) and prints its result. Nothing a student's code does reaches another
// student's result: each box's result is read by this process and written by it.
#include "grading/class_grade.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "grading/class_grade_internal.h"
#include "grading/grading_folder.h"
#include "grading/recipes.h"
#include "grading/runner.h"
#include "proc/self.h"
#include "proc/temp_dir.h"
#include "report/message_text.h"
#include "report/outcome.h"

namespace fs = std::filesystem;

namespace gpulab::grading {
namespace {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  if (!file) throw Failure(Outcome::kUsage, "cannot write " + path);
}

}  // namespace

// What the box sees of this repository and build: the lesson API's headers, the library and
// its precompiled header, the checks and the CLI, LibTorch, the lessons as shipped and the
// nodes; the graded lessons' reference solutions as programs, for the checks only (hidden
// from the student's compiler and programs: proc/confine.h). Not the solutions' sources,
// the known wrong answers, other correct answers (variants), the site or any other program
// of bin/.
BoxLayout box_layout(const std::string& source, const std::string& build, const std::string& recipes,
                     const std::set<std::string>& lesson_ids) {
  BoxLayout layout;
  for (const char* folder : {"include", "src", "nodes", "lessons"}) layout.read_only.push_back(source + "/" + folder);
  for (const char* folder : {"src", "libtorch-include"})
    if (fs::exists(build + "/" + folder)) layout.read_only.push_back(build + "/" + folder);
  const auto cache = read_build_cache(build);
  const auto libtorch = cache.find("LIBTORCH_PREFIX");
  if (libtorch != cache.end() && !libtorch->second.empty() && libtorch->second.rfind("/usr/", 0) != 0)
    layout.read_only.push_back(libtorch->second);
  layout.read_only.push_back(recipes);
  // An allow-list, named by what the grading runs: anything else in bin/ (another correct
  // answer, a variant-NN-* or a test probe) would be a program the student's could run.
  layout.bin = build + "/bin";
  const auto regular = [](const std::string& path) {
    std::error_code error;
    return fs::is_regular_file(fs::symlink_status(path, error));
  };
  if (regular(layout.bin + "/gpulab")) layout.programs.push_back(layout.bin + "/gpulab");
  for (const auto& id : lesson_ids) {
    if (regular(layout.bin + "/lesson" + id + "-checks")) layout.programs.push_back(layout.bin + "/lesson" + id + "-checks");
    if (regular(layout.bin + "/solution-" + id)) layout.references.push_back(layout.bin + "/solution-" + id);
  }
  std::sort(layout.programs.begin(), layout.programs.end());
  std::sort(layout.references.begin(), layout.references.end());
  layout.env = {{"GPULAB_STATE_DIR", "/tmp/state"}};
  return layout;
}

// At most `limit` bytes of a file ("" when it cannot be read).
std::string read_bounded(const std::string& path, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// A JUnit document with one error: a student whose box gave no result.
std::string junit_error(const std::string& student, const std::string& message) {
  pugi::xml_document document;
  auto suites = document.append_child("testsuites");
  auto suite = suites.append_child("testsuite");
  suite.append_attribute("name") = student.c_str();
  suite.append_attribute("tests") = 1;
  suite.append_attribute("errors") = 1;
  auto testcase = suite.append_child("testcase");
  testcase.append_attribute("name") = "grading";
  testcase.append_child("error").append_attribute("message") = message.c_str();
  std::ostringstream text;
  document.save(text, "  ");
  return text.str();
}

// The box's result, read; a limit hit is the student's status even when there is a result.
void read_result(StudentGrade& student, const BoxResult& box, const std::string& result, double limit_s,
                 const std::vector<std::string>& ids) {
  student.limits_hit = box.limits_hit;
  const auto document = parse_box_result(result, ids);
  if (document) {
    student.grading = document->grading;
    student.junit = document->junit;
    if (document->disk_full) student.limits_hit.push_back("disk");
  }
  if (!student.limits_hit.empty()) {
    student.status = "over_limit";
    std::string which;
    for (const auto& limit : student.limits_hit) which += (which.empty() ? "" : ", ") + limit;
    student.message = fmt::format("stopped at the box's limit: {}", which);
  } else {
    student.status = document ? "graded" : "no_result";
  }
  if (!document) {
    // What the box said last is why, most often.
    std::istringstream err(box.process.err);
    std::string said;
    for (std::string line; std::getline(err, line);)
      if (!line.empty()) said = line;
    student.message += fmt::format("{}the box {} without a result{}", student.message.empty() ? "" : "; ",
                                   box.process.outcome(limit_s), said.empty() ? "" : ": " + printable(said, 300));
  }
}

std::string student_line(const StudentGrade& student) {
  std::string score = "-";
  if (!student.grading.is_null())
    score = fmt::format("{} of {} lessons passed", student.grading.value("passed", 0),
                        student.grading.value("passed", 0) + student.grading.value("failed", 0));
  std::string line = fmt::format("{:<20} {:<11} {:<24} {:>5.0f} s\n", student.name, student.status, score, student.seconds);
  if (!student.message.empty()) line += "    " + student.message.substr(0, student.message.find('\n')) + '\n';
  return line;
}

std::vector<StudentGrade> grade_class(const Manifest& manifest, const ClassOptions& options, std::ostream& out) {
  if (options.students.empty()) throw Failure(Outcome::kUsage, "name the students' trees to grade");
  if (options.jobs == 0) throw Failure(Outcome::kUsage, "--jobs must be at least 1");
  if (options.timeout_s <= 0) throw Failure(Outcome::kUsage, "--timeout must be a positive number of seconds");
  std::vector<LessonEntry> lessons;
  if (options.lessons.empty()) lessons = manifest.lessons;
  for (const auto& id : options.lessons) lessons.push_back(manifest.find(id));
  const std::string build = fs::weakly_canonical(executable_dir() + "/..").string();
  if (!fs::exists(build + "/build.ninja"))
    throw Failure(Outcome::kUsage, "class grade needs the Ninja build folder gpulab was built in");
  if (const std::string why = box_unavailable(); !why.empty()) throw Failure(Outcome::kUsage, why);

  // The grader's own programs, once for the class.
  std::vector<std::string> targets = {"gpulab_cli", "gpulab_pch"};  // the recipes compile with its header
  for (const auto& lesson : lessons) {
    targets.push_back(lesson.checks_target());
    targets.push_back(lesson.program_target(true));  // the generated scenarios' reference
  }
  out << fmt::format("gpulab: building the checks of {} lessons (once for the class)\n", lessons.size()) << std::flush;
  const BuildResult grader = make_builder(build, {manifest.root + "/"})->build(targets);
  if (!grader.ok) throw Failure(Outcome::kBuildFailed, "building the checks failed:\n" + grader.messages);
  const auto recipes = read_recipes(build, lessons);
  TempDir scratch("gpulab-class");
  const std::string recipes_file = scratch.fresh("recipes.json");
  write_text(recipes_file, recipes_json(recipes).dump(2));
  std::set<std::string> lesson_ids;
  for (const auto& lesson : lessons) lesson_ids.insert(lesson.id);
  const BoxLayout base = box_layout(manifest.root, build, recipes_file, lesson_ids);

  std::vector<std::string> command = {build + "/bin/gpulab", "class", "grade-in-box", "--recipes", recipes_file,
                                      "--result-fd", "3", "--timeout", fmt::format("{}", options.timeout_s)};
  if (!options.lessons.empty()) {
    std::string ids;
    for (const auto& lesson : lessons) ids += (ids.empty() ? "" : ",") + lesson.id;
    command.insert(command.end(), {"--lessons", ids});
  }
  if (options.placement) command.push_back("--placement");
  // The cores left to each box compile its student's lessons at once, a GiB of the box's
  // memory each (a lesson's compile takes about 0.4 GiB, its runs beside it the rest).
  const std::size_t boxes = std::max<std::size_t>(1, std::min<std::size_t>(options.jobs, options.students.size()));
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t build_jobs = std::min<std::size_t>(cores / boxes, options.limits.memory_bytes >> 30);
  command.insert(command.end(), {"--build-jobs", std::to_string(std::max<std::size_t>(1, build_jobs))});

  std::vector<std::string> ids;
  for (const auto& lesson : lessons) ids.push_back(lesson.id);
  fs::create_directories(options.out);
  const auto names = student_names(options.students);
  std::vector<StudentGrade> students(options.students.size());
  std::atomic<std::size_t> next{0};
  std::mutex printing;
  std::string enforcement;
  auto grade_next = [&]() {
    for (std::size_t i = next++; i < students.size(); i = next++) {
      const auto started = std::chrono::steady_clock::now();
      StudentGrade& student = students[i];
      student.name = names[i];
      std::error_code error;
      const std::string tree = fs::canonical(options.students[i], error).string();
      if (error || !fs::is_directory(tree + "/lessons")) {
        student.status = "not_a_tree";
        student.message = fmt::format("'{}' has no lessons/ folder", printable(options.students[i], 300));
      } else {
        BoxLayout layout = base;
        layout.student = tree;
        try {
          // The result comes on a descriptor of ours (the box's fd 3), to a file nothing in
          // the box can name; only grade-in-box holds it there (box.h).
          const std::string result_file = scratch.fresh("result-" + std::to_string(i));
          const int result_fd = open(result_file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
          if (result_fd < 0) throw std::runtime_error("cannot make " + result_file);
          BoxResult box;
          try {
            box = run_in_box(layout, options.limits, command, result_fd);
          } catch (...) {
            close(result_fd);
            throw;
          }
          close(result_fd);
          read_result(student, box, read_bounded(result_file, kMaxResultBytes), options.limits.wall_s, ids);
          const std::lock_guard<std::mutex> lock(printing);
          enforcement = box.enforcement;
        } catch (const std::exception& e) {
          student.status = "no_result";
          student.message = e.what();
        }
      }
      student.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const std::string folder = options.out + "/" + student.name;
      fs::create_directories(folder);
      write_text(folder + "/grading.json", student_grading_json(student).dump(2) + "\n");
      write_text(folder + "/junit.xml", student.junit.empty() ? junit_error(student.name, student.status + ": " + student.message)
                                                             : student.junit);
      const std::lock_guard<std::mutex> lock(printing);
      out << student_line(student) << std::flush;
    }
  };
  std::vector<std::thread> workers;
  for (unsigned j = 0; j < std::min<std::size_t>(options.jobs, students.size()); ++j) workers.emplace_back(grade_next);
  for (auto& worker : workers) worker.join();
  write_text(options.out + "/" + kClassSummary, class_summary(students, enforcement).dump(2) + "\n");
  return students;
}

nlohmann::json student_grading_json(const StudentGrade& student) {
  return {{"student", student.name}, {"status", student.status}, {"limits_hit", student.limits_hit},
          {"message", student.message}, {"grading", student.grading}};
}

nlohmann::json class_summary(const std::vector<StudentGrade>& students, const std::string& enforcement) {
  nlohmann::json list = nlohmann::json::array();
  std::map<std::string, std::pair<int, int>> per_lesson;  // id -> passed, graded
  for (const auto& student : students) {
    nlohmann::json lessons = nlohmann::json::object();
    if (!student.grading.is_null())
      for (const auto& lesson : student.grading.value("lessons", nlohmann::json::array())) {
        const std::string id = lesson.value("id", "");
        const std::string status = lesson.value("status", "");
        lessons[id] = status;
        per_lesson[id].first += status == "passed" ? 1 : 0;
        per_lesson[id].second += 1;
      }
    list.push_back({{"student", student.name},
                    {"status", student.status},
                    {"passed", student.grading.is_null() ? 0 : student.grading.value("passed", 0)},
                    {"lessons", lessons},
                    {"limits_hit", student.limits_hit},
                    {"message", student.message},
                    {"seconds", std::round(student.seconds)}});
  }
  nlohmann::json rates = nlohmann::json::object();
  for (const auto& [id, counts] : per_lesson) rates[id] = {{"passed", counts.first}, {"graded", counts.second}};
  return {{"students", list}, {"lessons", rates}, {"box", enforcement}};
}

std::optional<BoxDocument> parse_box_result(const std::string& out, const std::vector<std::string>& lesson_ids) {
  static const std::set<std::string> statuses = {"passed", "failed", "build_failed", "crashed", "timed_out"};
  const auto end = out.find_last_not_of('\n');
  if (end == std::string::npos) return std::nullopt;
  const auto start = out.rfind('\n', end);
  const std::string last = out.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
  const auto document = nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object() || !document.contains("grading") || !document.contains("junit") || !document.contains("disk_full"))
    return std::nullopt;
  BoxDocument result;
  result.grading = document["grading"];
  if (!document["junit"].is_string() || !document["disk_full"].is_boolean() || !result.grading.is_object() ||
      !result.grading.contains("lessons") || !result.grading["lessons"].is_array())
    return std::nullopt;
  result.junit = document["junit"].get<std::string>();
  result.disk_full = document["disk_full"].get<bool>();
  std::set<std::string> expected(lesson_ids.begin(), lesson_ids.end());
  std::size_t passed = 0;
  for (const auto& lesson : result.grading["lessons"]) {
    if (!lesson.is_object() || !lesson.contains("id") || !lesson["id"].is_string() || !lesson.contains("status") ||
        !lesson["status"].is_string() || !statuses.count(lesson["status"].get<std::string>()) ||
        expected.erase(lesson["id"].get<std::string>()) != 1)
      return std::nullopt;
    passed += lesson["status"] == "passed" ? 1 : 0;
  }
  if (!expected.empty()) return std::nullopt;  // a lesson asked for is not there
  result.grading["passed"] = passed;
  result.grading["failed"] = lesson_ids.size() - passed;
  return result;
}

void grade_in_box(const Manifest& manifest, const GradeOptions& options, int result_fd, std::ostream& progress) {
  // Ours alone: nothing this process starts (the compiler, the checks, the student's
  // programs under them) inherits it.
  if (fcntl(result_fd, F_SETFD, FD_CLOEXEC) != 0) throw Failure(Outcome::kUsage, "--result-fd is not an open descriptor");
  GradeOptions in_box = options;
  if (in_box.root.empty()) in_box.root = kStudentInBox;
  in_box.junit.clear();  // JUnit from the checks' XML report: no second run of each lesson's checks
  // A writable place of the box found full after a lesson was filled on purpose, or by
  // accident: either way a limit, for the grader to report. (A program that fills one and
  // empties it again before its lesson ends was refused its writes, and is not caught.)
  bool disk_full = false;
  const std::vector<std::string> writable = {kRunArea, kGraderScratch, "/dev/shm", fs::weakly_canonical(executable_dir()).string()};
  in_box.after_lesson = [&disk_full, &writable] {
    if (nearly_full(writable)) disk_full = true;
  };
  const Grading grading = grade(manifest, in_box, progress);
  in_box.after_lesson();
  write_result(result_fd, box_result_document(grading, disk_full));
}

std::string box_result_document(const Grading& grading, bool disk_full) {
  return nlohmann::json{{"grading", grading_json(grading)}, {"junit", grading_junit(grading)}, {"disk_full", disk_full}}.dump() + "\n";
}

void write_result(int fd, const std::string& document) {
  for (std::size_t written = 0; written < document.size();) {
    const ssize_t n = write(fd, document.data() + written, document.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("cannot write the result: ") + std::strerror(errno));
    written += static_cast<std::size_t>(n);
  }
}

bool nearly_full(const std::vector<std::string>& paths, std::uint64_t min_free) {
  for (const std::string& path : paths) {
    struct statvfs space {};
    if (statvfs(path.c_str(), &space) == 0 && static_cast<std::uint64_t>(space.f_bavail) * space.f_frsize < min_free) return true;
  }
  return false;
}

std::string class_summary_line(const std::vector<StudentGrade>& students, const std::string& out) {
  const auto graded = std::count_if(students.begin(), students.end(), [](const StudentGrade& s) { return s.status == "graded"; });
  return fmt::format("\n{} students: {} graded, {} not ({}/class.json)\n", students.size(), graded,
                     students.size() - static_cast<std::size_t>(graded), out);
}

}  // namespace gpulab::grading
