// PyTorch's CUDA failure texts per release (model/cuda_messages.h). The layouts follow
// c10/cuda/CUDACachingAllocator.cpp and c10/cuda/CUDAMiscFunctions.cpp / CUDAException.cpp
// of each release; tests/unit/model/cuda_messages_test.cpp holds them against the strings
// of the released libc10_cuda.so (tests/fixtures/torch-facts/).
#include "model/cuda_messages.h"

#include <iomanip>
#include <sstream>

namespace gpulab {

std::string format_size(std::uint64_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2);
  if (bytes <= 1024) out << bytes << " bytes";
  else if (bytes <= 1048576) out << static_cast<double>(bytes) / 1024.0 << " KiB";
  else if (bytes <= 1073741824ull) out << static_cast<double>(bytes) / 1048576.0 << " MiB";
  else out << static_cast<double>(bytes) / 1073741824.0 << " GiB";
  return out.str();
}

namespace {

class Pieces {
 public:
  Pieces& text(std::string literal) {
    pieces_.push_back({true, std::move(literal)});
    return *this;
  }
  Pieces& figure(std::string value) {
    pieces_.push_back({false, std::move(value)});
    return *this;
  }
  Pieces& size(std::uint64_t bytes) { return figure(format_size(bytes)); }
  std::vector<MessagePiece> take() { return std::move(pieces_); }

 private:
  std::vector<MessagePiece> pieces_;
};

// reportProcessMemoryInfo (2.1+): NVML's processes on the device.
void processes(Pieces& out, const OomFigures& figures) {
  for (const OomProcess& process : figures.processes) {
    if (process.this_process) out.text("Including non-PyTorch memory, this process");
    else out.text("Process ").figure(std::to_string(process.pid));
    out.text(" has ").size(process.bytes).text(" memory in use. ");
  }
}

// Where the 2.1+ texts send a learner with fragmentation, by release.
void fragmentation_advice(Pieces& out, OomTextForm form) {
  switch (form) {
    case OomTextForm::A:
    case OomTextForm::B:
      out.text(" If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation. ")
          .text(" See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF");
      return;
    case OomTextForm::C:
      out.text(" If reserved but unallocated memory is large try setting")
          .text(" PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
                "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
      return;
    case OomTextForm::D:
      out.text(" If reserved but unallocated memory is large try setting")
          .text(" PYTORCH_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
                "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
      return;
    case OomTextForm::E:
      out.text(" If reserved but unallocated memory is large try setting")
          .text(" PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
                "Memory Management  (https://docs.pytorch.org/docs/stable/notes/"
                "cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)");
      return;
  }
}

}  // namespace

std::vector<MessagePiece> out_of_memory_pieces(const Profile& profile, const OomFigures& f) {
  Pieces out;
  const OomTextForm form = profile.oom_text_form();
  out.text("CUDA out of memory. Tried to allocate ").size(f.tried);
  if (form == OomTextForm::A) {
    out.text(" (GPU ").figure(std::to_string(f.cuda_index)).text("; ").size(f.total).text(" total capacity; ");
    out.size(f.allocated).text(" already allocated; ").size(f.free).text(" free; ");
    out.size(f.reserved).text(" reserved in total by PyTorch)");
    out.text(" If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation. ")
        .text(" See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF");
    return out.take();
  }
  out.text(". GPU ").figure(std::to_string(f.cuda_index));
  out.text(form == OomTextForm::B ? " has a total capacty of " : " has a total capacity of ").size(f.total);
  out.text(" of which ").size(f.free).text(" is free. ");
  processes(out, f);
  // From 2.4 "…by PyTorch, " and "and " are apart, for an optional private-pools part
  // (CUDA graphs), which the simulated node never has.
  out.text("Of the allocated memory ").size(f.allocated);
  if (profile.oom_text_has_private_pools_part()) out.text(" is allocated by PyTorch, ").text("and ");
  else out.text(" is allocated by PyTorch, and ");
  out.size(f.reserved - f.allocated).text(" is reserved by PyTorch but unallocated.");
  fragmentation_advice(out, form);
  return out.take();
}

std::string out_of_memory_message(const Profile& profile, const OomFigures& figures) {
  return join_pieces(out_of_memory_pieces(profile, figures));
}

std::vector<MessagePiece> cuda_error_pieces(const Profile& profile, const CudaErrorCode& error, bool launch_blocking) {
  Pieces out;
  out.text("CUDA error: ").figure(error.text);
  // get_cuda_error_help (2.9+): where to read about the error.
  if (profile.cuda_error_help_line()) {
    if (error.code == 101) out.text("\nGPU device may be out of range, do you have enough GPUs?");
    else
      out.text("\nSearch for `")
          .figure(error.name)
          .text("' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.");
  }
  // get_cuda_check_suffix (from 2.13 get_cuda_async_error_suffix): nothing under
  // CUDA_LAUNCH_BLOCKING.
  if (!launch_blocking && profile.cuda_error_async_suffix_for(error.code)) {
    switch (profile.cuda_error_suffix_form()) {
      case CudaErrorSuffixForm::NoSpace:
        out.text("\nCUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace "
                 "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.");
        break;
      case CudaErrorSuffixForm::FullStop:
        out.text("\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
                 "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.");
        break;
      case CudaErrorSuffixForm::NoFullStop:
        out.text("\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
                 "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1");
        break;
    }
  }
  // c10_cuda_check_implementation (2.0-2.12): a new line, then the device-side assertions' hint.
  if (profile.cuda_error_dsa_line()) out.text("\n").text("Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n");
  return out.take();
}

std::string cuda_error_message(const Profile& profile, const CudaErrorCode& error, bool launch_blocking) {
  return join_pieces(cuda_error_pieces(profile, error, launch_blocking));
}

namespace {

struct KnownOp {
  const char* name;
  OpDeviceCheck check;
};

// The ops the lessons and the quiz meet, with native_functions.yaml's device_check and
// `structured` (the in-place and out= forms share their entry). linear is a composite: it
// calls addmm (with a bias, on a 2-d input) or matmul → mm; embedding calls index_select.
constexpr KnownOp kKnownOps[] = {
    {"addmm", {SameDeviceCheck::GeneratedWrapper, /*structured=*/true, false}},
    {"addmm_", {SameDeviceCheck::GeneratedWrapper, true, false}},
    {"mm", {SameDeviceCheck::GeneratedWrapper, true, false}},
    {"bmm", {SameDeviceCheck::GeneratedWrapper, true, false}},
    {"cat", {SameDeviceCheck::GeneratedWrapper, true, false}},
    {"index_select", {SameDeviceCheck::GeneratedWrapper, /*structured=*/false, false}},
    {"add", {SameDeviceCheck::TensorIterator, false, false}},
    {"add_", {SameDeviceCheck::TensorIterator, false, false}},
    {"sub", {SameDeviceCheck::TensorIterator, false, false}},
    {"sub_", {SameDeviceCheck::TensorIterator, false, false}},
    {"mul", {SameDeviceCheck::TensorIterator, false, false}},
    {"mul_", {SameDeviceCheck::TensorIterator, false, false}},
    {"div", {SameDeviceCheck::TensorIterator, false, false}},
    {"div_", {SameDeviceCheck::TensorIterator, false, false}},
    {"index", {SameDeviceCheck::TensorIterator, false, /*cpu_indices_allowed=*/true}},
    {"index_put_", {SameDeviceCheck::TensorIterator, false, true}},
    {"_index_put_impl_", {SameDeviceCheck::TensorIterator, false, true}},
};

}  // namespace

OpDeviceCheck same_device_check_of(const std::string& name, const std::string& overload) {
  (void)overload;  // the ops listed check alike in every overload
  for (const KnownOp& op : kKnownOps)
    if (name == op.name) return op.check;
  return {};
}

std::string cuda_wrapper_method_name(const Profile& profile, const std::string& name, const std::string& overload) {
  std::string method = profile.wrapper_names_carry_dispatch_key() ? "wrapper_CUDA_" : "wrapper_";
  const bool is_out = overload == "out";
  if (same_device_check_of(name, overload).structured) {
    // structured: the functional, in-place or out= kernel's name (addmm, addmm_, addmm_out_out)
    return method + name + (is_out ? "_out_out" : "");
  }
  // otherwise: the overload, then the kernel's name (wrapper_CUDA__index_select,
  // wrapper_CUDA_out_index_select_out)
  return method + overload + "_" + name + (is_out ? "_out" : "");
}

std::vector<MessagePiece> wrapper_device_mismatch_pieces(const Profile& profile, const std::string& method,
                                                         const std::string& argument, const std::string& device,
                                                         const std::string& common) {
  Pieces out;
  if (profile.device_message_names_argument_first()) {
    out.text("Expected all tensors to be on the same device, but got ").figure(argument).text(" is on ");
    out.figure(device).text(", different from other tensors on ").figure(common);
    out.text(" (when checking argument in method ").figure(method).text(")");
  } else {
    out.text("Expected all tensors to be on the same device, but found at least two devices, ").figure(common);
    out.text(" and ").figure(device).text("! (when checking argument for argument ").figure(argument);
    out.text(" in method ").figure(method).text(")");
  }
  return out.take();
}

std::vector<MessagePiece> iterator_device_mismatch_pieces(const std::string& common, const std::string& device) {
  Pieces out;
  out.text("Expected all tensors to be on the same device, but found at least two devices, ").figure(common);
  out.text(" and ").figure(device).text("!");
  return out.take();
}

std::string join_pieces(const std::vector<MessagePiece>& pieces) {
  std::string text;
  for (const MessagePiece& piece : pieces) text += piece.text;
  return text;
}

}  // namespace gpulab
