// gpulab nodes: the simulated nodes GPULAB_NODE=<name> can pick (docs/nodes.md): those in
// GPULAB_NODES_DIR, when set, then the ones that ship with gpulab (nodes/); model/node.h's
// nodes_listing.
#include <cstdlib>
#include <iostream>

#include "commands.h"
#include "model/node.h"

namespace gpulab::cli {

void setup_nodes(CLI::App& app, Workspace& workspace) {
  auto* cmd = app.add_subcommand("nodes", "the simulated nodes you can pick with GPULAB_NODE=<name>");
  cmd->callback([&workspace] {
    const char* custom = std::getenv("GPULAB_NODES_DIR");
    std::string problem;
    const std::string text = nodes_listing(custom != nullptr ? custom : "", workspace.manifest().root + "/nodes", problem);
    if (!problem.empty()) std::cerr << "gpulab: " << problem << '\n';
    std::cout << text;
  });
}

}  // namespace gpulab::cli
