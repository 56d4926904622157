// The texts PyTorch raises for CUDA failures, in the wording of the profile's release:
// the caching allocator's out-of-memory text and C10_CUDA_CHECK's "CUDA error: …".
// Torch-free, so the simulator, the command line and the unit tests that hold every
// literal piece against the released binaries (tests/fixtures/torch-facts/) share them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/profile.h"

namespace gpulab {

/// PyTorch's size formatting in memory messages: "512 bytes", "2.00 KiB", "20.00 MiB",
/// "1.50 GiB" (format_size in c10/cuda/CUDACachingAllocator.cpp).
std::string format_size(std::uint64_t bytes);

/// One process NVML lists on the GPU, as the 2.1+ out-of-memory text names it.
struct OomProcess {
  int pid = 0;                ///< its process id
  bool this_process = false;  ///< named "Including non-PyTorch memory, this process"
  std::uint64_t bytes = 0;    ///< memory NVML reports for it there
};

/// What an out-of-memory text reports: the figures PyTorch puts between its literal pieces.
struct OomFigures {
  int cuda_index = 0;                   ///< "GPU N": the CUDA index, not the physical GPU
  std::uint64_t tried = 0;              ///< the allocation that failed
  std::uint64_t total = 0;              ///< cudaMemGetInfo's total
  std::uint64_t free = 0;               ///< cudaMemGetInfo's free
  std::uint64_t allocated = 0;          ///< live tensors (memory_allocated)
  std::uint64_t reserved = 0;           ///< held by the caching allocator (memory_reserved)
  std::vector<OomProcess> processes;    ///< NVML's processes on the GPU (2.1 and later)
};

/// A literal piece of a message or a figure put between them. The unit tests look up every
/// literal piece in the release's binary (tests/fixtures/torch-facts/<release>.json).
struct MessagePiece {
  bool literal = true;  ///< false: a figure (a size, an index, a pid, an error's name)
  std::string text;     ///< the piece as printed
};

/// The out-of-memory text in the profile's form, piece by piece.
std::vector<MessagePiece> out_of_memory_pieces(const Profile& profile, const OomFigures& figures);
/// The same, joined: what torch.cuda.OutOfMemoryError's message says.
std::string out_of_memory_message(const Profile& profile, const OomFigures& figures);

/// A cudaError_t as C10_CUDA_CHECK reads it.
struct CudaErrorCode {
  int code = 0;             ///< 101
  const char* name = "";    ///< cudaGetErrorName: "cudaErrorInvalidDevice"
  const char* text = "";    ///< cudaGetErrorString: "invalid device ordinal"
};

/// C10_CUDA_CHECK's message for a failed call in the profile's wording, piece by piece:
/// "CUDA error: <text>", the help line (2.9+), the asynchronous-report suffix (none when
/// CUDA_LAUNCH_BLOCKING is set) and the device-side-assertion line.
std::vector<MessagePiece> cuda_error_pieces(const Profile& profile, const CudaErrorCode& error, bool launch_blocking);
/// The same, joined.
std::string cuda_error_message(const Profile& profile, const CudaErrorCode& error, bool launch_blocking);

/// How a CUDA op checks that its tensors share one device, as its CUDA build does.
enum class SameDeviceCheck {
  /// The generated CUDA wrapper (RegisterCUDA.cpp) checks the schema's tensor arguments in
  /// order (c10::impl::check_and_update_common_device, ATen/core/op_registration/adaption.h):
  /// the first defined tensor sets the device, any other device fails, CPU scalars included.
  GeneratedWrapper,
  /// `device_check: NoCheck` in native_functions.yaml: TensorIterator checks instead
  /// (TensorIteratorBase::compute_types): the first non-CPU device is the common one, and a
  /// CPU 0-dim input is allowed. Also what the simulator assumes for ops it has no entry for.
  TensorIterator,
};

/// The device check of a CUDA op, by its schema name without "aten::" and its overload
/// ("addmm", ""; "add", "Tensor"). `structured`: a structured kernel, whose wrapper name has
/// no overload part (wrapper_CUDA_addmm; a non-structured one: wrapper_CUDA__index_select).
struct OpDeviceCheck {
  SameDeviceCheck kind = SameDeviceCheck::TensorIterator;  ///< who checks
  bool structured = false;                                  ///< wrapper named without the overload
  bool cpu_indices_allowed = false;  ///< aten::index and index_put_: CPU index tensors are allowed
};

/// The check for op `name`.`overload`: the ops of the lessons and the quiz are listed
/// (model/cuda_messages.cpp); any other op is taken as TensorIterator's.
OpDeviceCheck same_device_check_of(const std::string& name, const std::string& overload);

/// The method name a generated CUDA wrapper passes to the check, in the release's form:
/// 1.13 "wrapper_addmm", "wrapper__index_select"; 2.0 and later "wrapper_CUDA_addmm",
/// "wrapper_CUDA__index_select" (torchgen's dest/register_dispatch_key.py).
std::string cuda_wrapper_method_name(const Profile& profile, const std::string& name, const std::string& overload);

/// The generated wrapper's message (common_device_check_failure in adaption.cpp), piece by
/// piece: the argument `argument` of `method` is on `device`, the tensors before it on
/// `common`. Before 2.8: "…but found at least two devices, COMMON and DEVICE! (when checking
/// argument for argument ARG in method METHOD)"; from 2.8: "…but got ARG is on DEVICE,
/// different from other tensors on COMMON (when checking argument in method METHOD)".
std::vector<MessagePiece> wrapper_device_mismatch_pieces(const Profile& profile, const std::string& method,
                                                         const std::string& argument, const std::string& device,
                                                         const std::string& common);
/// TensorIterator's message, every release: "Expected all tensors to be on the same device,
/// but found at least two devices, COMMON and DEVICE!".
std::vector<MessagePiece> iterator_device_mismatch_pieces(const std::string& common, const std::string& device);

/// Joins pieces into the text PyTorch prints.
std::string join_pieces(const std::vector<MessagePiece>& pieces);

}  // namespace gpulab
