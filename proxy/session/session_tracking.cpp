// Session state tracking for clients: session_tracking.hpp says how.
#include "proxy/session/session_tracking.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"
#include "routing/conditions.hpp"

namespace sp::proxy {

namespace {

std::string_view trimmedUnquoted(std::string_view v) {
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
  }
  return v;
}

}  // namespace

bool isTrackingVariable(std::string_view name) {
  constexpr std::string_view kPrefix = "session_track_";
  return name.size() > kPrefix.size() && routing::equalsIgnoreCase(name.substr(0, kPrefix.size()), kPrefix);
}

bool setsTrackingVariable(const parser::StatementInfo& info) {
  if (info.kind != parser::StatementKind::kSet || info.set_statement_for) return false;
  for (const auto& s : info.settings) {
    if (s.kind == parser::SessionSetting::Kind::kSystemVariable && isTrackingVariable(s.name)) return true;
  }
  return false;
}

std::string trackingSettingsSql(const protocol::TrackingSettings& settings) {
  std::string list;
  if (settings.all_variables) list = "*";
  for (const auto& name : settings.variables) {
    if (!list.empty()) list += ',';
    for (char c : name) {
      if (c == '\'' || c == '\\') list += c;  // doubled: names never hold them, but never trusted
      list += c;
    }
  }
  return fmt::format("SET session_track_system_variables = '{}', session_track_schema = {}, "
                     "session_track_state_change = {}",
                     list, settings.schema ? "ON" : "OFF", settings.state_change ? "ON" : "OFF");
}

const protocol::TrackingSettings* ClientSession::clientTracking() const {
  return (capabilities_ & protocol::cap::kSessionTrack) ? &tracking_ : nullptr;
}

std::optional<protocol::ErrPacket> ClientSession::trackingSetRefusal(const parser::StatementInfo& info) const {
  using routing::equalsIgnoreCase;
  for (const auto& s : info.settings) {
    if (s.kind != parser::SessionSetting::Kind::kSystemVariable || s.name != "session_track_transaction_info") {
      continue;
    }
    const std::string_view value = trimmedUnquoted(s.value);
    if (equalsIgnoreCase(value, "OFF") || value == "0" || equalsIgnoreCase(value, "DEFAULT")) continue;
    // Transaction state depends on where the proxy runs each statement (a
    // deferred BEGIN runs with the transaction's first statement): it could
    // not be reported as the server reports it.
    return client_error::make(client_error::kNotSupported,
        fmt::format("shardproxy: session_track_transaction_info = {} is not supported: the proxy reports system "
                    "variables, the schema and state changes (session_track_system_variables, "
                    "session_track_schema, session_track_state_change), not transaction state; only OFF is taken",
                    s.value));
  }
  return std::nullopt;
}

awaitable<protocol::SessionChanges> ClientSession::adoptClientTracking(BackendConnection& conn,
                                                                       const parser::StatementInfo& info,
                                                                       bool succeeded) {
  protocol::SessionChanges carried;
  if (succeeded) {
    // The other variables the statement set, by name (the parser's names are
    // identifiers; anything else is carried as written by recordEffects).
    std::vector<std::string> others;
    for (const auto& s : info.settings) {
      const bool identifier = !s.name.empty() && std::all_of(s.name.begin(), s.name.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '_';
      });
      if (s.kind == parser::SessionSetting::Kind::kSystemVariable && !isTrackingVariable(s.name) && identifier &&
          std::find(others.begin(), others.end(), s.name) == others.end()) {
        others.push_back(s.name);
      }
    }
    std::string sql(kReadTrackingSettings);
    for (const auto& name : others) sql += ", @@session." + name;
    auto rows = co_await conn.queryRows(sql);
    if (rows && rows->size() == 1 && rows->front().size() == 3 + others.size()) {
      const auto& row = rows->front();
      tracking_ = protocol::trackingSettingsFrom(row[0].value_or(""), row[1].value_or("OFF"), row[2].value_or("OFF"));
      for (size_t i = 0; i < others.size(); ++i) carried.variables.push_back({others[i], row[3 + i].value_or("")});
    } else {
      spdlog::warn("session {}: could not read session_track_* back after SET ({}): the client's tracking settings "
                   "stay as they were", connection_id_, rows ? "unexpected result" : rows.error().message);
    }
  }
  // The connection's own reports again (the proxy carries session state by them).
  auto restored = co_await conn.command(protocol::Command::kQuery, kEnableSessionTracking);
  if (!restored) {
    // Not lent out again with reports the proxy cannot rely on.
    spdlog::warn("session {}: restoring the backend connection's session tracking failed ({}): connection closed",
                 connection_id_, restored.error().message);
    conn.markBroken();
  }
  co_return carried;
}

void ClientSession::sendTrackingSetAnswer(const TrackingSetAnswer& answer, const protocol::SessionChanges& reported) {
  for (const auto& packet : answer.packets()) {
    protocol::ByteView payload(packet.payload.data(), packet.payload.size());
    const bool is_ok = !packet.payload.empty() && packet.payload[0] == protocol::kOkHeader;
    auto ok = protocol::decodeOkPacket(payload, capabilities_);
    if (!is_ok || !ok) {
      client_.append(payload, packet.seq);
      continue;
    }
    // The report was taken out of the held OK (its sink tracked nothing).
    // The statement ran with the client's own settings, so the server
    // reported exactly what it reports to the client (by the settings before
    // and after the statement: `SET session_track_state_change = OFF` itself
    // is a state change when it was ON): it goes back in as it was, without
    // transaction state (never offered).
    ok->status_flags &= ~protocol::status::kSessionStateChanged;
    ok->session_state_info.clear();
    if (clientTracking() != nullptr) {
      protocol::SessionChanges told = reported;
      told.transaction_state.clear();
      if (protocol::anyTracked(told)) {
        protocol::Bytes info;
        protocol::encode(told, info);
        ok->session_state_info.assign(info.begin(), info.end());
        ok->status_flags |= protocol::status::kSessionStateChanged;
      }
    }
    protocol::Bytes out;
    protocol::encode(*ok, capabilities_, out);
    client_.append(out, packet.seq);
  }
}

awaitable<bool> ClientSession::sendLoginOk(uint8_t seq) {
  protocol::OkPacket ok;
  ok.status_flags = statusFlags();
  const auto* tracking = clientTracking();
  if (tracking && tracking->schema && !desired_.database.empty()) {
    // As the server: a login naming a database reports it.
    protocol::SessionChanges told;
    told.schema_changed = true;
    told.schema = desired_.database;
    protocol::Bytes info;
    protocol::encode(told, info);
    ok.session_state_info.assign(info.begin(), info.end());
    ok.status_flags |= protocol::status::kSessionStateChanged;
  }
  protocol::Bytes out;
  protocol::encode(ok, capabilities_, out);
  client_.append(out, seq);
  co_return co_await client_.flush();
}

}  // namespace sp::proxy
