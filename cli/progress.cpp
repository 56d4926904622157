#include "progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace gpulab::cli {

int Progress::passed_count() const {
  int count = 0;
  for (const auto& [id, lesson] : lessons) count += lesson.passed ? 1 : 0;
  return count;
}

std::string progress_path(const std::string& root) {
  const char* override_path = std::getenv("GPULAB_PROGRESS_FILE");
  return override_path != nullptr && *override_path != '\0' ? override_path : root + "/.gpulab-progress";
}

Progress load_progress(const std::string& path) {
  Progress progress;
  std::ifstream in(path);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string kind, id, state;
    words >> kind >> id;
    if (kind == "current" && !id.empty()) {
      progress.current = id;
      continue;
    }
    if (kind != "lesson" || id.empty()) {
      std::cerr << "gpulab: " << path << ":" << number << ": skipped a line it cannot read: " << line << '\n';
      continue;
    }
    LessonProgress& lesson = progress.lessons[id];
    while (words >> state) {
      if (state == "passed") lesson.passed = true;
      if (state == "predictions") {
        std::string score;
        words >> score;
        int right = 0, asked = 0;
        if (std::sscanf(score.c_str(), "%d/%d", &right, &asked) == 2 && right >= 0 && right <= asked) {
          lesson.predictions_right = right;
          lesson.predictions_asked = asked;
        }
      }
    }
  }
  return progress;
}

void save_progress(const std::string& path, const Progress& progress) {
  std::ostringstream text;
  text << "# gpulab progress (./gpulab start keeps it; delete it to start over)\n";
  if (!progress.current.empty()) text << "current " << progress.current << '\n';
  for (const auto& [id, lesson] : progress.lessons) {
    text << "lesson " << id << (lesson.passed ? " passed" : " started");
    if (lesson.predictions_right)
      text << " predictions " << *lesson.predictions_right << '/' << lesson.predictions_asked;
    text << '\n';
  }
  const std::string temporary = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text.str();
    if (!out.flush()) throw std::runtime_error("cannot write the progress file " + temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot write the progress file " + path);
  }
}

}  // namespace gpulab::cli
