// COM_CHANGE_USER: re-authenticates an open connection as another (or the
// same) account and resets its session, as connection pools do between
// borrowers. Layout (client capabilities decide the optional parts):
//   int<1>       0x11
//   string<NUL>  user
//   int<1> len + bytes   auth response  (CLIENT_SECURE_CONNECTION; else string<NUL>)
//   string<NUL>  database
//   -- the rest only when more bytes follow --
//   int<2>       character set (collation id)
//   string<NUL>  auth plugin name                (CLIENT_PLUGIN_AUTH)
//   int<lenenc> + key/value lenenc pairs          (CLIENT_CONNECT_ATTRS)
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocol/wire.hpp"

namespace sp::protocol {

struct ChangeUser {
  std::string username;
  std::string auth_response;
  std::string database;
  std::optional<uint16_t> character_set;  // absent in the shortest form
  std::string auth_plugin_name;
  std::vector<std::pair<std::string, std::string>> attributes;
  bool operator==(const ChangeUser&) const = default;
};

// `client_capabilities`: what the client negotiated at login.
DecodeResult<ChangeUser> decodeChangeUser(ByteView payload, uint32_t client_capabilities);
void encode(const ChangeUser& m, uint32_t client_capabilities, Bytes& out);

}  // namespace sp::protocol
