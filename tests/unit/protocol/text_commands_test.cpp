// COM_QUERY, COM_INIT_DB, COM_SET_OPTION, COM_PROCESS_KILL: encode and decode
// against the same exact bytes, separately; every truncation; wrong command bytes.
#include "protocol/text_commands.hpp"

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::ExactBuffer;
using test::expectEveryPrefixFails;
using test::hex;
using test::toHex;

template <class M>
std::string encoded(const M& m) {
  Bytes out;
  encode(m, out);
  return toHex(out);
}

TEST(ComQuery, EncodeAndDecode) {
  const Bytes bytes = hex("03 53454c4543542031");  // "SELECT 1"
  EXPECT_EQ(encoded(ComQuery{"SELECT 1"}), toHex(bytes));
  ExactBuffer buffer(bytes);  // decoded views point into it
  auto m = decodeComQuery(buffer.view());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->query, "SELECT 1");
  // An empty query is a valid COM_QUERY (the server answers it with 1065).
  ExactBuffer command_only(hex("03"));
  auto empty = decodeComQuery(command_only.view());
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->query, "");
  EXPECT_EQ(decodeComQuery({}).error(), DecodeError::kIncomplete);
  EXPECT_EQ(decodeComQuery(ExactBuffer(hex("02 78")).view()).error(), DecodeError::kProtocolValue);
}

TEST(ComInitDb, EncodeAndDecode) {
  const Bytes bytes = hex("02 696d");  // "im"
  EXPECT_EQ(encoded(ComInitDb{"im"}), toHex(bytes));
  ExactBuffer buffer(bytes);
  auto m = decodeComInitDb(buffer.view());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->schema, "im");
  EXPECT_EQ(decodeComInitDb({}).error(), DecodeError::kIncomplete);
  EXPECT_EQ(decodeComInitDb(ExactBuffer(hex("03 696d")).view()).error(), DecodeError::kProtocolValue);
}

TEST(ComSetOption, EncodeAndDecode) {
  struct Case {
    const char* name;
    SetOption option;
    const char* bytes;
  };
  for (const Case& c : {Case{"on", SetOption::kMultiStatementsOn, "1b 0000"},
                        Case{"off", SetOption::kMultiStatementsOff, "1b 0100"}}) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(encoded(ComSetOption{c.option}), toHex(hex(c.bytes)));
    auto m = decodeComSetOption(ExactBuffer(hex(c.bytes)).view());
    ASSERT_TRUE(m);
    EXPECT_EQ(m->option, c.option);
    expectEveryPrefixFails(hex(c.bytes), decodeComSetOption);
  }
  EXPECT_EQ(decodeComSetOption(ExactBuffer(hex("1b 0200")).view()).error(), DecodeError::kProtocolValue);
  EXPECT_EQ(decodeComSetOption(ExactBuffer(hex("1b 0001")).view()).error(), DecodeError::kProtocolValue);
  EXPECT_EQ(decodeComSetOption(ExactBuffer(hex("1b 0000 00")).view()).error(), DecodeError::kExtraBytes);
  EXPECT_EQ(decodeComSetOption(ExactBuffer(hex("0e 0000")).view()).error(), DecodeError::kProtocolValue);
}

TEST(ComProcessKill, EncodeAndDecode) {
  const Bytes bytes = hex("0c 2a000001");
  EXPECT_EQ(encoded(ComProcessKill{0x0100002a}), toHex(bytes));
  auto m = decodeComProcessKill(ExactBuffer(bytes).view());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->connection_id, 0x0100002au);
  expectEveryPrefixFails(bytes, decodeComProcessKill);
  // As the server: the first four bytes are the id, the rest is ignored.
  auto longer = decodeComProcessKill(ExactBuffer(hex("0c 07000000 ff")).view());
  ASSERT_TRUE(longer);
  EXPECT_EQ(longer->connection_id, 7u);
  EXPECT_EQ(decodeComProcessKill(ExactBuffer(hex("0d 07000000")).view()).error(), DecodeError::kProtocolValue);
}

TEST(CommandParts, ViewTheCommandByteAndTheArgument) {
  const std::string sql = "SELECT 2";
  auto parts = commandParts(ComQuery{sql});
  ASSERT_EQ(parts.command.size(), 1u);
  EXPECT_EQ(parts.command[0], 0x03);
  EXPECT_EQ(parts.argument.data(), reinterpret_cast<const uint8_t*>(sql.data()));  // not copied
  EXPECT_EQ(commandParts(ComInitDb{"x"}).command[0], 0x02);
  EXPECT_EQ(commandParts(Command::kResetConnection, "").command[0], 0x1f);
}

}  // namespace
}  // namespace sp::protocol
