// The lesson-report reader (docs/report-schema.md): a valid report becomes plain structs;
// every kind of malformed report is a ReportError that names the field's path.
#include <catch2/catch.hpp>

#include <functional>
#include <limits>

#include <nlohmann/json.hpp>

#include "report/report_reader.h"

using namespace gpulab;
using nlohmann::json;

namespace {

// A report as src/report/lesson.cpp prints it: lesson 04 under CUDA_VISIBLE_DEVICES=2,3,4,5,
// three observations, one caught error.
json valid_report() {
  const json env = {{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}, {"CUDA_DEVICE_ORDER", nullptr}, {"GPULAB_NODE", nullptr}};
  json report = {{"lesson", "04"}, {"backend", "sim"}, {"node", "dgx-a100"}, {"pid", 4242},
                 {"env", env}, {"env_at_exit", env}, {"exit_code", 0}};
  report["env_at_exit"]["GPULAB_NODE"] = "tiny2";
  report["facts"] = {{"device_count", 4}, {"order", "FASTEST_FIRST"}};
  report["observations"] = json::array(
      {{{"label", "start"}, {"gpus", json::array()}, {"tensors", json::array()}},
       {{"label", "after .cuda(1)"},
        {"gpus", json::array({{{"physical_index", 3}, {"used_bytes", 459276288}, {"context", true}}})},
        {"tensors", json::array({{{"name", "batch"}, {"device", "cuda:1"}, {"physical_index", 3}},
                                 {{"name", "labels"}, {"device", "cpu"}, {"physical_index", nullptr}}})}},
       {{"label", "after forward"},
        {"gpus", json::array({{{"physical_index", 3}, {"used_bytes", 461373440}, {"context", true}},
                              {{"physical_index", 2}, {"used_bytes", 0}, {"context", true}}})},
        {"tensors", json::array()}}});
  report["errors"] = json::array(
      {{{"label", "cuda:7"}, {"type", "c10::Error"}, {"message", "CUDA error: invalid device ordinal"}}});
  return report;
}

// The ReportError message for the valid report changed by `change`; fails the test if it parses.
std::string error_after(const std::function<void(json&)>& change) {
  json report = valid_report();
  change(report);
  const std::string text = report.dump();
  try {
    (void)parse_report(text);
  } catch (const ReportError& e) {
    return e.what();
  }
  FAIL("the report parsed:\n" << text);
  return {};
}

std::string error_for_text(const std::string& text) {
  try {
    (void)parse_report(text);
  } catch (const ReportError& e) {
    return e.what();
  }
  FAIL("the text parsed:\n" << text);
  return {};
}

}  // namespace

TEST_CASE("a valid report becomes plain structs with every field", "[report]") {
  const Report report = parse_report(valid_report().dump(2));
  CHECK(report.lesson == "04");
  CHECK(report.backend == Backend::kSim);
  CHECK(report.node == "dgx-a100");
  CHECK(report.pid == 4242);
  CHECK(report.env.cuda_visible_devices == std::optional<std::string>("2,3,4,5"));
  CHECK_FALSE(report.env.cuda_device_order.has_value());
  CHECK_FALSE(report.env.gpulab_node.has_value());
  CHECK(report.env_at_exit.gpulab_node == std::optional<std::string>("tiny2"));
  CHECK(report.exit_code == 0);

  REQUIRE(report.facts.size() == 2);
  CHECK(std::get<std::int64_t>(report.facts.at("device_count")) == 4);
  CHECK(std::get<std::string>(report.facts.at("order")) == "FASTEST_FIRST");

  REQUIRE(report.observations.size() == 3);
  CHECK(report.observations[0].gpus.empty());
  const Observation* moved = report.observation("after .cuda(1)");
  REQUIRE(moved != nullptr);
  REQUIRE(moved->gpus.size() == 1);
  CHECK(moved->gpus[0].physical_index == 3);
  CHECK(moved->gpus[0].used_bytes == 459276288u);
  CHECK(moved->gpus[0].context);
  CHECK(moved->gpu(3) == &moved->gpus[0]);
  CHECK(moved->gpu(2) == nullptr);
  REQUIRE(moved->tensor("batch") != nullptr);
  CHECK(moved->tensor("batch")->device == "cuda:1");
  CHECK(moved->tensor("batch")->physical_index == std::optional<int>(3));
  REQUIRE(moved->tensor("labels") != nullptr);
  CHECK_FALSE(moved->tensor("labels")->physical_index.has_value());
  CHECK(moved->tensor("weights") == nullptr);
  CHECK(report.observation("no such label") == nullptr);
  // A context without memory is a use of the GPU.
  CHECK(report.observation("after forward")->gpu(2)->used_bytes == 0);

  REQUIRE(report.errors.size() == 1);
  CHECK(report.errors[0].label == "cuda:7");
  CHECK(report.errors[0].type == "c10::Error");
  CHECK(report.errors[0].message == "CUDA error: invalid device ordinal");
}

TEST_CASE("keys the schema does not list are allowed (the schema may grow)", "[report]") {
  json report = valid_report();
  report["future_key"] = json::array({1, 2});
  report["observations"][1]["gpus"][0]["sm_clock_mhz"] = 1410;
  report["env"]["CUDA_LAUNCH_BLOCKING"] = "1";
  CHECK(parse_report(report.dump()).observations[1].gpus[0].physical_index == 3);
}

TEST_CASE("byte counts use the whole unsigned 64-bit range", "[report]") {
  json report = valid_report();
  report["observations"][1]["gpus"][0]["used_bytes"] = std::numeric_limits<std::uint64_t>::max();
  CHECK(parse_report(report.dump()).observations[1].gpus[0].used_bytes == std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("text that is not one JSON object is rejected as a whole document", "[report]") {
  CHECK(error_for_text("").rfind("(document): not valid JSON", 0) == 0);
  CHECK(error_for_text("{\"lesson\": \"04\"").rfind("(document): not valid JSON", 0) == 0);
  CHECK(error_for_text(valid_report().dump() + " trailing").rfind("(document): not valid JSON", 0) == 0);
  // A number too large for a double is not a parse error in nlohmann::json but out_of_range.
  CHECK(error_for_text("{\"pid\": 1e999}").rfind("(document): not valid JSON", 0) == 0);
  CHECK(error_for_text("[1, 2]") == "(document): expected an object, got an array");
  CHECK(error_for_text("\"report\"") == "(document): expected an object, got \"report\"");
}

TEST_CASE("every required field is required", "[report]") {
  for (const char* key :
       {"lesson", "backend", "node", "pid", "env", "env_at_exit", "facts", "observations", "errors", "exit_code"}) {
    INFO(key);
    CHECK(error_after([&](json& r) { r.erase(key); }) == std::string(key) + ": missing");
  }
  CHECK(error_after([](json& r) { r["env"].erase("CUDA_DEVICE_ORDER"); }) == "env.CUDA_DEVICE_ORDER: missing");
  CHECK(error_after([](json& r) { r["observations"][1].erase("tensors"); }) == "observations[1].tensors: missing");
  CHECK(error_after([](json& r) { r["observations"][1]["gpus"][0].erase("context"); }) ==
        "observations[1].gpus[0].context: missing");
  CHECK(error_after([](json& r) { r["observations"][1]["tensors"][1].erase("physical_index"); }) ==
        "observations[1].tensors[1].physical_index: missing");
  CHECK(error_after([](json& r) { r["errors"][0].erase("message"); }) == "errors[0].message: missing");
}

TEST_CASE("top-level fields must have the schema's types", "[report]") {
  CHECK(error_after([](json& r) { r["lesson"] = 4; }) == "lesson: expected a string, got 4");
  CHECK(error_after([](json& r) { r["node"] = nullptr; }) == "node: expected a string, got null");
  CHECK(error_after([](json& r) { r["backend"] = "rocm"; }) == "backend: expected \"sim\" or \"cuda\", got \"rocm\"");
  CHECK(error_after([](json& r) { r["pid"] = 0; }) == "pid: expected a positive integer, got 0");
  CHECK(error_after([](json& r) { r["pid"] = 12.5; }) == "pid: expected a positive integer, got 12.5");
  CHECK(error_after([](json& r) { r["pid"] = 1ull << 40; }) == "pid: expected a positive integer, got 1099511627776");
  CHECK(error_after([](json& r) { r["exit_code"] = -1; }) == "exit_code: expected an exit code from 0 to 255, got -1");
  CHECK(error_after([](json& r) { r["exit_code"] = 256; }) == "exit_code: expected an exit code from 0 to 255, got 256");
  CHECK(error_after([](json& r) { r["env"] = "2,3"; }) == "env: expected an object, got \"2,3\"");
  CHECK(error_after([](json& r) { r["env_at_exit"]["GPULAB_NODE"] = 7; }) ==
        "env_at_exit.GPULAB_NODE: expected a string or null (unset), got 7");
  CHECK(error_after([](json& r) { r["observations"] = json::object(); }) ==
        "observations: expected an array, got an object");
  CHECK(error_after([](json& r) { r["errors"] = nullptr; }) == "errors: expected an array, got null");
}

TEST_CASE("facts are integers or strings", "[report]") {
  CHECK(error_after([](json& r) { r["facts"] = json::array(); }) == "facts: expected an object, got an array");
  CHECK(error_after([](json& r) { r["facts"]["ratio"] = 0.5; }) ==
        "facts[\"ratio\"]: expected an integer or a string, got 0.5");
  CHECK(error_after([](json& r) { r["facts"]["flag"] = true; }) ==
        "facts[\"flag\"]: expected an integer or a string, got true");
  CHECK(error_after([](json& r) { r["facts"]["huge"] = std::numeric_limits<std::uint64_t>::max(); }) ==
        "facts[\"huge\"]: expected an integer or a string, got 18446744073709551615");
}

TEST_CASE("per-GPU usage: non-negative indices and sizes, each GPU once, only GPUs in use", "[report]") {
  CHECK(error_after([](json& r) { r["observations"][2]["gpus"][0]["used_bytes"] = -1; }) ==
        "observations[2].gpus[0].used_bytes: expected a non-negative integer, got -1");
  CHECK(error_after([](json& r) { r["observations"][2]["gpus"][0]["used_bytes"] = 1.5; }) ==
        "observations[2].gpus[0].used_bytes: expected a non-negative integer, got 1.5");
  CHECK(error_after([](json& r) { r["observations"][1]["gpus"][0]["physical_index"] = -2; }) ==
        "observations[1].gpus[0].physical_index: expected a non-negative integer, got -2");
  CHECK(error_after([](json& r) { r["observations"][1]["gpus"][0]["physical_index"] = "3"; }) ==
        "observations[1].gpus[0].physical_index: expected a non-negative integer, got \"3\"");
  CHECK(error_after([](json& r) { r["observations"][1]["gpus"][0]["physical_index"] = 1ll << 33; }) ==
        "observations[1].gpus[0].physical_index: expected a non-negative integer, got 8589934592");
  CHECK(error_after([](json& r) { r["observations"][1]["gpus"][0]["context"] = "yes"; }) ==
        "observations[1].gpus[0].context: expected true or false, got \"yes\"");
  CHECK(error_after([](json& r) { r["observations"][1]["gpus"] = json::array({5}); }) ==
        "observations[1].gpus[0]: expected an object, got 5");
  CHECK(error_after([](json& r) { r["observations"][2]["gpus"][1]["physical_index"] = 3; }) ==
        "observations[2].gpus[1].physical_index: GPU 3 is listed already, at observations[2].gpus[0]");
  CHECK(error_after([](json& r) { r["observations"][2]["gpus"][1]["context"] = false; }) ==
        "observations[2].gpus[1]: lists a GPU the process does not use (used_bytes 0, no context)");
}

TEST_CASE("tensors: names and devices are strings, only CUDA tensors have a physical GPU", "[report]") {
  CHECK(error_after([](json& r) { r["observations"][1]["tensors"][0]["name"] = json::array(); }) ==
        "observations[1].tensors[0].name: expected a string, got an array");
  CHECK(error_after([](json& r) { r["observations"][1]["tensors"][0]["device"] = ""; }) ==
        "observations[1].tensors[0].device: expected a device such as \"cuda:1\", got \"\"");
  CHECK(error_after([](json& r) { r["observations"][1]["tensors"][0]["physical_index"] = -1; }) ==
        "observations[1].tensors[0].physical_index: expected a non-negative integer, got -1");
  CHECK(error_after([](json& r) { r["observations"][1]["tensors"][1]["physical_index"] = 0; }) ==
        "observations[1].tensors[1].physical_index: a tensor on 'cpu' is on no GPU: expected null, got 0");
  CHECK(error_after([](json& r) { r["observations"][0] = "start"; }) ==
        "observations[0]: expected an object, got \"start\"");
  CHECK(error_after([](json& r) { r["observations"][0]["label"] = nullptr; }) ==
        "observations[0].label: expected a string, got null");
}

TEST_CASE("caught errors have a label, a type and a message", "[report]") {
  CHECK(error_after([](json& r) { r["errors"][0]["type"] = 1; }) == "errors[0].type: expected a string, got 1");
  CHECK(error_after([](json& r) { r["errors"] = json::array({json::array()}); }) ==
        "errors[0]: expected an object, got an array");
}

TEST_CASE("messages shorten long strings and never print containers", "[report]") {
  const std::string message = error_after([](json& r) { r["lesson"] = json::object({{"id", std::string(500, 'x')}}); });
  CHECK(message == "lesson: expected a string, got an object");
  const std::string shortened = error_after([](json& r) { r["backend"] = std::string(500, 'y'); });
  CHECK(shortened == "backend: expected \"sim\" or \"cuda\", got \"" + std::string(40, 'y') + "\" (shortened)");
}

TEST_CASE("ReportError names the field on its own", "[report]") {
  try {
    (void)parse_report(valid_report().dump().replace(0, 1, "["));
    FAIL("parsed");
  } catch (const ReportError& e) {
    CHECK(e.field() == "(document)");
  }
  json report = valid_report();
  report["observations"][2]["gpus"][0]["used_bytes"] = -1;
  try {
    (void)parse_report(report.dump());
    FAIL("parsed");
  } catch (const ReportError& e) {
    CHECK(e.field() == "observations[2].gpus[0].used_bytes");
  }
}
