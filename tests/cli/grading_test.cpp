// Grading from outside: `gpulab check all` and `gpulab dev check`, run as an instructor or CI
// runs them — the built gpulab binary, on a fresh simulated node — reading back what they
// print and the JSON and JUnit files they write. Expectations come from the manifest and
// from the change each test makes to a copy of the lessons, never from a recorded run.
//
// GPULAB_GRADING_LESSONS=01,04 limits the whole-tree tests ([exercises], [solutions]) to
// those lessons: each lesson's checks run twice there (XML, then Catch2's JUnit reporter).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "course/manifest.h"
#include "proc/process.h"
#include "lesson_run.h"

namespace fs = std::filesystem;
using namespace gpulab;
using namespace gpulab::test;

namespace {

Manifest manifest() { return load_manifest(source_dir() + "/lessons/manifest.json"); }

// The lessons the whole-tree tests grade: all, or GPULAB_GRADING_LESSONS.
std::vector<std::string> lessons_under_test() {
  std::vector<std::string> ids;
  const char* only = std::getenv("GPULAB_GRADING_LESSONS");
  if (only != nullptr && *only != '\0') {
    std::stringstream list(only);
    for (std::string id; std::getline(list, id, ',');) ids.push_back(manifest().find(id).id);
    return ids;
  }
  for (const auto& lesson : manifest().lessons) ids.push_back(lesson.id);
  return ids;
}

std::string joined(const std::vector<std::string>& ids) {
  std::string text;
  for (const auto& id : ids) text += (text.empty() ? "" : ",") + id;
  return text;
}

struct Ran {
  std::string line;
  ProcessResult result;
};

// `gpulab <args>` with a clean CUDA environment on a fresh node.
Ran gpulab_cli(const std::vector<std::string>& args, double timeout_s = 3600) {
  ProcessOptions options;
  options.argv = {bin_dir() + "/gpulab"};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.env = {{"GPULAB_STATE_DIR", fresh_state_dir()},
                 {"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"CUDA_DEVICE_ORDER", std::nullopt},
                 {"GPULAB_NODE", std::nullopt}};
  options.timeout_s = timeout_s;
  Ran ran{"gpulab", run_process(options)};
  for (const auto& arg : args) ran.line += " " + arg;
  return ran;
}

#define SHOW(ran) \
  INFO("$ " << (ran).line << "\n-> " << (ran).result.outcome(3600) << "\nstdout:\n" << (ran).result.out << "\nstderr:\n" << (ran).result.err)

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream all;
  all << in.rdbuf();
  return all.str();
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

nlohmann::json read_json(const fs::path& path) {
  INFO(path.string() << ":\n" << read_text(path));
  const auto document = nlohmann::json::parse(read_text(path), nullptr, /*allow_exceptions=*/false);
  REQUIRE_FALSE(document.is_discarded());
  return document;
}

const nlohmann::json& lesson_in(const nlohmann::json& grading, const std::string& id) {
  for (const auto& lesson : grading.at("lessons"))
    if (lesson.at("id") == id) return lesson;
  FAIL("lesson " << id << " is not in the JSON");
  throw std::logic_error("unreachable");
}

// The JUnit document's testsuites, by the lesson their name (lessonNN-checks) names.
std::map<std::string, pugi::xml_node> suites_by_lesson(const pugi::xml_document& document) {
  std::map<std::string, pugi::xml_node> suites;
  static const std::regex lesson_name("^lesson([0-9]+)-checks$");
  for (const auto& suite : document.child("testsuites").children("testsuite")) {
    std::smatch match;
    const std::string name = suite.attribute("name").value();
    if (std::regex_match(name, match, lesson_name)) suites[match[1].str()] = suite;
  }
  return suites;
}

// A folder removed when the test ends.
class TempDir {
 public:
  TempDir() : path_(fresh_state_dir()) {}
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A student's checkout: a copy of the repository's lessons/ folder.
fs::path student_copy(const TempDir& dir, const std::string& name) {
  const fs::path root = dir.path() / name;
  fs::create_directories(root);
  fs::copy(fs::path(source_dir()) / "lessons", root / "lessons", fs::copy_options::recursive);
  return root;
}

fs::path exercise_file(const fs::path& root, const std::string& id) {
  return root / "lessons" / manifest().find(id).directory() / "main.cpp";
}

// Every file under a folder, with its contents: to see that grading changed nothing.
std::map<std::string, std::string> contents(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    files[fs::relative(entry.path(), root).string()] = entry.is_regular_file() ? read_text(entry.path()) : "(folder)";
  return files;
}

// Where a test's student programs are built (--build-dir), kept between runs.
std::string grading_folder(const std::string& name) {
  return (fs::path(GPULAB_TEST_BUILD_DIR).lexically_normal() / "grading" / ("test-" + name)).string();
}

// The line `main(...) {` opens, where a statement can be inserted.
std::size_t body_of_main(const std::string& source) {
  const auto main_at = source.find("int main(");
  REQUIRE(main_at != std::string::npos);
  const auto brace = source.find('{', main_at);
  REQUIRE(brace != std::string::npos);
  return brace + 1;
}

int line_of(const std::string& text, std::size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

// Processes still running this program (a hung lesson the grader should have stopped).
std::vector<int> running(const fs::path& program) {
  std::vector<int> pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code error;
    const auto exe = fs::read_symlink(entry.path() / "exe", error);
    if (!error && exe == program) pids.push_back(std::stoi(name));
  }
  return pids;
}

}  // namespace

TEST_CASE("check all fails every shipped exercise, in JSON and in one JUnit testsuite per lesson", "[exercises][slow]") {
  const TempDir out;
  const auto ids = lessons_under_test();
  const auto ran = gpulab_cli({"check", "all", "--lessons", joined(ids), "--junit", (out.path() / "out.xml").string(),
                               "--json", (out.path() / "out.json").string()});
  SHOW(ran);
  CHECK(ran.result.exit_code == 1);

  const auto grading = read_json(out.path() / "out.json");
  CHECK(grading.at("target") == "exercise");
  CHECK(grading.at("root") == fs::canonical(source_dir()).string());
  CHECK(grading.at("failed") == ids.size());
  CHECK(grading.at("passed") == 0);
  REQUIRE(grading.at("lessons").size() == ids.size());
  for (const auto& id : ids) {
    const auto& lesson = lesson_in(grading, id);
    INFO("lesson " << id << ": " << lesson.dump(2));
    CHECK(lesson.at("status") != "passed");
    CHECK(lesson.at("status") != "build_failed");  // a shipped exercise compiles
    CHECK(lesson.at("status") != "timed_out");
    CHECK(lesson.at("failed").get<int>() > 0);
    // Each failed check says what was expected and what was observed.
    for (const auto& check : lesson.at("checks")) {
      if (check.at("ok").get<bool>()) continue;
      CHECK(check.at("observed").is_string());
      CHECK_FALSE(check.at("observed").get<std::string>().empty());
    }
    // The human line names the lesson, its status and its title.
    CHECK(ran.result.out.find(id + "  " + lesson.at("status").get<std::string>()) != std::string::npos);
    CHECK(ran.result.out.find("(" + manifest().find(id).title + ")") != std::string::npos);
  }

  pugi::xml_document junit;
  INFO("out.xml:\n" << read_text(out.path() / "out.xml"));
  REQUIRE(junit.load_file((out.path() / "out.xml").c_str()));
  const auto suites = suites_by_lesson(junit);
  CHECK(std::distance(junit.child("testsuites").children("testsuite").begin(),
                      junit.child("testsuites").children("testsuite").end()) == static_cast<long>(ids.size()));
  for (const auto& id : ids) {
    INFO("lesson " << id);
    REQUIRE(suites.count(id) == 1);
    const auto& suite = suites.at(id);
    CHECK(suite.attribute("failures").as_int() + suite.attribute("errors").as_int() > 0);
    CHECK(suite.find_node([](const pugi::xml_node& n) { return std::string(n.name()) == "failure"; }));
  }
}

TEST_CASE("check all --solution passes every lesson, and records where the tensors landed", "[solutions][slow]") {
  const TempDir out;
  const auto ids = lessons_under_test();
  const auto ran = gpulab_cli({"check", "all", "--solution", "--lessons", joined(ids), "--junit",
                               (out.path() / "out.xml").string(), "--json", (out.path() / "out.json").string()});
  SHOW(ran);
  CHECK(ran.result.exit_code == 0);
  const auto grading = read_json(out.path() / "out.json");
  CHECK(grading.at("target") == "solution");
  CHECK(grading.at("passed") == ids.size());
  CHECK(grading.at("failed") == 0);
  for (const auto& id : ids) {
    const auto& lesson = lesson_in(grading, id);
    INFO("lesson " << id << ": " << lesson.dump(2));
    CHECK(lesson.at("status") == "passed");
    CHECK(lesson.at("failed") == 0);
    CHECK(lesson.at("passed").get<int>() == static_cast<int>(lesson.at("checks").size()));
    CHECK_FALSE(lesson.at("placement").is_null());
  }
  // Lesson 04's scenario lists GPUs in CUDA_VISIBLE_DEVICES: its cuda:1 is the list's entry 1.
  if (std::find(ids.begin(), ids.end(), "04") != ids.end()) {
    const auto lesson = manifest().find("04");
    std::string visible;
    for (const auto& [name, value] : lesson.env)
      if (name == "CUDA_VISIBLE_DEVICES") visible = value;
    std::vector<int> listed;
    std::stringstream list(visible);
    for (std::string entry; std::getline(list, entry, ',');) listed.push_back(std::stoi(entry));
    REQUIRE(listed.size() > 1);
    const auto& placement = lesson_in(grading, "04").at("placement");
    INFO(placement.dump(2));
    REQUIRE_FALSE(placement.at("tensors").empty());
    for (const auto& tensor : placement.at("tensors")) {
      CHECK(tensor.at("device") == "cuda:1");
      CHECK(tensor.at("physical_gpu") == listed[1]);
    }
    bool memory_there = false;
    for (const auto& gpu : placement.at("gpus"))
      memory_there = memory_there || (gpu.at("physical_gpu") == listed[1] && gpu.at("used_bytes").get<long>() > 0);
    CHECK(memory_there);
  }

  pugi::xml_document junit;
  REQUIRE(junit.load_file((out.path() / "out.xml").c_str()));
  const auto suites = suites_by_lesson(junit);
  CHECK(suites.size() == ids.size());
  CHECK(junit.child("testsuites").attribute("failures").as_int() == 0);
  CHECK(junit.child("testsuites").attribute("errors").as_int() == 0);
}

TEST_CASE("check all --root grades a student's checkout, built apart, and leaves it unchanged", "[root]") {
  const TempDir dir;
  const fs::path root = student_copy(dir, "alice");
  // Alice solved lesson 04 (its solution over her exercise) and not lesson 03.
  fs::copy_file(fs::path(source_dir()) / "solutions" / manifest().find("04").directory() / "main.cpp",
                exercise_file(root, "04"), fs::copy_options::overwrite_existing);
  const auto before = contents(root);
  const auto ran = gpulab_cli({"check", "all", "--root", root.string(), "--lessons", "03,04", "--build-dir",
                               grading_folder("student"), "--json", (dir.path() / "alice.json").string(), "--junit",
                               (dir.path() / "alice.xml").string()});
  SHOW(ran);
  CHECK(ran.result.exit_code == 1);  // lesson 03 still fails
  const auto grading = read_json(dir.path() / "alice.json");
  CHECK(grading.at("root") == fs::canonical(root).string());
  CHECK(lesson_in(grading, "04").at("status") == "passed");
  CHECK(lesson_in(grading, "03").at("status") == "failed");
  CHECK(grading.at("passed") == 1);
  CHECK(grading.at("failed") == 1);
  CHECK(contents(root) == before);  // nothing written into the student's tree

  pugi::xml_document junit;
  REQUIRE(junit.load_file((dir.path() / "alice.xml").c_str()));
  const auto suites = suites_by_lesson(junit);
  REQUIRE(suites.size() == 2);
  CHECK(suites.at("04").attribute("failures").as_int() == 0);
  CHECK(suites.at("03").attribute("failures").as_int() > 0);
}

TEST_CASE("check all --root: a lesson that does not compile is build_failed with the compiler's message; grading goes on",
          "[root][build_failed]") {
  const TempDir dir;
  const fs::path root = student_copy(dir, "bob");
  std::string source = read_text(exercise_file(root, "02"));
  const std::size_t at = body_of_main(source);
  source.insert(at, "\n  int broken = ;\n");
  const int broken_line = line_of(source, at) + 1;
  write_text(exercise_file(root, "02"), source);

  const auto ran = gpulab_cli({"check", "all", "--root", root.string(), "--lessons", "02,03", "--build-dir",
                               grading_folder("student"), "--json", (dir.path() / "bob.json").string(), "--junit",
                               (dir.path() / "bob.xml").string(), "--no-placement"});
  SHOW(ran);
  CHECK(ran.result.exit_code == 1);
  const auto grading = read_json(dir.path() / "bob.json");
  const auto& lesson = lesson_in(grading, "02");
  CHECK(lesson.at("status") == "build_failed");
  // The compiler's message, naming the file (relative to the student's checkout) and line.
  const std::string where = "lessons/" + manifest().find("02").directory() + "/main.cpp:" + std::to_string(broken_line) + ":";
  const std::string message = lesson.value("message", "");
  INFO(message);
  CHECK(message.find(where) != std::string::npos);
  CHECK(message.find("error") != std::string::npos);
  CHECK(message.find(root.string()) == std::string::npos);
  CHECK(ran.result.out.find("02  build_failed") != std::string::npos);
  CHECK(lesson_in(grading, "03").at("status") == "failed");  // the next lesson is still graded

  pugi::xml_document junit;
  REQUIRE(junit.load_file((dir.path() / "bob.xml").c_str()));
  const auto suites = suites_by_lesson(junit);
  REQUIRE(suites.count("02") == 1);
  const auto failure = suites.at("02").child("testcase").child("failure");
  REQUIRE(failure);
  CHECK(std::string(failure.attribute("type").value()) == "build_failed");
  CHECK(std::string(failure.text().get()).find(where) != std::string::npos);
}

TEST_CASE("check all --root refuses a symlinked solution and an #include of one, absolute or relative; an honest lesson passes",
          "[root][escapes]") {
  const TempDir dir;
  const fs::path root = student_copy(dir, "mallory");
  const std::string solutions = fs::canonical(fs::path(source_dir()) / "solutions").string();
  auto solution_of = [&](const std::string& id) { return solutions + "/" + manifest().find(id).directory() + "/main.cpp"; };
  // 01: solved honestly (the solution's text in her own file).
  fs::copy_file(solution_of("01"), exercise_file(root, "01"), fs::copy_options::overwrite_existing);
  // 02: an absolute #include of the solution.
  write_text(exercise_file(root, "02"), "#include \"" + solution_of("02") + "\"\n");
  // 03: a relative one, found through the grader's include folders (../../ of one of them).
  write_text(exercise_file(root, "03"), "#include \"../../solutions/" + manifest().find("03").directory() + "/main.cpp\"\n");
  // 04: her main.cpp a link to the solution.
  fs::remove(exercise_file(root, "04"));
  fs::create_symlink(solution_of("04"), exercise_file(root, "04"));

  const auto ran = gpulab_cli({"check", "all", "--root", root.string(), "--lessons", "01,02,03,04", "--build-dir",
                               grading_folder("student"), "--json", (dir.path() / "mallory.json").string(), "--junit",
                               (dir.path() / "mallory.xml").string(), "--no-placement"});
  SHOW(ran);
  CHECK(ran.result.exit_code == 1);
  const auto grading = read_json(dir.path() / "mallory.json");
  CHECK(lesson_in(grading, "01").at("status") == "passed");
  const auto& included = lesson_in(grading, "02");
  CHECK(included.at("status") == "refused");
  CHECK(included.value("message", "").find(solution_of("02")) != std::string::npos);
  // Wherever the relative include was found, it is not graded as a pass (on this build's
  // layout it reaches the solutions through an include folder, and is refused).
  const auto& relative = lesson_in(grading, "03");
  INFO(relative.dump(2));
  CHECK(relative.at("status") != "passed");
  if (relative.at("status") == "refused")
    CHECK(relative.value("message", "").find("solutions/" + manifest().find("03").directory() + "/main.cpp") != std::string::npos);
  const auto& linked = lesson_in(grading, "04");
  CHECK(linked.at("status") == "refused");
  CHECK(linked.value("message", "").find("lessons/" + manifest().find("04").directory() + "/main.cpp is a symbolic link") !=
        std::string::npos);
  CHECK(ran.result.out.find("04  refused") != std::string::npos);
  CHECK(ran.result.out.find("is a symbolic link: refused") != std::string::npos);

  pugi::xml_document junit;
  REQUIRE(junit.load_file((dir.path() / "mallory.xml").c_str()));
  const auto suites = suites_by_lesson(junit);
  REQUIRE(suites.count("04") == 1);
  CHECK(std::string(suites.at("04").child("testcase").child("failure").attribute("type").value()) == "refused");
}

TEST_CASE("check all --root: a lesson program that hangs is timed_out within --timeout, and is stopped",
          "[root][timeout]") {
  const TempDir dir;
  const fs::path root = student_copy(dir, "carol");
  std::string source = read_text(exercise_file(root, "01"));
  source.insert(body_of_main(source), "\n  for (volatile bool forever = true; forever;) {\n  }\n");
  write_text(exercise_file(root, "01"), source);
  const double timeout = 20;  // below the checks' own limit per program run (120 s)

  const auto ran = gpulab_cli({"check", "all", "--root", root.string(), "--lessons", "01", "--build-dir",
                               grading_folder("student"), "--json", (dir.path() / "carol.json").string(), "--junit",
                               (dir.path() / "carol.xml").string(), "--timeout", "20"});
  SHOW(ran);
  CHECK(ran.result.exit_code == 1);
  const auto grading = read_json(dir.path() / "carol.json");
  const auto& lesson = lesson_in(grading, "01");
  INFO(lesson.dump(2));
  CHECK(lesson.at("status") == "timed_out");
  CHECK(lesson.at("seconds").get<double>() >= timeout - 1);
  CHECK(lesson.at("seconds").get<double>() < timeout + 15);
  CHECK(running(fs::path(grading_folder("student")) / "bin" / "lesson-01").empty());

  pugi::xml_document junit;
  REQUIRE(junit.load_file((dir.path() / "carol.xml").c_str()));
  const auto suites = suites_by_lesson(junit);
  REQUIRE(suites.count("01") == 1);
  const auto error = suites.at("01").child("testcase").child("error");
  REQUIRE(error);
  CHECK(std::string(error.attribute("type").value()) == "timed_out");
}

TEST_CASE("check NN ignores a GPULAB_CHECK_PROGRAMS of the learner's that points at a solved program", "[dev]") {
  // The variable tells the checks where `check all --root` built a student's programs; a
  // learner who sets it must not get the solution graded in place of their exercise.
  const TempDir elsewhere;
  fs::copy_file(fs::path(bin_dir()) / "solution-04", elsewhere.path() / "lesson-04");
  ProcessOptions options;  // as the learner types it: ./gpulab builds lesson 04 as it is now, shipped
  options.argv = {source_dir() + "/gpulab", "check", "04"};
  options.working_directory = source_dir();
  options.env = {{"GPULAB_BUILD_DIR", std::string(GPULAB_TEST_BUILD_DIR)},
                 {"GPULAB_STATE_DIR", fresh_state_dir()},
                 {"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"GPULAB_CHECK_PROGRAMS", elsewhere.path().string()}};
  options.timeout_s = 600;
  const ProcessResult result = run_process(options);
  INFO(result.out << result.err);
  CHECK(result.exit_code == 1);  // the shipped exercise, still failing
  CHECK(result.out.find("not yet") != std::string::npos);
}

TEST_CASE("dev check --quick passes the repository's structure", "[dev]") {
  const auto ran = gpulab_cli({"dev", "check", "--quick"}, 120);
  SHOW(ran);
  CHECK(ran.result.exit_code == 0);
}

TEST_CASE("dev check --quick names the lesson a hint is missing from, and a folder the manifest lacks", "[dev]") {
  const TempDir dir;
  const fs::path root = dir.path() / "tree";
  fs::create_directories(root / "tests");
  for (const char* folder : {"lessons", "solutions", "tests/lessons"})
    fs::copy(fs::path(source_dir()) / folder, root / folder, fs::copy_options::recursive);
  const auto problems = [&] {
    const auto ran = gpulab_cli({"dev", "check", "--quick", "--root", root.string()}, 120);
    SHOW(ran);
    return ran;
  };
  const auto hint_line = [](const std::string& out, const std::string& id) {
    return std::regex_search(out, std::regex("lessons/manifest.json: lesson " + id + " has [0-9]+ hints?"));
  };
  const auto untouched = problems();
  CHECK_FALSE(hint_line(untouched.result.out, "05"));

  auto document = nlohmann::json::parse(read_text(root / "lessons/manifest.json"));
  for (auto& lesson : document.at("lessons"))
    if (lesson.at("id") == "05") lesson.at("hints").erase(lesson.at("hints").begin());
  // Lesson 06's first question loses its explain step; lesson 04's README asks a question the
  // manifest does not score.
  for (auto& lesson : document.at("lessons"))
    if (lesson.at("id") == "06") lesson.at("predictions").at(0).erase("explain");
  write_text(root / "lessons/manifest.json", document.dump(2));
  fs::create_directories(root / "lessons/99-not-listed");
  const fs::path readme04 = root / "lessons/04-which-gpu-is-cuda-1/README.md";
  std::string readme = read_text(readme04);
  readme.insert(readme.find("\n## Run"), "3. Which GPU will hold the output?\n");
  write_text(readme04, readme);

  const auto mutated = problems();
  CHECK(mutated.result.exit_code == 1);
  CHECK(hint_line(mutated.result.out, "05"));
  CHECK(mutated.result.out.find("lessons/99-not-listed/: not in lessons/manifest.json") != std::string::npos);
  CHECK(mutated.result.out.find("lesson 06's prediction 1 has no \"explain\"") != std::string::npos);
  CHECK(mutated.result.out.find("lessons/04-which-gpu-is-cuda-1/README.md: Predict question 3 "
                                "(\"Which GPU will hold the output?\") is not scored") != std::string::npos);
}
