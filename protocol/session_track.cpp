#include "protocol/session_track.hpp"

#include "protocol/detail_try.hpp"

#include <algorithm>
#include <cctype>

namespace sp::protocol {

namespace {

DecodeResult<void> decodeEntry(SessionTrackType type, ByteView data, SessionChanges& into) {
  Reader r(data);
  switch (type) {
    case SessionTrackType::kSystemVariables: {
      SP_TRY(name, r.lenencString());
      SP_TRY(value, r.lenencString());
      into.variables.push_back({std::string(name), std::string(value)});
      break;
    }
    case SessionTrackType::kSchema: {
      SP_TRY(name, r.lenencString());
      into.schema = std::string(name);
      into.schema_changed = true;
      break;
    }
    case SessionTrackType::kStateChange:
      // The data is the flag itself, not a length-encoded string (unlike the others).
      if (asText(data) == "1") into.state_changed = true;
      return {};
    case SessionTrackType::kTransactionState: {
      SP_TRY(state, r.lenencString());
      into.transaction_state = std::string(state);
      break;
    }
    case SessionTrackType::kGtids:
    case SessionTrackType::kTransactionCharacteristics:
      return {};  // not used by the proxy; the outer length already bounds them
  }
  return r.expectEnd();
}

}  // namespace

DecodeResult<void> decodeSessionChanges(ByteView state_info, SessionChanges& into) {
  Reader r(state_info);
  while (!r.empty()) {
    SP_TRY(type, r.u8());
    SP_TRY(data, r.lenencString());
    if (type > static_cast<uint8_t>(SessionTrackType::kTransactionState)) continue;
    SP_TRY_VOID(decodeEntry(static_cast<SessionTrackType>(type), asBytes(data), into));
  }
  return {};
}

void encode(const SessionChanges& changes, Bytes& out) {
  auto entry = [&](SessionTrackType type, const Bytes& data) {
    Writer w(out);
    w.u8(static_cast<uint8_t>(type));
    w.lenencString(asText(data));
  };
  Bytes data;
  for (const auto& v : changes.variables) {
    data.clear();
    Writer w(data);
    w.lenencString(v.name);
    w.lenencString(v.value);
    entry(SessionTrackType::kSystemVariables, data);
  }
  if (changes.schema_changed) {
    data.clear();
    Writer(data).lenencString(changes.schema);
    entry(SessionTrackType::kSchema, data);
  }
  if (changes.state_changed) {
    data.assign({'1'});
    entry(SessionTrackType::kStateChange, data);
  }
  if (!changes.transaction_state.empty()) {
    data.clear();
    Writer(data).lenencString(changes.transaction_state);
    entry(SessionTrackType::kTransactionState, data);
  }
}


namespace {

std::string lowerTrimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool isOn(std::string_view value) {
  const std::string v = lowerTrimmed(value);
  return v == "on" || v == "1" || v == "true";
}

}  // namespace

TrackingSettings defaultTrackingSettings() {
  return trackingSettingsFrom("autocommit,character_set_client,character_set_connection,character_set_results,time_zone",
                              "ON", "OFF");
}

TrackingSettings trackingSettingsFrom(std::string_view system_variables, std::string_view schema,
                                      std::string_view state_change) {
  TrackingSettings settings;
  settings.schema = isOn(schema);
  settings.state_change = isOn(state_change);
  while (!system_variables.empty()) {
    const size_t comma = system_variables.find(',');
    std::string name = lowerTrimmed(system_variables.substr(0, comma));
    system_variables.remove_prefix(comma == std::string_view::npos ? system_variables.size() : comma + 1);
    if (name.empty()) continue;
    if (name == "*") {
      settings.all_variables = true;
    } else if (std::find(settings.variables.begin(), settings.variables.end(), name) == settings.variables.end()) {
      settings.variables.push_back(std::move(name));
    }
  }
  return settings;
}

SessionChanges trackedFor(const SessionChanges& reported, const TrackingSettings& settings) {
  SessionChanges out;
  for (const auto& v : reported.variables) {
    if (settings.all_variables ||
        std::find(settings.variables.begin(), settings.variables.end(), lowerTrimmed(v.name)) !=
            settings.variables.end()) {
      out.variables.push_back(v);
    }
  }
  if (settings.schema && reported.schema_changed) {
    out.schema_changed = true;
    out.schema = reported.schema;
  }
  out.state_changed = settings.state_change && reported.state_changed;
  return out;
}

bool anyTracked(const SessionChanges& changes) {
  return !changes.variables.empty() || changes.schema_changed || changes.state_changed ||
         !changes.transaction_state.empty();
}

}  // namespace sp::protocol
