// libFuzzer target: the configuration loader (conf/config.hpp) on arbitrary
// text, as `shardproxy --config FILE --check` would see it, including
// the "file:line: path: message" report. Seeds: conf/*.yaml.
// Invariants: no crash or sanitizer report; a rejected file has at least one
// issue; an accepted one names a default backend that exists.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "conf/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = sp::conf::parseConfig(text, "/nonexistent-fuzz-dir");
  if (!config) {
    if (config.error().empty()) {
      std::fprintf(stderr, "config rejected without an issue\n");
      std::abort();
    }
    (void)sp::conf::formatIssues(config.error(), "fuzz.yaml");
    return 0;
  }
  if (!config->default_backend.empty() && config->findBackend(config->default_backend) == nullptr) {
    std::fprintf(stderr, "accepted config names a default backend it does not define\n");
    std::abort();
  }
  for (const auto& backend : config->backends) (void)sp::conf::formatHostPort(backend.address);
  return 0;
}
