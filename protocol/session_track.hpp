// Session state tracking (CLIENT_SESSION_TRACK): the entries a server appends
// to an OK packet when SERVER_SESSION_STATE_CHANGED is set. The proxy asks its
// backend connections for them so that it learns every change of session state
// a statement made, whatever its spelling (SET forms, procedures, SET ROLE ...),
// instead of guessing from the statement's text.
//
// Layout of OkPacket::session_state_info: a sequence of
//   int<1> type, string<lenenc> data
// where data, by type, is:
//   0 SYSTEM_VARIABLES   string<lenenc> name, string<lenenc> value
//   1 SCHEMA             string<lenenc> name
//   2 STATE_CHANGE       "1" (the data itself, as MariaDB 10.11 sends it)
//   3 GTIDS              int<1> encoding, string<lenenc> gtids
//   4 TRANSACTION_CHARACTERISTICS  string<lenenc> SQL
//   5 TRANSACTION_STATE  string<lenenc> 8 state characters
// Types the decoder does not know are skipped by their length.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/wire.hpp"

namespace sp::protocol {

enum class SessionTrackType : uint8_t {
  kSystemVariables = 0,
  kSchema = 1,
  kStateChange = 2,
  kGtids = 3,
  kTransactionCharacteristics = 4,
  kTransactionState = 5,
};

struct SessionChanges {
  struct Variable {
    std::string name;
    std::string value;
    bool operator==(const Variable&) const = default;
  };
  std::vector<Variable> variables;  // in the order the server reported them
  std::string schema;               // the new current database
  bool schema_changed = false;
  bool state_changed = false;       // STATE_CHANGE: something of the session changed
  std::string transaction_state;    // TRANSACTION_STATE, when reported
  bool operator==(const SessionChanges&) const = default;
};

// Decodes one OK packet's session_state_info and adds its entries to `into`
// (several OKs of one multi-result response accumulate; a later value of the
// same variable is appended after the earlier one).
DecodeResult<void> decodeSessionChanges(ByteView state_info, SessionChanges& into);

// Encodes entries in the same layout (tests, and the proxy's own OK packets).
void encode(const SessionChanges& changes, Bytes& out);

// What a client asked its server to report: the session_track_system_variables,
// session_track_schema and session_track_state_change settings of its
// session. The proxy's backend connections report everything ('*', ON, ON);
// a client gets the part of each report its own settings select.
struct TrackingSettings {
  bool all_variables = false;           // '*'
  std::vector<std::string> variables;   // lower case, as listed
  bool schema = true;
  bool state_change = false;
  bool operator==(const TrackingSettings&) const = default;
};

// MariaDB's built-in defaults (10.11), used until a server's own are read.
TrackingSettings defaultTrackingSettings();

// From the three variables' values as the server shows them
// (`@@session_track_system_variables` is a comma-separated list or '*';
// the others ON/OFF or 1/0).
TrackingSettings trackingSettingsFrom(std::string_view system_variables, std::string_view schema,
                                      std::string_view state_change);

// The entries of `reported` (everything one statement changed) that a
// session with `settings` is told of: variables in its list, the schema when
// it tracks it, STATE_CHANGE when it tracks that. Transaction state is never
// passed on (the proxy does not offer session_track_transaction_info).
SessionChanges trackedFor(const SessionChanges& reported, const TrackingSettings& settings);

// Whether `changes` holds any entry a client would read.
bool anyTracked(const SessionChanges& changes);

}  // namespace sp::protocol
