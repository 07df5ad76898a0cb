// Deterministic mutation test for the binary-protocol decoders: corrupted
// captured COM_STMT_* packets and binary rows must decode to a value or an
// error (run under -DSHARDPROXY_SANITIZE=ON for out-of-bounds reads), and
// whatever decodes must survive encode -> decode unchanged (encoders are
// canonical, e.g. shortest date lengths, so the bytes themselves may differ).
#include <gtest/gtest.h>

#include <random>
#include <span>

#include "protocol/binary_row.hpp"
#include "protocol/prepared.hpp"
#include "protocol/response_tracker.hpp"
#include "captured_prepared.inc"
#include "test_util.hpp"

namespace sp::protocol {
namespace {

using CT = ColumnType;

std::vector<Bytes> preparedSeeds() {
  std::vector<Bytes> out;
  for (auto session : {std::span<const test::CapturedPacket>(test::kPreparedClassicEof),
                              std::span<const test::CapturedPacket>(test::kPreparedDeprecateEof),
                              std::span<const test::CapturedPacket>(test::kPreparedLibmariadb)}) {
    for (const auto& p : session) {
      Bytes framed = test::hex(p.hex);
      out.emplace_back(framed.begin() + 4, framed.end());
    }
  }
  return out;
}

Bytes mutatePrepared(Bytes b, std::mt19937& rng) {
  static const uint8_t kInteresting[] = {0x00, 0x01, 0x04, 0x07, 0x08, 0x0b, 0x0c, 0xfb, 0xfc, 0xfe, 0xff};
  int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    size_t pos = b.empty() ? 0 : rng() % b.size();
    switch (rng() % 4) {
      case 0:
        if (!b.empty()) b[pos] = static_cast<uint8_t>(rng());
        break;
      case 1:
        if (!b.empty()) b[pos] = kInteresting[rng() % std::size(kInteresting)];
        break;
      case 2:
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(pos), static_cast<uint8_t>(rng()));
        break;
      case 3:
        b.resize(pos);
        break;
    }
  }
  return b;
}

// Column types of the captured rows: the 31 columns of capdb.types, the
// 16-parameter echo, and the 12-parameter libmariadb echo (a superset mix).
std::vector<std::vector<BinaryType>> rowTypes() {
  std::vector<BinaryType> all;
  for (CT t : {CT::kLong, CT::kTiny, CT::kTiny, CT::kShort, CT::kShort, CT::kInt24, CT::kInt24, CT::kLong,
               CT::kLong, CT::kLongLong, CT::kLongLong, CT::kYear, CT::kFloat, CT::kDouble, CT::kNewDecimal,
               CT::kDate, CT::kDateTime, CT::kDateTime, CT::kTimestamp, CT::kTime, CT::kTime, CT::kVarString,
               CT::kString, CT::kBlob, CT::kBlob, CT::kString, CT::kString, CT::kBit, CT::kBlob, CT::kLong,
               CT::kDouble}) {
    all.push_back({t, false});
  }
  std::vector<BinaryType> echo;
  for (CT t : {CT::kTiny, CT::kShort, CT::kLong, CT::kLongLong, CT::kFloat, CT::kDouble, CT::kDate,
               CT::kDateTime, CT::kTimestamp, CT::kTime, CT::kNewDecimal, CT::kVarString, CT::kBlob,
               CT::kNull, CT::kString, CT::kYear}) {
    echo.push_back({t, true});
  }
  return {all, echo, {{CT::kLong, false}, {CT::kDateTime, false}, {CT::kTime, false}}};
}

// encode(m) must decode again, and encoding that gives the same bytes. (Bytes
// rather than values are compared: a mutated DOUBLE may be a NaN.)
template <class M, class Encode, class Decode>
void roundTrip(const M& m, Encode encode_fn, Decode decode_fn, std::vector<std::string>& failures,
               const char* what) {
  Bytes out;
  if (!encode_fn(m, out)) {
    failures.push_back(std::string(what) + ": accepted value does not encode");
    return;
  }
  auto again = decode_fn(out);
  Bytes out2;
  if (!again || !encode_fn(*again, out2) || out2 != out) {
    failures.push_back(std::string(what) + ": re-decode differs");
  }
}

size_t decodeAll(ByteView in, const std::vector<std::vector<BinaryType>>& types,
                 std::vector<std::string>& failures) {
  size_t accepted = 0;
  auto encodeVoid = [](const auto& m, Bytes& out) { encode(m, out); return true; };
  if (auto m = decodeStmtPrepareOk(in)) {
    ++accepted;
    roundTrip(*m, encodeVoid, decodeStmtPrepareOk, failures, "prepare ok");
  }
  if (auto m = decodeStmtFetch(in)) {
    ++accepted;
    roundTrip(*m, encodeVoid, decodeStmtFetch, failures, "fetch");
  }
  if (auto m = decodeStmtSendLongData(in)) {
    ++accepted;
    roundTrip(*m, encodeVoid, decodeStmtSendLongData, failures, "long data");
  }
  for (const auto& t : types) {
    StmtParamState state{static_cast<uint16_t>(t.size()), t, {}};
    auto executeEncode = [](const StmtExecute& m, Bytes& out) { return encode(m, out).has_value(); };
    auto executeDecode = [&](ByteView b) { return decodeStmtExecute(b, state); };
    if (auto m = decodeStmtExecute(in, state)) {
      ++accepted;
      roundTrip(*m, executeEncode, executeDecode, failures, "execute");
    }
    auto rowEncode = [&](const BinaryRow& r, Bytes& out) { return encodeBinaryRow(r, t, out).has_value(); };
    auto rowDecode = [&](ByteView b) { return decodeBinaryRow(b, t); };
    if (auto r = decodeBinaryRow(in, t)) {
      ++accepted;
      roundTrip(*r, rowEncode, rowDecode, failures, "row");
    }
  }
  for (ResponseKind kind : {ResponseKind::kPrepare, ResponseKind::kFetch}) {
    ResponseTracker tracker(kind, cap::kProtocol41);
    (void)tracker.onPacket(in);
  }
  return accepted;
}

TEST(PreparedRobustness, MutatedCapturedPackets) {
  const std::vector<Bytes> base = preparedSeeds();
  const auto types = rowTypes();
  std::mt19937 rng(20261130);
  size_t accepted = 0;
  std::vector<std::string> failures;
  for (int i = 0; i < 200000; ++i) {
    Bytes input = mutatePrepared(base[rng() % base.size()], rng);
    test::ExactBuffer buf(input);
    accepted += decodeAll(buf.view(), types, failures);
    ASSERT_TRUE(failures.empty()) << failures.front() << " on " << test::toHex(input);
  }
  EXPECT_GT(accepted, 1000u);
}

}  // namespace
}  // namespace sp::protocol
