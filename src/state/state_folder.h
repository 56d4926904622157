// Where the simulated node's state may live and which files there gpulab may open. On a
// shared machine the state folder's path is predictable, so another user could make it
// first, or put a symbolic link in it, to make gpulab overwrite a file of the victim's.
// Every check here works on open descriptors, so nothing can be swapped between the
// check and the use. See docs/shared-node.md.
#pragma once

#include <stdexcept>
#include <string>

namespace gpulab {

/// Who shares a node state folder.
enum class StateSharing {
  Private,  ///< the default: a folder of this user's that nobody else can write to
  Group,    ///< GPULAB_SHARED_NODE=1: a classroom folder shared with one Unix group
};

/// A state folder or file that gpulab refuses to use. The message names it, says what is
/// wrong and how to fix it; gpulab has not written anything there.
class UnsafeStateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// GPULAB_SHARED_NODE: unset, empty or "0" is Private, "1" is Group; anything else throws.
StateSharing state_sharing_from_environment();

/// Opens the state folder `dir` and checks it, returning a descriptor of the checked
/// folder (close-on-exec). Private: created with mode 0700 when missing; it must be a real
/// folder (not a symbolic link) owned by this user and not writable by group or others.
/// Group: it must exist, be a real folder whose group is one of this user's groups, and
/// not be writable by others.
int open_state_folder(const std::string& dir, StateSharing sharing);

/// Opens, creating it when missing, the state file `name` (no '/') in the checked folder
/// `folder_fd`, without following a symbolic link, and checks it with check_state_file.
/// `path` is only for messages.
int open_state_file(int folder_fd, const std::string& name, const std::string& path, StateSharing sharing);

/// Throws unless `fd` is a file gpulab may rewrite: a regular file with one link (not a
/// second name of another file), owned by this user (Private) or of the folder's group
/// (Group). Checked again before a broken state file is rebuilt.
void check_state_file(int folder_fd, int fd, const std::string& path, StateSharing sharing);

}  // namespace gpulab
