// gpulab smi: the node as nvidia-smi shows it — physical GPUs and the processes on them.
// gpulab smi --watch: the same, live, nvitop-style, for a second terminal: every process with
// its rank and its memory per GPU, on every simulated host (docs/node-picture.md).
// Here: the options, the terminal and the wiring; view/smi.h renders, state/host_states.h lists.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "terminal.h"
#include "gpulab/observe.h"
#include "model/container.h"
#include "model/node.h"
#include "state/host_states.h"
#include "view/node_picture.h"
#include "view/smi.h"
#include "backend/backend.h"

namespace gpulab::cli {
namespace {

struct SmiOptions {
  bool json = false;
  bool watch = false;
  double interval_s = 0.5;
  int count = 0;  // refreshes before stopping; 0: until q or Ctrl-C
  bool all_hosts = false;
  bool host = false;  // the host's view from inside a container
};

void run_smi(const SmiOptions& options) {
  auto observer = make_observer();  // reads the node state only: CUDA stays uninitialised
  auto gpus = observer->gpus();
  view::SmiSource source{observer->node(), observer->backend(), active_profile(), std::nullopt};
  // In a simulated container, nvidia-smi sees the container's GPUs (on real GPUs the
  // runtime already did that); --host is the operator's view from outside.
  if (observer->backend() == Backend::kSim && !options.host)
    view::enter_container(current_container_view(load_selected_node()), source, gpus);
  std::cout << (options.json ? view::render_smi_json(source, gpus) : view::render_smi_table(source, gpus));
}

// ---------------------------------------------------------------------------------------
// The live view.

std::string frame(WatchedHosts& hosts, const SmiOptions& options, bool interactive) {
  const std::time_t now = std::time(nullptr);
  char clock[16];
  std::strftime(clock, sizeof clock, "%H:%M:%S", std::localtime(&now));
  const Observer& observer = hosts.observer();
  const view::WatchTitle title{observer.node(), observer.backend(), clock, options.interval_s, interactive};
  return view::render_smi_watch_frame(title, hosts.read(), view::stdout_style());
}

volatile std::sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }

// The terminal while watching: the alternate screen, no cursor, keys read one at a time
// without echo; all restored on the way out (q, Ctrl-C or an exception).
class TerminalSession {
 public:
  explicit TerminalSession(bool interactive) : interactive_(interactive) {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);  // no SA_RESTART: the wait returns at once
    sigaction(SIGTERM, &action, &old_term_);
    if (interactive_) std::cout << "\x1b[?1049h\x1b[?25l" << std::flush;
  }
  ~TerminalSession() {
    if (interactive_) std::cout << "\x1b[?25h\x1b[?1049l" << std::flush;
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  TerminalSession(const TerminalSession&) = delete;
  TerminalSession& operator=(const TerminalSession&) = delete;

  // Waits `seconds`; true when the user asked to stop (q, Ctrl-C) meanwhile.
  bool wait_for_quit(double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (g_stop == 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return false;
      pollfd fd{STDIN_FILENO, POLLIN, 0};
      const int ready = poll(&fd, keys_.active() ? 1 : 0, static_cast<int>(left));
      if (ready > 0 && keys_.active()) {
        char key = 0;
        while (::read(STDIN_FILENO, &key, 1) == 1)
          if (key == 'q' || key == 'Q') return true;
      }
    }
    return true;
  }

 private:
  bool interactive_;
  RawKeys keys_{/*polled=*/true};  // q stops the watch
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

void watch_smi(const SmiOptions& options) {
  WatchedHosts hosts(make_observer(), options.all_hosts || options.watch);
  const bool interactive = options.watch && isatty(STDOUT_FILENO) == 1;
  if (!options.watch) {  // --all-hosts alone: one snapshot
    std::cout << frame(hosts, options, false) << std::flush;
    return;
  }
  g_stop = 0;
  TerminalSession terminal(interactive);
  for (int n = 0; options.count <= 0 || n < options.count; ++n) {
    const std::string text = frame(hosts, options, interactive);
    if (interactive) std::cout << "\x1b[H\x1b[2J" << text << std::flush;
    else std::cout << (n > 0 ? std::string(40, '-') + "\n" : "") << text << std::flush;
    if (options.count > 0 && n + 1 >= options.count) break;
    if (terminal.wait_for_quit(options.interval_s)) break;
  }
}

}  // namespace

void setup_smi(CLI::App& app) {
  auto options = std::make_shared<SmiOptions>();
  auto* cmd = app.add_subcommand("smi", "nvidia-smi's view of the node: memory per physical GPU and per process");
  auto* json = cmd->add_flag("--json", options->json, "machine-readable output");
  auto* watch = cmd->add_flag("--watch", options->watch,
                              "refresh live (nvitop-style): every process with its rank and memory per GPU, on every host");
  cmd->add_option("--interval", options->interval_s, "seconds between refreshes with --watch")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 3600.0));
  cmd->add_option("--count", options->count, "stop after this many refreshes (0: until q or Ctrl-C)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  auto* all = cmd->add_flag("--all-hosts", options->all_hosts,
                            "every simulated host's node state (NODE@HOST.state); the default with --watch");
  auto* host = cmd->add_flag("--host", options->host,
                             "inside a container (NVIDIA_VISIBLE_DEVICES): the host's view, every physical GPU and process");
  watch->excludes(json);
  host->excludes(watch);
  all->excludes(json);
  cmd->callback([options] {
    if (options->watch || options->all_hosts) watch_smi(*options);
    else run_smi(*options);
  });
}

}  // namespace gpulab::cli
