// gpulab run NN: runs a lesson (your exercise, or --solution) in its default scenario.
// Environment variables you set yourself win over the scenario's.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "commands.h"
#include "exit_codes.h"
#include "gpulab/manifest.h"
#include "gpulab/node.h"
#include "gpulab/process.h"
#include "gpulab/report_reader.h"
#include "gpulab/visibility.h"
#include "node_picture.h"
#include "progress.h"

namespace gpulab::cli {
namespace {
struct RunOptions {
  std::string lesson;
  bool solution = false;
  bool json = false;
  bool picture = true;  // the node picture after the run (not with --json)
  double timeout_s = 120;
  bool explain = false;  // how CUDA read CUDA_VISIBLE_DEVICES, after the run, even before the predictions
  std::vector<std::string> args;
};

// Where CUDA cut a CUDA_VISIBLE_DEVICES list short is the point of some lessons, and CUDA
// itself never says so: the explanation waits until the learner has run the lesson and
// answered its predictions (the tutorial records that), asked with --explain, or looks
// at the solution.
bool may_explain(const RunOptions& options, const Manifest& manifest, const std::string& lesson_id) {
  if (options.explain || options.solution) return true;
  const Progress progress = load_progress(progress_path(manifest.root));
  const auto found = progress.lessons.find(lesson_id);
  return found != progress.lessons.end() && found->second.predictions_right.has_value();
}

// What the lesson will see of a CUDA_VISIBLE_DEVICES that CUDA cuts short (CUDA says nothing).
std::optional<std::string> visibility_note(const std::vector<std::pair<std::string, std::optional<std::string>>>& env) {
  auto effective = [&](const char* name) -> std::optional<std::string> {
    for (const auto& [key, value] : env)
      if (key == name) return value;
    const char* value = std::getenv(name);
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
  };
  try {
    const auto node_spec = effective("GPULAB_NODE");
    const Node node = load_node_file(resolve_node_path(node_spec.value_or(kDefaultNodeName)));
    const auto order = effective("CUDA_DEVICE_ORDER");
    return explain_visibility(node, effective("CUDA_VISIBLE_DEVICES"), parse_device_order(order ? order->c_str() : nullptr));
  } catch (const NodeError&) {
    return std::nullopt;  // the lesson itself reports a broken node
  }
}

using Env = std::vector<std::pair<std::string, std::optional<std::string>>>;

// The scenario's variables, unless the learner set them: theirs win, and the banner says so.
Env scenario_env(const std::vector<std::pair<std::string, std::string>>& variables, std::string& banner) {
  Env env;
  for (const auto& [name, value] : variables) {
    const char* yours = std::getenv(name.c_str());
    if (yours == nullptr) env.emplace_back(name, value);
    banner += fmt::format(" {}={}{}", name, yours != nullptr ? yours : value, yours != nullptr ? " (yours)" : "");
  }
  return env;
}

// A multi-process lesson's --json: every rank's report (each writes its own file) and the
// launcher's summary, as one document.
void print_launched_json(const std::string& reports, const std::string& summary) {
  nlohmann::json out = {{"ranks", nlohmann::json::array()}};
  std::ifstream summary_file(summary);
  if (summary_file) out["launch"] = nlohmann::json::parse(summary_file, nullptr, /*allow_exceptions=*/false);
  for (int rank = 0;; ++rank) {
    std::ifstream file(reports + "/rank" + std::to_string(rank) + ".json");
    if (!file) break;
    out["ranks"].push_back(nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false));
  }
  std::cout << out.dump(2) << '\n';
}

// A temporary folder for the reports the programs write (GPULAB_REPORT_DIR), removed after.
class ReportFolder {
 public:
  ReportFolder() {
    std::string folder = (std::filesystem::temp_directory_path() / "gpulab-run-XXXXXX").string();
    if (mkdtemp(folder.data()) == nullptr) throw std::runtime_error("cannot make a folder for the lesson's reports");
    path_ = folder;
  }
  ~ReportFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ReportFolder(const ReportFolder&) = delete;
  ReportFolder& operator=(const ReportFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::optional<Report> read_report(const std::string& path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  try {
    return parse_report(text);
  } catch (const ReportError& e) {
    std::cerr << "gpulab: no node picture: the report in " << path << " is not valid (" << e.what() << ")\n";
    return std::nullopt;
  }
}

// The picture of the one process whose report is in `folder` (it wrote <rank|pid>.json).
void print_picture(const std::string& folder, bool explain) {
  std::optional<Report> report;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error))
    if (entry.path().extension() == ".json" && (report = read_report(entry.path().string()))) break;
  std::cout << '\n';
  if (!report) {
    std::cout << "(no node picture: the program wrote no report)\n" << std::flush;
    return;
  }
  PictureStyle style = stdout_style();
  style.explain = explain;
  std::cout << render_node_picture(*report, style) << std::flush;
}

// Every rank's picture together: rank<N>.json from each rank, hosts from the launcher's summary.
void print_ranks_picture(const std::string& folder, const std::string& summary_path, bool explain) {
  std::map<int, std::string> hosts;
  std::ifstream summary_file(summary_path);
  if (summary_file) {
    const auto summary = nlohmann::json::parse(summary_file, nullptr, /*allow_exceptions=*/false);
    if (summary.is_object() && summary.contains("workers") && summary["workers"].is_array())
      for (const auto& worker : summary["workers"])
        if (worker.is_object() && worker.value("rank", -1) >= 0)
          hosts[worker.value("rank", -1)] = worker.contains("host") && worker["host"].is_string() ? worker["host"].get<std::string>() : "";
  }
  std::vector<RankReport> ranks;
  for (int rank = 0;; ++rank) {
    const std::string path = folder + "/rank" + std::to_string(rank) + ".json";
    if (!std::filesystem::exists(path)) break;
    if (auto report = read_report(path)) ranks.push_back({rank, hosts.count(rank) ? hosts[rank] : "", std::move(*report)});
  }
  PictureStyle style = stdout_style();
  style.explain = explain;
  std::cout << '\n' << render_ranks_picture(ranks, style) << std::flush;
}

ProcessResult run_step(const RunOptions& options, const LessonEntry& lesson, ProcessOptions process) {
  const std::string program = bin_dir() + "/" + (options.solution ? "solution" : "lesson") + "-" + lesson.id;
  // The picture needs the report: the program also writes it to a file (GPULAB_REPORT_DIR)
  // while its output streams as usual; --json output stays exactly the program's.
  const bool picture = options.picture && !options.json;
  if (!lesson.launched()) {
    process.argv.insert(process.argv.begin(), program);
    if (options.json) process.argv.push_back("--json");
    if (!picture) return run_process(process);
    ReportFolder folder;
    process.env.emplace_back("GPULAB_REPORT_DIR", folder.path());
    const ProcessResult result = run_process(process);
    if (result.signal == 0 && !result.timed_out) print_picture(folder.path(), options.explain);
    return result;
  }
  std::vector<std::string> launch = {bin_dir() + "/gpulab", "launch", "--nproc-per-node", std::to_string(lesson.nproc_per_node)};
  if (lesson.nnodes > 1) launch.insert(launch.end(), {"--nnodes", std::to_string(lesson.nnodes)});
  if (!options.json) {
    std::string shown = "gpulab launch";
    for (std::size_t i = 2; i < launch.size(); ++i) shown += " " + launch[i];
    shown += " -- build/bin/" + program.substr(program.rfind('/') + 1);
    for (const auto& arg : process.argv) shown += " " + arg;
    std::cerr << "   launched as: " << shown << '\n';
  }
  std::string reports;
  if (options.json) {
    std::string folder = (std::filesystem::temp_directory_path() / "gpulab-run-XXXXXX").string();
    if (mkdtemp(folder.data()) == nullptr) throw std::runtime_error("cannot make a folder for the ranks' reports");
    reports = folder;
    process.env.emplace_back("GPULAB_REPORT_DIR", reports);
    launch.insert(launch.end(), {"--quiet", "--summary-json", reports + "/launch.json"});
  }
  launch.push_back("--");
  launch.push_back(program);
  process.argv.insert(process.argv.begin(), launch.begin(), launch.end());
  if (options.json) process.argv.push_back("--json");
  if (options.json) process.capture = true;  // the ranks' prefixed output is not JSON
  std::optional<ReportFolder> picture_folder;
  if (picture) {
    picture_folder.emplace();
    process.env.emplace_back("GPULAB_REPORT_DIR", picture_folder->path());
    const auto separator = std::find(process.argv.begin(), process.argv.end(), "--");
    process.argv.insert(separator, {"--summary-json", picture_folder->path() + "/launch.json"});
  }
  const ProcessResult result = run_process(process);
  if (options.json) {
    print_launched_json(reports, reports + "/launch.json");
    std::error_code ignored;
    std::filesystem::remove_all(reports, ignored);
  }
  if (picture_folder && result.signal == 0 && !result.timed_out)
    print_ranks_picture(picture_folder->path(), picture_folder->path() + "/launch.json", options.explain);
  return result;
}

void run_lesson_program(const RunOptions& asked) {
  const Manifest manifest = load_manifest();
  const LessonEntry& lesson = manifest.find(asked.lesson);
  RunOptions options = asked;
  options.explain = !asked.json && may_explain(asked, manifest, lesson.id);
  const auto& args = options.args.empty() ? lesson.args : options.args;
  std::string scenario;
  ProcessOptions base;
  base.capture = false;
  base.timeout_s = options.timeout_s;
  base.env = scenario_env(lesson.env, scenario);
  if (!options.json) {
    std::cerr << fmt::format("== lesson {}: {} ({}s/{}/main.cpp)\n", lesson.id, lesson.title,
                             options.solution ? "solution" : "lesson", lesson.directory());
    for (const auto& arg : args) scenario += " " + arg;
    if (!scenario.empty()) std::cerr << "   scenario:" << scenario << '\n';
  }
  // After the run, whatever its outcome (a lesson may stop on the very error it explains);
  // the picture says it when there is one.
  struct Explanation {
    std::optional<std::string> note;
    ~Explanation() {
      if (note) std::cerr << "   explain: " << *note << '\n';
    }
  } explanation;
  if (options.explain && !options.picture) explanation.note = visibility_note(base.env);
  // One run, or each step in order (arguments the learner gives make it one run).
  std::vector<LessonEntry::Step> steps = options.args.empty() ? lesson.steps : std::vector<LessonEntry::Step>{};
  if (steps.empty()) steps.push_back({"", {}, args});
  if (!lesson.steps.empty()) {
    // Steps share files (a checkpoint) in a folder of their own, not the learner's tree.
    base.working_directory = bin_dir() + "/../lesson-work/" + lesson.id;
    std::filesystem::create_directories(base.working_directory);
  }
  // Several steps print one JSON document together: {"steps": [report, report]}.
  const bool collect = options.json && steps.size() > 1;
  nlohmann::json collected = {{"steps", nlohmann::json::array()}};
  auto print_collected = [&] {
    if (collect) std::cout << collected.dump(2) << '\n';
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    ProcessOptions process = base;
    process.capture = collect;
    std::string banner;
    for (auto& variable : scenario_env(steps[i].env, banner)) process.env.push_back(std::move(variable));
    process.argv = steps[i].args;
    if (steps.size() > 1 && !options.json)
      std::cerr << fmt::format("-- step {} of {}: {}:{}{}\n", i + 1, steps.size(), steps[i].title, banner,
                               [&] { std::string a; for (const auto& arg : steps[i].args) a += " " + arg; return a; }());
    const ProcessResult result = run_step(options, lesson, process);
    if (collect) {
      std::cerr << result.err;
      collected["steps"].push_back(nlohmann::json::parse(result.out, nullptr, /*allow_exceptions=*/false));
    }
    if (result.ok()) {
      if (i + 1 == steps.size()) print_collected();
      continue;
    }
    print_collected();
    if (result.signal != 0 || result.timed_out) {
      std::cerr << fmt::format("gpulab: lesson {} {}. Your files are untouched; fix the code and run it again.\n",
                               lesson.id, result.outcome(options.timeout_s));
      throw Exit{result.timed_out ? kTimedOut : kCrashed};
    }
    throw Exit{kChecksFailed};  // the program ran and reported an error (its report says which)
  }
}
}  // namespace

void setup_run(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "build and run a lesson in its scenario");
  cmd->add_option("lesson", options->lesson, "lesson number, e.g. 04")->required();
  cmd->add_flag("--solution", options->solution, "run the reference solution instead of your exercise");
  cmd->add_flag("--json", options->json, "print the lesson report as JSON (docs/report-schema.md)");
  cmd->add_flag("!--no-picture", options->picture, "no picture of the node (docs/node-picture.md) after the run");
  cmd->add_option("--timeout", options->timeout_s, "stop the program after this many seconds")->capture_default_str();
  cmd->add_flag("--explain", options->explain,
                "after the run, say how CUDA read CUDA_VISIBLE_DEVICES (shown anyway once the lesson's predictions are answered)");
  cmd->add_option("args", options->args, "arguments for the lesson program (after --)");
  cmd->callback([options] { run_lesson_program(*options); });
}

}  // namespace gpulab::cli
