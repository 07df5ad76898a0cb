#include "protocol/change_user.hpp"

#include "protocol/constants.hpp"
#include "protocol/detail_try.hpp"

namespace sp::protocol {

DecodeResult<ChangeUser> decodeChangeUser(ByteView payload, uint32_t caps) {
  Reader r(payload);
  SP_TRY(command, r.u8());
  if (command != static_cast<uint8_t>(Command::kChangeUser)) return std::unexpected(DecodeError::kProtocolValue);
  ChangeUser m;
  SP_TRY(user, r.nulString());
  m.username = user;
  if (caps & cap::kSecureConnection) {
    SP_TRY(len, r.u8());
    SP_TRY(auth, r.fixed(len));
    m.auth_response = auth;
  } else {
    SP_TRY(auth, r.nulString());
    m.auth_response = auth;
  }
  SP_TRY(db, r.nulString());
  m.database = db;
  if (r.empty()) return m;
  SP_TRY(charset, r.u16());
  m.character_set = charset;
  if ((caps & cap::kPluginAuth) && !r.empty()) {
    SP_TRY(plugin, r.nulString());
    m.auth_plugin_name = plugin;
  }
  if ((caps & cap::kConnectAttrs) && !r.empty()) {
    SP_TRY(total, r.lenenc());
    if (total > r.remaining()) return std::unexpected(DecodeError::kIncomplete);
    SP_TRY(block, r.fixed(static_cast<size_t>(total)));
    Reader attrs(asBytes(block));
    while (!attrs.empty()) {
      SP_TRY(key, attrs.lenencString());
      SP_TRY(value, attrs.lenencString());
      m.attributes.emplace_back(std::string(key), std::string(value));
    }
  }
  SP_TRY_VOID(r.expectEnd());
  return m;
}

void encode(const ChangeUser& m, uint32_t caps, Bytes& out) {
  Writer w(out);
  w.u8(static_cast<uint8_t>(Command::kChangeUser));
  w.nulString(m.username);
  if (caps & cap::kSecureConnection) {
    w.u8(static_cast<uint8_t>(m.auth_response.size()));
    w.raw(m.auth_response);
  } else {
    w.nulString(m.auth_response);
  }
  w.nulString(m.database);
  if (!m.character_set) return;
  w.u16(*m.character_set);
  if (caps & cap::kPluginAuth) w.nulString(m.auth_plugin_name);
  if (caps & cap::kConnectAttrs) {
    Bytes block;
    Writer b(block);
    for (const auto& [k, v] : m.attributes) {
      b.lenencString(k);
      b.lenencString(v);
    }
    w.lenencString(asText(block));
  }
}

}  // namespace sp::protocol
