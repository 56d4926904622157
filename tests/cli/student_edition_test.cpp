// `gpulab export --student DIR` from outside, on the built gpulab (docs/student-edition.md):
// what the edition holds and lacks, what it refuses, and ([slow]) that the edition builds,
// grades an exercise and says that it has no solutions.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "course/manifest.h"
#include "proc/process.h"
#include "proc/temp_dir.h"

namespace fs = std::filesystem;
using gpulab::ProcessOptions;
using gpulab::ProcessResult;
using gpulab::TempDir;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

ProcessResult run(std::vector<std::string> argv, const std::string& directory = {}, double timeout_s = 120,
                  std::vector<std::pair<std::string, std::optional<std::string>>> env = {}) {
  ProcessOptions options;
  options.argv = std::move(argv);
  options.working_directory = directory;
  options.timeout_s = timeout_s;
  options.env = std::move(env);
  return gpulab::run_process(options);
}

ProcessResult export_to(const fs::path& dir) {
  return run({std::string(GPULAB_TEST_BIN_DIR) + "/gpulab", "export", "--student", dir.string()});
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(" \t");
    const auto last = line.find_last_not_of(" \t\r");
    lines.push_back(first == std::string::npos ? "" : line.substr(first, last - first + 1));
  }
  return lines;
}

// Lesson `lesson`'s distinctive solution line: the longest code line of its solution that is
// in no exercise (a later lesson may start from an earlier one's answer) and not in the
// manifest (whose last hint may show it: the hints are the learner's).
std::string distinctive_line(const fs::path& source, const gpulab::LessonEntry& lesson, const std::string& exercises) {
  const std::string exercise = read_text(source / "lessons" / lesson.directory() / "main.cpp");
  std::string best;
  for (const auto& line : lines_of(read_text(source / "solutions" / lesson.directory() / "main.cpp"))) {
    if (line.size() < 20 || line.rfind("//", 0) == 0 || line.rfind("#", 0) == 0) continue;
    if (exercise.find(line) != std::string::npos || exercises.find(line) != std::string::npos) continue;
    if (line.size() > best.size()) best = line;
  }
  return best;
}

// Every file under `root` that contains `needle`.
std::vector<std::string> files_containing(const fs::path& root, const std::string& needle) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file() && read_text(entry.path()).find(needle) != std::string::npos)
      found.push_back(fs::relative(entry.path(), root).string());
  return found;
}

}  // namespace

TEST_CASE("export --student writes a tree without solutions, mutants or any solution's distinctive line", "[student-edition]") {
  const fs::path source = GPULAB_TEST_SOURCE_DIR;
  const gpulab::Manifest manifest = gpulab::load_manifest((source / "lessons/manifest.json").string());
  REQUIRE(fs::is_directory(source / "solutions"));
  const auto solutions_before = std::distance(fs::recursive_directory_iterator(source / "solutions"), {});

  const TempDir out("gpulab-student-edition");
  const fs::path edition = fs::path(out.path()) / "class";
  const ProcessResult exported = export_to(edition);
  INFO(exported.out << exported.err);
  REQUIRE(exported.exit_code == 0);
  CHECK(exported.out.find("left out: .ci/, docs/instructors.md, docs/lab-plans.md, solutions/, tests/mutations/, tests/variants/") !=
        std::string::npos);

  CHECK_FALSE(fs::exists(edition / "solutions"));
  CHECK_FALSE(fs::exists(edition / "tests/mutations"));
  CHECK_FALSE(fs::exists(edition / "tests/variants"));
  CHECK(read_text(edition / "student-edition.conf").find("edition = student") != std::string::npos);
  // GitHub Classroom's autograding, where Classroom runs it (docs/class.md).
  CHECK(read_text(edition / ".github" / "workflows" / "classroom.yml").find("command: ./gpulab check 01") != std::string::npos);
  CHECK_FALSE(fs::exists(edition / "classroom"));
  CHECK(fs::is_regular_file(edition / "gpulab"));
  CHECK((fs::status(edition / "gpulab").permissions() & fs::perms::owner_exec) != fs::perms::none);
  for (const auto& lesson : manifest.lessons) {
    CHECK(read_text(edition / "lessons" / lesson.directory() / "main.cpp") ==
          read_text(source / "lessons" / lesson.directory() / "main.cpp"));
    CHECK(fs::is_regular_file(edition / "tests/lessons" / ("lesson" + lesson.id + "_checks.cpp")));
  }
  CHECK(read_text(edition / "README.md").find("--solution") == std::string::npos);

  std::string exercises = read_text(source / "lessons/manifest.json");
  for (const auto& lesson : manifest.lessons) exercises += read_text(source / "lessons" / lesson.directory() / "main.cpp");
  for (const auto& lesson : manifest.lessons) {
    const std::string line = distinctive_line(source, lesson, exercises);
    INFO("lesson " << lesson.id << ": " << line);
    REQUIRE_FALSE(line.empty());
    CHECK(files_containing(edition, line).empty());
  }
  // The instructor's tree keeps everything.
  CHECK(std::distance(fs::recursive_directory_iterator(source / "solutions"), {}) == solutions_before);
  CHECK_FALSE(fs::exists(source / "student-edition.conf"));
}

namespace {

// The site's pages as `./gpulab docs` would hand them to Doxygen in `tree`: the generated
// pages (docs/site/generate_pages.py into `pages`), then every Markdown page through the
// site's filter (docs/site/markdown_filter.py), by file name.
std::map<std::string, std::string> site_pages(const fs::path& tree, const fs::path& pages) {
  const ProcessResult generated =
      run({"python3", (tree / "docs/site/generate_pages.py").string(), tree.string(), pages.string()});
  INFO(generated.out << generated.err);
  REQUIRE(generated.exit_code == 0);
  std::map<std::string, std::string> filtered;
  for (const fs::path& folder : {pages, tree / "docs"})
    for (const auto& entry : fs::directory_iterator(folder)) {
      if (entry.path().extension() != ".md") continue;
      const ProcessResult page = run({"python3", (tree / "docs/site/markdown_filter.py").string(), entry.path().string()});
      INFO(entry.path().string() << ": " << page.err);
      REQUIRE(page.exit_code == 0);
      filtered[entry.path().filename().string()] = page.out;
    }
  return filtered;
}

}  // namespace

TEST_CASE("the student edition's site has no answer key and no instructor-only page, nor a link to one; the instructor's has them",
          "[student-edition][site]") {
  const fs::path source = GPULAB_TEST_SOURCE_DIR;
  const TempDir out("gpulab-student-edition-site");
  const fs::path edition = fs::path(out.path()) / "class";
  const ProcessResult exported = export_to(edition);
  INFO(exported.out << exported.err);
  REQUIRE(exported.exit_code == 0);
  CHECK(exported.out.find("docs/instructors.md, docs/lab-plans.md") != std::string::npos);
  CHECK_FALSE(fs::exists(edition / "docs/instructors.md"));
  CHECK_FALSE(fs::exists(edition / "docs/lab-plans.md"));

  // A \ref to an instructor-only page, or a Markdown link to its file.
  const std::regex instructor_link(R"(\\ref\s+(answer_key|instructors|lab_plans)\b|\]\((\.\./)?(docs/)?(instructors|lab-plans)\.md)");
  const auto student = site_pages(edition, fs::path(out.path()) / "student-pages");
  CHECK(student.count("answer-key.md") == 0);
  REQUIRE(student.count("index.md") == 1);
  CHECK(student.at("index.md").find("in your instructor's copy, not in this student edition") != std::string::npos);
  CHECK(student.count("learning-objectives.md") == 1);  // shown to a class: it stays
  for (const auto& [name, text] : student) {
    INFO(name);
    std::smatch found;
    CHECK_FALSE(std::regex_search(text, found, instructor_link));
    CHECK(text.find("@INSTRUCTORS@") == std::string::npos);
  }
  // The instructor's tree: the answer key, and the kit linked from the index.
  const auto instructor = site_pages(source, fs::path(out.path()) / "instructor-pages");
  REQUIRE(instructor.count("answer-key.md") == 1);
  CHECK(instructor.at("answer-key.md").find("{#answer_key}") != std::string::npos);
  CHECK(instructor.count("instructors.md") == 1);
  CHECK(instructor.count("lab-plans.md") == 1);
  CHECK(instructor.at("index.md").find("\\ref answer_key") != std::string::npos);
  CHECK(instructor.at("index.md").find("\\ref instructors") != std::string::npos);
  CHECK(instructor.at("index.md").find("@STUDENTS@") == std::string::npos);
  CHECK(instructor.at("index.md").find("not in this student edition") == std::string::npos);
}

TEST_CASE("export --student refuses a folder that is not empty and the source tree itself", "[student-edition]") {
  const TempDir out("gpulab-student-edition");
  const fs::path taken = fs::path(out.path()) / "taken";
  fs::create_directories(taken);
  std::ofstream(taken / "notes.txt") << "mine\n";
  const ProcessResult not_empty = export_to(taken);
  CHECK(not_empty.exit_code == 2);
  CHECK(not_empty.err.find("is not empty: the student edition is written only into an empty or new folder") != std::string::npos);
  CHECK(read_text(taken / "notes.txt") == "mine\n");
  CHECK(std::distance(fs::directory_iterator(taken), {}) == 1);

  const fs::path inside = fs::path(GPULAB_TEST_SOURCE_DIR) / "student-edition-inside";
  const ProcessResult in_source = export_to(inside);
  CHECK(in_source.exit_code == 2);
  CHECK(in_source.err.find("is inside the tree it would be exported from") != std::string::npos);
  CHECK_FALSE(fs::exists(inside));
}

// Exported outside the source tree (the export refuses a folder inside it), to a folder per
// main build folder kept between runs, so that its build folder is too; only what
// `./gpulab check 01` needs is built.
TEST_CASE("the student edition builds, grades lesson 01 and says it has no solutions", "[student-edition][slow]") {
  const fs::path build = fs::path(GPULAB_TEST_BUILD_DIR).lexically_normal();
  const fs::path work = fs::temp_directory_path() / ("gpulab-student-edition-test-" +
                                                     std::to_string(std::hash<std::string>{}(build.string())));
  const fs::path edition = work / "tree";
  const fs::path edition_build = work / "build";
  fs::remove_all(edition);
  REQUIRE(export_to(edition).exit_code == 0);

  // As ./gpulab configures a build folder, with the main build's compiler, LibTorch and backend.
  std::map<std::string, std::string> cache;
  for (const auto& line : lines_of(read_text(build / "CMakeCache.txt"))) {
    const auto colon = line.find(':');
    const auto equals = line.find('=');
    if (colon != std::string::npos && equals != std::string::npos && colon < equals)
      cache[line.substr(0, colon)] = line.substr(equals + 1);
  }
  std::vector<std::string> configure = {"cmake", "-S", edition.string(), "-B", edition_build.string(), "-G", "Ninja"};
  for (const char* key : {"CMAKE_CXX_COMPILER", "GPULAB_BACKEND", "LIBTORCH_PREFIX", "GPULAB_WERROR"})
    configure.push_back(std::string("-D") + key + "=" + cache[key]);
  const ProcessResult configured = run(configure, {}, 600);
  INFO(configured.out << configured.err);
  REQUIRE(configured.exit_code == 0);
  CHECK(configured.err.find("solutions/") == std::string::npos);  // no warning about a missing solution
  const ProcessResult built =
      run({"cmake", "--build", edition_build.string(), "--target", "gpulab_cli", "lesson-01", "lesson01-checks"}, {}, 3000);
  INFO(built.out.substr(built.out.size() > 4000 ? built.out.size() - 4000 : 0) << built.err);
  REQUIRE(built.exit_code == 0);

  const std::vector<std::pair<std::string, std::optional<std::string>>> env = {
      {"GPULAB_BUILD_DIR", edition_build.string()}, {"GPULAB_STATE_DIR", (work / "state").string()}};
  const ProcessResult checked = run({"./gpulab", "check", "01"}, edition.string(), 600, env);
  INFO(checked.out << checked.err);
  CHECK(checked.exit_code == 1);  // the shipped exercise fails its checks: grading works
  CHECK(checked.out.find("lesson 01: not yet") != std::string::npos);

  for (const char* command : {"check", "run"}) {
    const ProcessResult solution = run({"./gpulab", command, "01", "--solution"}, edition.string(), 600, env);
    INFO(command << ": " << solution.out << solution.err);
    CHECK(solution.exit_code == 2);
    CHECK(solution.err.find("--solution: this is the student edition of gpulab (student-edition.conf), which has no solutions") !=
          std::string::npos);
  }
  const ProcessResult help = run({edition_build.string() + "/bin/gpulab", "check", "--help"}, edition.string(), 60, env);
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("--stretch") != std::string::npos);
  CHECK(help.out.find("--solution") == std::string::npos);

  // The class file caps the hints: lesson 01's last one is not shown.
  std::ofstream(edition / "student-edition.conf") << "edition = student\nhints = all-but-last\n";
  const gpulab::Manifest manifest = gpulab::load_manifest((edition / "lessons/manifest.json").string());
  const int count = static_cast<int>(manifest.find("01").hints.size());
  REQUIRE(count >= 2);
  const ProcessResult capped = run({"./gpulab", "hint", "01", std::to_string(count)}, edition.string(), 60, env);
  CHECK(capped.exit_code == 2);
  CHECK(capped.err.find("your class allows hints 1 to " + std::to_string(count - 1)) != std::string::npos);
  std::ofstream(edition / "student-edition.conf") << "hints = most\n";
  const ProcessResult broken = run({"./gpulab", "hint", "01"}, edition.string(), 60, env);
  CHECK(broken.exit_code == 2);
  CHECK(broken.err.find("student-edition.conf:1: a hint cap is all, all-but-last, none or a number") != std::string::npos);
}
