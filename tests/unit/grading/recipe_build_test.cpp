// A student's exercises are built several at once, each into its own program (grading/recipes.h).
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "grading/recipes.h"
#include "proc/temp_dir.h"
#include "report/outcome.h"

namespace fs = std::filesystem;
using namespace gpulab;
using namespace gpulab::grading;

namespace {

LessonEntry lesson(const std::string& id) {
  LessonEntry entry;
  entry.id = id;
  entry.slug = "topic";
  return entry;
}

// A tree with lessons 01..count, each main.cpp holding its own id; recipes that "compile" by
// copying, and fail for a source that says "broken".
RecipeBuild copying_build(const TempDir& dir, int count, unsigned jobs) {
  RecipeBuild build;
  build.root = dir.fresh("tree");
  build.bin = dir.fresh("bin");
  build.objects = dir.fresh("objects");
  fs::create_directories(build.bin);
  for (int i = 1; i <= count; ++i) {
    const LessonEntry entry = lesson(i < 10 ? "0" + std::to_string(i) : std::to_string(i));
    fs::create_directories(build.root + "/lessons/" + entry.directory());
    std::ofstream(build.root + "/lessons/" + entry.directory() + "/main.cpp") << "lesson " << entry.id << '\n';
    build.lessons.push_back(entry);
    build.recipes[entry.id] = {"! grep -q broken {source} && cp {source} {object} || { echo 'error: broken' >&2; exit 1; }",
                               "cp {object} {program}", dir.path()};
  }
  build.jobs = jobs;
  return build;
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("lessons built several at once each end as their own program, or say why not", "[unit][grading]") {
  const TempDir dir("background-build");
  const unsigned jobs = GENERATE(1u, 3u, 40u);
  RecipeBuild build = copying_build(dir, 12, jobs);
  const std::string bin = build.bin;
  std::ofstream(build.root + "/lessons/05-topic/main.cpp") << "broken\n";
  fs::remove(build.root + "/lessons/09-topic/main.cpp");
  build.recipes.erase("11");
  const auto failed = build_from_recipes(build);
  REQUIRE(failed.size() == 3);
  CHECK(failed.at("05").find("error: broken") != std::string::npos);
  CHECK(failed.at("09").find("lessons/09-topic/main.cpp is missing") != std::string::npos);
  CHECK(failed.at("11").find("no recipe") != std::string::npos);
  // Each program is its own lesson's, whichever compile finished first.
  for (const std::string id : {"01", "02", "03", "04", "06", "07", "08", "10", "12"})
    CHECK(text_of(bin + "/lesson-" + id) == "lesson " + id + "\n");
}

TEST_CASE("recipes travel to a box as JSON and come back the same; anything else is refused", "[unit][grading]") {
  const std::map<std::string, Recipe> recipes = {
      {"01", {"clang++ -c {source} -o {object}", "clang++ {object} -o {program}", "/b"}},
      {"04", {"c++ -DX='a b' -c {source} -o {object}", "c++ {object} -o {program}", "/b uild"}}};
  const auto back = parse_recipes(recipes_json(recipes).dump());
  REQUIRE(back.size() == 2);
  for (const auto& [id, recipe] : recipes) {
    CHECK(back.at(id).compile == recipe.compile);
    CHECK(back.at(id).link == recipe.link);
    CHECK(back.at(id).directory == recipe.directory);
  }
  for (const std::string text : {"", "[]", "{\"01\": {\"compile\": 1}}", "{\"01\": {\"compile\": \"c\", \"link\": \"l\"}}"}) {
    INFO(text);
    CHECK_THROWS_AS(parse_recipes(text), Failure);
  }
}

TEST_CASE("a student's file names reach the shell as one word each, whatever they hold", "[unit][grading]") {
  // A tree whose path holds a quote, spaces and a command: the copying recipe still copies it.
  const TempDir dir("background-build");
  RecipeBuild build = copying_build(dir, 1, 1);
  const std::string odd = dir.path() + "/alice's tree; touch pwned $(id)";
  fs::rename(build.root, odd);
  build.root = odd;
  CHECK(build_from_recipes(build).empty());
  CHECK(text_of(build.bin + "/lesson-01") == "lesson 01\n");
  CHECK_FALSE(fs::exists(dir.path() + "/pwned"));
  CHECK_FALSE(fs::exists("pwned"));
}
