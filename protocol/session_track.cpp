#include "protocol/session_track.hpp"

#include "protocol/detail_try.hpp"

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

}  // namespace sp::protocol
