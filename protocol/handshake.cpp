#include "protocol/handshake.hpp"

#include <algorithm>

#include "protocol/constants.hpp"
#include "protocol/detail_try.hpp"

namespace sp::protocol {

namespace {

// Declared by MySQL 8 clients only: one extra byte (zstd level) ends the response.
constexpr uint32_t kZstdCompressionAlgorithm = 1u << 26;
constexpr size_t kScramblePart1 = 8;
constexpr size_t kMinScramblePart2 = 13;  // 12 bytes + NUL, even when the length byte says less
constexpr size_t kResponseFillerBytes = 19;
constexpr size_t kSslRequestSize = 32;

// MariaDB reuses bit 0 (CLIENT_LONG_PASSWORD, "CLIENT_MYSQL" in MariaDB) to say
// the peer is MariaDB: when it is clear, the last 4 filler bytes carry
// MariaDB's extended capabilities.
bool carriesMariadbCaps(uint32_t capabilities) { return (capabilities & cap::kLongPassword) == 0; }

DecodeResult<std::string_view> readAuthResponse(Reader& r, uint32_t caps) {
  if (caps & cap::kPluginAuthLenencClientData) return r.lenencString();
  if (caps & cap::kSecureConnection) {
    SP_TRY(len, r.u8());
    return r.fixed(len);
  }
  return r.nulString();
}

DecodeResult<std::vector<std::pair<std::string, std::string>>> readAttributes(Reader& r) {
  SP_TRY(total, r.lenenc());
  if (total > r.remaining()) return std::unexpected(DecodeError::kIncomplete);
  SP_TRY(block, r.fixed(static_cast<size_t>(total)));
  Reader attrs(asBytes(block));
  std::vector<std::pair<std::string, std::string>> out;
  while (!attrs.empty()) {
    SP_TRY(key, attrs.lenencString());
    SP_TRY(value, attrs.lenencString());
    out.emplace_back(std::string(key), std::string(value));
  }
  return out;
}

}  // namespace

void encode(const HandshakeV10& m, Bytes& out) {
  Writer w(out);
  w.u8(m.protocol_version);
  w.nulString(m.server_version);
  w.u32(m.connection_id);
  std::string part1 = m.auth_plugin_data.substr(0, kScramblePart1);
  part1.resize(kScramblePart1, '\0');
  w.raw(part1);
  w.u8(0);  // filler
  w.u16(static_cast<uint16_t>(m.capabilities));
  w.u8(m.character_set);
  w.u16(m.status_flags);
  w.u16(static_cast<uint16_t>(m.capabilities >> 16));
  std::string part2;
  if (m.auth_plugin_data.size() > kScramblePart1) part2 = m.auth_plugin_data.substr(kScramblePart1);
  part2.push_back('\0');
  if (part2.size() < kMinScramblePart2) part2.resize(kMinScramblePart2, '\0');
  size_t data_len = kScramblePart1 + part2.size();
  w.u8((m.capabilities & cap::kPluginAuth) ? static_cast<uint8_t>(std::min<size_t>(data_len, 255)) : 0);
  w.zeros(6);
  w.u32(carriesMariadbCaps(m.capabilities) ? m.mariadb_capabilities : 0);
  if (m.capabilities & cap::kSecureConnection) w.raw(part2);
  if (m.capabilities & cap::kPluginAuth) w.nulString(m.auth_plugin_name);
}

DecodeResult<HandshakeV10> decodeHandshakeV10(ByteView payload) {
  Reader r(payload);
  HandshakeV10 m;
  SP_TRY(version, r.u8());
  if (version != 10) return std::unexpected(DecodeError::kProtocolValue);
  m.protocol_version = version;
  SP_TRY(server_version, r.nulString());
  m.server_version = server_version;
  SP_TRY(connection_id, r.u32());
  m.connection_id = connection_id;
  SP_TRY(part1, r.fixed(kScramblePart1));
  m.auth_plugin_data = part1;
  SP_TRY_VOID(r.skip(1));  // filler
  SP_TRY(caps_low, r.u16());
  SP_TRY(charset, r.u8());
  m.character_set = charset;
  SP_TRY(status_flags, r.u16());
  m.status_flags = status_flags;
  SP_TRY(caps_high, r.u16());
  m.capabilities = caps_low | (uint32_t{caps_high} << 16);
  SP_TRY(data_len, r.u8());
  SP_TRY_VOID(r.skip(6));  // reserved
  SP_TRY(mariadb_caps, r.u32());
  if (carriesMariadbCaps(m.capabilities)) m.mariadb_capabilities = mariadb_caps;
  if (m.capabilities & cap::kSecureConnection) {
    size_t part2_len = std::max<size_t>(kMinScramblePart2, data_len > kScramblePart1 ? data_len - kScramblePart1 : 0);
    SP_TRY(part2, r.fixed(part2_len));
    if (part2.back() == '\0') part2.remove_suffix(1);
    m.auth_plugin_data += part2;
  }
  if (m.capabilities & cap::kPluginAuth) {
    SP_TRY(plugin, r.nulString());
    m.auth_plugin_name = plugin;
  }
  SP_TRY_VOID(r.expectEnd());
  return m;
}

void encode(const HandshakeResponse41& m, Bytes& out) {
  Writer w(out);
  w.u32(m.capabilities);
  w.u32(m.max_packet_size);
  w.u8(m.character_set);
  w.zeros(kResponseFillerBytes);
  w.u32(carriesMariadbCaps(m.capabilities) ? m.mariadb_capabilities : 0);
  w.nulString(m.username);
  if (m.capabilities & cap::kPluginAuthLenencClientData) {
    w.lenencString(m.auth_response);
  } else if (m.capabilities & cap::kSecureConnection) {
    // A 1-byte length cannot say more than 255; such responses need the lenenc form.
    std::string_view resp = std::string_view(m.auth_response).substr(0, 255);
    w.u8(static_cast<uint8_t>(resp.size()));
    w.raw(resp);
  } else {
    w.nulString(m.auth_response);
  }
  if (m.capabilities & cap::kConnectWithDb) w.nulString(m.database);
  if (m.capabilities & cap::kPluginAuth) w.nulString(m.auth_plugin_name);
  if (m.capabilities & cap::kConnectAttrs) {
    Bytes block;
    Writer bw(block);
    for (const auto& [key, value] : m.attributes) {
      bw.lenencString(key);
      bw.lenencString(value);
    }
    w.lenenc(block.size());
    w.raw(block);
  }
}

DecodeResult<HandshakeResponse41> decodeHandshakeResponse41(ByteView payload) {
  Reader r(payload);
  HandshakeResponse41 m;
  SP_TRY(caps, r.u32());
  // Pre-4.1 clients send HandshakeResponse320, which this codec does not speak.
  if (!(caps & cap::kProtocol41)) return std::unexpected(DecodeError::kProtocolValue);
  m.capabilities = caps;
  SP_TRY(max_packet, r.u32());
  m.max_packet_size = max_packet;
  SP_TRY(charset, r.u8());
  m.character_set = charset;
  SP_TRY_VOID(r.skip(kResponseFillerBytes));
  SP_TRY(mariadb_caps, r.u32());
  if (carriesMariadbCaps(caps)) m.mariadb_capabilities = mariadb_caps;
  SP_TRY(username, r.nulString());
  m.username = username;
  SP_TRY(auth, readAuthResponse(r, caps));
  m.auth_response = auth;
  if (caps & cap::kConnectWithDb) {
    SP_TRY(db, r.nulString());
    m.database = db;
  }
  if (caps & cap::kPluginAuth) {
    SP_TRY(plugin, r.nulString());
    m.auth_plugin_name = plugin;
  }
  if (caps & cap::kConnectAttrs) {
    SP_TRY(attrs, readAttributes(r));
    m.attributes = std::move(attrs);
  }
  if (caps & kZstdCompressionAlgorithm) SP_TRY_VOID(r.skip(1));
  SP_TRY_VOID(r.expectEnd());
  return m;
}

bool isSslRequest(ByteView payload) {
  if (payload.size() != kSslRequestSize) return false;
  Reader r(payload);
  uint32_t caps = *r.u32();  // size checked above
  return (caps & cap::kSsl) && (caps & cap::kProtocol41);
}

void encode(const SslRequest& m, Bytes& out) {
  Writer w(out);
  w.u32(m.capabilities | cap::kSsl);
  w.u32(m.max_packet_size);
  w.u8(m.character_set);
  w.zeros(kResponseFillerBytes);
  w.u32(carriesMariadbCaps(m.capabilities) ? m.mariadb_capabilities : 0);
}

void encode(const AuthSwitchRequest& m, Bytes& out) {
  Writer w(out);
  w.u8(kAuthSwitchHeader);
  w.nulString(m.plugin_name);
  // Servers terminate the scramble with a NUL (MySQL's client insists on a
  // 21-byte native-password switch). Decoding strips it; a caller that already
  // put it into plugin_data does not get a second one.
  w.raw(m.plugin_data);
  if (m.plugin_data.empty() || m.plugin_data.back() != '\0') w.u8(0);
}

DecodeResult<AuthSwitchRequest> decodeAuthSwitchRequest(ByteView payload) {
  Reader r(payload);
  SP_TRY(header, r.u8());
  if (header != kAuthSwitchHeader) return std::unexpected(DecodeError::kProtocolValue);
  AuthSwitchRequest m;
  SP_TRY(plugin, r.nulString());
  m.plugin_name = plugin;
  std::string_view data = r.restString();
  if (!data.empty() && data.back() == '\0') data.remove_suffix(1);
  m.plugin_data = data;
  return m;
}

DecodeResult<std::string_view> decodeAuthMoreData(ByteView payload) {
  Reader r(payload);
  SP_TRY(header, r.u8());
  if (header != kAuthMoreDataHeader) return std::unexpected(DecodeError::kProtocolValue);
  return r.restString();
}

void encodeAuthMoreData(std::string_view data, Bytes& out) {
  Writer w(out);
  w.u8(kAuthMoreDataHeader);
  w.raw(data);
}

}  // namespace sp::protocol
