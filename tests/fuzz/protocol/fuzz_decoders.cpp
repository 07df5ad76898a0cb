// libFuzzer target over every protocol decoder. Not built by default; see
// CMakeLists.txt in this folder. Invariants: no crash or sanitizer report, and
// canonical encoders round-trip whatever the decoders accept.
#include <cstdio>
#include <cstdlib>

#include "decode_all.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sp::protocol::fuzz::decodeAll({data, size}, [](const char* what) {
    std::fprintf(stderr, "unstable re-encoding: %s\n", what);
    std::abort();
  });
  return 0;
}
