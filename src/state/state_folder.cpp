#include "state/state_folder.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpulab {
namespace {

constexpr const char* kOwnFolderHint =
    "set GPULAB_STATE_DIR to a folder of your own (mkdir -m 700 ~/.gpulab-state; "
    "export GPULAB_STATE_DIR=~/.gpulab-state)";

// Every refusal reads: what, where, why, that nothing was written, and how to fix it.
[[noreturn]] void refuse(const std::string& what, const std::string& path, const std::string& why,
                         const std::string& fix) {
  throw UnsafeStateError("node state " + what + " '" + path + "' is not safe to use: " + why +
                         ". gpulab left it untouched. Fix: " + fix);
}

std::string user_name(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  const std::string number = "uid " + std::to_string(uid);
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) return number;
  return "'" + std::string(found->pw_name) + "' (" + number + ")";
}

std::string group_name(gid_t gid) {
  std::vector<char> buffer(16384);
  group entry{};
  group* found = nullptr;
  const std::string number = "gid " + std::to_string(gid);
  if (getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) return number;
  return "'" + std::string(found->gr_name) + "' (" + number + ")";
}

bool in_group(gid_t gid) {
  if (getegid() == gid) return true;
  const int count = getgroups(0, nullptr);
  if (count <= 0) return false;
  std::vector<gid_t> groups(static_cast<std::size_t>(count));
  const int got = getgroups(count, groups.data());
  for (int i = 0; i < got; ++i)
    if (groups[static_cast<std::size_t>(i)] == gid) return true;
  return false;
}

std::string octal_mode(mode_t mode) {
  std::ostringstream text;
  text << '0' << std::oct << (mode & 07777);
  return text.str();
}

std::string link_target(int folder_fd, const std::string& path) {
  char target[4096];
  const ssize_t n = readlinkat(folder_fd, path.c_str(), target, sizeof target - 1);
  return n > 0 ? " (to '" + std::string(target, static_cast<std::size_t>(n)) + "')" : "";
}

std::string without_trailing_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir.empty() ? "." : dir;
}

// Missing folders above the state folder are made private too; existing ones are left as
// they are (the state folder's own checks are what protects the files in it).
void make_parents(const std::string& dir) {
  std::string partial = dir[0] == '/' ? "/" : "";
  std::stringstream parts(dir.substr(0, dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/')));
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part.empty()) continue;
    partial += part + "/";
    if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
      throw std::runtime_error("cannot create folder '" + partial + "' for the node state: " + std::strerror(errno));
  }
}

void check_private_folder(const struct stat& info, const std::string& dir) {
  if (info.st_uid != geteuid())
    refuse("folder", dir,
           "it belongs to user " + user_name(info.st_uid) + ", not to you, " + user_name(geteuid()) +
               "; another user may have made it to redirect your node state",
           std::string(kOwnFolderHint) + ", and ask whoever owns it to remove it");
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    refuse("folder", dir,
           std::string("it is writable by ") + ((info.st_mode & S_IWOTH) != 0 ? "everyone" : "its group") +
               " (mode " + octal_mode(info.st_mode) + "), so others could put their own files in it",
           "chmod 700 '" + dir + "'; to share one node with a class on purpose, see docs/shared-node.md");
}

void check_group_folder(const struct stat& info, const std::string& dir) {
  if ((info.st_mode & S_IWOTH) != 0)
    refuse("folder", dir,
           "it is writable by everyone (mode " + octal_mode(info.st_mode) +
               "), not only by its group, so anyone could put their own files in it",
           "chmod o-w '" + dir + "' (a class folder is made with: install -d -m 2770 -g GROUP '" + dir + "')");
  if (!in_group(info.st_gid))
    refuse("folder", dir,
           "its group " + group_name(info.st_gid) + " is not one of yours, so it is not a shared node of your class",
           "ask to be added to that group (then log in again), or use a folder of one of your groups");
}

void check_folder(const struct stat& info, const std::string& dir, StateSharing sharing) {
  if (sharing == StateSharing::Private) check_private_folder(info, dir);
  else check_group_folder(info, dir);
}

}  // namespace

StateSharing state_sharing_from_environment() {
  const char* value = std::getenv("GPULAB_SHARED_NODE");
  if (value == nullptr || *value == '\0' || std::string(value) == "0") return StateSharing::Private;
  if (std::string(value) == "1") return StateSharing::Group;
  throw std::runtime_error("GPULAB_SHARED_NODE is '" + std::string(value) +
                           "': set it to 1 for a node shared by a group (see docs/shared-node.md), or unset it");
}

int open_state_folder(const std::string& requested, StateSharing sharing) {
  const std::string dir = without_trailing_slashes(requested);
  struct stat link {};
  if (lstat(dir.c_str(), &link) != 0) {
    if (errno != ENOENT) throw std::runtime_error("cannot examine node state folder '" + dir + "': " + std::strerror(errno));
    if (sharing == StateSharing::Group)
      throw UnsafeStateError("node state folder '" + dir + "' does not exist; a node shared by a group (GPULAB_SHARED_NODE=1) "
                             "needs a folder made for it. Fix: install -d -m 2770 -g GROUP '" + dir + "' (see docs/shared-node.md)");
    make_parents(dir);
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      throw std::runtime_error("cannot create node state folder '" + dir + "': " + std::strerror(errno));
    if (lstat(dir.c_str(), &link) != 0)
      throw std::runtime_error("cannot examine node state folder '" + dir + "': " + std::strerror(errno));
  }
  if (S_ISLNK(link.st_mode))
    refuse("folder", dir, "it is a symbolic link" + link_target(AT_FDCWD, dir) + ", so gpulab's files could end up anywhere",
           "remove the link (rm '" + dir + "'), or " + kOwnFolderHint);
  if (!S_ISDIR(link.st_mode))
    refuse("folder", dir, "it is not a folder", "move it away, or " + std::string(kOwnFolderHint));
  check_folder(link, dir, sharing);  // first by name, for a clear message even where it cannot be opened

  // The checks apply to what was opened, not to the name: nothing can be swapped in between.
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP || errno == ENOTDIR)
      refuse("folder", dir, "it was replaced while gpulab looked at it", "check who else uses it, or " + std::string(kOwnFolderHint));
    throw std::runtime_error("cannot open node state folder '" + dir + "': " + std::strerror(errno));
  }
  try {
    struct stat info {};
    if (fstat(fd, &info) != 0) throw std::runtime_error("cannot examine node state folder '" + dir + "': " + std::strerror(errno));
    if (!S_ISDIR(info.st_mode)) refuse("folder", dir, "it was replaced while gpulab looked at it", kOwnFolderHint);
    check_folder(info, dir, sharing);
  } catch (...) {
    close(fd);
    throw;
  }
  return fd;
}

void check_state_file(int folder_fd, int fd, const std::string& path, StateSharing sharing) {
  struct stat info {};
  if (fstat(fd, &info) != 0) throw std::runtime_error("cannot examine node state '" + path + "': " + std::strerror(errno));
  const std::string remove = "remove it (rm '" + path + "'); gpulab then makes a new one";
  if (!S_ISREG(info.st_mode)) refuse("file", path, "it is not a regular file", remove);
  if (info.st_nlink == 0)
    throw std::runtime_error("node state '" + path + "' was removed while gpulab used it; run the command again");
  if (info.st_nlink != 1)
    refuse("file", path,
           "it has " + std::to_string(info.st_nlink) + " names (hard links), so it may be another file under a second name",
           "remove this name (rm '" + path + "'); gpulab then makes a new state file");
  if (sharing == StateSharing::Private) {
    if (info.st_uid != geteuid())
      refuse("file", path, "it belongs to user " + user_name(info.st_uid) + ", not to you, " + user_name(geteuid()), remove);
    return;
  }
  struct stat folder {};
  if (fstat(folder_fd, &folder) != 0) throw std::runtime_error("cannot examine the folder of node state '" + path + "'");
  if (info.st_gid != folder.st_gid)
    refuse("file", path,
           "its group " + group_name(info.st_gid) + " is not the shared folder's group " + group_name(folder.st_gid),
           "its owner can give it the folder's group (chgrp), or " + remove);
}

int open_state_file(int folder_fd, const std::string& name, const std::string& path, StateSharing sharing) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    throw std::runtime_error("node state file name '" + name + "' is not a plain file name");
  // Made by the first process, found by the others; a loser of that race opens the winner's.
  for (int attempt = 0; attempt < 8; ++attempt) {
    bool created = false;
    int fd = openat(folder_fd, name.c_str(), O_RDWR | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
      const mode_t mode = sharing == StateSharing::Private ? 0600 : 0660;
      fd = openat(folder_fd, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, mode);
      if (fd < 0 && errno == EEXIST) continue;
      created = fd >= 0;
    }
    if (fd < 0) {
      if (errno == ELOOP)
        refuse("file", path, "it is a symbolic link" + link_target(folder_fd, name) + ", so gpulab would write to the file it points to",
               "remove the link (rm '" + path + "'); gpulab then makes a new state file");
      if (errno == EISDIR) refuse("file", path, "it is a folder", "move it away; gpulab then makes a new state file");
      throw std::runtime_error("cannot open node state '" + path + "': " + std::strerror(errno));
    }
    try {
      if (created && sharing == StateSharing::Group) {
        // The class must be able to read and write it, whatever this user's umask and
        // primary group are.
        struct stat folder {};
        if (fstat(folder_fd, &folder) != 0 || fchown(fd, static_cast<uid_t>(-1), folder.st_gid) != 0 || fchmod(fd, 0660) != 0)
          throw std::runtime_error("cannot give node state '" + path + "' to the folder's group: " + std::strerror(errno));
      }
      check_state_file(folder_fd, fd, path, sharing);
    } catch (...) {
      close(fd);
      throw;
    }
    return fd;
  }
  throw std::runtime_error("cannot open node state '" + path + "': it keeps appearing and disappearing");
}

}  // namespace gpulab
