// Decoding (and re-encoding) bytes captured from a real MariaDB 10.11 server
// and real clients; see captured_mariadb.inc for how they were captured.
#include <gtest/gtest.h>

#include "protocol/auth.hpp"
#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/handshake.hpp"
#include "protocol/packet.hpp"
#include "protocol/response_tracker.hpp"
#include "protocol/resultset.hpp"
#include "captured_mariadb.inc"
#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::CapturedPacket;
using test::ExactBuffer;
using test::expectEveryPrefixFails;
using test::hex;
using Ev = ResponseEvent;

Bytes framed(const CapturedPacket& p) { return hex(p.hex); }

Bytes payload(const CapturedPacket& p) {
  Bytes f = framed(p);
  auto h = decodeHeader(ByteView(f).first(4));
  EXPECT_TRUE(h.has_value());
  EXPECT_EQ(h->payload_length, f.size() - 4);
  return Bytes(f.begin() + 4, f.end());
}

std::string toString(const Bytes& b) { return std::string(b.begin(), b.end()); }

// ---- mariadb CLI (libmariadb) session ------------------------------------

TEST(CapturedCli, Greeting) {
  Bytes in = payload(test::kCliSession[0]);
  auto g = decodeHandshakeV10(ExactBuffer(in).view());
  ASSERT_TRUE(g.has_value()) << toString(g.error());
  EXPECT_EQ(g->protocol_version, 10);
  EXPECT_EQ(g->server_version, "5.5.5-10.11.19-MariaDB-0+deb12u1");
  EXPECT_EQ(g->connection_id, 6u);
  EXPECT_EQ(g->auth_plugin_data, "5IR@(Gjb.Z]F%&,ImjKu");
  EXPECT_EQ(g->capabilities, 0x81fff7feu);
  EXPECT_EQ(g->capabilities & cap::kLongPassword, 0u);  // MariaDB: extended caps follow
  EXPECT_EQ(g->character_set, 8);
  EXPECT_EQ(g->status_flags, status::kAutocommit);
  EXPECT_EQ(g->mariadb_capabilities, mariadb_cap::kProgress | mariadb_cap::kStmtBulkOperations |
                                         mariadb_cap::kExtendedTypeInfo | mariadb_cap::kCacheMetadata);
  EXPECT_EQ(g->auth_plugin_name, kNativePasswordPlugin);
  Bytes out;
  encode(*g, out);
  EXPECT_EQ(test::toHex(out), test::toHex(in));
  expectEveryPrefixFails(in, decodeHandshakeV10);
}

TEST(CapturedCli, HandshakeResponse) {
  Bytes in = payload(test::kCliSession[1]);
  auto r = decodeHandshakeResponse41(ExactBuffer(in).view());
  ASSERT_TRUE(r.has_value()) << toString(r.error());
  EXPECT_EQ(r->capabilities, 0x00bfa28cu);
  EXPECT_TRUE(r->capabilities & cap::kPluginAuthLenencClientData);
  EXPECT_FALSE(r->capabilities & cap::kDeprecateEof);
  EXPECT_EQ(r->max_packet_size, 0x00100000u);
  EXPECT_EQ(r->character_set, 33);
  EXPECT_EQ(r->mariadb_capabilities, 0x1du);
  EXPECT_EQ(r->username, "cap");
  EXPECT_EQ(r->auth_response.size(), 20u);
  EXPECT_EQ(r->database, "capdb");
  EXPECT_EQ(r->auth_plugin_name, kNativePasswordPlugin);
  const std::vector<std::pair<std::string, std::string>> attrs = {
      {"_os", "Linux"},         {"_client_name", "libmariadb"}, {"_pid", "7254"},
      {"_client_version", "3.3.20"}, {"_platform", "x86_64"},  {"program_name", "mysql"},
      {"_server_host", "127.0.0.1"}};
  EXPECT_EQ(r->attributes, attrs);
  Bytes out;
  encode(*r, out);
  EXPECT_EQ(test::toHex(out), test::toHex(in));
  expectEveryPrefixFails(in, decodeHandshakeResponse41);
}

// The real client computed this response and the real server accepted it (an
// OK packet follows), so it is a vector verified by MariaDB itself.
TEST(CapturedCli, NativePasswordAcceptedByServer) {
  auto g = decodeHandshakeV10(payload(test::kCliSession[0]));
  auto r = decodeHandshakeResponse41(payload(test::kCliSession[1]));
  ASSERT_TRUE(g && r);
  ASSERT_TRUE(isOkPacket(payload(test::kCliSession[2])));
  EXPECT_EQ(nativePasswordResponse("secret", g->auth_plugin_data), r->auth_response);
  EXPECT_TRUE(verifyNativePassword("secret", g->auth_plugin_data, r->auth_response));
  EXPECT_FALSE(verifyNativePassword("secret2", g->auth_plugin_data, r->auth_response));
}

TEST(CapturedCli, LoginOkWithSessionState) {
  Bytes in = payload(test::kCliSession[2]);
  const uint32_t caps = 0x81fff7feu & 0x00bfa28cu;
  auto ok = decodeOkPacket(ExactBuffer(in).view(), caps);
  ASSERT_TRUE(ok.has_value()) << toString(ok.error());
  // SESSION_TRACK_SCHEMA (type 1) announcing the default database.
  EXPECT_EQ(*ok, (OkPacket{0, 0, status::kAutocommit | status::kSessionStateChanged, 0, "",
                           std::string("\x01\x06\x05" "capdb", 8)}));
  Bytes out;
  encode(*ok, caps, out);
  EXPECT_EQ(out, in);
  expectEveryPrefixFails(in, [&](ByteView b) { return decodeOkPacket(b, caps); });
}

// MariaDB 10.11's OK of USE into a database whose default character set is
// ucs2 (captured from COM_INIT_DB with session tracking on): bytes follow the
// session state's length. Clients read the length and ignore them; so do we.
TEST(CapturedServer, OkOfUseIntoUcs2DatabaseHasBytesPastTheState) {
  const uint8_t raw[] = {0x00, 0x00, 0x00, 0x02, 0x40, 0x00, 0x00, 0x00, 0x00, 0x0e, 0x01, 0x09,
                         0x08, 'i',  't',  '_',  'u',  'c',  's',  '2',  'x',  0x02, 0x01, '1'};
  const Bytes in(raw, raw + sizeof raw);
  auto ok = decodeOkPacket(ExactBuffer(in).view(), cap::kSessionTrack | cap::kProtocol41);
  ASSERT_TRUE(ok.has_value()) << toString(ok.error());
  EXPECT_EQ(ok->status_flags, status::kAutocommit | status::kSessionStateChanged);
  EXPECT_EQ(ok->session_state_info, "");
  // Without session tracking the same bytes are not an OK packet.
  EXPECT_FALSE(decodeOkPacket(ExactBuffer(in).view(), cap::kProtocol41).has_value());
}

TEST(CapturedCli, SelectStreamAtEverySplit) {
  // The server's whole answer to the SELECT, as it arrived on the socket.
  Bytes wire;
  std::vector<Bytes> payloads;
  for (size_t i = 4; i <= 10; ++i) {
    Bytes f = framed(test::kCliSession[i]);
    wire.insert(wire.end(), f.begin(), f.end());
    payloads.push_back(payload(test::kCliSession[i]));
  }
  for (size_t split = 0; split <= wire.size(); ++split) {
    SCOPED_TRACE(split);
    MessageAssembler a(1 << 20);
    std::vector<MessageAssembler::Message> got;
    for (ByteView part : {ByteView(wire).first(split), ByteView(wire).subspan(split)}) {
      a.feed(part);
      while (true) {
        auto m = a.next();
        ASSERT_TRUE(m.has_value());
        if (!m->has_value()) break;
        got.push_back(std::move(**m));
      }
    }
    ASSERT_EQ(got.size(), payloads.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].payload, payloads[i]);
      EXPECT_EQ(got[i].first_sequence_id, i + 1);
      EXPECT_EQ(got[i].last_sequence_id, i + 1);
    }
  }
}

TEST(CapturedCli, SelectWithMariadbExtendedMetadata) {
  const uint32_t caps = 0x81fff7feu & 0x00bfa28cu;
  const uint32_t mcaps = 0x1d;
  ResponseTracker t(ResponseKind::kQuery, caps, mcaps);
  const Ev expected[] = {Ev::kColumnCount, Ev::kColumnDef, Ev::kColumnDef, Ev::kColumnDef,
                         Ev::kColumnsEof,  Ev::kRow,       Ev::kRowsEnd};
  for (size_t i = 0; i < 7; ++i) {
    ASSERT_FALSE(t.done());
    EXPECT_EQ(t.onPacket(payload(test::kCliSession[4 + i])).value(), expected[i]) << i;
  }
  EXPECT_TRUE(t.done());
  EXPECT_EQ(t.statusFlags(), status::kAutocommit | status::kNoIndexUsed);

  // Column count carries the "metadata follows" byte (MARIADB_CLIENT_CACHE_METADATA).
  EXPECT_EQ(decodeColumnCount(payload(test::kCliSession[4]), mcaps).value(), (ColumnCount{3, true}));
  EXPECT_EQ(decodeColumnCount(payload(test::kCliSession[4])).error(), DecodeError::kExtraBytes);

  const char* names[] = {"id", "name", "note"};
  const ColumnType types[] = {ColumnType::kLong, ColumnType::kVarString, ColumnType::kBlob};
  const uint32_t lengths[] = {11, 60, 196605};  // VARCHAR(20) and TEXT in utf8mb3 (3 bytes a char)
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(names[i]);
    Bytes in = payload(test::kCliSession[5 + i]);
    auto c = decodeColumnDefinition41(ExactBuffer(in).view(), mcaps);
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->catalog, "def");
    EXPECT_EQ(c->schema, "capdb");
    EXPECT_EQ(c->table, "t");
    EXPECT_EQ(c->org_table, "t");
    EXPECT_EQ(c->name, names[i]);
    EXPECT_EQ(c->org_name, names[i]);
    EXPECT_EQ(c->extended_type_info, "");
    EXPECT_EQ(c->type, types[i]);
    EXPECT_EQ(c->column_length, lengths[i]);
    Bytes out;
    encode(*c, out, mcaps);
    EXPECT_EQ(out, in);
    expectEveryPrefixFails(in, [&](ByteView b) { return decodeColumnDefinition41(b, mcaps); });
  }
  auto id = decodeColumnDefinition41(payload(test::kCliSession[5]), mcaps);
  EXPECT_EQ(id->character_set, kCollationBinary);
  EXPECT_EQ(id->flags, column_flag::kNotNull | column_flag::kPrimaryKey | column_flag::kAutoIncrement |
                           0x4000 /* PART_KEY */);

  Bytes row = payload(test::kCliSession[9]);
  ExactBuffer buf(row);  // the values point into it: keep it alive
  auto r = decodeTextRow(buf.view(), 3);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ((*r)[0], "1");
  EXPECT_EQ((*r)[1], "alice");
  EXPECT_FALSE((*r)[2].has_value());
  Bytes out;
  encodeTextRow(*r, out);
  EXPECT_EQ(out, row);

  Bytes eof = payload(test::kCliSession[10]);
  EXPECT_EQ(decodeEofPacket(eof).value(), (EofPacket{0, 0x0022}));
  out.clear();
  encode(EofPacket{0, 0x0022}, out);
  EXPECT_EQ(out, eof);
}

TEST(CapturedCli, InsertOkCarriesLenencInfo) {
  const uint32_t caps = 0x81fff7feu & 0x00bfa28cu;
  Bytes in = payload(test::kCliSession[12]);
  auto ok = decodeOkPacket(ExactBuffer(in).view(), caps);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*ok, (OkPacket{2, 3, status::kAutocommit, 0, "Records: 2  Duplicates: 0  Warnings: 0", ""}));
  Bytes out;
  encode(*ok, caps, out);
  EXPECT_EQ(out, in);
  ResponseTracker t(ResponseKind::kQuery, caps, 0x1d);
  EXPECT_EQ(t.onPacket(in).value(), Ev::kOk);
  EXPECT_TRUE(t.done());
  EXPECT_EQ(t.affectedRows(), 2u);
  EXPECT_EQ(t.lastInsertId(), 3u);
  expectEveryPrefixFails(in, [&](ByteView b) { return decodeOkPacket(b, caps); }, {7});
}

TEST(CapturedCli, ErrNoSuchTable) {
  Bytes in = payload(test::kCliSession[14]);
  auto e = decodeErrPacket(ExactBuffer(in).view());
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e, (ErrPacket{1146, "42S02", "Table 'capdb.nosuch' doesn't exist"}));
  Bytes out;
  encode(*e, out);
  EXPECT_EQ(out, in);
}

TEST(CapturedDenied, ErrAtLogin) {
  Bytes in = payload(test::kDeniedSession[2]);
  auto e = decodeErrPacket(in);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e, (ErrPacket{1045, "28000", "Access denied for user 'cap'@'localhost' (using password: YES)"}));
}

// ---- raw socket client sessions ------------------------------------------

TEST(CapturedRaw, AuthSwitchAndNativePassword) {
  for (const CapturedPacket* s : {test::kRawDeprecateEofSession, test::kRawClassicSession}) {
    auto g = decodeHandshakeV10(payload(s[0]));
    auto r = decodeHandshakeResponse41(payload(s[1]));
    ASSERT_TRUE(g && r);
    EXPECT_EQ(r->username, "cap");
    EXPECT_EQ(r->auth_response, std::string(20, '\x01'));
    EXPECT_EQ(r->auth_plugin_name, kCachingSha2Plugin);
    EXPECT_EQ(r->attributes, (std::vector<std::pair<std::string, std::string>>{
                                 {"_client_name", "capture"}, {"_pid", "42"}}));
    Bytes out;
    encode(*r, out);
    EXPECT_EQ(out, payload(s[1]));

    Bytes sw = payload(s[2]);
    auto req = decodeAuthSwitchRequest(ExactBuffer(sw).view());
    ASSERT_TRUE(req.has_value());
    EXPECT_EQ(req->plugin_name, kNativePasswordPlugin);
    EXPECT_EQ(req->plugin_data, g->auth_plugin_data);  // MariaDB reuses the greeting scramble
    out.clear();
    encode(*req, out);
    EXPECT_EQ(out, sw);

    // The 20-byte AuthSwitchResponse that the server accepted (OK follows).
    EXPECT_EQ(nativePasswordResponse("secret", req->plugin_data), toString(payload(s[3])));
    EXPECT_TRUE(isOkPacket(payload(s[4])));
  }
}

struct CommandScript {
  std::vector<Ev> events;
  uint16_t final_status;
};

// Replays every command after login through a ResponseTracker: the response
// must end exactly at the last server packet before the next command.
void replay(const CapturedPacket* session, size_t size, const std::vector<CommandScript>& scripts) {
  auto g = decodeHandshakeV10(payload(session[0]));
  auto r = decodeHandshakeResponse41(payload(session[1]));
  ASSERT_TRUE(g && r);
  const uint32_t caps = g->capabilities & r->capabilities;
  const uint32_t mcaps = g->mariadb_capabilities & r->mariadb_capabilities;
  size_t i = 5;  // greeting, response, switch, switch response, OK
  size_t command = 0;
  while (i < size && command < scripts.size()) {
    SCOPED_TRACE(i);
    ASSERT_FALSE(session[i].from_server);
    Bytes cmd = payload(session[i++]);
    ResponseKind kind = cmd[0] == static_cast<uint8_t>(Command::kFieldList)    ? ResponseKind::kFieldList
                        : cmd[0] == static_cast<uint8_t>(Command::kStatistics) ? ResponseKind::kStatistics
                                                                               : ResponseKind::kQuery;
    ResponseTracker t(kind, caps, mcaps);
    std::vector<Ev> events;
    while (i < size && session[i].from_server) {
      ASSERT_FALSE(t.done()) << "packet after the end of the response";
      auto e = t.onPacket(payload(session[i++]));
      ASSERT_TRUE(e.has_value()) << toString(e.error());
      events.push_back(*e);
    }
    EXPECT_TRUE(t.done());
    EXPECT_EQ(events, scripts[command].events) << "command " << command;
    EXPECT_EQ(t.statusFlags(), scripts[command].final_status) << "command " << command;
    ++command;
  }
  EXPECT_EQ(command, scripts.size());
}

TEST(CapturedRaw, DeprecateEofSession) {
  const uint16_t ac = status::kAutocommit;
  replay(test::kRawDeprecateEofSession, std::size(test::kRawDeprecateEofSession),
         {
             {{Ev::kColumnCount, Ev::kColumnDef, Ev::kColumnDef, Ev::kColumnDef, Ev::kRow, Ev::kRow,
               Ev::kRow, Ev::kRowsEnd},
              0x0022},
             {{Ev::kColumnDef, Ev::kColumnDef, Ev::kColumnDef, Ev::kRowsEnd}, ac},
             {{Ev::kColumnCount, Ev::kColumnDef, Ev::kRow, Ev::kRowsEnd, Ev::kColumnCount, Ev::kColumnDef,
               Ev::kRow, Ev::kRowsEnd},
              ac},
             {{Ev::kColumnCount, Ev::kColumnDef, Ev::kRow, Ev::kRowsEnd}, ac},
             {{Ev::kOk}, ac},
             {{Ev::kOk}, ac | status::kInTrans},
             {{Ev::kStatistics}, 0},
             {{Ev::kOk}, ac | status::kInTrans},
         });
}

TEST(CapturedRaw, ClassicEofSession) {
  const uint16_t ac = status::kAutocommit;
  replay(test::kRawClassicSession, std::size(test::kRawClassicSession),
         {
             {{Ev::kColumnCount, Ev::kColumnDef, Ev::kColumnDef, Ev::kColumnDef, Ev::kColumnsEof, Ev::kRow,
               Ev::kRow, Ev::kRow, Ev::kRowsEnd},
              0x0022},
             {{Ev::kColumnDef, Ev::kColumnDef, Ev::kColumnDef, Ev::kRowsEnd}, ac},
             {{Ev::kColumnCount, Ev::kColumnDef, Ev::kColumnsEof, Ev::kRow, Ev::kRowsEnd, Ev::kColumnCount,
               Ev::kColumnDef, Ev::kColumnsEof, Ev::kRow, Ev::kRowsEnd},
              ac},
             {{Ev::kColumnCount, Ev::kColumnDef, Ev::kColumnsEof, Ev::kRow, Ev::kRowsEnd}, ac},
             {{Ev::kOk}, ac},
             {{Ev::kOk}, ac | status::kInTrans},
             {{Ev::kStatistics}, 0},
             {{Ev::kOk}, ac | status::kInTrans},
         });
}

TEST(CapturedRaw, FieldListDefaultsAndWarnings) {
  // COM_FIELD_LIST appends each column's default value: id "0" (MariaDB's
  // rendering for an INT NOT NULL without explicit default), name 'x', note NULL (0xfb).
  for (size_t i : {15u, 16u, 17u}) {
    auto c = decodeColumnDefinition41(payload(test::kRawDeprecateEofSession[i]));
    ASSERT_TRUE(c.has_value()) << i;
    EXPECT_EQ(c->table, "t");
  }
  // The end of the field list under DEPRECATE_EOF is a 0xfe OK packet, not an EOF.
  Bytes end = payload(test::kRawDeprecateEofSession[18]);
  EXPECT_TRUE(isEofPacket(end));
  EXPECT_EQ(decodeEofPacket(end).error(), DecodeError::kExtraBytes);
  EXPECT_EQ(decodeOkPacket(end, cap::kDeprecateEof)->status_flags, status::kAutocommit);
  // CAST('x' AS SIGNED) warns once; the warning count is in the end-of-rows OK.
  auto warn = decodeOkPacket(payload(test::kRawDeprecateEofSession[32]), cap::kDeprecateEof);
  ASSERT_TRUE(warn.has_value());
  EXPECT_EQ(warn->warnings, 1);
}

}  // namespace
}  // namespace sp::protocol
