#include "proc/prestart.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/confine.h"
#include "proc/supervise.h"

extern char** environ;

namespace gpulab {

std::string encode_prestart_request(const PrestartRequest& request) {
  std::string text = request.folder + '\0' + std::to_string(request.argv.size()) + '\0';
  for (const auto& arg : request.argv) text += arg + '\0';
  for (const auto& entry : request.env) text += entry + '\0';
  return text;
}

std::optional<PrestartRequest> decode_prestart_request(const std::string& text) {
  std::vector<std::string> fields;
  for (std::size_t start = 0; start < text.size();) {
    const auto end = text.find('\0', start);
    if (end == std::string::npos) return std::nullopt;  // every field ends with NUL
    fields.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (fields.size() < 3 || fields[1].empty() || fields[1].size() > 6 ||
      fields[1].find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const std::size_t count = std::stoul(fields[1]);
  if (count == 0 || count > fields.size() - 2) return std::nullopt;
  PrestartRequest request;
  request.folder = fields[0];
  request.argv.assign(fields.begin() + 2, fields.begin() + 2 + static_cast<long>(count));
  request.env.assign(fields.begin() + 2 + static_cast<long>(count), fields.end());
  return request;
}

namespace {

// A request and the run's stdout and stderr, which came with it (SCM_RIGHTS).
struct Request : PrestartRequest {
  int out = -1;
  int err = -1;
};

constexpr const char* kVariable = "GPULAB_PRESTART";  // "<listening socket fd>,<lifeline fd>"
constexpr std::size_t kMaxRequest = 256 * 1024;       // arguments and environment of one run

bool send_message(int socket, const std::string& text, const int* fds = nullptr, std::size_t nfds = 0) {
  iovec data{const_cast<char*>(text.data()), text.size()};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  if (nfds > 0) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(nfds * sizeof(int));
    std::memcpy(CMSG_DATA(header), fds, nfds * sizeof(int));
  }
  ssize_t sent;
  do sent = sendmsg(socket, &message, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  return sent == static_cast<ssize_t>(text.size());
}

// One message; with `fds`, the descriptors that came with it (close-on-exec). "" at the end.
std::string receive_message(int socket, std::vector<int>* fds = nullptr) {
  std::string text(kMaxRequest, '\0');
  iovec data{text.data(), text.size()};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))] = {};
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t received;
  do received = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
  while (received < 0 && errno == EINTR);
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    std::vector<int> got(count);
    std::memcpy(got.data(), CMSG_DATA(header), count * sizeof(int));
    for (const int fd : got) {
      if (fds != nullptr) fds->push_back(fd);
      else close(fd);
    }
  }
  if (received <= 0 || (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) return "";
  text.resize(static_cast<std::size_t>(received));
  return text;
}

bool single_threaded() {
  std::error_code error;
  std::size_t threads = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error))
    ++threads;
  return !error && threads == 1;
}

// In a forked run: become what a fresh exec with this request would have been.
void become(Request& request) {
  setpgid(0, 0);  // its own process group, as run_process gives a program (time-outs stop -pid)
  dup2(request.out, STDOUT_FILENO);
  dup2(request.err, STDERR_FILENO);
  close(request.out);
  close(request.err);
  clearenv();
  for (const auto& entry : request.env) {
    const auto equals = entry.find('=');
    if (equals != std::string::npos && equals > 0) setenv(entry.substr(0, equals).c_str(), entry.c_str() + equals + 1, 1);
  }
  if (!request.folder.empty() && chdir(request.folder.c_str()) != 0) {
    const std::string message = "cannot enter '" + request.folder + "': " + std::strerror(errno) + "\n";
    (void)!write(STDERR_FILENO, message.data(), message.size());
    _exit(126);
  }
}

struct ForkedRun {
  pid_t pid;
  int pidfd;
  int connection;
};

}  // namespace

std::optional<std::vector<std::string>> serve_prestarted_runs(const std::function<bool()>& may_fork) {
  const char* spec = std::getenv(kVariable);
  if (spec == nullptr) return std::nullopt;
  int listening = -1, lifeline = -1;
  const bool parsed = std::sscanf(spec, "%d,%d", &listening, &lifeline) == 2;
  unsetenv(kVariable);
  if (!parsed || fcntl(listening, F_SETFD, FD_CLOEXEC) != 0 || fcntl(lifeline, F_SETFD, FD_CLOEXEC) != 0)
    return std::nullopt;  // not a parent after all: run as started

  std::vector<ForkedRun> running;
  while (true) {
    std::vector<pollfd> fds{{listening, POLLIN, 0}, {lifeline, POLLIN, 0}};
    for (const auto& run : running) fds.push_back({run.pidfd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0) continue;  // EINTR
    if (fds[1].revents != 0) {  // the client went away: so do its runs
      for (const auto& run : running) kill(-run.pid, SIGKILL);
      std::_Exit(0);
    }
    for (std::size_t i = running.size(); i-- > 0;) {
      if (fds[2 + i].revents == 0) continue;
      int status = 0;
      if (waitpid(running[i].pid, &status, 0) != running[i].pid) status = SIGKILL;
      send_message(running[i].connection, "status " + std::to_string(status));
      close(running[i].connection);
      close(running[i].pidfd);
      running.erase(running.begin() + static_cast<long>(i));
    }
    if (fds[0].revents == 0) continue;
    const int connection = accept4(listening, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    std::vector<int> passed;
    const auto decoded = decode_prestart_request(receive_message(connection, &passed));
    const bool valid = decoded && passed.size() == 2;
    if (!valid || !single_threaded() || !may_fork()) {
      send_message(connection, "refused");
      close(connection);
      for (const int fd : passed) close(fd);
      continue;
    }
    Request request;
    static_cast<PrestartRequest&>(request) = *decoded;
    request.out = passed[0];
    request.err = passed[1];
    const pid_t pid = fork();
    if (pid == 0) {
      close(listening);
      close(lifeline);
      close(connection);
      for (const auto& run : running) {
        close(run.pidfd);
        close(run.connection);
      }
      become(request);
      return request.argv;
    }
    close(request.out);
    close(request.err);
    const int pidfd = pid > 0 ? static_cast<int>(syscall(SYS_pidfd_open, pid, 0)) : -1;
    if (pid < 0 || pidfd < 0) {
      if (pid > 0) {  // no pidfd (a kernel older than 5.3): cannot watch it among the others
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
      send_message(connection, "refused");
      close(connection);
      continue;
    }
    send_message(connection, "pid " + std::to_string(pid));
    running.push_back({pid, pidfd, connection});
  }
}

PrestartedProgram::PrestartedProgram(std::string program) : program_(std::move(program)) {
  static std::atomic<int> counter{0};
  address_ = std::string(1, '\0') + "gpulab-prestart-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  const int listening = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un where{};
  where.sun_family = AF_UNIX;
  std::memcpy(where.sun_path, address_.data(), address_.size());
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address_.size());
  int lifeline[2] = {-1, -1};
  if (listening < 0 || bind(listening, reinterpret_cast<sockaddr*>(&where), length) != 0 || listen(listening, 64) != 0 ||
      pipe2(lifeline, O_CLOEXEC) != 0) {
    const std::string reason = std::strerror(errno);
    if (listening >= 0) close(listening);
    throw std::runtime_error("cannot prestart " + program_ + ": " + reason);
  }
  // In a grading box the parent and every run it forks are in a namespace of their own,
  // which lives as long as the parent: it ends when our lifeline closes (or with its process
  // group, ~PrestartedProgram), not with the thread that happens to start it (a generated
  // scenario's std::async thread did, killing the reference's later runs).
  const std::vector<std::string> command = confined({program_}, {}, Lifetime::kOwnLifeline);
  confined_ = command.size() > 1;
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int null = open("/dev/null", O_RDWR);
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);  // a run's output goes where its request says
    // The parent keeps its socket and lifeline as 3 and 4, and nothing else of ours.
    const int high_listening = fcntl(listening, F_DUPFD, 10), high_lifeline = fcntl(lifeline[0], F_DUPFD, 10);
    if (high_listening < 0 || high_lifeline < 0 || dup2(high_listening, 3) != 3 || dup2(high_lifeline, 4) != 4) _exit(127);
    close_descriptors_from(5);
    setenv(kVariable, "3,4", 1);
    std::vector<char*> args;
    for (const auto& arg : command) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(listening);
  close(lifeline[0]);
  if (pid < 0) {
    close(lifeline[1]);
    throw std::runtime_error("cannot prestart " + program_ + ": " + std::strerror(errno));
  }
  setpgid(pid, pid);
  parent_ = pid;
  lifeline_ = lifeline[1];
}

PrestartedProgram::~PrestartedProgram() {
  close(lifeline_);  // the parent sees the pipe close and exits, stopping runs still going
  for (int waited_ms = 0; waitpid(parent_, nullptr, WNOHANG) == 0; waited_ms += 5) {
    if (waited_ms >= 2000) {  // still loading, or hung before it could serve
      kill(-parent_, SIGKILL);
      waitpid(parent_, nullptr, 0);
      return;
    }
    usleep(5000);
  }
}

std::optional<ProcessResult> PrestartedProgram::run(const ProcessOptions& options) {
  if (options.argv.empty() || options.argv[0] != program_) return std::nullopt;
  PrestartRequest request;
  request.argv = options.argv;
  if (!options.working_directory.empty()) {
    request.folder = options.working_directory;
  } else {
    std::error_code error;
    request.folder = std::filesystem::current_path(error).string();
  }
  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const auto equals = text.find('=');
    if (equals != std::string::npos) env[text.substr(0, equals)] = text.substr(equals + 1);
  }
  for (const auto& [name, value] : options.env) {
    if (value) env[name] = *value;
    else env.erase(name);
  }
  if (confined_) env["TMPDIR"] = confined_area();  // as confined() gives a fresh run
  for (const auto& [name, value] : env) request.env.push_back(name + "=" + value);

  const int connection = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un where{};
  where.sun_family = AF_UNIX;
  std::memcpy(where.sun_path, address_.data(), address_.size());
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address_.size());
  if (connection < 0) return std::nullopt;
  if (connect(connection, reinterpret_cast<sockaddr*>(&where), length) != 0) {
    close(connection);
    return std::nullopt;
  }
  Pipes pipes = make_pipes(options.capture);
  const int fds[2] = {options.capture ? pipes.out[1] : STDOUT_FILENO, options.capture ? pipes.err[1] : STDERR_FILENO};
  const bool sent = send_message(connection, encode_prestart_request(request), fds, 2);
  // The parent answers once it has loaded: a program that hangs before it can (in a static
  // initialiser) has hung, as it would have started afresh.
  pollfd answered{connection, POLLIN, 0};
  if (sent && poll(&answered, 1, static_cast<int>(options.timeout_s * 1000)) == 0) {
    close(connection);
    for (const int fd : {pipes.out[0], pipes.out[1], pipes.err[0], pipes.err[1]})
      if (fd >= 0) close(fd);
    ProcessResult hung;
    hung.timed_out = true;
    return hung;
  }
  const std::string reply = sent ? receive_message(connection) : "";
  if (reply.rfind("pid ", 0) != 0) {  // refused, or the parent is gone
    close(connection);
    for (const int fd : {pipes.out[0], pipes.out[1], pipes.err[0], pipes.err[1]})
      if (fd >= 0) close(fd);
    return std::nullopt;
  }
  // A confined parent's pid numbers are its namespace's, not ours: a run that must be stopped
  // is stopped with the whole namespace (its parent too; later runs start afresh).
  const long said = std::strtol(reply.c_str() + 4, nullptr, 10);
  const pid_t pid = confined_ ? parent_ : static_cast<pid_t>(said > 1 ? said : parent_);
  ProcessResult result = supervise(pid, pipes, options, [connection](bool block, int& status) {
    pollfd ready{connection, POLLIN, 0};
    if (poll(&ready, 1, block ? -1 : 0) <= 0) return false;
    const std::string message = receive_message(connection);
    // The parent went away without a word: the run was stopped with it.
    status = message.rfind("status ", 0) == 0 ? static_cast<int>(std::strtol(message.c_str() + 7, nullptr, 10)) : SIGKILL;
    return true;
  });
  close(connection);
  return result;
}

}  // namespace gpulab
