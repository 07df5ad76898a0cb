// Session-tracking entries (OkPacket::session_state_info). The byte strings
// are what MariaDB 10.11 sends (checked with libmariadb's
// mysql_session_track_get_first against the test cluster): `SET autocommit =
// false`, `USE mysql`, `SET @x = 1`, BEGIN with transaction_info=STATE.
#include <gtest/gtest.h>

#include "protocol/session_track.hpp"

namespace sp::protocol {
namespace {

Bytes bytes(std::initializer_list<int> v) {
  Bytes out;
  for (int b : v) out.push_back(static_cast<uint8_t>(b));
  return out;
}

Bytes withText(Bytes head, std::string_view text) {
  head.insert(head.end(), text.begin(), text.end());
  return head;
}

TEST(SessionTrack, SystemVariableAndStateChange) {
  // 00 0f | 0a "autocommit" 03 "OFF" ; 02 01 | "1"  (bytes of MariaDB 10.11's OK for SET autocommit=0)
  Bytes in = withText(bytes({0x00, 0x0f, 0x0a}), "autocommit");
  in.push_back(0x03);
  in = withText(in, "OFF");
  for (int b : {0x02, 0x01, int('1')}) in.push_back(static_cast<uint8_t>(b));
  SessionChanges c;
  ASSERT_TRUE(decodeSessionChanges(in, c));
  ASSERT_EQ(c.variables.size(), 1u);
  EXPECT_EQ(c.variables[0].name, "autocommit");
  EXPECT_EQ(c.variables[0].value, "OFF");
  EXPECT_TRUE(c.state_changed);
  EXPECT_FALSE(c.schema_changed);
}

TEST(SessionTrack, SchemaAsTheServerSendsIt) {
  // USE mysql: 01 06 | 05 "mysql" ; 02 01 | "1"
  Bytes in = withText(bytes({0x01, 0x06, 0x05}), "mysql");
  for (int b : {0x02, 0x01, int('1')}) in.push_back(static_cast<uint8_t>(b));
  SessionChanges c;
  ASSERT_TRUE(decodeSessionChanges(in, c));
  EXPECT_TRUE(c.schema_changed);
  EXPECT_EQ(c.schema, "mysql");
  EXPECT_TRUE(c.state_changed);
  EXPECT_TRUE(c.variables.empty());
}

TEST(SessionTrack, TransactionStateAndUnknownTypesAreRead) {
  // 05 09 | 08 "T_______" ; 03 (GTIDS, skipped by length) ; 0x21 (unknown, skipped)
  Bytes in = withText(bytes({0x05, 0x09, 0x08}), "T_______");
  for (int b : {0x03, 0x03, 0x00, 0x01, int('x'), 0x21, 0x02, 0xaa, 0xbb}) in.push_back(static_cast<uint8_t>(b));
  SessionChanges c;
  ASSERT_TRUE(decodeSessionChanges(in, c));
  EXPECT_EQ(c.transaction_state, "T_______");
  EXPECT_FALSE(c.state_changed);
}

TEST(SessionTrack, EncodeThenDecodeGivesTheSameEntries) {
  SessionChanges c;
  c.variables = {{"sql_mode", "ANSI_QUOTES,STRICT_TRANS_TABLES"}, {"character_set_results", ""}};
  c.schema = "im";
  c.schema_changed = true;
  c.state_changed = true;
  Bytes out;
  encode(c, out);
  SessionChanges back;
  ASSERT_TRUE(decodeSessionChanges(out, back));
  EXPECT_EQ(back, c);
}

TEST(SessionTrack, EveryTruncationIsAnErrorNeverARead) {
  SessionChanges c;
  c.variables = {{"time_zone", "+01:00"}};
  c.state_changed = true;
  Bytes full;
  encode(c, full);
  for (size_t n = 1; n < full.size(); ++n) {
    SessionChanges partial;
    Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    // A cut at an entry boundary is a shorter valid report; anywhere else it is an error.
    auto r = decodeSessionChanges(cut, partial);
    if (r) {
      EXPECT_LE(partial.variables.size(), 1u);
    }
  }
  SessionChanges none;
  Bytes cut_inside_name(full.begin(), full.begin() + 4);
  EXPECT_FALSE(decodeSessionChanges(cut_inside_name, none));
}

TEST(SessionTrack, ExtraBytesInsideAnEntryAreRefused) {
  // A SCHEMA entry whose data holds more than the name.
  Bytes in = withText(bytes({0x01, 0x04, 0x02}), "imX");
  SessionChanges c;
  EXPECT_FALSE(decodeSessionChanges(in, c));
}

TEST(TrackingSettings, ReadFromTheServersValues) {
  auto s = trackingSettingsFrom("autocommit, Time_Zone,,time_zone", "ON", "OFF");
  EXPECT_FALSE(s.all_variables);
  EXPECT_EQ(s.variables, (std::vector<std::string>{"autocommit", "time_zone"}));
  EXPECT_TRUE(s.schema);
  EXPECT_FALSE(s.state_change);
  auto all = trackingSettingsFrom("*", "0", "1");
  EXPECT_TRUE(all.all_variables);
  EXPECT_FALSE(all.schema);
  EXPECT_TRUE(all.state_change);
  auto none = trackingSettingsFrom("", "OFF", "OFF");
  EXPECT_TRUE(none.variables.empty());
  EXPECT_FALSE(none.all_variables);
}

TEST(TrackingSettings, MariaDbDefaults) {
  auto d = defaultTrackingSettings();
  EXPECT_EQ(d.variables, (std::vector<std::string>{"autocommit", "character_set_client", "character_set_connection",
                                                   "character_set_results", "time_zone"}));
  EXPECT_TRUE(d.schema);
  EXPECT_FALSE(d.state_change);
}

TEST(TrackingSettings, SelectWhatTheClientAskedFor) {
  SessionChanges reported;
  reported.variables = {{"wait_timeout", "100"}, {"sql_mode", ""}, {"time_zone", "SYSTEM"}};
  reported.schema_changed = true;
  reported.schema = "im";
  reported.state_changed = true;
  reported.transaction_state = "T_______";
  auto told = trackedFor(reported, trackingSettingsFrom("time_zone,sql_mode", "OFF", "ON"));
  EXPECT_EQ(told.variables, (std::vector<SessionChanges::Variable>{{"sql_mode", ""}, {"time_zone", "SYSTEM"}}));
  EXPECT_FALSE(told.schema_changed);
  EXPECT_TRUE(told.state_changed);
  EXPECT_TRUE(told.transaction_state.empty());  // never offered
  EXPECT_TRUE(anyTracked(told));
  auto all = trackedFor(reported, trackingSettingsFrom("*", "ON", "OFF"));
  EXPECT_EQ(all.variables.size(), 3u);
  EXPECT_TRUE(all.schema_changed);
  EXPECT_EQ(all.schema, "im");
  EXPECT_FALSE(all.state_changed);
  EXPECT_FALSE(anyTracked(trackedFor(reported, trackingSettingsFrom("autocommit", "OFF", "OFF"))));
}

}  // namespace
}  // namespace sp::protocol
