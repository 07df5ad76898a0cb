// Micro-benchmarks of the protocol/ hot path: what the proxy does for every
// packet it forwards (de-framing, response tracking) and the decoders it uses
// when it has to look inside a packet (OK packets, column definitions, rows).
// Inputs are built with the library's own encoders so they match the wire
// format exactly; items_processed counts packets (or rows), so Google
// Benchmark prints a per-packet rate.
#include <benchmark/benchmark.h>

#include <optional>
#include <string>
#include <vector>

#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/packet.hpp"
#include "protocol/response_tracker.hpp"
#include "protocol/resultset.hpp"

namespace {

using namespace sp::protocol;

constexpr uint32_t kCaps = cap::kProtocol41 | cap::kTransactions | cap::kSecureConnection |
                           cap::kPluginAuth | cap::kSessionTrack | cap::kDeprecateEof |
                           cap::kMultiResults;

// The msg_range result shape: seq, msg_id, sender_uid, msg_type, content, created_at.
const char* const kColumns[] = {"seq", "msg_id", "sender_uid", "msg_type", "content", "created_at"};

ColumnDefinition41 columnDef(const char* name) {
  ColumnDefinition41 c;
  c.schema = "im";
  c.table = "msg";
  c.org_table = "msg_07";
  c.name = name;
  c.org_name = name;
  c.character_set = 63;
  c.column_length = 20;
  c.type = ColumnType::kLongLong;
  return c;
}

std::vector<std::optional<std::string>> sampleRow(int i) {
  return {std::to_string(456 + i), std::to_string(900000000000LL + i), "10042", "1",
          std::string(64, 'x'), "2026-01-15 10:11:12.345"};
}

Bytes okPayload() {
  OkPacket ok;
  ok.affected_rows = 1;
  ok.last_insert_id = 0;
  ok.status_flags = 0x0002;  // SERVER_STATUS_AUTOCOMMIT
  Bytes out;
  encode(ok, kCaps, out);
  return out;
}

void BM_DecodeOkPacket(benchmark::State& state) {
  const Bytes payload = okPayload();
  for (auto _ : state) {
    auto ok = decodeOkPacket(payload, kCaps);
    benchmark::DoNotOptimize(ok);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeOkPacket);

void BM_EncodeOkPacket(benchmark::State& state) {
  OkPacket ok;
  ok.affected_rows = 1;
  ok.status_flags = 0x0002;
  Bytes out;
  for (auto _ : state) {
    out.clear();
    encode(ok, kCaps, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeOkPacket);

void BM_DecodeColumnDefinition41(benchmark::State& state) {
  Bytes payload;
  encode(columnDef("sender_uid"), payload);
  for (auto _ : state) {
    auto def = decodeColumnDefinition41(payload);
    benchmark::DoNotOptimize(def);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeColumnDefinition41);

void BM_DecodeTextRow(benchmark::State& state) {
  Bytes payload;
  encodeTextRow(sampleRow(0), payload);
  for (auto _ : state) {
    auto row = decodeTextRow(payload, 6);
    benchmark::DoNotOptimize(row);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeTextRow);

void BM_EncodeTextRow(benchmark::State& state) {
  const auto values = sampleRow(0);
  Bytes out;
  for (auto _ : state) {
    out.clear();
    encodeTextRow(values, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeTextRow);

// A whole msg_range response under DEPRECATE_EOF: column count, 6 column
// definitions, N rows, the closing 0xfe OK. Payloads only (not framed).
std::vector<Bytes> resultSetPayloads(int rows) {
  std::vector<Bytes> packets;
  Bytes count;
  encodeColumnCount(6, count);
  packets.push_back(count);
  for (const char* name : kColumns) {
    Bytes def;
    encode(columnDef(name), def);
    packets.push_back(def);
  }
  for (int i = 0; i < rows; ++i) {
    Bytes row;
    encodeTextRow(sampleRow(i), row);
    packets.push_back(row);
  }
  OkPacket end;
  end.status_flags = 0x0002;
  Bytes eof;
  encode(end, kCaps, eof, 0xfe);
  packets.push_back(eof);
  return packets;
}

// The per-packet cost of following a response (what the forwarder pays).
void BM_ResponseTrackerPerPacket(benchmark::State& state) {
  const auto packets = resultSetPayloads(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    ResponseTracker tracker(ResponseKind::kQuery, kCaps);
    for (const Bytes& p : packets) {
      auto ev = tracker.onPacket(p);
      benchmark::DoNotOptimize(ev);
    }
    if (!tracker.done()) state.SkipWithError("tracker did not finish the response");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(packets.size()));
}
BENCHMARK(BM_ResponseTrackerPerPacket)->Arg(1)->Arg(50);

// De-framing the same response as it arrives in one read: items = packets.
void BM_MessageAssemblerPerPacket(benchmark::State& state) {
  const auto packets = resultSetPayloads(static_cast<int>(state.range(0)));
  Bytes wire;
  uint8_t seq = 1;
  for (const Bytes& p : packets) seq = appendFramed(wire, p, seq);
  for (auto _ : state) {
    MessageAssembler assembler(1u << 26);
    assembler.feed(wire);
    size_t n = 0;
    while (true) {
      auto msg = assembler.next();
      if (!msg || !msg->has_value()) break;
      benchmark::DoNotOptimize(msg);
      ++n;
    }
    if (n != packets.size()) state.SkipWithError("assembler lost packets");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(packets.size()));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(wire.size()));
}
BENCHMARK(BM_MessageAssemblerPerPacket)->Arg(1)->Arg(50);

}  // namespace

BENCHMARK_MAIN();
