// gpulab nodes: the simulated nodes GPULAB_NODE=<name> can pick (docs/nodes.md): those in
// GPULAB_NODES_DIR, when set, then the ones that ship with gpulab (nodes/). A name in
// GPULAB_NODES_DIR wins over a shipped node of the same name, as resolve_node_path looks.
#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "model/node.h"

namespace gpulab::cli {

namespace {

/// The *.json files in `dir`, sorted; `readable` says whether the folder could be read.
std::vector<std::string> node_files(const std::string& dir, bool& readable) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  readable = d != nullptr;
  if (d == nullptr) return files;
  while (const dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) files.push_back(name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

void setup_nodes(CLI::App& app, Workspace& workspace) {
  auto* cmd = app.add_subcommand("nodes", "the simulated nodes you can pick with GPULAB_NODE=<name>");
  cmd->callback([&workspace] {
    struct Entry {
      std::string file;  // name.json: GPULAB_NODE=name picks it
      std::string dir;
      bool custom;
    };
    std::vector<Entry> entries;
    std::set<std::string> seen;
    const char* custom = std::getenv("GPULAB_NODES_DIR");
    if (custom != nullptr && *custom != '\0') {
      bool readable = false;
      for (auto& file : node_files(custom, readable))
        if (seen.insert(file).second) entries.push_back({file, custom, true});
      if (!readable) std::cerr << fmt::format("gpulab: GPULAB_NODES_DIR '{}' is not a folder gpulab can read\n", custom);
    }
    const std::string builtin = workspace.manifest().root + "/nodes";
    bool readable = false;
    for (auto& file : node_files(builtin, readable))
      if (seen.insert(file).second) entries.push_back({file, builtin, false});
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.file < b.file; });
    for (const auto& entry : entries) {
      const std::string from = entry.custom ? "  (GPULAB_NODES_DIR)" : "";
      try {
        const Node node = load_node_file(entry.dir + "/" + entry.file);
        std::cout << fmt::format("{:<20} {} GPUs  {}{}\n", node.name, node.gpus.size(), node.description, from);
      } catch (const NodeError& e) {
        std::cout << fmt::format("{:<20} broken: {}{}\n", entry.file, e.what(), from);
      }
    }
  });
}

}  // namespace gpulab::cli
