// Any text as a grading box's output (a student's program writes in the same box) is read
// without a crash, and a document that is accepted grades exactly the lessons asked for,
// once each, with counts that add up.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "grading/class_grade.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> ids = {"01", "04"};
  const auto document = gpulab::grading::parse_box_result(text, ids);
  if (!document) return 0;
  std::set<std::string> seen;
  for (const auto& lesson : document->grading.at("lessons")) seen.insert(lesson.at("id").get<std::string>());
  if (seen != std::set<std::string>(ids.begin(), ids.end())) std::abort();
  if (document->grading.at("passed").get<std::size_t>() + document->grading.at("failed").get<std::size_t>() != ids.size())
    std::abort();
  return 0;
}
