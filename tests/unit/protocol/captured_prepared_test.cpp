// Prepared-statement exchanges captured from a real MariaDB 10.11 (and the
// libmariadb C API), replayed through the codec the way a proxy would: every
// command decoded with the statement state a session keeps, every response
// followed by the ResponseTracker, every binary row decoded; everything must
// re-encode to the captured bytes. See captured_prepared.inc.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <span>

#include "protocol/binary_row.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/handshake.hpp"
#include "protocol/packet.hpp"
#include "protocol/prepared.hpp"
#include "protocol/response_tracker.hpp"
#include "captured_prepared.inc"
#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::CapturedPacket;
using test::ExactBuffer;
using test::hex;
using Ev = ResponseEvent;

struct Result {
  std::vector<ColumnDefinition41> columns;
  std::vector<Bytes> rows;  // payloads
  bool binary = false;
};

// One command and what came back.
struct Exchange {
  Bytes command;
  std::vector<Ev> events;
  std::vector<Result> results;
  std::optional<StmtExecute> execute;  // views into `command`
  std::optional<StmtPrepareOk> prepare_ok;
  uint16_t final_status = 0;
};

Bytes payloadOf(const CapturedPacket& p) {
  Bytes f = hex(p.hex);
  return Bytes(f.begin() + kHeaderSize, f.end());
}

// Replays a captured session as a proxy session would see it.
class Replay {
 public:
  template <size_t N>
  explicit Replay(const CapturedPacket (&packets)[N]) : packets_(packets, N) {}

  void run() {
    Bytes greeting = payloadOf(packets_[0]);
    Bytes login = payloadOf(packets_[1]);
    auto g = decodeHandshakeV10(greeting);
    auto l = decodeHandshakeResponse41(login);
    ASSERT_TRUE(g && l);
    caps_ = g->capabilities & l->capabilities;
    mariadb_caps_ = g->mariadb_capabilities & l->mariadb_capabilities;
    size_t i = 2;
    while (i < packets_.size() && (packets_[i].from_server || hex(packets_[i].hex)[3] != 0)) ++i;
    while (i < packets_.size()) {
      SCOPED_TRACE("packet " + std::to_string(i));
      ASSERT_FALSE(packets_[i].from_server) << "response longer than the tracker says";
      exchanges_.emplace_back();
      Exchange& x = exchanges_.back();
      x.command = payloadOf(packets_[i++]);
      onCommand(x);
      ResponseTracker t(responseKindOf(ByteView(x.command)), caps_, mariadb_caps_);
      while (!t.done()) {
        SCOPED_TRACE("response packet " + std::to_string(i));
        ASSERT_LT(i, packets_.size());
        ASSERT_TRUE(packets_[i].from_server);
        Bytes p = payloadOf(packets_[i++]);
        auto e = t.onPacket(ExactBuffer(p).view());
        ASSERT_TRUE(e.has_value()) << toString(e.error());
        x.events.push_back(*e);
        onResponse(x, *e, p, t);
      }
      x.final_status = t.statusFlags();
    }
  }

  const std::deque<Exchange>& exchanges() const { return exchanges_; }
  uint32_t mariadbCaps() const { return mariadb_caps_; }

 private:
  void expectReencodes(const Bytes& original, const Bytes& encoded) {
    EXPECT_EQ(test::toHex(encoded), test::toHex(original));
  }

  void onCommand(Exchange& x) {
    Bytes out;
    switch (static_cast<Command>(x.command[0])) {
      case Command::kStmtPrepare: {
        auto m = decodeStmtPrepare(x.command);
        ASSERT_TRUE(m.has_value());
        encode(*m, out);
        break;
      }
      case Command::kStmtExecute: {
        Reader reader(ByteView(x.command).subspan(1));
        uint32_t id = reader.u32().value();
        if (!states_.contains(id)) return;  // closed: the server answers ERR (a proxy would itself)
        StmtParamState& state = states_[id];
        auto m = decodeStmtExecute(x.command, state);
        ASSERT_TRUE(m.has_value()) << toString(m.error());
        ASSERT_TRUE(encode(*m, out).has_value());
        rememberExecute(state, *m);
        current_statement_ = id;
        x.execute = *m;
        break;
      }
      case Command::kStmtSendLongData: {
        auto m = decodeStmtSendLongData(x.command);
        ASSERT_TRUE(m.has_value());
        EXPECT_TRUE(states_[m->statement_id].noteLongData(m->param_id));
        encode(*m, out);
        break;
      }
      case Command::kStmtClose: {
        auto m = decodeStmtClose(x.command);
        ASSERT_TRUE(m.has_value());
        states_.erase(m->statement_id);
        encode(*m, out);
        break;
      }
      case Command::kStmtReset: {
        auto m = decodeStmtReset(x.command);
        ASSERT_TRUE(m.has_value());
        states_[m->statement_id].long_data.clear();
        encode(*m, out);
        break;
      }
      case Command::kStmtFetch: {
        auto m = decodeStmtFetch(x.command);
        ASSERT_TRUE(m.has_value());
        current_statement_ = m->statement_id;
        encode(*m, out);
        break;
      }
      default:
        return;  // COM_QUERY, COM_QUIT: covered by captured_test.cpp
    }
    expectReencodes(x.command, out);
  }

  void onResponse(Exchange& x, Ev e, const Bytes& p, const ResponseTracker& t) {
    Command cmd = static_cast<Command>(x.command[0]);
    bool binary = cmd == Command::kStmtExecute || cmd == Command::kStmtFetch;
    Bytes out;
    switch (e) {
      case Ev::kPrepareOk: {
        auto ok = decodeStmtPrepareOk(p);
        ASSERT_TRUE(ok.has_value());
        EXPECT_EQ(*ok, t.prepareOk());
        encode(*ok, out);
        expectReencodes(p, out);
        states_[ok->statement_id] = StmtParamState{ok->num_params, {}, {}};
        x.prepare_ok = *ok;
        break;
      }
      case Ev::kParamDef: {
        auto c = decodeColumnDefinition41(p, mariadb_caps_);
        ASSERT_TRUE(c.has_value());
        EXPECT_EQ(*c, paramDefinition());
        encode(paramDefinition(), out, mariadb_caps_);
        expectReencodes(p, out);
        break;
      }
      case Ev::kColumnCount:
        x.results.push_back(Result{{}, {}, binary});
        break;
      case Ev::kColumnDef: {
        auto c = decodeColumnDefinition41(p, mariadb_caps_);
        ASSERT_TRUE(c.has_value());
        if (x.results.empty()) break;  // prepare response columns
        x.results.back().columns.push_back(*c);
        if (binary) cursor_columns_[current_statement_] = x.results.back().columns;
        break;
      }
      case Ev::kRow:
        if (cmd == Command::kStmtFetch && x.results.empty()) {
          x.results.push_back(Result{cursor_columns_[current_statement_], {}, true});
        }
        ASSERT_FALSE(x.results.empty());
        x.results.back().rows.push_back(p);
        if (binary) checkBinaryRow(x.results.back(), p);
        break;
      default:
        break;
    }
  }

  void checkBinaryRow(const Result& r, const Bytes& p) {
    auto types = binaryTypesOf(r.columns);
    auto row = decodeBinaryRow(ExactBuffer(p).view(), types);
    ASSERT_TRUE(row.has_value()) << toString(row.error());
    auto again = decodeBinaryRow(p, types);  // views into p, alive here
    Bytes out;
    ASSERT_TRUE(encodeBinaryRow(*again, types, out).has_value());
    expectReencodes(p, out);
  }

  std::span<const CapturedPacket> packets_;
  uint32_t caps_ = 0;
  uint32_t mariadb_caps_ = 0;
  std::map<uint32_t, StmtParamState> states_;
  std::map<uint32_t, std::vector<ColumnDefinition41>> cursor_columns_;
  uint32_t current_statement_ = 0;
  std::deque<Exchange> exchanges_;
};

const Exchange& find(const Replay& r, std::string_view command_prefix, size_t nth = 0) {
  for (const Exchange& x : r.exchanges()) {
    std::string_view c(reinterpret_cast<const char*>(x.command.data()), x.command.size());
    if (c.starts_with(command_prefix) && nth-- == 0) return x;
  }
  static const Exchange kNone;
  ADD_FAILURE() << "no command starting with " << command_prefix;
  return kNone;
}

class CapturedPrepared : public ::testing::TestWithParam<bool> {};

TEST_P(CapturedPrepared, EveryPacketDecodesAndReencodes) {
  bool deprecate = GetParam();
  Replay r = deprecate ? Replay(test::kPreparedDeprecateEof) : Replay(test::kPreparedClassicEof);
  r.run();
  EXPECT_GT(r.exchanges().size(), 15u);
}

// The binary rows of SELECT * FROM types, turned into text, are the text rows
// the same server sent for the same query; and text -> binary gives the bytes.
TEST_P(CapturedPrepared, BinaryRowsMatchTextRows) {
  bool deprecate = GetParam();
  Replay r = deprecate ? Replay(test::kPreparedDeprecateEof) : Replay(test::kPreparedClassicEof);
  r.run();
  const Exchange& bin = find(r, "\x17", 0);
  const Exchange& text = find(r, "\x03SELECT * FROM types");
  ASSERT_EQ(bin.results.size(), 1u);
  ASSERT_EQ(text.results.size(), 1u);
  const Result& b = bin.results[0];
  const Result& t = text.results[0];
  ASSERT_EQ(b.rows.size(), 4u);
  ASSERT_EQ(t.rows.size(), 4u);
  ASSERT_EQ(b.columns.size(), 31u);
  auto types = binaryTypesOf(b.columns);
  for (size_t row = 0; row < 4; ++row) {
    auto values = decodeBinaryRow(b.rows[row], types);
    auto texts = decodeTextRow(t.rows[row], t.columns.size());
    ASSERT_TRUE(values && texts);
    std::vector<BinaryValue> rebuilt;
    for (size_t c = 0; c < types.size(); ++c) {
      SCOPED_TRACE("row " + std::to_string(row) + " column " + b.columns[c].name);
      auto as_text = toText((*values)[c], t.columns[c]);
      EXPECT_EQ(as_text.has_value(), (*texts)[c].has_value());
      if (as_text && (*texts)[c]) {
        EXPECT_EQ(*as_text, *(*texts)[c]);
      }
      auto back = fromText((*texts)[c], b.columns[c]);
      ASSERT_TRUE(back.has_value());
      // DOUBLE(M,D) text is rounded to D digits: it renders back the same but
      // need not give the stored bits (MariaDB stores -0.001 as 0xbf50624dd2f1aa00).
      bool fixed_float = (b.columns[c].type == ColumnType::kDouble ||
                          b.columns[c].type == ColumnType::kFloat) && b.columns[c].decimals < 31;
      if (fixed_float && (*texts)[c]) {
        EXPECT_EQ(toText(*back, t.columns[c]), *(*texts)[c]);
      }
      rebuilt.push_back(fixed_float ? (*values)[c] : *back);
    }
    Bytes out;
    ASSERT_TRUE(encodeBinaryRow(rebuilt, types, out).has_value());
    EXPECT_EQ(test::toHex(out), test::toHex(b.rows[row]));
  }
}

TEST_P(CapturedPrepared, CursorAndFetch) {
  bool deprecate = GetParam();
  Replay r = deprecate ? Replay(test::kPreparedDeprecateEof) : Replay(test::kPreparedClassicEof);
  r.run();
  const Exchange& cursor = find(r, std::string_view("\x17", 1), 4);
  ASSERT_TRUE(cursor.execute.has_value());
  EXPECT_EQ(cursor.execute->flags, 1);  // CURSOR_TYPE_READ_ONLY
  EXPECT_TRUE(cursor.final_status & status::kCursorExists);
  EXPECT_EQ(cursor.events.back(), deprecate ? Ev::kRowsEnd : Ev::kColumnsEof);
  const Exchange& fetch1 = find(r, "\x1c", 0);
  const Exchange& fetch2 = find(r, "\x1c", 1);
  ASSERT_EQ(fetch1.results.size(), 1u);
  EXPECT_EQ(fetch1.results[0].rows.size(), 3u);
  EXPECT_FALSE(fetch1.final_status & status::kLastRowSent);
  ASSERT_EQ(fetch2.results.size(), 1u);
  EXPECT_EQ(fetch2.results[0].rows.size(), 1u);
  EXPECT_TRUE(fetch2.final_status & status::kLastRowSent);
  auto types = binaryTypesOf(fetch2.results[0].columns);
  auto row = decodeBinaryRow(fetch2.results[0].rows[0], types);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ((*row)[0], BinaryValue{int64_t{4}});
  EXPECT_EQ((*row)[1], BinaryValue(BinaryDateTime{2024, 3, 1, 0, 0, 0, 500000}));
  EXPECT_EQ((*row)[2], BinaryValue(BinaryTime{false, 34, 22, 59, 59, 0}));
}

TEST_P(CapturedPrepared, EchoedParameters) {
  bool deprecate = GetParam();
  Replay r = deprecate ? Replay(test::kPreparedDeprecateEof) : Replay(test::kPreparedClassicEof);
  r.run();
  const Exchange& first = find(r, std::string_view("\x17", 1), 1);
  ASSERT_TRUE(first.execute.has_value());
  const StmtExecute& e = *first.execute;
  EXPECT_TRUE(e.new_params_bound);
  ASSERT_EQ(e.values.size(), 16u);
  EXPECT_EQ(e.values[0], BinaryValue{int64_t{-5}});
  EXPECT_EQ(e.values[1], BinaryValue{uint64_t{65535}});
  EXPECT_EQ(e.values[3], BinaryValue{uint64_t{18446744073709551615u}});
  EXPECT_EQ(e.values[5], BinaryValue{-0.1});
  EXPECT_EQ(e.values[9], BinaryValue(BinaryTime{true, 34, 22, 59, 59, 500000}));
  std::string long_string(300, 'x');
  EXPECT_EQ(e.values[11], BinaryValue{std::string_view(long_string)});
  EXPECT_TRUE(isNull(e.values[13]));
  EXPECT_TRUE(isNull(e.values[14]));
  // The server echoes each parameter back as a column of the matching type.
  ASSERT_EQ(first.results.size(), 1u);
  auto types = binaryTypesOf(first.results[0].columns);
  auto row = decodeBinaryRow(first.results[0].rows[0], types);
  ASSERT_TRUE(row.has_value());
  // (All but the YEAR parameter, which MariaDB 10.11 echoes as NULL.)
  EXPECT_TRUE(isNull((*row)[15]));
  for (size_t i = 0; i < 15; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ((*row)[i], e.values[i]);
  }
  // The second execute did not resend the types: they came from the state.
  const Exchange& second = find(r, std::string_view("\x17", 1), 2);
  ASSERT_TRUE(second.execute.has_value());
  EXPECT_FALSE(second.execute->new_params_bound);
  EXPECT_EQ(second.execute->types, e.types);
  EXPECT_EQ(second.execute->values[5], BinaryValue{1e300});
  EXPECT_TRUE(isNull(second.execute->values[1]));
}

INSTANTIATE_TEST_SUITE_P(EofStyles, CapturedPrepared, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "DeprecateEof" : "ClassicEof"; });

TEST(CapturedLibmariadb, ClientExecutesDecode) {
  Replay r(test::kPreparedLibmariadb);
  r.run();
  EXPECT_EQ(r.mariadbCaps(), mariadb_cap::kExtendedTypeInfo | mariadb_cap::kCacheMetadata |
                                 mariadb_cap::kStmtBulkOperations | mariadb_cap::kProgress);
  const Exchange& first = find(r, std::string_view("\x17", 1), 0);
  ASSERT_TRUE(first.execute.has_value());
  const StmtExecute& e = *first.execute;
  ASSERT_EQ(e.values.size(), 12u);
  using Kind = ParamDescription::Kind;
  auto describe = [&](size_t i) { return describeParam(e.values[i], e.types[i]).value(); };
  EXPECT_EQ(describe(0), (ParamDescription{Kind::kSigned, -7, 0, 0, ""}));
  EXPECT_EQ(describe(1), (ParamDescription{Kind::kUnsigned, 0, 65535, 0, ""}));
  EXPECT_EQ(describe(3), (ParamDescription{Kind::kUnsigned, 0, 18446744073709551615u, 0, ""}));
  EXPECT_EQ(describe(4), (ParamDescription{Kind::kDouble, 0, 0, 3.25, ""}));
  EXPECT_EQ(describe(6), (ParamDescription{Kind::kString, 0, 0, 0, "2024-02-29"}));
  EXPECT_EQ(describe(7), (ParamDescription{Kind::kString, 0, 0, 0, "2024-03-01 13:14:15.999999"}));
  EXPECT_EQ(describe(8), (ParamDescription{Kind::kString, 0, 0, 0, "-70:59:59"}));  // hour 838 & 0xff
  EXPECT_EQ(describe(10), (ParamDescription{Kind::kDecimal, 0, 0, 0, "12345.678"}));
  EXPECT_EQ(describe(11), ParamDescription{});

  const Exchange& second = find(r, std::string_view("\x17", 1), 1);
  ASSERT_TRUE(second.execute.has_value());
  EXPECT_FALSE(second.execute->new_params_bound);
  EXPECT_EQ(second.execute->values[0], BinaryValue{int64_t{100}});
  EXPECT_EQ(second.execute->values[11], BinaryValue{int64_t{42}});

  // Parameter 0 came as long data: no bytes in the execute packet.
  const Exchange& long_data = find(r, std::string_view("\x17", 1), 2);
  ASSERT_TRUE(long_data.execute.has_value());
  EXPECT_EQ(long_data.execute->values[0], BinaryValue{LongDataValue{}});
  EXPECT_EQ(long_data.execute->values[1], BinaryValue{int64_t{41}});
  EXPECT_FALSE(describeParam(long_data.execute->values[0], long_data.execute->types[0]).has_value());
  ASSERT_EQ(long_data.results.size(), 1u);
  auto row = decodeBinaryRow(long_data.results[0].rows[0], binaryTypesOf(long_data.results[0].columns));
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ((*row)[0], BinaryValue{std::string_view("chunk1-chunk2x")});
  EXPECT_EQ((*row)[1], BinaryValue{int64_t{42}});
}

}  // namespace
}  // namespace sp::protocol
