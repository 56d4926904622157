// Any text given as a progress file is read without a crash, every line either read or
// listed as skipped, and what is read writes back to a text that reads the same: a
// hand-edited file never stops the tutorial, and saving never changes what was read.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "workspace/progress.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<gpulab::SkippedLine> skipped;
  const gpulab::Progress progress = gpulab::parse_progress(text, &skipped);
  int previous = 0;
  for (const auto& line : skipped) {
    if (line.number <= previous || line.text.empty() || line.text[0] == '#') std::abort();
    previous = line.number;
  }
  for (const auto& [id, lesson] : progress.lessons) {
    if (id.empty()) std::abort();
    if (lesson.predictions_right && (*lesson.predictions_right < 0 || *lesson.predictions_right > lesson.predictions_asked))
      std::abort();
  }
  if (progress.passed_count() < 0 || progress.passed_count() > static_cast<int>(progress.lessons.size())) std::abort();
  // What it read, written and read again, is the same text: nothing is lost or invented.
  const std::string written = gpulab::progress_text(progress);
  std::vector<gpulab::SkippedLine> again;
  if (gpulab::progress_text(gpulab::parse_progress(written, &again)) != written || !again.empty()) std::abort();
  return 0;
}
