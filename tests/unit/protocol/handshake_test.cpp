// Connection-phase messages: exact bytes, separately encoded and decoded.
#include "protocol/handshake.hpp"

#include <gtest/gtest.h>

#include "protocol/constants.hpp"
#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::ExactBuffer;
using test::expectEveryPrefixFails;
using test::hex;

struct GreetingCase {
  const char* name;
  HandshakeV10 message;
  const char* bytes;
};

HandshakeV10 greeting(std::string version, uint32_t caps, std::string data, uint32_t mariadb_caps,
                      std::string plugin) {
  HandshakeV10 m;
  m.server_version = std::move(version);
  m.connection_id = 7;
  m.auth_plugin_data = std::move(data);
  m.capabilities = caps;
  m.character_set = 45;
  m.status_flags = status::kAutocommit;
  m.mariadb_capabilities = mariadb_caps;
  m.auth_plugin_name = std::move(plugin);
  return m;
}

const std::vector<GreetingCase>& greetingCases() {
  static const std::vector<GreetingCase> cases = {
      {"mariadb_ext_caps",
       greeting("5.5.5-x", 0x81fff7fe, "abcdefghijklmnopqrst", 0x1d, "mysql_native_password"),
       "0a 352e352e352d7800 07000000 6162636465666768 00 fef7 2d 0200 ff81 15 000000000000"
       " 1d000000 696a6b6c6d6e6f7071727374 00 6d7973716c5f6e61746976655f70617373776f726400"},
      {"mysql_long_password_set",
       greeting("8.0", cap::kLongPassword | cap::kProtocol41 | cap::kSecureConnection | cap::kPluginAuth,
                "abcdefghijklmnopqrst", 0, "caching_sha2_password"),
       "0a 382e3000 07000000 6162636465666768 00 0182 2d 0200 0800 15 000000000000"
       " 00000000 696a6b6c6d6e6f7071727374 00 63616368696e675f736861325f70617373776f726400"},
      {"secure_without_plugin_auth",
       greeting("v", cap::kProtocol41 | cap::kSecureConnection, "abcdefghijklmnopqrst", 0, ""),
       "0a 7600 07000000 6162636465666768 00 0082 2d 0200 0000 00 000000000000"
       " 00000000 696a6b6c6d6e6f7071727374 00"},
      {"short_scramble_only",
       greeting("v", cap::kProtocol41, "abcdefgh", 0, ""),
       "0a 7600 07000000 6162636465666768 00 0002 2d 0200 0000 00 000000000000 00000000"},
  };
  return cases;
}

TEST(HandshakeV10, Encode) {
  for (const auto& c : greetingCases()) {
    SCOPED_TRACE(c.name);
    Bytes out;
    encode(c.message, out);
    EXPECT_EQ(test::toHex(out), test::toHex(hex(c.bytes)));
  }
}

TEST(HandshakeV10, Decode) {
  for (const auto& c : greetingCases()) {
    SCOPED_TRACE(c.name);
    Bytes in = hex(c.bytes);
    auto m = decodeHandshakeV10(ExactBuffer(in).view());
    ASSERT_TRUE(m.has_value()) << toString(m.error());
    EXPECT_EQ(*m, c.message);
  }
}

TEST(HandshakeV10, EveryTruncationFails) {
  for (const auto& c : greetingCases()) {
    SCOPED_TRACE(c.name);
    expectEveryPrefixFails(hex(c.bytes), decodeHandshakeV10);
  }
}

TEST(HandshakeV10, Malformed) {
  Bytes good = hex(greetingCases()[0].bytes);
  Bytes bad_version = good;
  bad_version[0] = 9;
  EXPECT_EQ(decodeHandshakeV10(bad_version).error(), DecodeError::kProtocolValue);
  Bytes extra = good;
  extra.push_back(0);
  EXPECT_EQ(decodeHandshakeV10(extra).error(), DecodeError::kExtraBytes);
}

TEST(HandshakeV10, MysqlFillerIsNotMariadbCaps) {
  // CLIENT_LONG_PASSWORD set: the last 4 filler bytes are reserved, not capabilities.
  Bytes in = hex(greetingCases()[1].bytes);
  in[32] = 0x1d;  // 1 version + "8.0\0" + 4 id + 8 data + 1 + 2 + 1 + 2 + 2 + 1 + 6 reserved
  auto m = decodeHandshakeV10(in);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->mariadb_capabilities, 0u);
}

struct ResponseCase {
  const char* name;
  HandshakeResponse41 message;
  const char* bytes;
};

const std::vector<ResponseCase>& responseCases() {
  static const std::vector<ResponseCase> cases = [] {
    std::vector<ResponseCase> v;
    HandshakeResponse41 full;
    full.capabilities = cap::kProtocol41 | cap::kSecureConnection | cap::kConnectWithDb |
                        cap::kPluginAuth | cap::kConnectAttrs | cap::kPluginAuthLenencClientData;
    full.max_packet_size = 0x01000000;
    full.character_set = 45;
    full.mariadb_capabilities = mariadb_cap::kStmtBulkOperations;
    full.username = "u";
    full.auth_response = "\x01\x02\x03";
    full.database = "db";
    full.auth_plugin_name = "mysql_native_password";
    full.attributes = {{"_os", "Linux"}, {"k", ""}};
    v.push_back({"lenenc_db_plugin_attrs", full,
                 "08823800 00000001 2d 00000000000000000000000000000000000000 04000000"
                 " 7500 03010203 646200 6d7973716c5f6e61746976655f70617373776f726400"
                 " 0d 035f6f73 054c696e7578 016b 00"});

    HandshakeResponse41 secure;
    secure.capabilities = cap::kLongPassword | cap::kProtocol41 | cap::kSecureConnection;
    secure.max_packet_size = 0xffffff;
    secure.character_set = 33;
    secure.username = "root";
    secure.auth_response = "\xaa\xbb\xcc\xdd";
    v.push_back({"secure_connection_1byte_length", secure,
                 "01820000 ffffff00 21 00000000000000000000000000000000000000 00000000"
                 " 726f6f7400 04aabbccdd"});

    HandshakeResponse41 nul;
    nul.capabilities = cap::kLongPassword | cap::kProtocol41;
    nul.username = "";
    nul.auth_response = "pw";
    v.push_back({"nul_terminated_auth", nul,
                 "01020000 00000000 00 00000000000000000000000000000000000000 00000000"
                 " 00 707700"});

    HandshakeResponse41 empty_auth = full;
    empty_auth.auth_response = "";
    empty_auth.attributes = {};
    v.push_back({"empty_auth_no_attrs", empty_auth,
                 "08823800 00000001 2d 00000000000000000000000000000000000000 04000000"
                 " 7500 00 646200 6d7973716c5f6e61746976655f70617373776f726400 00"});
    return v;
  }();
  return cases;
}

TEST(HandshakeResponse41, Encode) {
  for (const auto& c : responseCases()) {
    SCOPED_TRACE(c.name);
    Bytes out;
    encode(c.message, out);
    EXPECT_EQ(test::toHex(out), test::toHex(hex(c.bytes)));
  }
}

TEST(HandshakeResponse41, Decode) {
  for (const auto& c : responseCases()) {
    SCOPED_TRACE(c.name);
    Bytes in = hex(c.bytes);
    auto m = decodeHandshakeResponse41(ExactBuffer(in).view());
    ASSERT_TRUE(m.has_value()) << toString(m.error());
    EXPECT_EQ(*m, c.message);
  }
}

TEST(HandshakeResponse41, EveryTruncationFails) {
  for (const auto& c : responseCases()) {
    SCOPED_TRACE(c.name);
    expectEveryPrefixFails(hex(c.bytes), decodeHandshakeResponse41);
  }
}

TEST(HandshakeResponse41, Malformed) {
  Bytes good = hex(responseCases()[0].bytes);
  Bytes extra = good;
  extra.push_back(0);
  EXPECT_EQ(decodeHandshakeResponse41(extra).error(), DecodeError::kExtraBytes);

  Bytes pre41 = hex(responseCases()[2].bytes);
  pre41[1] = 0x00;  // clear CLIENT_PROTOCOL_41 (bit 9)
  EXPECT_EQ(decodeHandshakeResponse41(pre41).error(), DecodeError::kProtocolValue);

  // Attribute block claims 14 bytes but only 13 follow.
  Bytes long_attrs = good;
  long_attrs[long_attrs.size() - 14] = 0x0e;
  EXPECT_FALSE(decodeHandshakeResponse41(long_attrs).has_value());

  // Attribute block ends in the middle of a pair (a key without a value).
  Bytes half_pair = hex(
      "08823800 00000001 2d 00000000000000000000000000000000000000 04000000"
      " 7500 00 646200 6d7973716c5f6e61746976655f70617373776f726400 02 016b");
  EXPECT_EQ(decodeHandshakeResponse41(half_pair).error(), DecodeError::kIncomplete);
}

TEST(HandshakeResponse41, ZstdLevelByteIsAccepted) {
  Bytes in = hex(
      "01820004 ffffff00 21 00000000000000000000000000000000000000 00000000"
      " 726f6f7400 04aabbccdd 03");
  auto m = decodeHandshakeResponse41(in);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->username, "root");
  in.pop_back();
  EXPECT_EQ(decodeHandshakeResponse41(in).error(), DecodeError::kIncomplete);
}

TEST(SslRequest, Detection) {
  Bytes ssl = hex("00aa0000 00000001 2d 00000000000000000000000000000000000000 00000000");
  ssl[1] = 0x0a;  // PROTOCOL_41 (0x200) | SSL (0x800)
  ASSERT_EQ(ssl.size(), 32u);
  EXPECT_TRUE(isSslRequest(ExactBuffer(ssl).view()));
  Bytes no_ssl = ssl;
  no_ssl[1] = 0x02;
  EXPECT_FALSE(isSslRequest(no_ssl));
  EXPECT_FALSE(isSslRequest(ExactBuffer(ssl, 31).view()));
  Bytes longer = ssl;
  longer.push_back(0);
  EXPECT_FALSE(isSslRequest(longer));
  EXPECT_FALSE(isSslRequest(ByteView{}));
  // A full login response is not an SSLRequest even with CLIENT_SSL set.
  Bytes login = hex(responseCases()[1].bytes);
  login[1] |= 0x08;
  EXPECT_FALSE(isSslRequest(login));
}

TEST(SslRequest, Encode) {
  // What the proxy sends a backend before its TLS handshake: the fixed part of
  // its login response, CLIENT_SSL added. The encoder's output is itself an SSLRequest.
  SslRequest m{0x000aa205, 1u << 30, 0x2d, 0};
  Bytes out;
  encode(m, out);
  EXPECT_EQ(out, hex("05aa0a00 00000040 2d 00000000000000000000000000000000000000 00000000"));
  EXPECT_TRUE(isSslRequest(out));
  // Without CLIENT_LONG_PASSWORD (a MariaDB client) the last filler bytes carry the extended capabilities.
  SslRequest mariadb{0x000aa204, 1u << 24, 0x21, 0x1d};
  Bytes ext;
  encode(mariadb, ext);
  EXPECT_EQ(ext, hex("04aa0a00 00000001 21 00000000000000000000000000000000000000 1d000000"));
}

const char* kSwitchBytes =
    "fe 6d7973716c5f6e61746976655f70617373776f726400 3132333435363738393031323334353637383930 00";

TEST(AuthSwitchRequest, Encode) {
  Bytes out;
  encode(AuthSwitchRequest{"mysql_native_password", "12345678901234567890"}, out);
  EXPECT_EQ(out, hex(kSwitchBytes));
}

TEST(AuthSwitchRequest, EncodeDoesNotDoubleTheNul) {
  Bytes out;
  encode(AuthSwitchRequest{"mysql_native_password", std::string("12345678901234567890\0", 21)}, out);
  EXPECT_EQ(out, hex(kSwitchBytes));
  out.clear();
  encode(AuthSwitchRequest{"p", ""}, out);
  EXPECT_EQ(out, hex("fe 7000 00"));
}

TEST(AuthSwitchRequest, Decode) {
  Bytes in = hex(kSwitchBytes);
  auto m = decodeAuthSwitchRequest(ExactBuffer(in).view());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(*m, (AuthSwitchRequest{"mysql_native_password", "12345678901234567890"}));
  // Plugin data without the trailing NUL is accepted as is.
  in.pop_back();
  EXPECT_EQ(decodeAuthSwitchRequest(in)->plugin_data, "12345678901234567890");
}

TEST(AuthSwitchRequest, Truncations) {
  Bytes in = hex(kSwitchBytes);
  const size_t name_end = 1 + 22;  // header + name + NUL
  for (size_t n = 0; n < in.size(); ++n) {
    auto m = decodeAuthSwitchRequest(ExactBuffer(in, n).view());
    if (n < name_end) {
      EXPECT_FALSE(m.has_value()) << n;
    } else {
      // The data is string<EOF>: a shorter packet is a shorter scramble.
      ASSERT_TRUE(m.has_value()) << n;
      EXPECT_EQ(m->plugin_data, std::string("12345678901234567890").substr(0, std::min<size_t>(n - name_end, 20)));
    }
  }
  Bytes wrong = in;
  wrong[0] = 0x01;
  EXPECT_EQ(decodeAuthSwitchRequest(wrong).error(), DecodeError::kProtocolValue);
}

TEST(AuthMoreData, Decode) {
  Bytes fast_ok = hex("0103");
  ExactBuffer buf(fast_ok);  // the result points into it: keep it alive
  auto d = decodeAuthMoreData(buf.view());
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(*d, "\x03");
  EXPECT_EQ(decodeAuthMoreData(ByteView{}).error(), DecodeError::kIncomplete);
  EXPECT_EQ(decodeAuthMoreData(hex("0203")).error(), DecodeError::kProtocolValue);
  EXPECT_EQ(decodeAuthMoreData(hex("01")).value(), "");
}

TEST(AuthMoreData, Encode) {
  Bytes full;
  encodeAuthMoreData(std::string(1, char(kCachingSha2FullAuthNeeded)), full);
  EXPECT_EQ(full, hex("0104"));
  Bytes fast;
  encodeAuthMoreData(std::string(1, char(kCachingSha2FastAuthOk)), fast);
  EXPECT_EQ(fast, hex("0103"));
}

}  // namespace
}  // namespace sp::protocol
