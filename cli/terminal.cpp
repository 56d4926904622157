#include "terminal.h"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

namespace gpulab::cli {

RawKeys::RawKeys(bool polled) {
  if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_) != 0) return;
  termios raw = saved_;
  raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);  // output processing (\n -> \r\n) stays on
  raw.c_cc[VMIN] = polled ? 0 : 1;
  raw.c_cc[VTIME] = 0;
  active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
}

RawKeys::~RawKeys() {
  if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
}

FileWatcher::FileWatcher(const std::string& file) {
  const auto slash = file.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : file.substr(0, slash);
  name_ = slash == std::string::npos ? file : file.substr(slash + 1);
  fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) {
    why_ = std::string("inotify is unavailable: ") + std::strerror(errno);
    return;
  }
  if (inotify_add_watch(fd_, folder.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
    why_ = "cannot watch " + folder + ": " + std::strerror(errno);
    close(fd_);
    fd_ = -1;
  }
}

FileWatcher::~FileWatcher() {
  if (fd_ >= 0) close(fd_);
}

bool FileWatcher::saved() {
  bool hit = false;
  alignas(inotify_event) char buffer[8192];
  for (;;) {
    const ssize_t n = read(fd_, buffer, sizeof buffer);
    if (n <= 0) break;
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      if (event->len > 0 && name_ == event->name) hit = true;
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
  return hit;
}

Input next_input(bool raw, FileWatcher* watcher) {
  static std::string pending;  // line mode: bytes read past the end of the last line
  for (;;) {
    if (!raw) {
      const auto newline = pending.find('\n');
      if (newline != std::string::npos) {
        Input line{Input::kLine, pending.substr(0, newline)};
        pending.erase(0, newline + 1);
        return line;
      }
    }
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {watcher != nullptr ? watcher->fd() : -1, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return {};
    }
    if ((fds[1].revents & POLLIN) && watcher->saved()) return {Input::kSaved, {}};
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      char buffer[256];
      const ssize_t n = read(STDIN_FILENO, buffer, raw ? 1 : sizeof buffer);
      if (n <= 0) {
        if (!raw && !pending.empty()) {
          Input last{Input::kLine, pending};
          pending.clear();
          return last;
        }
        return {};
      }
      if (raw) return {Input::kKey, std::string(1, buffer[0])};
      pending.append(buffer, static_cast<std::size_t>(n));
    }
  }
}

}  // namespace gpulab::cli
