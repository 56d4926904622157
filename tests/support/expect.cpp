#include "expect.h"

#include <cstdio>

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

void expect_fact(const LessonRun& run, const std::string& who, const std::string& key, const std::string& expected,
                 const std::string& why) {
  const auto& facts = run.report.at("facts");
  const bool present = facts.contains(key);
  expect_that(present && facts.at(key) == expected, who + " reports " + key + " " + expected + " " + why,
              present ? key + " " + facts.at(key).dump() : "no " + key + " fact");
}

void require_that(bool ok, const std::string& expected, const std::string& observed) {
  if (!ok) FAIL("expected: " << expected << " — observed: " << observed);
}

void require_no_errors(const LessonRun& run, const std::string& doing) {
  const auto& errors = run.report.at("errors");
  std::string text;
  for (const auto& error : errors)
    text += (text.empty() ? "" : ", ") + ("\"" + error.at("message").get<std::string>() + "\" (at '" +
                                          error.at("label").get<std::string>() + "')");
  require_that(errors.empty(), doing + " with no error", (errors.size() == 1 ? "the error " : "the errors ") + text);
}

std::string gpus(const std::set<int>& physical) {
  if (physical.empty()) return "no GPU";
  std::string list;
  std::size_t i = 0;
  for (int gpu : physical) {
    list += (i == 0 ? "" : i + 1 == physical.size() ? " and " : ", ") + std::to_string(gpu);
    ++i;
  }
  return (physical.size() == 1 ? "physical GPU " : "physical GPUs ") + list;
}

std::set<int> listed_on(const std::map<int, std::uint64_t>& used) {
  std::set<int> physical;
  for (const auto& entry : used) physical.insert(entry.first);
  return physical;
}

std::string mib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

void expect_contexts(const LessonRun& run, const std::string& label, const std::set<int>& expected) {
  const auto list = run.contexts(label);
  const std::set<int> observed(list.begin(), list.end());
  expect_that(observed == expected, "CUDA contexts on " + gpus(expected) + " (" + label + ")", "on " + gpus(observed));
}

void expect_memory_on(const LessonRun& run, const std::string& label, const std::set<int>& expected) {
  std::set<int> observed;
  for (const auto& [gpu, bytes] : run.usage(label))
    if (bytes > 0) observed.insert(gpu);
  expect_that(observed == expected, "memory on " + gpus(expected) + " (" + label + ")", "on " + gpus(observed));
}

void expect_at_least(const std::string& what, std::uint64_t observed, std::uint64_t minimum) {
  expect_that(observed >= minimum, what + " at least " + mib(minimum), mib(observed));
}

void expect_on_gpu(const LessonRun& run, const std::string& label, const std::string& tensor, int physical) {
  const int observed = run.physical_of(label, tensor);
  expect_that(observed == physical, tensor + " " + placement(physical) + " (" + label + ")",
              tensor + " " + placement(observed));
}

}  // namespace gpulab::test
