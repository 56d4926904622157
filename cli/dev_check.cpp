// gpulab dev check: what CI asks of the lessons themselves (rustlings' `dev check`). The
// manifest matches the files on disk; every lesson has a README in the template's sections,
// three hints, a prediction, a goal and a stretch task, checks (some tagged [stretch]) and
// two known wrong answers; every shipped exercise fails its checks and every solution
// passes them.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check_all.h"
#include "commands.h"
#include "exit_codes.h"
#include "gpulab/manifest.h"

namespace fs = std::filesystem;

namespace gpulab::cli {
namespace {

struct DevCheckOptions {
  bool quick = false;
  std::string root;
  double timeout_s = 300;
};

constexpr std::size_t kMinHints = 3;
constexpr std::size_t kMinPredictions = 1;
constexpr std::size_t kMinMutants = 2;
// Every README's sections, in this order (predict, observe, explain, then the task).
const std::vector<std::string> kReadmeSections = {"Predict", "Run", "What happened and why", "What the article says",
                                                  "Your task", "Stretch", "Check"};

// A README's level-2 headings, in order (fenced code blocks skipped).
std::vector<std::string> sections_of(const std::string& readme) {
  std::vector<std::string> sections;
  std::istringstream in(readme);
  std::string line;
  bool fenced = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    else if (!fenced && line.rfind("## ", 0) == 0) {
      std::string title = line.substr(3, line.find_last_not_of(" \t") - 2);
      // "## 3. What happened and why" numbers the same section.
      const auto dot = title.find(". ");
      if (dot != std::string::npos && dot > 0 && title.find_first_not_of("0123456789") == dot) title.erase(0, dot + 2);
      sections.push_back(title);
    }
  }
  return sections;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream all;
  all << in.rdbuf();
  return all.str();
}

bool two_digits(const std::string& id) {
  return id.size() == 2 && std::isdigit(static_cast<unsigned char>(id[0])) && std::isdigit(static_cast<unsigned char>(id[1]));
}

// A lesson the manifest lists, as far as it could be read.
struct Listed {
  std::string id;
  std::string directory;  ///< "04-cuda-1-is-gpu-3"
};

// The manifest read raw (nlohmann), so that a field the C++ manifest does not parse yet
// (predictions) is still counted. One line per problem: the file, then what to do.
std::vector<std::string> structure_problems(const std::string& root, std::vector<Listed>& listed) {
  std::vector<std::string> problems;
  const std::string manifest_file = "lessons/manifest.json";
  nlohmann::json manifest;
  try {
    std::ifstream in(root + "/" + manifest_file);
    if (!in) return {manifest_file + ": missing; it lists the lessons, in order"};
    manifest = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return {fmt::format("{}: not valid JSON ({}); fix it", manifest_file, e.what())};
  }
  if (!manifest.is_object() || !manifest.contains("lessons") || !manifest.at("lessons").is_array())
    return {manifest_file + ": has no \"lessons\" array; it must list the lessons, in order"};

  const std::string instructors = read_text(fs::path(root) / "docs/instructors.md");
  const std::string readme = read_text(fs::path(root) / "README.md");
  std::set<std::string> seen;
  std::string previous;
  std::size_t index = 0;
  for (const auto& lesson : manifest.at("lessons")) {
    ++index;
    auto text_field = [&](const char* key) -> std::string {
      if (lesson.is_object() && lesson.contains(key) && lesson.at(key).is_string()) return lesson.at(key).get<std::string>();
      return {};
    };
    const std::string id = text_field("id");
    const std::string slug = text_field("slug");
    const std::string name = id.empty() ? fmt::format("entry {}", index) : "lesson " + id;
    if (!two_digits(id)) {
      problems.push_back(fmt::format("{}: {} has no two-digit \"id\" (e.g. \"04\"); give it one", manifest_file, name));
      continue;
    }
    if (slug.empty()) {
      problems.push_back(fmt::format("{}: lesson {} has no \"slug\"; give it the folder name after {}-", manifest_file, id, id));
      continue;
    }
    if (text_field("title").empty())
      problems.push_back(fmt::format("{}: lesson {} has no \"title\"; give it one", manifest_file, id));
    if (!seen.insert(id).second)
      problems.push_back(fmt::format("{}: lesson {} is listed twice; give each lesson its own id", manifest_file, id));
    else if (!previous.empty() && id < previous)
      problems.push_back(fmt::format("{}: lesson {} comes after lesson {}; list the lessons in order of id", manifest_file,
                                     id, previous));
    previous = std::max(previous, id);

    const auto hints = lesson.value("hints", nlohmann::json::array());
    const std::size_t hint_count = hints.is_array() ? hints.size() : 0;
    if (hint_count < kMinHints)
      problems.push_back(fmt::format("{}: lesson {} has {} hint{}; give it at least {} in \"hints\", each more specific",
                                     manifest_file, id, hint_count, hint_count == 1 ? "" : "s", kMinHints));
    const auto predictions = lesson.value("predictions", nlohmann::json::array());
    const std::size_t prediction_count = predictions.is_array() ? predictions.size() : 0;
    if (prediction_count < kMinPredictions)
      problems.push_back(fmt::format("{}: lesson {} has no prediction; add at least {} to \"predictions\"", manifest_file,
                                     id, kMinPredictions));

    for (const auto& [key, what] : std::vector<std::pair<const char*, const char*>>{
             {"goal", "the task as a goal in physical terms (which GPU, how much memory), not the edit"},
             {"stretch", "the optional stretch task's goal, checked by its [stretch] checks"}})
      if (text_field(key).empty())
        problems.push_back(fmt::format("{}: lesson {} has no \"{}\"; give it {}", manifest_file, id, key, what));

    const std::string directory = id + "-" + slug;
    listed.push_back({id, directory});
    std::size_t mutants = 0;
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(fs::path(root) / "tests/mutations" / ("lesson" + id), ignored)) {
      if (entry.path().extension() != ".patch") continue;
      ++mutants;
      // Instructors read which wrong answers the checks are proven against.
      const std::string stem = entry.path().stem().string();
      if (instructors.find("`" + stem + "`") == std::string::npos)
        problems.push_back(fmt::format("docs/instructors.md: lesson {}'s known wrong answer `{}` is not in its table; "
                                       "add it to the lesson's row", id, stem));
    }
    // The README's lesson table names each lesson as the manifest does.
    std::string title = text_field("title");
    title.erase(std::remove(title.begin(), title.end(), '`'), title.end());
    if (!title.empty() && readme.find("| " + id + " | " + title + " |") == std::string::npos)
      problems.push_back(fmt::format("README.md: the lesson table has no row \"| {} | {} | …\"; use the manifest's title "
                                     "(without backticks)", id, title));
    if (mutants < kMinMutants)
      problems.push_back(fmt::format("tests/mutations/lesson{}/: {} known wrong answer{} (lesson {}); add at least {} "
                                     "(.patch against the solution; tools/mutants.sh {} must catch each)",
                                     id, mutants, mutants == 1 ? "" : "s", id, kMinMutants, id));
    const std::vector<std::pair<std::string, std::string>> files = {
        {"lessons/" + directory + "/main.cpp", "write the exercise (it must fail its checks as shipped)"},
        {"solutions/" + directory + "/main.cpp", "write the reference solution (it must pass the checks)"},
        {"lessons/" + directory + "/README.md", "write the lesson's README"},
        {"tests/lessons/lesson" + id + "_checks.cpp", "write the lesson's checks (Catch2 TEST_CASEs)"}};
    for (const auto& [file, what] : files) {
      const fs::path path = fs::path(root) / file;
      if (!fs::is_regular_file(path)) {
        problems.push_back(fmt::format("{}: missing (lesson {}); {}", file, id, what));
        continue;
      }
      const std::string text = read_text(path);
      if (text.find_first_not_of(" \t\n") == std::string::npos)
        problems.push_back(fmt::format("{}: empty (lesson {}); {}", file, id, what));
      else if (file.rfind("tests/", 0) == 0 && text.find("TEST_CASE") == std::string::npos)
        problems.push_back(fmt::format("{}: no TEST_CASE (lesson {}); {}", file, id, what));
      else if (file.rfind("tests/", 0) == 0 && text.find("[stretch]") == std::string::npos)
        problems.push_back(fmt::format("{}: no check tagged [stretch] (lesson {}); check the stretch task", file, id));
      else if (file.rfind("lessons/", 0) == 0 && file.find("main.cpp") != std::string::npos &&
               text.find("TODO") == std::string::npos)
        problems.push_back(fmt::format("{}: no TODO (lesson {}); mark where the learner's goal is", file, id));
      else if (file.find("README.md") != std::string::npos && sections_of(text) != kReadmeSections)
        problems.push_back(fmt::format("{}: sections are \"{}\" (lesson {}); use the template's \"{}\", in that order",
                                       file, joined(sections_of(text)), id, joined(kReadmeSections)));
    }
  }

  // Nothing on disk the manifest does not list.
  std::set<std::string> directories;
  for (const auto& lesson : listed) directories.insert(lesson.directory);
  for (const char* folder : {"lessons", "solutions"}) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(fs::path(root) / folder, error)) {
      if (!entry.is_directory()) continue;
      const std::string name = entry.path().filename().string();
      if (directories.count(name) == 0)
        problems.push_back(fmt::format("{}/{}/: not in {}; add the lesson to the manifest or remove the folder", folder,
                                       name, manifest_file));
    }
  }
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(fs::path(root) / "tests/lessons", error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("lesson", 0) != 0 || name.size() != std::string("lessonNN_checks.cpp").size() ||
        name.substr(8) != "_checks.cpp")
      continue;
    if (seen.count(name.substr(6, 2)) == 0)
      problems.push_back(fmt::format("tests/lessons/{}: checks for lesson {}, which {} does not list; add the lesson "
                                     "or remove the file",
                                     name, name.substr(6, 2), manifest_file));
  }
  return problems;
}

std::string first_line(const LessonGrade& grade) {
  for (const auto& c : grade.verdict.cases)
    if (!c.passed && !c.skipped && !c.failures.empty()) return c.failures.front().text;
  std::istringstream in(grade.message);
  std::string line;
  std::getline(in, line);
  return line;
}

// The shipped exercises fail their checks, the solutions pass them (the check-all engine).
std::vector<std::string> behaviour_problems(const std::vector<Listed>& listed, double timeout_s) {
  std::vector<std::string> problems;
  std::map<std::string, std::string> directory;
  GradeOptions options;
  options.placement = false;
  options.timeout_s = timeout_s;
  for (const auto& lesson : listed) {
    options.lessons.push_back(lesson.id);
    directory[lesson.id] = lesson.directory;
  }
  for (const bool solution : {false, true}) {
    options.solution = solution;
    std::cerr << fmt::format("== {}\n", solution ? "the solutions must pass their checks" : "the shipped exercises must fail their checks");
    const Grading grading = grade(options, std::cerr);
    for (const auto& grade : grading.lessons) {
      const std::string file = fmt::format("{}/{}/main.cpp", solution ? "solutions" : "lessons", directory[grade.id]);
      if (solution && !grade.passed()) {
        problems.push_back(fmt::format("{}: the solution {} its checks ({}): {}; fix the solution or the checks", file,
                                       grade.status == "failed" ? "fails" : "does not pass", grade.status, first_line(grade)));
      } else if (!solution && grade.passed()) {
        problems.push_back(fmt::format("{}: the shipped exercise passes its checks; leave the lesson's mistake in it, or "
                                       "make the checks catch it",
                                       file));
      } else if (!solution && (grade.status == "build_failed" || !grade.has_verdict || grade.verdict.failed() == 0)) {
        problems.push_back(fmt::format("{}: the shipped exercise must compile, run and fail its checks, but: {}: {}", file,
                                       grade.status, first_line(grade)));
      }
    }
  }
  return problems;
}

void dev_check(const DevCheckOptions& options) {
  const std::string root = options.root.empty() ? load_manifest().root : options.root;
  if (!options.root.empty() && !options.quick) {
    std::cerr << "gpulab: dev check --root checks another tree's structure only; add --quick\n";
    throw Exit{kUsage};
  }
  std::vector<Listed> listed;
  std::vector<std::string> problems = structure_problems(root, listed);
  if (!options.quick) {
    auto more = behaviour_problems(listed, options.timeout_s);
    problems.insert(problems.end(), more.begin(), more.end());
  }
  for (const auto& problem : problems) std::cout << problem << '\n';
  if (!problems.empty()) {
    std::cout << fmt::format("\ndev check: {} problem{} in {}\n", problems.size(), problems.size() == 1 ? "" : "s", root);
    throw Exit{kChecksFailed};
  }
  std::cout << fmt::format("dev check: {} lessons, {}\n", listed.size(),
                           options.quick ? "structure only (--quick): manifest, files, hints, predictions"
                                         : "structure, exercises failing and solutions passing their checks");
}

}  // namespace

void setup_dev(CLI::App& app) {
  auto options = std::make_shared<DevCheckOptions>();
  auto* dev = app.add_subcommand("dev", "for maintainers: checks of the lessons themselves");
  dev->require_subcommand(1);
  auto* check = dev->add_subcommand("check", "manifest, files, hints, predictions; exercises fail and solutions pass");
  check->add_flag("--quick", options->quick, "structure only: do not build or run the checks");
  check->add_option("--root", options->root, "check another tree's structure (with --quick)");
  check->add_option("--timeout", options->timeout_s, "seconds each lesson's checks may run")->capture_default_str();
  check->callback([options] { dev_check(*options); });
}

}  // namespace gpulab::cli
