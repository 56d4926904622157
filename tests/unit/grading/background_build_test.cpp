// A box's exercises build in the background, several at once, and each lesson can be
// graded as soon as its own build is known (grading/recipes.h).
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "grading/recipes.h"
#include "proc/temp_dir.h"

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

TEST_CASE("lessons built several at once each end as their own program", "[unit][grading]") {
  const TempDir dir("background-build");
  const unsigned jobs = GENERATE(1u, 3u, 40u);
  RecipeBuild build = copying_build(dir, 12, jobs);
  const std::string bin = build.bin;
  std::ofstream(build.root + "/lessons/05-topic/main.cpp") << "broken\n";
  fs::remove(build.root + "/lessons/09-topic/main.cpp");
  build.recipes.erase("11");
  BackgroundBuild running(build);
  // Asked out of order: each answer is that lesson's, whatever finished first.
  for (const std::string id : {"12", "01", "05", "09", "11", "02"}) {
    const auto why = running.wait(id);
    if (id == "05") {
      REQUIRE(why);
      CHECK(why->find("error: broken") != std::string::npos);
    } else if (id == "09") {
      REQUIRE(why);
      CHECK(why->find("lessons/09-topic/main.cpp is missing") != std::string::npos);
    } else if (id == "11") {
      REQUIRE(why);
      CHECK(why->find("no recipe") != std::string::npos);
    } else {
      CHECK_FALSE(why);
      CHECK(text_of(bin + "/lesson-" + id) == "lesson " + id + "\n");
    }
  }
  CHECK(running.wait("99").value_or("").find("not in this build") != std::string::npos);
}

TEST_CASE("build_from_recipes lists exactly the lessons that did not build", "[unit][grading]") {
  const TempDir dir("background-build");
  RecipeBuild build = copying_build(dir, 6, 2);
  std::ofstream(build.root + "/lessons/03-topic/main.cpp") << "broken\n";
  const std::string bin = build.bin;
  const auto failed = build_from_recipes(build);
  REQUIRE(failed.size() == 1);
  CHECK(failed.count("03") == 1);
  for (const std::string id : {"01", "02", "04", "05", "06"}) CHECK(fs::is_regular_file(bin + "/lesson-" + id));
}

TEST_CASE("a build left before its lessons are built returns (a box that ends early)", "[unit][grading]") {
  // Fails by hanging (ctest's time limit) or by a thread left running (the sanitizers).
  const TempDir dir("background-build");
  RecipeBuild build = copying_build(dir, 8, 2);
  { BackgroundBuild running(build); }
  {
    BackgroundBuild running(build);
    CHECK_FALSE(running.wait("01"));
  }
}
