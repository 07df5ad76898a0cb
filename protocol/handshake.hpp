// Connection phase messages: Handshake V10 (server greeting),
// HandshakeResponse41 (client login), SSLRequest detection,
// AuthSwitchRequest / AuthSwitchResponse and AuthMoreData.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "protocol/wire.hpp"

namespace sp::protocol {

struct HandshakeV10 {
  uint8_t protocol_version = 10;   // int<1> always 10
  std::string server_version;      // string<NUL>
  uint32_t connection_id = 0;      // int<4>
  std::string auth_plugin_data;    // 8 bytes part 1 + (len-8, at least 12 bytes) part 2 (trailing NUL stripped)
  uint32_t capabilities = 0;       // int<2> lower + int<2> upper
  uint8_t character_set = 0;       // int<1>
  uint16_t status_flags = 0;       // int<2>
  uint32_t mariadb_capabilities = 0;  // int<4> at the end of the filler, when CLIENT_LONG_PASSWORD is not set (MariaDB)
  std::string auth_plugin_name;    // string<NUL>, when CLIENT_PLUGIN_AUTH
  bool operator==(const HandshakeV10&) const = default;
};
void encode(const HandshakeV10& m, Bytes& out);
DecodeResult<HandshakeV10> decodeHandshakeV10(ByteView payload);

struct HandshakeResponse41 {
  uint32_t capabilities = 0;          // int<4>
  uint32_t max_packet_size = 0;       // int<4>
  uint8_t character_set = 0;          // int<1>
  uint32_t mariadb_capabilities = 0;  // last 4 of the 23-byte filler (MariaDB, when !CLIENT_LONG_PASSWORD)
  std::string username;               // string<NUL>
  std::string auth_response;          // lenenc (PLUGIN_AUTH_LENENC) | int<1> len + bytes (SECURE_CONNECTION) | NUL
  std::string database;               // string<NUL>, when CLIENT_CONNECT_WITH_DB
  std::string auth_plugin_name;       // string<NUL>, when CLIENT_PLUGIN_AUTH
  std::vector<std::pair<std::string, std::string>> attributes;  // when CLIENT_CONNECT_ATTRS
  bool operator==(const HandshakeResponse41&) const = default;
};
void encode(const HandshakeResponse41& m, Bytes& out);
DecodeResult<HandshakeResponse41> decodeHandshakeResponse41(ByteView payload);

// An SSLRequest is exactly 32 bytes: the fixed part of HandshakeResponse41 with CLIENT_SSL set.
bool isSslRequest(ByteView payload);

// What a client sends before its TLS handshake: the first 32 bytes of a
// HandshakeResponse41. The full response follows over TLS.
struct SslRequest {
  uint32_t capabilities = 0;          // int<4>, CLIENT_SSL among them
  uint32_t max_packet_size = 0;       // int<4>
  uint8_t character_set = 0;          // int<1>
  uint32_t mariadb_capabilities = 0;  // last 4 of the 23-byte filler (when !CLIENT_LONG_PASSWORD)
};
void encode(const SslRequest& m, Bytes& out);

struct AuthSwitchRequest {
  std::string plugin_name;  // string<NUL> after the 0xfe header
  std::string plugin_data;  // string<EOF>: decode strips the trailing NUL, encode adds it (once)
  bool operator==(const AuthSwitchRequest&) const = default;
};
void encode(const AuthSwitchRequest& m, Bytes& out);
DecodeResult<AuthSwitchRequest> decodeAuthSwitchRequest(ByteView payload);

// AuthMoreData: 0x01 header + plugin-specific bytes (string<EOF>).
DecodeResult<std::string_view> decodeAuthMoreData(ByteView payload);
void encodeAuthMoreData(std::string_view data, Bytes& out);

// caching_sha2_password's one-byte AuthMoreData answers to the scramble.
inline constexpr uint8_t kCachingSha2FastAuthOk = 0x03;       // OK follows
inline constexpr uint8_t kCachingSha2FullAuthNeeded = 0x04;  // send the password (over TLS: in clear)

}  // namespace sp::protocol
