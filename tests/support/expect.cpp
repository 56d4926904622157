#include "expect.h"

namespace gpulab::test {

std::string placement(int physical) {
  return physical < 0 ? "on cpu" : "on physical GPU " + std::to_string(physical);
}

void expect_that(bool ok, const std::string& expected, const std::string& observed) {
  if (ok) {
    SUCCEED(expected);
    return;
  }
  FAIL_CHECK("expected: " << expected << " — observed: " << observed);
}

void expect_on_gpu(const LessonRun& run, const std::string& label, const std::string& tensor, int physical) {
  const int observed = run.physical_of(label, tensor);
  expect_that(observed == physical, tensor + " " + placement(physical) + " (" + label + ")",
              tensor + " " + placement(observed));
}

}  // namespace gpulab::test
