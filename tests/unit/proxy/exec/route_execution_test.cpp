// Route execution over a scripted shard: the answer streamed to the client
// with new sequence ids, EOF translation, session-tracking reports taken out,
// server errors captured, and a failing shard reported.
#include <gtest/gtest.h>

#include "protocol/session_track.hpp"
#include "proxy/exec/route_execution.hpp"
#include "scripted_shard.hpp"

namespace sp::proxy {
namespace {

using protocol::ColumnType;
using test::column;
using test::RecordingClient;
using test::ScriptedShard;

constexpr uint32_t kDeprecateEofClient = protocol::cap::kProtocol41 | protocol::cap::kDeprecateEof;

TEST(RouteExecution, SendsOneComQueryAndForwardsTheResultSet) {
  ScriptedShard shard;
  shard.resultSet({column("id", ColumnType::kLong)}, {{"1"}, {"2"}});
  RecordingClient client;
  auto result = test::runToEnd(routeQuery(shard, "SELECT id FROM t", client, protocol::cap::kProtocol41, 1));
  EXPECT_EQ(shard.sent, (std::vector<std::string>{"\x03SELECT id FROM t"}));
  EXPECT_FALSE(result.backend_failed);
  EXPECT_FALSE(result.server_error);
  EXPECT_EQ(result.rows, 2u);
  ASSERT_EQ(client.packets.size(), 6u);  // count, definition, EOF, 2 rows, EOF: as the server sent them
  for (size_t i = 0; i < client.packets.size(); ++i) EXPECT_EQ(client.packets[i].seq, i + 1);
  EXPECT_EQ(result.next_client_seq, 7);
  EXPECT_EQ(shard.answered_calls, 1);
  EXPECT_FALSE(shard.broken());
}

TEST(RouteExecution, TranslatesClassicEofForDeprecateEofClients) {
  ScriptedShard shard;
  shard.resultSet({column("id", ColumnType::kLong)}, {{"1"}}, protocol::status::kAutocommit);
  RecordingClient client;
  auto result = test::runToEnd(routeQuery(shard, "SELECT 1", client, kDeprecateEofClient, 1));
  ASSERT_EQ(client.packets.size(), 4u);  // count, definition, row, OK-as-EOF
  const auto& end = client.packets.back().payload;
  EXPECT_EQ(end[0], protocol::kEofHeader);
  auto ok = protocol::decodeOkPacket(end, kDeprecateEofClient);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->status_flags, protocol::status::kAutocommit);
  EXPECT_EQ(result.status_flags, protocol::status::kAutocommit);
}

TEST(RouteExecution, MoreResultsFlagIsAddedToTheFinalPacketOnly) {
  ScriptedShard shard;
  shard.resultSet({column("id", ColumnType::kLong)}, {{"1"}}, protocol::status::kAutocommit);
  RecordingClient client;
  const uint16_t more = protocol::status::kMoreResultsExist;
  auto result = test::runToEnd(routeQuery(shard, "SELECT 1", client, protocol::cap::kProtocol41, 1, more));
  ASSERT_EQ(client.packets.size(), 5u);  // count, definition, EOF, row, EOF
  auto columns_end = protocol::decodeEofPacket(client.packets[2].payload);
  ASSERT_TRUE(columns_end.has_value());
  EXPECT_EQ(columns_end->status_flags & more, 0);
  auto rows_end = protocol::decodeEofPacket(client.packets.back().payload);
  ASSERT_TRUE(rows_end.has_value());
  EXPECT_EQ(rows_end->status_flags, protocol::status::kAutocommit | more);
  EXPECT_EQ(result.status_flags, protocol::status::kAutocommit);  // the server's own

  ScriptedShard write;
  write.ok(1);
  RecordingClient write_client;
  test::runToEnd(routeQuery(write, "DO 1", write_client, protocol::cap::kProtocol41, 1, more));
  ASSERT_EQ(write_client.packets.size(), 1u);
  auto ok = protocol::decodeOkPacket(write_client.packets[0].payload, protocol::cap::kProtocol41);
  ASSERT_TRUE(ok.has_value());
  EXPECT_TRUE(ok->status_flags & more);
}

TEST(RouteExecution, CapturesTheServerErrorAsSentToTheClient) {
  ScriptedShard shard;
  shard.err(1064, "42000", "You have an error in your SQL syntax");
  RecordingClient client;
  auto result = test::runToEnd(routeQuery(shard, "SELEC 1", client, protocol::cap::kProtocol41, 1));
  EXPECT_TRUE(result.server_error);
  EXPECT_EQ(result.error_code, 1064);
  ASSERT_TRUE(result.error);
  EXPECT_EQ(result.error->sql_state, "42000");
  ASSERT_EQ(client.packets.size(), 1u);
  EXPECT_TRUE(protocol::isErrPacket(client.packets[0].payload));
}

TEST(RouteExecution, ForwardsACommandPayloadAsIs) {
  ScriptedShard shard;
  shard.ok(0, 0, 0, protocol::status::kAutocommit);
  RecordingClient client;
  const protocol::Bytes init_db{static_cast<uint8_t>(protocol::Command::kInitDb), 'a', 'p', 'p'};
  auto result = test::runToEnd(
      routeCommand(shard, init_db, protocol::ResponseKind::kQuery, client, protocol::cap::kProtocol41, 1));
  EXPECT_EQ(shard.sent, (std::vector<std::string>{"\x02" "app"}));
  EXPECT_FALSE(result.backend_failed);
  EXPECT_EQ(client.packets.size(), 1u);
}

TEST(RouteExecution, SessionTrackingReportIsTakenOutOfTheOk) {
  const uint32_t tracking = test::kClassicCapabilities | protocol::cap::kSessionTrack;
  ScriptedShard shard(tracking);
  protocol::OkPacket ok;
  ok.status_flags = protocol::status::kAutocommit | protocol::status::kSessionStateChanged;
  // One system variable change: autocommit = OFF (type 0: name, value).
  std::string name = "autocommit", value = "OFF";
  protocol::Bytes data;
  data.push_back(static_cast<uint8_t>(name.size()));
  data.insert(data.end(), name.begin(), name.end());
  data.push_back(static_cast<uint8_t>(value.size()));
  data.insert(data.end(), value.begin(), value.end());
  protocol::Bytes info{0, static_cast<uint8_t>(data.size())};
  info.insert(info.end(), data.begin(), data.end());
  ok.session_state_info.assign(info.begin(), info.end());
  protocol::Bytes payload;
  protocol::encode(ok, tracking, payload);
  shard.packet(payload);
  RecordingClient client;
  auto result = test::runToEnd(routeQuery(shard, "SET autocommit = 0", client, protocol::cap::kProtocol41, 1));
  EXPECT_FALSE(result.changes_unreadable);
  ASSERT_EQ(result.changes.variables.size(), 1u);
  EXPECT_EQ(result.changes.variables[0].name, "autocommit");
  EXPECT_EQ(result.changes.variables[0].value, "OFF");
  ASSERT_EQ(client.packets.size(), 1u);
  auto forwarded = protocol::decodeOkPacket(client.packets[0].payload, protocol::cap::kProtocol41);
  ASSERT_TRUE(forwarded.has_value());
  EXPECT_FALSE(forwarded->status_flags & protocol::status::kSessionStateChanged);
}

namespace {

// An OK as a backend tracking everything sends it after
// `SET sql_mode = '', time_zone = '+01:00'` with session_track_state_change on.
protocol::Bytes trackedOk(uint32_t capabilities) {
  protocol::SessionChanges reported;
  reported.variables = {{"sql_mode", ""}, {"time_zone", "+01:00"}};
  reported.state_changed = true;
  protocol::Bytes info;
  protocol::encode(reported, info);
  protocol::OkPacket ok;
  ok.status_flags = protocol::status::kAutocommit | protocol::status::kSessionStateChanged;
  ok.session_state_info.assign(info.begin(), info.end());
  protocol::Bytes payload;
  protocol::encode(ok, capabilities, payload);
  return payload;
}

}  // namespace

TEST(RouteExecution, ATrackingClientGetsThePartOfTheReportItsSettingsSelect) {
  const uint32_t tracking = test::kClassicCapabilities | protocol::cap::kSessionTrack;
  ScriptedShard shard(tracking);
  shard.packet(trackedOk(tracking));
  RecordingClient client;
  const protocol::TrackingSettings settings = protocol::defaultTrackingSettings();  // time_zone, not sql_mode; no state
  client.client_tracking = &settings;
  const uint32_t client_caps = protocol::cap::kProtocol41 | protocol::cap::kSessionTrack;
  auto result = test::runToEnd(routeQuery(shard, "SET sql_mode = '', time_zone = '+01:00'", client, client_caps, 1));
  // The proxy itself learns everything the server reported.
  EXPECT_EQ(result.changes.variables.size(), 2u);
  EXPECT_TRUE(result.changes.state_changed);
  ASSERT_EQ(client.packets.size(), 1u);
  auto forwarded = protocol::decodeOkPacket(client.packets[0].payload, client_caps);
  ASSERT_TRUE(forwarded.has_value());
  EXPECT_TRUE(forwarded->status_flags & protocol::status::kSessionStateChanged);
  protocol::SessionChanges told;
  ASSERT_TRUE(protocol::decodeSessionChanges(protocol::asBytes(forwarded->session_state_info), told));
  ASSERT_EQ(told.variables.size(), 1u);
  EXPECT_EQ(told.variables[0].name, "time_zone");
  EXPECT_EQ(told.variables[0].value, "+01:00");
  EXPECT_FALSE(told.state_changed);
}

TEST(RouteExecution, ATrackingClientWhoseSettingsSelectNothingGetsNoFlag) {
  const uint32_t tracking = test::kClassicCapabilities | protocol::cap::kSessionTrack;
  ScriptedShard shard(tracking);
  shard.packet(trackedOk(tracking));
  RecordingClient client;
  const protocol::TrackingSettings settings = protocol::trackingSettingsFrom("autocommit", "ON", "OFF");
  client.client_tracking = &settings;
  const uint32_t client_caps = protocol::cap::kProtocol41 | protocol::cap::kSessionTrack;
  test::runToEnd(routeQuery(shard, "SET sql_mode = '', time_zone = '+01:00'", client, client_caps, 1));
  ASSERT_EQ(client.packets.size(), 1u);
  auto forwarded = protocol::decodeOkPacket(client.packets[0].payload, client_caps);
  ASSERT_TRUE(forwarded.has_value());
  EXPECT_FALSE(forwarded->status_flags & protocol::status::kSessionStateChanged);
  EXPECT_TRUE(forwarded->session_state_info.empty());
}

TEST(RouteExecution, LostShardMidAnswerIsABackendFailure) {
  ScriptedShard shard;
  shard.header({column("id", ColumnType::kLong)}).row({"1"}).failure(ChannelError::kLost);
  RecordingClient client;
  auto result = test::runToEnd(routeQuery(shard, "SELECT id FROM t", client, protocol::cap::kProtocol41, 1));
  EXPECT_TRUE(result.backend_failed);
  EXPECT_TRUE(shard.broken());
  EXPECT_EQ(result.next_client_seq, 5);  // after count, definition, EOF, row
  EXPECT_EQ(shard.answered_calls, 0);
}

TEST(RouteExecution, FailedSendForwardsNothing) {
  ScriptedShard shard;
  shard.flush_fails = true;
  RecordingClient client;
  auto result = test::runToEnd(routeQuery(shard, "SELECT 1", client, protocol::cap::kProtocol41, 3));
  EXPECT_TRUE(result.backend_failed);
  EXPECT_EQ(result.next_client_seq, 3);
  EXPECT_TRUE(client.packets.empty());
}

TEST(RouteExecution, ClientGoneMidAnswerLeavesTheShardBroken) {
  ScriptedShard shard;
  shard.header({column("id", ColumnType::kLong)}).row({"1"}).row({"2"}, /*after_wait=*/true).eof();
  RecordingClient client;
  client.flush_fails = true;
  auto result = test::runToEnd(routeQuery(shard, "SELECT id FROM t", client, protocol::cap::kProtocol41, 1));
  EXPECT_TRUE(result.client_failed);
  EXPECT_TRUE(shard.broken());  // the rest of the answer was never read
}


// The server asks for a file (0xfb + name) though nobody may send one (a
// LOAD DATA LOCAL the session did not recognize): it gets an empty file
// (loads nothing), and the client an error instead of the OK.
TEST(RouteExecution, LocalInfileRequestWithoutASourceGetsAnEmptyFileAndAnError) {
  ScriptedShard shard;
  protocol::Bytes request{0xfb, '/', 'e', 't', 'c', '/', 'p', 'a', 's', 's', 'w', 'd'};
  shard.packet(request).ok();
  RecordingClient client;
  auto result = test::runToEnd(routeQuery(shard, "LOAD DATA /* hidden */ ...", client, protocol::cap::kProtocol41, 1));
  ASSERT_EQ(shard.file_packets.size(), 1u);
  EXPECT_EQ(shard.file_packets[0].first, "");   // the empty packet ending the file
  EXPECT_EQ(shard.file_packets[0].second, 2);   // after the request's sequence id
  EXPECT_TRUE(result.infile_refused);
  EXPECT_TRUE(result.server_error);
  EXPECT_EQ(result.error_code, 4166);
  ASSERT_EQ(client.packets.size(), 1u);  // neither the request nor the OK reached the client
  EXPECT_EQ(client.packets[0].payload[0], protocol::kErrHeader);
}

// A session that may send files: the request goes to the client, the
// relayed file to the server, the server's answer to the client after it.
class FakeFile final : public LocalInfileSource {
 public:
  bool allowed() const override { return true; }
  awaitable<InfileRelayed> relay(protocol::ByteView request, uint8_t client_seq, ShardChannel& shard,
                                 uint8_t shard_seq) override {
    requests.emplace_back(request.begin(), request.end());
    shard_seq = shard.writeFilePacket(protocol::asBytes(std::string_view("1,a\n")), shard_seq);
    shard.writeFilePacket({}, shard_seq);
    InfileRelayed out;
    out.bytes = 4;
    out.next_client_seq = static_cast<uint8_t>(client_seq + 3);  // request, one data packet, the empty one
    co_return out;
  }
  std::vector<std::string> requests;
};

TEST(RouteExecution, LocalInfileIsRelayedThenTheAnswerForwarded) {
  ScriptedShard shard;
  shard.packet(protocol::Bytes{0xfb, 'f'}).ok(1);
  RecordingClient client;
  FakeFile file;
  auto result = test::runToEnd(routeQuery(shard, "LOAD DATA LOCAL INFILE 'f' INTO TABLE t", client,
                                          protocol::cap::kProtocol41, 1, 0, &file));
  ASSERT_EQ(file.requests.size(), 1u);
  EXPECT_EQ(file.requests[0], std::string("\xfb" "f"));
  ASSERT_EQ(shard.file_packets.size(), 2u);
  EXPECT_EQ(shard.file_packets[0].second, 2);
  EXPECT_EQ(shard.file_packets[1].first, "");
  EXPECT_FALSE(result.server_error);
  EXPECT_FALSE(result.infile_refused);
  EXPECT_EQ(result.infile_bytes, 4u);
  ASSERT_EQ(client.packets.size(), 1u);  // the OK (the fake relayed the request itself)
  EXPECT_EQ(client.packets[0].seq, 4);   // after the client's request, data and empty packets
}

}  // namespace
}  // namespace sp::proxy
