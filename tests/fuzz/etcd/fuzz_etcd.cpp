// libFuzzer target: what proxy/etcd_client reads from the network, parsed by
// coord/ (HTTP response framing, the watch stream's lines, the gateway's JSON
// messages and the fleet's records). Invariant: the response decodes to the
// same body whether fed whole or split at any point (the first byte picks it).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "coord/etcd_messages.hpp"
#include "coord/fleet_fence.hpp"
#include "coord/fleet_records.hpp"
#include "coord/http_codec.hpp"
#include "coord/line_splitter.hpp"

namespace {

struct Decoded {
  sp::coord::HttpReadError error;
  std::string body;
  bool complete;
};

Decoded feed(std::string_view bytes, size_t split) {
  sp::coord::HttpResponseReader reader(1 << 20);
  Decoded d{};
  d.error = reader.feed(bytes.substr(0, split));
  d.body += reader.takeBody();
  if (d.error == sp::coord::HttpReadError::kNone) d.error = reader.feed(bytes.substr(split));
  d.body += reader.takeBody();
  if (d.error == sp::coord::HttpReadError::kNone) d.error = reader.finish();
  d.body += reader.takeBody();
  d.complete = reader.complete();
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t split = input.empty() ? 0 : data[0] % (input.size() + 1);
  Decoded whole = feed(input, input.size());
  Decoded parts = feed(input, split);
  if (whole.error != parts.error || (whole.error == sp::coord::HttpReadError::kNone && whole.body != parts.body)) {
    std::fprintf(stderr, "http reader: a split changed the result\n");
    std::abort();
  }
  sp::coord::LineSplitter lines(1 << 20);
  lines.append(whole.error == sp::coord::HttpReadError::kNone ? whole.body : std::string(input));
  while (auto line = lines.next()) {
    (void)sp::coord::parseEtcdWatchLine(*line);
    (void)sp::coord::parseEtcdRange(*line);
    (void)sp::coord::parseEtcdTxn(*line);
    (void)sp::coord::parseEtcdLeaseKeepAlive(*line);
    (void)sp::coord::decodePublishedMap(*line);
    (void)sp::coord::decodeMemberRecord(*line);
    (void)sp::coord::decodeFenceRequest(*line);
  }
  return 0;
}
