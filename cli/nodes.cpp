// gpulab nodes: the simulated nodes that ship with gpulab (choose one with GPULAB_NODE).
#include <dirent.h>

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "commands.h"
#include "gpulab/manifest.h"
#include "gpulab/node.h"

namespace gpulab::cli {

void setup_nodes(CLI::App& app) {
  auto* cmd = app.add_subcommand("nodes", "the simulated nodes you can pick with GPULAB_NODE=<name>");
  cmd->callback([] {
    const std::string dir = load_manifest().root + "/nodes";
    std::vector<std::string> files;
    if (DIR* d = opendir(dir.c_str())) {
      while (const dirent* entry = readdir(d)) {
        const std::string name = entry->d_name;
        if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) files.push_back(name);
      }
      closedir(d);
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      try {
        const Node node = load_node_file(dir + "/" + file);
        std::cout << fmt::format("{:<20} {} GPUs  {}\n", node.name, node.gpus.size(), node.description);
      } catch (const NodeError& e) {
        std::cout << fmt::format("{:<20} broken: {}\n", file, e.what());
      }
    }
  });
}

}  // namespace gpulab::cli
