#include "workspace/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace gpulab {
namespace {

// "1/2": right/asked, 0 <= right <= asked; anything after the second number is ignored.
bool parse_score(const std::string& score, int& right, int& asked) {
  const char* end = score.data() + score.size();
  const auto first = std::from_chars(score.data(), end, right);
  if (first.ec != std::errc() || first.ptr == end || *first.ptr != '/') return false;
  const auto second = std::from_chars(first.ptr + 1, end, asked);
  return second.ec == std::errc() && right >= 0 && right <= asked;
}

// The words after "lesson ID": passed, started, predictions R/A, explained R/A.
void parse_lesson_words(std::istringstream& words, LessonProgress& lesson) {
  std::string state;
  while (words >> state) {
    if (state == "passed") lesson.passed = true;
    if (state == "predictions" || state == "explained") {
      std::string score;
      words >> score;
      int right = 0, asked = 0;
      if (!parse_score(score, right, asked)) continue;
      (state == "predictions" ? lesson.predictions_right : lesson.explained_right) = right;
      (state == "predictions" ? lesson.predictions_asked : lesson.explained_asked) = asked;
    }
  }
}

// The words after "answers ID": "predicted" then answers, "explained" then letters.
void parse_answer_words(std::istringstream& words, LessonProgress& lesson) {
  std::vector<std::string>* into = nullptr;
  std::string word;
  while (words >> word) {
    if (word == "predicted") into = &lesson.predicted;
    else if (word == "explained") into = &lesson.explained;
    else if (into != nullptr) into->push_back(word);
  }
}

std::string joined_answers(const std::vector<std::string>& answers) {
  std::string text;
  for (auto answer : answers) {
    std::replace_if(answer.begin(), answer.end(), [](unsigned char c) { return std::isspace(c) != 0; }, '_');
    text += ' ' + (answer.empty() ? std::string("-") : answer);
  }
  return text;
}

}  // namespace

int Progress::passed_count() const {
  int count = 0;
  for (const auto& [id, lesson] : lessons) count += lesson.passed ? 1 : 0;
  return count;
}

std::string progress_path(const std::string& root) {
  const char* override_path = std::getenv("GPULAB_PROGRESS_FILE");
  return override_path != nullptr && *override_path != '\0' ? override_path : root + "/.gpulab-progress";
}

Progress parse_progress(const std::string& text, std::vector<SkippedLine>* skipped) {
  Progress progress;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string kind, id;
    words >> kind >> id;
    if (kind == "current" && !id.empty()) {
      progress.current = id;
      continue;
    }
    if ((kind != "lesson" && kind != "answers") || id.empty()) {
      if (skipped != nullptr) skipped->push_back({number, line});
      continue;
    }
    if (kind == "answers") parse_answer_words(words, progress.lessons[id]);
    else parse_lesson_words(words, progress.lessons[id]);
  }
  return progress;
}

std::string progress_text(const Progress& progress) {
  std::ostringstream text;
  text << "# gpulab progress (./gpulab start keeps it; delete it to start over)\n";
  if (!progress.current.empty()) text << "current " << progress.current << '\n';
  for (const auto& [id, lesson] : progress.lessons) {
    text << "lesson " << id << (lesson.passed ? " passed" : " started");
    if (lesson.predictions_right)
      text << " predictions " << *lesson.predictions_right << '/' << lesson.predictions_asked;
    if (lesson.explained_right) text << " explained " << *lesson.explained_right << '/' << lesson.explained_asked;
    text << '\n';
    if (!lesson.predicted.empty() || !lesson.explained.empty())
      text << "answers " << id << " predicted" << joined_answers(lesson.predicted) << " explained"
           << joined_answers(lesson.explained) << '\n';
  }
  return text.str();
}

Progress load_progress(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  std::vector<SkippedLine> skipped;
  Progress progress = parse_progress(text.str(), &skipped);
  for (const auto& line : skipped)
    std::cerr << "gpulab: " << path << ":" << line.number << ": skipped a line it cannot read: " << line.text << '\n';
  return progress;
}

void save_progress(const std::string& path, const Progress& progress) {
  const std::string temporary = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << progress_text(progress);
    if (!out.flush()) throw std::runtime_error("cannot write the progress file " + temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot write the progress file " + path);
  }
}

}  // namespace gpulab
