// libFuzzer target: the binlog decoder (protocol/binlog_decoder.hpp) on a
// stream of events without checksums (a FORMAT_DESCRIPTION with checksums off
// is fed first, as a source with binlog_checksum=NONE would send it, so that
// mutations are not all stopped by the CRC). The input is cut into events by
// the event_size of each header. Invariant: no crash or overrun, and every
// decoded value has a literal.
#include <cstdio>
#include <cstdlib>
#include <variant>

#include "protocol/binlog_decoder.hpp"
#include "tests/unit/protocol/captured_binlog.inc"

namespace {

using sp::protocol::ByteView;
using sp::protocol::Bytes;

// The FORMAT_DESCRIPTION captured from MariaDB 10.11 (post-header lengths
// of every type), its checksum algorithm set to off.
Bytes formatDescription() {
  Bytes out;
  int hi = -1;
  for (const char* c = sp::protocol::test::kCapturedBinlog[1].hex; *c; ++c) {
    int v = *c <= '9' ? *c - '0' : *c - 'a' + 10;
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(static_cast<uint8_t>(hi * 16 + v));
      hi = -1;
    }
  }
  out[out.size() - 5] = 0;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Bytes fde = formatDescription();
  sp::protocol::BinlogDecoder decoder({"mariadb-bin.000001", 4}, false);
  if (!decoder.decode(fde)) {
    std::fprintf(stderr, "the fuzz target's FORMAT_DESCRIPTION does not decode\n");
    std::abort();
  }
  ByteView in(data, size);
  while (in.size() >= sp::protocol::kBinlogHeaderSize) {
    const uint32_t event_size = uint32_t(in[9]) | uint32_t(in[10]) << 8 | uint32_t(in[11]) << 16 | uint32_t(in[12]) << 24;
    const size_t n = event_size < sp::protocol::kBinlogHeaderSize || event_size > in.size() ? in.size() : event_size;
    auto event = decoder.decode(in.first(n));
    if (event) {
      if (const auto* rows = std::get_if<sp::protocol::BinlogRowsEvent>(&event->body)) {
        for (const auto& image : rows->rows) {
          for (const auto& v : image) {
            if (sp::protocol::binlogValueLiteral(v).empty()) std::abort();
          }
        }
      }
    }
    in = in.subspan(n);
  }
  return 0;
}
