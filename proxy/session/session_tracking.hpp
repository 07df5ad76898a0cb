// Session state tracking for clients (CLIENT_SESSION_TRACK, issue 30). The
// proxy's backend connections always report everything (kEnableSessionTracking:
// every variable, the schema, state changes), because the proxy carries session
// state from one connection to the next by those reports. A client that
// negotiated CLIENT_SESSION_TRACK gets, in each OK packet, the part of the
// report its own session_track_* settings select (route_execution.cpp), as
// the server would send it.
//
// Its settings are the proxy's to keep: a `SET session_track_...` runs on a
// backend connection (the server validates the values and normalises the
// list), its answer is held (TrackingSetAnswer), the resulting values are read
// back, the connection's own tracking is restored, and the held OK goes to the
// client with the entries the new settings select.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parser/classify.hpp"
#include "protocol/session_track.hpp"
#include "proxy/net/client_sink.hpp"

namespace sp::proxy {

// A SET of the session's own session_track_* variables (not SET GLOBAL, not
// SET STATEMENT ... FOR, which the server undoes after its statement).
bool setsTrackingVariable(const parser::StatementInfo& info);

// Whether `name` (any case) is one of the session_track_* variables.
bool isTrackingVariable(std::string_view name);

// The statement that gives a backend connection a client's settings, so that
// the client's SET runs against them as on the server (a SET of one of the
// variables keeps the others; CONCAT(@@session_track_system_variables, ...)
// reads the client's list) and the server reports it as it would to the client.
std::string trackingSettingsSql(const protocol::TrackingSettings& settings);

// The statement that reads a connection's settings back.
inline constexpr std::string_view kReadTrackingSettings =
    "SELECT @@session.session_track_system_variables, @@session.session_track_schema, "
    "@@session.session_track_state_change";

// The packets of one answer, held instead of sent (the answer to a
// `SET session_track_...`, a single OK or ERR).
class TrackingSetAnswer final : public ClientSink {
 public:
  uint8_t append(protocol::ByteView payload, uint8_t seq) override {
    packets_.push_back({protocol::Bytes(payload.begin(), payload.end()), seq});
    return static_cast<uint8_t>(seq + 1);
  }
  size_t pendingOutput() const override { return 0; }
  awaitable<bool> flush() override { co_return true; }

  struct Packet {
    protocol::Bytes payload;
    uint8_t seq = 0;
  };
  const std::vector<Packet>& packets() const { return packets_; }

 private:
  std::vector<Packet> packets_;
};

}  // namespace sp::proxy
