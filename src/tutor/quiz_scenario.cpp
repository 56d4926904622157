// What every part of the quiz shares (quiz_scenario.h).
#include "tutor/quiz_scenario.h"

#include <algorithm>
#include <sstream>

namespace gpulab::tutor {

Node quiz_node(const std::string& name) { return load_node_file(resolve_node_path(name)); }

const char* code_name(QuizCode code) {
  const char* names[] = {"ones",   "set_device", "local_rank",    "data_parallel", "default",     "setenv_late",
                         "thread", "device_string", "rank",       "no_set_device", "default_ids", "load",
                         "fork", "guard", "mixed_device"};
  return names[static_cast<int>(code)];
}

namespace quiz {

std::string join(const std::vector<int>& values, const std::string& separator) {
  std::string text;
  for (int v : values) text += (text.empty() ? "" : separator) + std::to_string(v);
  return text;
}

std::vector<int> int_list(const std::string& text) {
  std::vector<int> values;
  std::istringstream in(text);
  for (std::string entry; std::getline(in, entry, ',');) values.push_back(std::stoi(entry));
  return values;
}

std::string cuda(int index) { return "cuda:" + std::to_string(index); }

bool all_alike(const Node& node) {
  return std::all_of(node.gpus.begin(), node.gpus.end(), [&](const Gpu& g) { return g.name == node.gpus[0].name; });
}

bool names_uuids(const QuizScenario& s) {
  return s.visible && (s.visible->rfind("GPU-", 0) == 0 || s.visible->rfind("MIG-", 0) == 0);
}

}  // namespace quiz
}  // namespace gpulab::tutor
