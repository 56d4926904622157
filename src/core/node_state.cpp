#include "gpulab/node_state.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
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

void make_directories(const std::string& dir) {
  std::string partial;
  std::stringstream parts(dir);
  std::string part;
  if (!dir.empty() && dir[0] == '/') partial = "/";
  while (std::getline(parts, part, '/')) {
    if (part.empty()) continue;
    partial += part + "/";
    if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
      throw std::runtime_error("cannot create state directory '" + partial + "': " + std::strerror(errno));
  }
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

namespace {
bool slot_is_live(const Slot& slot) {
  if (slot.pid <= 0 || slot.start_time == 0) return false;
  if (kill(slot.pid, 0) != 0 && errno != EPERM) return false;
  return process_start_time(slot.pid) == slot.start_time;
}
}  // namespace

std::string NodeState::default_directory() {
  if (const char* dir = std::getenv("GPULAB_STATE_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run != nullptr && *run != '\0')
    return std::string(run) + "/gpulab";
  return "/tmp/gpulab-" + std::to_string(getuid());
}

std::string NodeState::default_path(const Node& node) {
  return default_directory() + "/" + node.name + ".state";
}

NodeState::NodeState(const Node& node, std::string path)
    : path_(path.empty() ? default_path(node) : std::move(path)),
      fingerprint_(fingerprint_of(node)),
      gpu_count_(static_cast<int>(node.gpus.size())),
      owner_pid_(getpid()) {
  const auto slash = path_.rfind('/');
  if (slash != std::string::npos && slash > 0) make_directories(path_.substr(0, slash));
  fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw std::runtime_error("cannot open node state '" + path_ + "': " + std::strerror(errno));
  Exclusive session(*this);
}

NodeState::~NodeState() {
  if (map_ != nullptr) munmap(map_, sizeof(Layout));
  if (fd_ >= 0) close(fd_);
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
    state_.validate_or_rebuild();
  } catch (...) {
    state_.unlock();
    throw;
  }
}

NodeState::Exclusive::~Exclusive() { state_.unlock(); }

// A forked child inherits the descriptor, and with it the parent's flock (flock locks
// belong to the open file description), the mapping and the parent's identity: it opens
// the file anew and looks for its own slot by its own pid and start time.
void NodeState::reopen_after_fork() {
  if (map_ != nullptr) munmap(map_, sizeof(Layout));
  map_ = nullptr;
  if (fd_ >= 0) close(fd_);
  fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  owner_pid_ = getpid();
  own_slot_ = -1;
  own_start_time_ = 0;
  if (fd_ < 0) throw std::runtime_error("cannot open node state '" + path_ + "': " + std::strerror(errno));
}

// Called with the lock held: maps the file and makes sure it is a state file of this node.
void NodeState::validate_or_rebuild() {
  struct stat info {};
  if (fstat(fd_, &info) != 0) throw std::runtime_error("cannot stat node state '" + path_ + "'");
  std::string problem;
  if (info.st_size == 0) {
    problem = "new";
  } else if (static_cast<std::size_t>(info.st_size) != sizeof(Layout)) {
    problem = "it has " + std::to_string(info.st_size) + " bytes, expected " + std::to_string(sizeof(Layout));
  }
  if (problem.empty() || problem == "new") {
    if (problem == "new" && ftruncate(fd_, sizeof(Layout)) != 0)
      throw std::runtime_error("cannot size node state '" + path_ + "': " + std::strerror(errno));
  } else {
    if (map_ != nullptr) {
      munmap(map_, sizeof(Layout));
      map_ = nullptr;
    }
    if (ftruncate(fd_, 0) != 0 || ftruncate(fd_, sizeof(Layout)) != 0)
      throw std::runtime_error("cannot rebuild node state '" + path_ + "': " + std::strerror(errno));
  }
  if (map_ == nullptr) {
    void* mapped = mmap(nullptr, sizeof(Layout), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (mapped == MAP_FAILED) throw std::runtime_error("cannot map node state '" + path_ + "': " + std::strerror(errno));
    map_ = static_cast<Layout*>(mapped);
  }
  if (problem.empty()) {
    if (std::memcmp(map_->magic, kMagic, sizeof kMagic) != 0) problem = "bad magic";
    else if (map_->version != kVersion) problem = "version " + std::to_string(map_->version) + ", expected " + std::to_string(kVersion);
    else if (map_->fingerprint != fingerprint_ || map_->gpu_count != static_cast<std::uint32_t>(gpu_count_))
      problem = "it describes another node";
    else if (map_->slot_count != kSlots) problem = "bad slot count";
  }
  if (problem.empty()) return;
  if (problem != "new")
    std::fprintf(stderr, "gpulab: warning: node state '%s' was unusable (%s); rebuilt it empty\n",
                 path_.c_str(), problem.c_str());
  std::memset(static_cast<void*>(map_), 0, sizeof(Layout));
  std::memcpy(map_->magic, kMagic, sizeof kMagic);
  map_->version = kVersion;
  map_->gpu_count = static_cast<std::uint32_t>(gpu_count_);
  map_->fingerprint = fingerprint_;
  map_->slot_count = kSlots;
  own_slot_ = -1;
}

int NodeState::find_own_slot(bool claim) {
  const int pid = getpid();
  if (own_start_time_ == 0) own_start_time_ = process_start_time(pid);
  if (own_slot_ >= 0) {
    const Slot& slot = map_->slots[own_slot_];
    if (slot.pid == pid && slot.start_time == own_start_time_) return own_slot_;
    own_slot_ = -1;
  }
  for (int i = 0; i < kSlots; ++i)
    if (map_->slots[i].pid == pid && map_->slots[i].start_time == own_start_time_) return own_slot_ = i;
  if (!claim) return -1;
  for (int i = 0; i < kSlots; ++i) {
    if (slot_is_live(map_->slots[i])) continue;
    Slot& slot = map_->slots[i];
    std::memset(static_cast<void*>(&slot), 0, sizeof slot);
    slot.mig_gpu = -1;
    slot.mig_instance = -1;
    slot.pid = pid;
    slot.start_time = own_start_time_;
    std::snprintf(slot.name, sizeof slot.name, "%s", own_process_name().c_str());
    return own_slot_ = i;
  }
  throw std::runtime_error("node state '" + path_ + "' has no free process slot (" + std::to_string(kSlots) + " live processes)");
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
  Exclusive session(*this);
  const int own = find_own_slot(true);
  std::uint64_t others = 0;
  const int instance = mine.instance_on(physical);
  for (int i = 0; i < kSlots; ++i)
    if (i != own && slot_is_live(map_->slots[i]) && instance_on(map_->slots[i], physical) == instance)
      others += map_->slots[i].used[physical];
  if (others_bytes != nullptr) *others_bytes = others;
  const bool fits = others + mine.used_bytes.at(static_cast<std::size_t>(physical)) <= capacity;
  if (fits) write_record(map_->slots[own], mine, gpu_count_);
  return fits;
}

void NodeState::publish(const ProcessUsage& mine) {
  Exclusive session(*this);
  write_record(map_->slots[find_own_slot(true)], mine, gpu_count_);
}

void NodeState::withdraw() {
  Exclusive session(*this);
  const int own = find_own_slot(false);
  if (own >= 0) std::memset(static_cast<void*>(&map_->slots[own]), 0, sizeof(Slot));
  own_slot_ = -1;
}

std::vector<ProcessUsage> NodeState::processes() {
  Exclusive session(*this);
  std::vector<ProcessUsage> live;
  for (const Slot& slot : map_->slots) {
    if (!slot_is_live(slot)) continue;
    ProcessUsage usage;
    usage.pid = slot.pid;
    usage.name.assign(slot.name, strnlen(slot.name, sizeof slot.name));
    usage.used_bytes.assign(slot.used, slot.used + gpu_count_);
    usage.context_mask = slot.context_mask;
    usage.mig_gpu = slot.mig_gpu;
    usage.mig_instance = slot.mig_instance;
    live.push_back(std::move(usage));
  }
  return live;
}

std::uint64_t NodeState::used_bytes(int physical, int mig_instance) {
  std::uint64_t total = 0;
  for (const auto& process : processes())
    if (mig_instance < 0 || process.instance_on(physical) == mig_instance)
      total += process.used_bytes.at(static_cast<std::size_t>(physical));
  return total;
}

}  // namespace gpulab
