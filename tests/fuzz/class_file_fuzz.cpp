// Any text given as a student edition's class file (student-edition.conf) is read or
// refused with a ClassFileError naming its file and line, never a crash; what is read caps
// a lesson's hints between none and all of them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "course/student_edition.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gpulab::ClassSettings settings = gpulab::parse_class_file(text, "student-edition.conf");
    for (const int count : {0, 1, 3, 7}) {
      for (const char* id : {"01", "04", "20"}) {
        const int allowed = settings.hints_allowed(id, count);
        if (allowed < 0 || allowed > count) std::abort();
      }
    }
  } catch (const gpulab::ClassFileError& e) {
    const std::string message = e.what();
    const std::string prefix = "student-edition.conf:";
    if (message.rfind(prefix, 0) != 0 || message.size() <= prefix.size()) std::abort();
    if (message[prefix.size()] < '1' || message[prefix.size()] > '9') std::abort();
  }
  return 0;
}
