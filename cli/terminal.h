// What the interactive tutorial needs from the terminal and the file system: single-key
// input without echo (termios; plain ANSI for output), and knowing when the learner saved
// a file (inotify). Both are optional: without a terminal or inotify the tutorial falls
// back to reading whole lines.
#pragma once

#include <optional>
#include <string>

#include <termios.h>

namespace gpulab::cli {

/// Keys arrive one at a time, unechoed, while this lives (only when stdin is a terminal);
/// `polled`: a read returns at once, with no key when none was pressed.
class RawKeys {
 public:
  explicit RawKeys(bool polled = false);
  ~RawKeys();
  RawKeys(const RawKeys&) = delete;
  RawKeys& operator=(const RawKeys&) = delete;
  bool active() const { return active_; }

 private:
  bool active_ = false;
  termios saved_{};
};

/// Watches one file by watching its folder: editors save by writing in place or by
/// writing a new file and renaming it over the old one, and both must count.
class FileWatcher {
 public:
  explicit FileWatcher(const std::string& file);
  ~FileWatcher();
  FileWatcher(const FileWatcher&) = delete;
  FileWatcher& operator=(const FileWatcher&) = delete;
  /// -1 when inotify is unavailable (then `why` says so).
  int fd() const { return fd_; }
  const std::string& why() const { return why_; }
  /// Reads the pending events; true when one was a save of the watched file.
  bool saved();

 private:
  int fd_ = -1;
  std::string name_;
  std::string why_;
};

/// What the learner did: a key (raw mode), a whole line (line mode), a save, or end of input.
struct Input {
  enum Kind { kKey, kLine, kSaved, kEnd } kind = kEnd;
  std::string text;
};

/// Waits for the next key or line on stdin, or a save the watcher sees (watcher may be null).
Input next_input(bool raw, FileWatcher* watcher);

}  // namespace gpulab::cli
