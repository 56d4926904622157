// A prestarted lesson's request (src/proc/prestart.cpp), as another process writes it: the
// decoder never crashes, and whatever it accepts has at least a program and comes back the
// same through encode and decode again (nothing is lost or invented on the way).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "proc/prestart.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto request = gpulab::decode_prestart_request(text);
  if (!request) return 0;
  if (request->argv.empty()) std::abort();
  const auto again = gpulab::decode_prestart_request(gpulab::encode_prestart_request(*request));
  if (!again || again->folder != request->folder || again->argv != request->argv || again->env != request->env)
    std::abort();
  return 0;
}
