#include "state/node_state.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpulab {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'U', 'L', 'A', 'B', 'N', 'S'};
constexpr std::uint32_t kVersion = 2;  // 2: the MIG instance a process uses
constexpr int kSlots = 256;

struct Slot {
  std::int32_t pid;
  std::int16_t mig_gpu;       // the MIG instance the process uses, -1 -1 for none
  std::int16_t mig_instance;
  std::uint64_t start_time;
  char name[48];
  std::uint64_t context_mask;
  std::uint64_t used[kMaxGpus];
};

std::uint64_t fingerprint_of(const Node& node) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a
  auto mix = [&](const std::string& text) {
    for (const unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  };
  mix(node.name);
  for (const auto& gpu : node.gpus) {
    mix(gpu.uuid);
    mix(std::to_string(gpu.total_bytes));
    for (const auto& mig : gpu.mig) mix(mig.uuid);
  }
  return hash;
}

std::string own_process_name() {
  std::ifstream comm("/proc/self/comm");
  std::string name;
  std::getline(comm, name);
  return name.empty() ? "unknown" : name;
}

// What a process record shows: a name from the file may hold any bytes, and a terminal
// or a JSON encoder must not see them.
std::string printable(const char* text, std::size_t size) {
  std::string name(text, strnlen(text, size));
  for (char& c : name)
    if (c < 0x20 || c > 0x7e) c = '?';
  return name;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

void write_all_at(int fd, const void* data, std::size_t size, off_t offset, const std::string& path) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = pwrite(fd, bytes, size, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("cannot write node state '" + path + "': " + std::strerror(n < 0 ? errno : EIO));
    bytes += n;
    size -= static_cast<std::size_t>(n);
    offset += n;
  }
}

// Reads `size` bytes at 0; false when the file is shorter (it changed under us).
bool read_all(int fd, void* data, std::size_t size, const std::string& path) {
  char* bytes = static_cast<char*>(data);
  off_t offset = 0;
  while (size > 0) {
    const ssize_t n = pread(fd, bytes, size, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error("cannot read node state '" + path + "': " + std::strerror(errno));
    if (n == 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
    offset += n;
  }
  return true;
}

}  // namespace

struct NodeState::Layout {
  char magic[8];
  std::uint32_t version;
  std::uint32_t gpu_count;
  std::uint64_t fingerprint;
  std::uint32_t slot_count;
  std::uint32_t unused[9];
  Slot slots[kSlots];
};

std::uint64_t process_start_time(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  // The command name may hold spaces and parentheses: fields restart after the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return 0;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22; ++i) {  // starttime is field 22; field 3 comes first here
    if (!(fields >> field)) return 0;
    // Field 3 is the state. A zombie (exited or killed, not yet reaped by its parent) or
    // dead process holds no GPU memory any more: the driver frees it when the process
    // ends, before its parent reaps it.
    if (i == 3 && (field == "Z" || field == "X" || field == "x")) return 0;
  }
  char* end = nullptr;
  const unsigned long long start = std::strtoull(field.c_str(), &end, 10);
  return end != nullptr && *end == '\0' ? start : 0;
}

std::string NodeState::default_directory() {
  if (const char* dir = std::getenv("GPULAB_STATE_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (state_sharing_from_environment() == StateSharing::Group)
    throw std::runtime_error("GPULAB_SHARED_NODE=1 needs GPULAB_STATE_DIR: set it to the class's group folder (see docs/shared-node.md)");
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run != nullptr && *run != '\0')
    return std::string(run) + "/gpulab";
  return "/tmp/gpulab-" + std::to_string(geteuid());
}

std::string NodeState::default_path(const Node& node) {
  // GPULAB_HOST names one simulated machine of several on this host (`gpulab launch
  // --nnodes 2` runs node0 and node1 here): each has its own state, as each real node has
  // its own driver. It becomes part of a file name, so only a plain name is accepted.
  std::string file = node.name;
  if (const char* host = std::getenv("GPULAB_HOST"); host != nullptr && *host != '\0') {
    const std::string name = host;
    const bool plain = name.size() <= 64 && name.front() != '.' &&
                       name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == std::string::npos;
    if (!plain)
      throw std::runtime_error("GPULAB_HOST='" + name + "' is not a simulated host name: use letters, digits, '.', '_' "
                               "and '-' only (at most 64, not starting with '.'), e.g. GPULAB_HOST=node1");
    file += "@" + name;
  }
  return default_directory() + "/" + file + ".state";
}

NodeState::NodeState(const Node& node, std::string path, StateSharing sharing)
    : path_(path.empty() ? default_path(node) : std::move(path)),
      sharing_(sharing),
      fingerprint_(fingerprint_of(node)),
      gpu_count_(static_cast<int>(node.gpus.size())),
      image_(std::make_unique<Layout>()),
      owner_pid_(getpid()) {
  if (gpu_count_ < 1 || gpu_count_ > kMaxGpus)
    throw std::runtime_error("node '" + node.name + "' has " + std::to_string(gpu_count_) + " GPUs; the node state holds 1 to " +
                             std::to_string(kMaxGpus));
  for (const Gpu& gpu : node.gpus) capacity_.push_back(gpu.total_bytes);
  const auto slash = path_.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path_.substr(0, slash);
  folder_fd_ = open_state_folder(folder, sharing_);
  try {
    fd_ = open_state_file(folder_fd_, path_.substr(slash == std::string::npos ? 0 : slash + 1), path_, sharing_);
    Exclusive session(*this);
  } catch (...) {
    if (fd_ >= 0) close(fd_);
    close(folder_fd_);
    throw;
  }
}

NodeState::~NodeState() {
  if (fd_ >= 0) close(fd_);
  if (folder_fd_ >= 0) close(folder_fd_);
}

void NodeState::lock() {
  if (getpid() != owner_pid_) reopen_after_fork();
  while (flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) throw std::runtime_error("cannot lock node state '" + path_ + "': " + std::strerror(errno));
  }
}

void NodeState::unlock() { flock(fd_, LOCK_UN); }

NodeState::Exclusive::Exclusive(NodeState& state) : state_(state), guard_(state.mutex_) {
  state_.lock();
  try {
    state_.load_or_rebuild();
  } catch (...) {
    state_.unlock();
    throw;
  }
}

NodeState::Exclusive::~Exclusive() { state_.unlock(); }

// A forked child inherits the descriptor, and with it the parent's flock (flock locks
// belong to the open file description) and the parent's identity: it opens the file anew,
// in the folder checked before, and looks for its own slot by its own pid and start time.
void NodeState::reopen_after_fork() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  own_start_time_ = 0;
  const auto slash = path_.rfind('/');
  fd_ = open_state_file(folder_fd_, path_.substr(slash == std::string::npos ? 0 : slash + 1), path_, sharing_);
  owner_pid_ = getpid();
}

// Called with the lock held: reads the whole file and makes sure it is a state file of
// this node, or rebuilds it.
void NodeState::load_or_rebuild() {
  struct stat info {};
  if (fstat(fd_, &info) != 0) throw std::runtime_error("cannot examine node state '" + path_ + "': " + std::strerror(errno));
  Layout& image = *image_;
  std::string problem;
  if (info.st_size == 0) problem = "new";
  else if (static_cast<std::uint64_t>(info.st_size) != sizeof(Layout))
    problem = "it has " + std::to_string(info.st_size) + " bytes, expected " + std::to_string(sizeof(Layout));
  else if (!read_all(fd_, &image, sizeof(Layout), path_)) problem = "it was cut short";
  else if (std::memcmp(image.magic, kMagic, sizeof kMagic) != 0) problem = "bad magic";
  else if (image.version != kVersion) problem = "version " + std::to_string(image.version) + ", expected " + std::to_string(kVersion);
  else if (image.fingerprint != fingerprint_ || image.gpu_count != static_cast<std::uint32_t>(gpu_count_))
    problem = "it describes another node";
  else if (image.slot_count != kSlots) problem = "bad slot count";
  if (!problem.empty()) rebuild(problem);
}

void NodeState::rebuild(const std::string& problem) {
  // Only our own state file is ever rewritten: checked again on the open descriptor.
  check_state_file(folder_fd_, fd_, path_, sharing_);
  if (problem != "new")
    std::fprintf(stderr, "gpulab: warning: node state '%s' was unusable (%s); rebuilt it empty\n", path_.c_str(),
                 problem.c_str());
  Layout& image = *image_;
  std::memset(static_cast<void*>(&image), 0, sizeof(Layout));
  std::memcpy(image.magic, kMagic, sizeof kMagic);
  image.version = kVersion;
  image.gpu_count = static_cast<std::uint32_t>(gpu_count_);
  image.fingerprint = fingerprint_;
  image.slot_count = kSlots;
  if (ftruncate(fd_, 0) != 0 || ftruncate(fd_, sizeof(Layout)) != 0)
    throw std::runtime_error("cannot rebuild node state '" + path_ + "': " + std::strerror(errno));
  write_all_at(fd_, &image, offsetof(Layout, slots), 0, path_);
}

void NodeState::write_slot(int index) {
  const std::size_t offset = offsetof(Layout, slots) + static_cast<std::size_t>(index) * sizeof(Slot);
  write_all_at(fd_, &image_->slots[index], sizeof(Slot), static_cast<off_t>(offset), path_);
}

// The slots that count: a live process (pid and start time match /proc), and only its
// first record — a copy of a record adds nothing. Liveness is read from /proc, never
// probed with a signal.
std::vector<int> NodeState::live_slots() const {
  std::vector<int> live;
  for (int i = 0; i < kSlots; ++i) {
    const Slot& slot = image_->slots[i];
    if (slot.pid <= 0 || slot.start_time == 0) continue;
    bool copy = false;
    for (const int earlier : live) copy = copy || image_->slots[earlier].pid == slot.pid;
    if (copy || process_start_time(slot.pid) != slot.start_time) continue;
    live.push_back(i);
  }
  return live;
}

// Our record is the first one with our pid and start time: the same one live_slots counts.
int NodeState::find_own_slot(bool claim) {
  const int pid = getpid();
  if (own_start_time_ == 0) own_start_time_ = process_start_time(pid);
  for (int i = 0; i < kSlots; ++i)
    if (image_->slots[i].pid == pid && image_->slots[i].start_time == own_start_time_) return i;
  if (!claim) return -1;
  const std::vector<int> live = live_slots();
  for (int i = 0; i < kSlots; ++i) {
    if (std::find(live.begin(), live.end(), i) != live.end()) continue;
    Slot& slot = image_->slots[i];
    std::memset(static_cast<void*>(&slot), 0, sizeof slot);
    slot.mig_gpu = -1;
    slot.mig_instance = -1;
    slot.pid = pid;
    slot.start_time = own_start_time_;
    std::snprintf(slot.name, sizeof slot.name, "%s", own_process_name().c_str());
    return i;
  }
  throw std::runtime_error("node state '" + path_ + "' has no free process slot (" + std::to_string(kSlots) + " live processes)");
}

std::uint64_t NodeState::usage(int slot, int physical) const {
  return std::min(image_->slots[slot].used[physical], capacity_[static_cast<std::size_t>(physical)]);
}

void NodeState::check_physical(int physical) const {
  if (physical < 0 || physical >= gpu_count_)
    throw std::out_of_range("physical GPU " + std::to_string(physical) + " is not on this node (it has " +
                            std::to_string(gpu_count_) + ")");
}

namespace {
void write_record(Slot& slot, const ProcessUsage& mine, int gpu_count) {
  for (int g = 0; g < gpu_count; ++g) slot.used[g] = mine.used_bytes.at(static_cast<std::size_t>(g));
  slot.context_mask = mine.context_mask;
  slot.mig_gpu = static_cast<std::int16_t>(mine.mig_gpu);
  slot.mig_instance = static_cast<std::int16_t>(mine.mig_instance);
}

int instance_on(const Slot& slot, int physical) { return physical == slot.mig_gpu ? slot.mig_instance : -1; }
}  // namespace

bool NodeState::publish_if_fits(const ProcessUsage& mine, int physical, std::uint64_t capacity,
                                std::uint64_t* others_bytes) {
  check_physical(physical);
  const std::uint64_t wanted = mine.used_bytes.at(static_cast<std::size_t>(physical));
  Exclusive session(*this);
  const int own = find_own_slot(true);
  std::uint64_t others = 0;
  const int instance = mine.instance_on(physical);
  for (const int i : live_slots())
    if (i != own && instance_on(image_->slots[i], physical) == instance) others = saturating_add(others, usage(i, physical));
  if (others_bytes != nullptr) *others_bytes = others;
  const bool fits = others <= capacity && wanted <= capacity - others;
  if (fits) {
    write_record(image_->slots[own], mine, gpu_count_);
    write_slot(own);
  }
  return fits;
}

void NodeState::publish(const ProcessUsage& mine) {
  Exclusive session(*this);
  const int own = find_own_slot(true);
  write_record(image_->slots[own], mine, gpu_count_);
  write_slot(own);
}

// Every record of this process goes, copies too: none may outlive the withdrawal.
void NodeState::withdraw() {
  Exclusive session(*this);
  for (int own = find_own_slot(false); own >= 0; own = find_own_slot(false)) {
    std::memset(static_cast<void*>(&image_->slots[own]), 0, sizeof(Slot));
    write_slot(own);
  }
}

std::vector<ProcessUsage> NodeState::processes() {
  Exclusive session(*this);
  const std::uint64_t gpu_bits = gpu_count_ >= 64 ? ~0ull : (1ull << gpu_count_) - 1;
  std::vector<ProcessUsage> live;
  for (const int i : live_slots()) {
    const Slot& slot = image_->slots[i];
    ProcessUsage process;
    process.pid = slot.pid;
    process.name = printable(slot.name, sizeof slot.name);
    for (int g = 0; g < gpu_count_; ++g) process.used_bytes.push_back(usage(i, g));
    process.context_mask = slot.context_mask & gpu_bits;
    // Untrusted like the rest: a MIG placement must name a GPU of this node.
    const bool mig = slot.mig_gpu >= 0 && slot.mig_gpu < gpu_count_ && slot.mig_instance >= 0;
    process.mig_gpu = mig ? slot.mig_gpu : -1;
    process.mig_instance = mig ? slot.mig_instance : -1;
    live.push_back(std::move(process));
  }
  return live;
}

std::uint64_t NodeState::used_bytes(int physical, int mig_instance) {
  check_physical(physical);
  std::uint64_t total = 0;
  for (const auto& process : processes())
    if (mig_instance < 0 || process.instance_on(physical) == mig_instance)
      total = saturating_add(total, process.used_bytes[static_cast<std::size_t>(physical)]);
  return total;
}

}  // namespace gpulab
