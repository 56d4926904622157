// gpulab smi: the node as nvidia-smi shows it — physical GPUs and the processes on them.
// gpulab smi --watch: the same, live, nvitop-style, for a second terminal: every process with
// its rank and its memory per GPU, on every simulated host (docs/node-picture.md).
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "gpulab/node.h"
#include "gpulab/node_state.h"
#include "gpulab/observe.h"
#include "gpulab/profile.h"
#include "node_picture.h"

namespace gpulab::cli {
namespace {

struct SmiOptions {
  bool json = false;
  bool watch = false;
  double interval_s = 0.5;
  int count = 0;  // refreshes before stopping; 0: until q or Ctrl-C
  bool all_hosts = false;
};

std::string mib(std::uint64_t bytes) { return fmt::format("{}MiB", bytes / (1024 * 1024)); }

std::string bar(std::uint64_t used, std::uint64_t total) {
  constexpr int kWidth = 20;
  // Clamped to the bar: a count past it would make the second string's length negative.
  const int filled = total == 0 || used >= total ? (used == 0 ? 0 : kWidth)
                                                 : static_cast<int>((used * kWidth + total - 1) / total);
  return "[" + std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(kWidth - filled), '.') + "]";
}

void run_smi(const SmiOptions& options) {
  auto observer = make_observer();  // reads the node state only: CUDA stays uninitialised
  const auto gpus = observer->gpus();
  const Profile profile = active_profile();
  if (options.json) {
    nlohmann::json out = {{"backend", observer->backend()},
                          {"node", observer->node()},
                          {"profile", {{"torch", profile.torch_version()}, {"cuda_runtime", profile.cuda_runtime}}},
                          {"gpus", nlohmann::json::array()}};
    for (const GpuView& gpu : gpus) {
      nlohmann::json processes = nlohmann::json::array();
      for (const auto& p : gpu.processes) {
        nlohmann::json row = {{"pid", p.pid}, {"name", p.name}, {"used_bytes", p.used_bytes}};
        if (p.gpu_instance >= 0) {  // NVML's gpuInstanceId / computeInstanceId on a MIG GPU
          row["gpu_instance"] = p.gpu_instance;
          row["compute_instance"] = p.compute_instance;
        }
        processes.push_back(std::move(row));
      }
      out["gpus"].push_back({{"physical_index", gpu.physical_index},
                             {"uuid", gpu.uuid},
                             {"name", gpu.name},
                             {"pci_bus_id", gpu.pci_bus_id},
                             {"total_bytes", gpu.total_bytes},
                             {"used_bytes", gpu.used_bytes},
                             {"processes", processes}});
    }
    std::cout << out.dump(2) << '\n';
    return;
  }
  std::cout << fmt::format("gpulab smi — node {} ({} backend), profile: PyTorch {} on CUDA {}\n", observer->node(),
                           observer->backend(), profile.torch_version(), profile.cuda_runtime);
  std::cout << fmt::format("{:<4} {:<26} {:<18} {:>22}  {}\n", "GPU", "Name", "Bus-Id", "Memory-Usage", "");
  for (const GpuView& gpu : gpus)
    std::cout << fmt::format("{:<4} {:<26} {:<18} {:>22}  {}\n", gpu.physical_index, gpu.name, gpu.pci_bus_id,
                             fmt::format("{} / {}", mib(gpu.used_bytes), mib(gpu.total_bytes)),
                             bar(gpu.used_bytes, gpu.total_bytes));
  std::cout << fmt::format("\nProcesses:\n{:<4} {:>8}  {:<24} {:>12}\n", "GPU", "PID", "Process name", "GPU Memory");
  bool any = false;
  for (const GpuView& gpu : gpus)
    for (const auto& p : gpu.processes) {
      std::cout << fmt::format("{:<4} {:>8}  {:<24} {:>12}\n", gpu.physical_index, p.pid, p.name, mib(p.used_bytes));
      any = true;
    }
  if (!any) std::cout << "  No running processes found\n";
}

// ---------------------------------------------------------------------------------------
// The live view.

// One process as the watch shows it: the node state's record plus what /proc says.
struct ProcessRow {
  int pid = 0;
  std::string command;      // /proc/PID/comm, else the name in the node state
  std::string rank = "-";   // RANK from its environment; "?" when unreadable
  std::vector<std::uint64_t> used_bytes;  // per physical GPU
  std::uint64_t context_mask = 0;
  bool contexts_known = true;  // the node state records contexts; NVML does not say
};

// One simulated host's node state (or, on real GPUs, the machine's).
struct HostView {
  std::string host;  // "" for this host
  std::string error;
  std::vector<GpuView> gpus;
  std::vector<std::uint64_t> context_bytes;  // per physical GPU: one context's size (node file), 0 unknown
  std::vector<ProcessRow> processes;
};

std::string read_small_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return {};
  std::string text;
  text.resize(64 * 1024);
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(file.gcount()));
  return text;
}

// Printable ASCII only: the name came from another process.
std::string printable(std::string text, std::size_t most) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  if (text.size() > most) text.resize(most);
  for (char& c : text)
    if (c < 0x20 || c > 0x7e) c = '?';
  return text;
}

void describe_process(ProcessRow& row, const std::string& state_name) {
  const std::string proc = "/proc/" + std::to_string(row.pid);
  row.command = printable(read_small_file(proc + "/comm"), 32);
  if (row.command.empty()) row.command = printable(state_name, 32);
  // The environment is readable for our own processes only (same user): else "?".
  const std::string environ = read_small_file(proc + "/environ");
  if (environ.empty()) {
    row.rank = "?";
    return;
  }
  std::size_t at = 0;
  while (at < environ.size()) {
    const std::size_t end = std::min(environ.find('\0', at), environ.size());
    const std::string_view entry(environ.data() + at, end - at);
    if (entry.rfind("RANK=", 0) == 0) row.rank = printable(std::string(entry.substr(5)), 8);
    at = end + 1;
  }
  if (row.rank.empty()) row.rank = "-";
}

// The node states to show: this host's, and with `all_hosts` every simulated host's file
// of this node that exists (NODE@HOST.state, written under GPULAB_HOST by gpulab launch).
class Watcher {
 public:
  explicit Watcher(bool all_hosts) : all_hosts_(all_hosts) {
    observer_ = make_observer();
    if (observer_->backend() == "sim") node_ = load_selected_node();
  }

  std::string backend() const { return observer_->backend(); }
  std::string node_name() const { return observer_->node(); }

  std::vector<HostView> read() {
    std::vector<HostView> views;
    if (!node_) {  // real GPUs: NVML through the observer, one machine
      HostView view;
      view.gpus = observer_->gpus();
      std::map<int, ProcessRow> rows;
      for (const GpuView& gpu : view.gpus)
        for (const auto& p : gpu.processes) {
          auto& row = rows[p.pid];
          if (row.used_bytes.empty()) {
            row.pid = p.pid;
            row.used_bytes.assign(view.gpus.size(), 0);
            row.contexts_known = false;
            describe_process(row, p.name);
          }
          row.used_bytes[static_cast<std::size_t>(gpu.physical_index)] += p.used_bytes;
        }
      for (auto& [pid, row] : rows) view.processes.push_back(std::move(row));
      views.push_back(std::move(view));
      return views;
    }
    for (const auto& [host, path] : state_files()) {
      HostView view;
      view.host = host;
      for (std::size_t p = 0; p < node_->gpus.size(); ++p) {
        GpuView gpu;
        gpu.physical_index = static_cast<int>(p);
        gpu.name = node_->gpus[p].name;
        gpu.total_bytes = node_->gpus[p].total_bytes;
        view.gpus.push_back(std::move(gpu));
        view.context_bytes.push_back(node_->gpus[p].context_bytes);
      }
      try {
        auto& state = states_[path];
        if (state == nullptr) state = std::make_unique<NodeState>(*node_, path);
        for (const ProcessUsage& usage : state->processes()) {
          ProcessRow row;
          row.pid = usage.pid;
          row.used_bytes = usage.used_bytes;
          row.context_mask = usage.context_mask;
          describe_process(row, usage.name);
          for (std::size_t p = 0; p < view.gpus.size() && p < row.used_bytes.size(); ++p)
            view.gpus[p].used_bytes += row.used_bytes[p];
          view.processes.push_back(std::move(row));
        }
      } catch (const std::exception& e) {
        view.error = e.what();
      }
      views.push_back(std::move(view));
    }
    return views;
  }

 private:
  // host -> state file: this host's always (as plain smi shows it), the others when asked.
  std::map<std::string, std::string> state_files() const {
    std::map<std::string, std::string> files;
    const std::string own = NodeState::default_path(*node_);
    const char* own_host = std::getenv("GPULAB_HOST");
    files[own_host != nullptr ? own_host : ""] = own;
    if (!all_hosts_) return files;
    const std::string folder = NodeState::default_directory();
    const std::string plain = node_->name + ".state";
    const std::string prefix = node_->name + "@";
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
      const std::string name = entry.path().filename().string();
      if (name == plain) files[""] = entry.path().string();
      else if (name.size() > prefix.size() + 6 && name.rfind(prefix, 0) == 0 && name.substr(name.size() - 6) == ".state")
        files[name.substr(prefix.size(), name.size() - prefix.size() - 6)] = entry.path().string();
    }
    return files;
  }

  bool all_hosts_;
  std::unique_ptr<Observer> observer_;
  std::optional<Node> node_;
  std::map<std::string, std::unique_ptr<NodeState>> states_;
};

std::string color(const PictureStyle& style, const char* code, const std::string& text) {
  return style.color ? std::string(code) + text + "\x1b[0m" : text;
}

// Cut to the width (escape codes do not count).
std::string fit(const std::string& line, const PictureStyle& style) {
  if (display_width(line) <= style.width) return line;
  std::string out;
  int seen = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b') {  // keep escapes whole, they take no column
      const std::size_t end = line.find('m', i);
      out += line.substr(i, end == std::string::npos ? std::string::npos : end - i + 1);
      if (end == std::string::npos) break;
      i = end;
      continue;
    }
    const bool starts = (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80;
    if (starts && ++seen > style.width - 1) break;
    out += line[i];
  }
  return out + (style.color ? "\x1b[0m" : "") + "…";
}

std::string frame(Watcher& watcher, const SmiOptions& options, const PictureStyle& style, bool interactive) {
  const auto hosts = watcher.read();
  std::string out;
  auto line = [&](const std::string& text) { out += fit(text, style) + "\n"; };
  const std::time_t now = std::time(nullptr);
  char clock[16];
  std::strftime(clock, sizeof clock, "%H:%M:%S", std::localtime(&now));
  line(fmt::format("gpulab smi --watch · node {} ({}) · {} · every {:g} s{}", watcher.node_name(), watcher.backend(), clock,
                   options.interval_s, interactive ? " · q quits" : ""));
  std::uint64_t largest = 0;
  for (const auto& host : hosts)
    for (const auto& p : host.processes)
      for (const auto bytes : p.used_bytes) largest = std::max(largest, bytes);
  const std::uint64_t scale = bar_scale_bytes(largest);
  const int gpu_cells = 20;
  // "  PID      RANK  COMMAND          GPU  MEMORY      <bar>  ctx"
  const int cells = std::clamp(style.width - 58, 6, 30);
  for (const auto& host : hosts) {
    if (hosts.size() > 1 || !host.host.empty())
      line(color(style, "\x1b[1m", host.host.empty() ? "host: this one (no GPULAB_HOST)" : "host: " + host.host + " (GPULAB_HOST)"));
    if (!host.error.empty()) {
      line(color(style, "\x1b[1;31m", "  cannot read its node state: " + host.error));
      continue;
    }
    line(fmt::format("  {:<4} {:<24} {:>20}  {}", "GPU", "Name", "Memory-Usage", "of its total"));
    // Several hosts or a big node: the idle GPUs on one line, the rest one each.
    const bool fold = hosts.size() > 1 || host.gpus.size() > 8;
    std::vector<std::string> idle;
    for (const GpuView& gpu : host.gpus) {
      if (fold && gpu.used_bytes == 0) {
        idle.push_back(std::to_string(gpu.physical_index));
        continue;
      }
      line(fmt::format("  {:<4} {:<24} {:>20}  {}", gpu.physical_index, gpu.name.substr(0, 24),
                       fmt::format("{} / {} MiB", gpu.used_bytes / (1024 * 1024), gpu.total_bytes / (1024 * 1024)),
                       memory_bar(gpu.used_bytes, 0, gpu.total_bytes, gpu_cells, style.color)));
    }
    if (!idle.empty()) {
      std::string list;
      for (const auto& index : idle) list += (list.empty() ? "" : ",") + index;
      line(fmt::format("  {:<4} idle: 0 / {} MiB each", list, host.gpus.front().total_bytes / (1024 * 1024)));
    }
    line(fmt::format("  processes (bar: 0 to {} GiB, linear; {} context {} memory):", scale / (1024ull * 1024 * 1024),
                     color(style, "\x1b[33m", "▓"), color(style, "\x1b[32m", "█")));
    line(fmt::format("  {:>7}  {:<4}  {:<16} {:>3}  {:>10}", "PID", "RANK", "COMMAND", "GPU", "MEMORY"));
    if (host.processes.empty()) line("  no process holds GPU memory");
    for (const ProcessRow& p : host.processes) {
      bool first = true;
      for (std::size_t g = 0; g < p.used_bytes.size(); ++g) {
        const bool context = ((p.context_mask >> g) & 1u) != 0;
        if (p.used_bytes[g] == 0 && !context) continue;
        // The context's share of the bar: the node file's context size, when it has one.
        std::uint64_t context_bytes = 0;
        if (context) context_bytes = g < host.context_bytes.size() ? host.context_bytes[g] : p.used_bytes[g];
        line(fmt::format("  {:>7}  {:<4}  {:<16} {:>3}  {:>10}  {}{}", first ? std::to_string(p.pid) : "",
                         first ? p.rank : "", first ? p.command : "", g, memory_amount(p.used_bytes[g]),
                         memory_bar(p.used_bytes[g], context_bytes, scale, cells, style.color),
                         context ? color(style, "\x1b[33m", "  ctx") : ""));
        first = false;
      }
      if (first)
        line(fmt::format("  {:>7}  {:<4}  {:<16} {:>3}  {:>10}", p.pid, p.rank, p.command, "-", "0 MiB"));
    }
  }
  return out;
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
    keys_ = isatty(STDIN_FILENO) == 1 && tcgetattr(STDIN_FILENO, &saved_) == 0;
    if (keys_) {
      termios raw = saved_;
      raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
      raw.c_cc[VMIN] = 0;
      raw.c_cc[VTIME] = 0;
      tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    }
  }
  ~TerminalSession() {
    if (keys_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
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
      const int ready = poll(&fd, keys_ ? 1 : 0, static_cast<int>(left));
      if (ready > 0 && keys_) {
        char key = 0;
        while (::read(STDIN_FILENO, &key, 1) == 1)
          if (key == 'q' || key == 'Q') return true;
      }
    }
    return true;
  }

 private:
  bool interactive_;
  bool keys_ = false;
  termios saved_{};
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

void watch_smi(const SmiOptions& options) {
  Watcher watcher(options.all_hosts || options.watch);
  const bool interactive = options.watch && isatty(STDOUT_FILENO) == 1;
  if (!options.watch) {  // --all-hosts alone: one snapshot
    std::cout << frame(watcher, options, stdout_style(), false) << std::flush;
    return;
  }
  g_stop = 0;
  TerminalSession terminal(interactive);
  for (int n = 0; options.count <= 0 || n < options.count; ++n) {
    const std::string text = frame(watcher, options, stdout_style(), interactive);
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
  watch->excludes(json);
  all->excludes(json);
  cmd->callback([options] {
    if (options->watch || options->all_hosts) watch_smi(*options);
    else run_smi(*options);
  });
}

}  // namespace gpulab::cli
