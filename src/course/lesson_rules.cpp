#include "course/lesson_rules.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace gpulab {
namespace {

constexpr std::size_t kMinHints = 3;
constexpr std::size_t kMinPredictions = 1;
constexpr std::size_t kMinMutants = 5;  // several mistakes a student would make, each caught
// Every README's sections, in this order: what a learner reads before the run (predict,
// observe, the task). The explanation is in EXPLAIN.md, read after the predictions.
const std::vector<std::string> kReadmeSections = {"Predict", "Run", "Your task", "Stretch", "Check"};
const std::vector<std::string> kExplainSections = {"What happened and why", "What the article says"};

// Text as a learner reads it, for comparing a README with the manifest: no backticks, runs of
// white space as one space.
std::string plain(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '`') continue;
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The numbered items of the README's "## Predict" section, each as plain text.
std::vector<std::string> predict_items(const std::string& readme) {
  std::vector<std::string> items;
  std::istringstream in(readme);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      inside = line.rfind("## Predict", 0) == 0;
      continue;
    }
    if (!inside) continue;
    const auto dot = line.find(". ");
    if (dot != std::string::npos && dot > 0 && line.find_first_not_of("0123456789") == dot)
      items.push_back(line.substr(dot + 2));
    else if (!items.empty() && !line.empty() && line[0] == ' ')
      items.back() += " " + line;  // an item's continuation line
  }
  for (auto& item : items) item = plain(item);
  return items;
}

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

// The manifest is read raw (nlohmann), not with load_manifest(), so that every broken entry
// is reported, not only the first. One line per problem: the file, then what to do.
class Rules {
 public:
  explicit Rules(std::string root)
      : root_(std::move(root)),
        instructors_(read_text(fs::path(root_) / "docs/instructors.md")),
        readme_(read_text(fs::path(root_) / "README.md")) {}

  LessonRulesResult check() {
    nlohmann::json manifest;
    try {
      std::ifstream in(root_ + "/" + kManifest);
      if (!in) return {{std::string(kManifest) + ": missing; it lists the lessons, in order"}, {}};
      manifest = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      return {{fmt::format("{}: not valid JSON ({}); fix it", kManifest, e.what())}, {}};
    }
    if (!manifest.is_object() || !manifest.contains("lessons") || !manifest.at("lessons").is_array())
      return {{std::string(kManifest) + ": has no \"lessons\" array; it must list the lessons, in order"}, {}};
    std::size_t index = 0;
    for (const auto& lesson : manifest.at("lessons")) entry(lesson, ++index);
    unlisted_files();
    return {problems_, listed_};
  }

 private:
  static constexpr const char* kManifest = "lessons/manifest.json";

  void entry(const nlohmann::json& lesson, std::size_t index) {
    auto text_field = [&](const char* key) -> std::string {
      if (lesson.is_object() && lesson.contains(key) && lesson.at(key).is_string()) return lesson.at(key).get<std::string>();
      return {};
    };
    const std::string id = text_field("id");
    const std::string slug = text_field("slug");
    const std::string name = id.empty() ? fmt::format("entry {}", index) : "lesson " + id;
    if (!two_digits(id)) return problem(fmt::format("{}: {} has no two-digit \"id\" (e.g. \"04\"); give it one", kManifest, name));
    if (slug.empty())
      return problem(fmt::format("{}: lesson {} has no \"slug\"; give it the folder name after {}-", kManifest, id, id));
    if (text_field("title").empty()) problem(fmt::format("{}: lesson {} has no \"title\"; give it one", kManifest, id));
    order(id);
    counts(lesson, id);
    for (const auto& [key, what] : std::vector<std::pair<const char*, const char*>>{
             {"goal", "the task as a goal in physical terms (which GPU, how much memory), not the edit"},
             {"stretch", "the optional stretch task's goal, checked by its [stretch] checks"}})
      if (text_field(key).empty()) problem(fmt::format("{}: lesson {} has no \"{}\"; give it {}", kManifest, id, key, what));
    const std::string directory = id + "-" + slug;
    listed_.push_back({id, directory});
    mutants(id);
    table_row(id, text_field("title"));
    files(id, directory);
    questions(lesson, id, directory);
  }

  // One source for the questions: the README's Predict section lists exactly the manifest's
  // scored predictions, in order, so every question a learner reads is one the run scores.
  void questions(const nlohmann::json& lesson, const std::string& id, const std::string& directory) {
    const std::string file = "lessons/" + directory + "/README.md";
    const std::string readme = read_text(fs::path(root_) / file);
    if (readme.empty()) return;  // files() said so
    std::vector<std::string> wanted;
    for (const auto& prediction : lesson.value("predictions", nlohmann::json::array()))
      if (prediction.is_object() && prediction.contains("question") && prediction.at("question").is_string())
        wanted.push_back(plain(prediction.at("question").get<std::string>()));
    const auto items = predict_items(readme);
    for (std::size_t i = 0; i < std::max(items.size(), wanted.size()); ++i) {
      if (i < items.size() && i < wanted.size() && items[i] == wanted[i]) continue;
      if (i >= wanted.size())
        problem(fmt::format("{}: Predict question {} (\"{}\") is not scored (lesson {}); move it into the manifest's "
                            "\"predictions\" or out of the Predict section", file, i + 1, items[i], id));
      else
        problem(fmt::format("{}: Predict question {} should read \"{}\", as lessons/manifest.json asks it (lesson {}); "
                            "copy it from the manifest", file, i + 1, wanted[i], id));
      return;
    }
  }

  void order(const std::string& id) {
    if (!seen_.insert(id).second)
      problem(fmt::format("{}: lesson {} is listed twice; give each lesson its own id", kManifest, id));
    else if (!previous_.empty() && id < previous_)
      problem(fmt::format("{}: lesson {} comes after lesson {}; list the lessons in order of id", kManifest, id, previous_));
    previous_ = std::max(previous_, id);
  }

  void counts(const nlohmann::json& lesson, const std::string& id) {
    const auto hints = lesson.value("hints", nlohmann::json::array());
    const std::size_t hint_count = hints.is_array() ? hints.size() : 0;
    if (hint_count < kMinHints)
      problem(fmt::format("{}: lesson {} has {} hint{}; give it at least {} in \"hints\", each more specific", kManifest, id,
                          hint_count, hint_count == 1 ? "" : "s", kMinHints));
    const auto predictions = lesson.value("predictions", nlohmann::json::array());
    if ((predictions.is_array() ? predictions.size() : 0) < kMinPredictions)
      problem(fmt::format("{}: lesson {} has no prediction; add at least {} to \"predictions\"", kManifest, id, kMinPredictions));
    std::size_t number = 0;
    for (const auto& prediction : predictions.is_array() ? predictions : nlohmann::json::array()) {
      ++number;
      if (!prediction.is_object() || !prediction.contains("explain"))
        problem(fmt::format("{}: lesson {}'s prediction {} has no \"explain\"; ask for the mechanism behind what the run "
                            "shows, with the real misconceptions as the wrong choices", kManifest, id, number));
    }
  }

  void mutants(const std::string& id) {
    std::size_t count = 0;
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(fs::path(root_) / "tests/mutations" / ("lesson" + id), ignored)) {
      if (entry.path().extension() != ".patch") continue;
      ++count;
      // Instructors read which wrong answers the checks are proven against.
      const std::string stem = entry.path().stem().string();
      if (instructors_.find("`" + stem + "`") == std::string::npos)
        problem(fmt::format("docs/instructors.md: lesson {}'s known wrong answer `{}` is not in its table; "
                            "add it to the lesson's row", id, stem));
    }
    if (count < kMinMutants)
      problem(fmt::format("tests/mutations/lesson{}/: {} known wrong answer{} (lesson {}); add at least {} "
                          "(.patch against the solution; gpulab dev mutants {} must catch each)",
                          id, count, count == 1 ? "" : "s", id, kMinMutants, id));
  }

  // The README's lesson table names each lesson as the manifest does.
  void table_row(const std::string& id, std::string title) {
    title.erase(std::remove(title.begin(), title.end(), '`'), title.end());
    if (!title.empty() && readme_.find("| " + id + " | " + title + " |") == std::string::npos)
      problem(fmt::format("README.md: the lesson table has no row \"| {} | {} | …\"; use the manifest's title "
                          "(without backticks)", id, title));
  }

  void files(const std::string& id, const std::string& directory) {
    const std::vector<std::pair<std::string, std::string>> wanted = {
        {"lessons/" + directory + "/main.cpp", "write the exercise (it must fail its checks as shipped)"},
        {"solutions/" + directory + "/main.cpp", "write the reference solution (it must pass the checks)"},
        {"lessons/" + directory + "/README.md", "write the lesson's README"},
        {"lessons/" + directory + "/EXPLAIN.md", "write the lesson's explanation (shown after the predictions)"},
        {"tests/lessons/lesson" + id + "_checks.cpp", "write the lesson's checks (Catch2 TEST_CASEs)"}};
    for (const auto& [file, what] : wanted) {
      const fs::path path = fs::path(root_) / file;
      if (!fs::is_regular_file(path)) {
        problem(fmt::format("{}: missing (lesson {}); {}", file, id, what));
        continue;
      }
      file_content(file, read_text(path), id, what);
    }
  }

  void file_content(const std::string& file, const std::string& text, const std::string& id, const std::string& what) {
    if (text.find_first_not_of(" \t\n") == std::string::npos)
      problem(fmt::format("{}: empty (lesson {}); {}", file, id, what));
    else if (file.rfind("tests/", 0) == 0 && text.find("TEST_CASE") == std::string::npos)
      problem(fmt::format("{}: no TEST_CASE (lesson {}); {}", file, id, what));
    else if (file.rfind("tests/", 0) == 0 && text.find("[stretch]") == std::string::npos)
      problem(fmt::format("{}: no check tagged [stretch] (lesson {}); check the stretch task", file, id));
    else if (file.rfind("lessons/", 0) == 0 && file.find("main.cpp") != std::string::npos && text.find("TODO") == std::string::npos)
      problem(fmt::format("{}: no TODO (lesson {}); mark where the learner's goal is", file, id));
    else if (file.find("README.md") != std::string::npos && sections_of(text) != kReadmeSections)
      problem(fmt::format("{}: sections are \"{}\" (lesson {}); use the template's \"{}\", in that order", file,
                          joined(sections_of(text)), id, joined(kReadmeSections)));
    else if (file.find("EXPLAIN.md") != std::string::npos && sections_of(text) != kExplainSections)
      problem(fmt::format("{}: sections are \"{}\" (lesson {}); use the template's \"{}\", in that order", file,
                          joined(sections_of(text)), id, joined(kExplainSections)));
  }

  // Nothing on disk the manifest does not list.
  void unlisted_files() {
  const std::string manifest_file = kManifest;
  const std::string& root = root_;
  std::vector<std::string>& problems = problems_;
  const std::set<std::string>& seen = seen_;
  std::vector<ListedLesson>& listed = listed_;
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
  }

  void problem(std::string text) { problems_.push_back(std::move(text)); }

  std::string root_;
  std::string instructors_;
  std::string readme_;
  std::vector<std::string> problems_;
  std::vector<ListedLesson> listed_;
  std::set<std::string> seen_;
  std::string previous_;
};

}  // namespace

LessonRulesResult check_lesson_rules(const std::string& root) { return Rules(root).check(); }

}  // namespace gpulab
