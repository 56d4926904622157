// The progress file (src/workspace/progress.h): its text both ways, and the file.
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <catch2/catch.hpp>

#include "workspace/progress.h"

using namespace gpulab;

TEST_CASE("progress survives a round trip through its text and its file", "[progress]") {
  Progress progress;
  progress.current = "05";
  progress.lessons["04"].passed = true;
  progress.lessons["04"].predictions_right = 1;
  progress.lessons["04"].predictions_asked = 2;
  progress.lessons["05"];
  const std::string text = progress_text(progress);
  CHECK(text.find("current 05\n") != std::string::npos);
  CHECK(text.find("lesson 04 passed predictions 1/2\n") != std::string::npos);
  CHECK(text.find("lesson 05 started\n") != std::string::npos);
  CHECK(progress_text(parse_progress(text)) == text);

  const std::string path = "/tmp/gpulab-progress-test-" + std::to_string(getpid());
  save_progress(path, progress);
  const Progress loaded = load_progress(path);
  std::remove(path.c_str());
  CHECK(loaded.current == "05");
  CHECK(loaded.passed_count() == 1);
  CHECK(loaded.lessons.at("04").predictions_right == 1);
  CHECK(loaded.lessons.at("04").predictions_asked == 2);
  CHECK_FALSE(loaded.lessons.at("05").predictions_right);
}

TEST_CASE("a hand-edited line it cannot read is skipped, and the rest is read", "[progress]") {
  std::vector<SkippedLine> skipped;
  const Progress progress = parse_progress(
      "# a comment\n\ncurrent 02\nlesson 01 passed predictions 2/2\nthis line is not progress\n"
      "lesson 03 predictions 3/2\nlesson 04 predictions x/2\nlesson\n",
      &skipped);
  REQUIRE(skipped.size() == 2);
  CHECK(skipped[0].number == 5);
  CHECK(skipped[0].text == "this line is not progress");
  CHECK(skipped[1].number == 8);
  CHECK(progress.current == "02");
  CHECK(progress.passed_count() == 1);
  CHECK(progress.lessons.at("01").predictions_right == 2);
  CHECK_FALSE(progress.lessons.at("03").predictions_right);  // more right than asked
  CHECK_FALSE(progress.lessons.at("04").predictions_right);
}

TEST_CASE("a missing progress file is no progress", "[progress]") {
  const Progress progress = load_progress("/nonexistent/gpulab-progress");
  CHECK(progress.current.empty());
  CHECK(progress.lessons.empty());
  CHECK(progress.passed_count() == 0);
}
