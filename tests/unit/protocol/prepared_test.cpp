// COM_STMT_* messages and the COM_STMT_PREPARE_OK answer.
#include "protocol/prepared.hpp"

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::ExactBuffer;
using test::expectEveryPrefixFails;
using test::hex;

// ---------------------------------------------------------------- PREPARE_OK

struct PrepareOkCase {
  const char* name;
  StmtPrepareOk message;
  const char* bytes;
};

const std::vector<PrepareOkCase>& prepareOkCases() {
  static const std::vector<PrepareOkCase> cases = {
      // Captured: SELECT * FROM types WHERE id > ? (31 columns, 1 parameter).
      {"captured_select", {1, 31, 1, 0, std::nullopt}, "00 01000000 1f00 0100 00 0000"},
      {"captured_do", {6, 0, 0, 0, std::nullopt}, "00 06000000 0000 0000 00 0000"},
      {"warnings_big_id", {0xfffffffe, 2, 65535, 3, std::nullopt}, "00 feffffff 0200 ffff 00 0300"},
      {"mysql8_metadata_follows", {7, 1, 1, 0, uint8_t{1}}, "00 07000000 0100 0100 00 0000 01"},
  };
  return cases;
}

TEST(StmtPrepareOk, Encode) {
  for (const auto& c : prepareOkCases()) {
    SCOPED_TRACE(c.name);
    Bytes out;
    encode(c.message, out);
    EXPECT_EQ(test::toHex(out), test::toHex(hex(c.bytes)));
  }
}

TEST(StmtPrepareOk, Decode) {
  for (const auto& c : prepareOkCases()) {
    SCOPED_TRACE(c.name);
    Bytes in = hex(c.bytes);
    auto m = decodeStmtPrepareOk(ExactBuffer(in).view());
    ASSERT_TRUE(m.has_value()) << toString(m.error());
    EXPECT_EQ(*m, c.message);
  }
}

TEST(StmtPrepareOk, EveryTruncationFails) {
  for (const auto& c : prepareOkCases()) {
    SCOPED_TRACE(c.name);
    Bytes in = hex(c.bytes);
    std::set<size_t> valid;
    if (in.size() == 13) valid.insert(12);  // without metadata_follows
    expectEveryPrefixFails(in, decodeStmtPrepareOk, valid);
  }
}

TEST(StmtPrepareOk, Malformed) {
  EXPECT_EQ(decodeStmtPrepareOk(hex("ff 01000000 0100 0100 00 0000")).error(), DecodeError::kProtocolValue);
  EXPECT_EQ(decodeStmtPrepareOk(hex("00 01000000 0100 0100 01 0000")).error(), DecodeError::kProtocolValue);
  EXPECT_EQ(decodeStmtPrepareOk(hex("00 01000000 0100 0100 00 0000 01 00")).error(), DecodeError::kExtraBytes);
}

TEST(StmtPrepareOk, ParamDefinitionIsWhatMariadbSends) {
  // Captured from MariaDB 10.11 (a `?` of any prepare response).
  Bytes out;
  encode(paramDefinition(), out);
  EXPECT_EQ(test::toHex(out), "03646566000000013f000c3f0000000000068000000000");
}

// ---------------------------------------------------------------- small commands

template <class M>
struct SimpleCase {
  const char* name;
  M message;
  const char* bytes;
};

template <class M, class Decode>
void checkSimple(const std::vector<SimpleCase<M>>& cases, Decode decode, size_t first_valid_prefix = 0) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Bytes want = hex(c.bytes);
    Bytes out;
    encode(c.message, out);
    EXPECT_EQ(test::toHex(out), test::toHex(want));
    ExactBuffer buf(want);  // decoded views point into it
    auto m = decode(buf.view());
    ASSERT_TRUE(m.has_value()) << toString(m.error());
    EXPECT_EQ(*m, c.message);
    std::set<size_t> valid;
    if (first_valid_prefix > 0) {
      for (size_t n = first_valid_prefix; n < want.size(); ++n) valid.insert(n);
    }
    expectEveryPrefixFails(want, decode, valid);
    // The wrong command byte is refused.
    want[0] ^= 0x40;
    EXPECT_EQ(decode(want).error(), DecodeError::kProtocolValue);
  }
}

TEST(StmtCommands, Prepare) {
  checkSimple<StmtPrepare>({{"select", {"SELECT ?"}, "16 53454c454354203f"}, {"empty", {""}, "16"}},
                           decodeStmtPrepare, 1);
}

TEST(StmtCommands, SendLongData) {
  checkSimple<StmtSendLongData>(
      {{"captured_chunk", {0x12, 0, "chunk1-"}, "18 12000000 0000 6368756e6b312d"},
       {"empty_data", {1, 0xffff, ""}, "18 01000000 ffff"}},
      decodeStmtSendLongData, 7);
}

TEST(StmtCommands, Close) {
  checkSimple<StmtClose>({{"captured", {0x12}, "19 12000000"}, {"last", {0xffffffff}, "19 ffffffff"}},
                         decodeStmtClose);
  EXPECT_EQ(decodeStmtClose(hex("19 12000000 00")).error(), DecodeError::kExtraBytes);
}

TEST(StmtCommands, Reset) {
  checkSimple<StmtReset>({{"captured", {3}, "1a 03000000"}}, decodeStmtReset);
  EXPECT_EQ(decodeStmtReset(hex("1a 03000000 00")).error(), DecodeError::kExtraBytes);
}

TEST(StmtCommands, Fetch) {
  checkSimple<StmtFetch>({{"captured", {4, 3}, "1c 04000000 03000000"}}, decodeStmtFetch);
  EXPECT_EQ(decodeStmtFetch(hex("1c 04000000 03000000 00")).error(), DecodeError::kExtraBytes);
}

// ---------------------------------------------------------------- EXECUTE

using CT = ColumnType;

struct ExecuteCase {
  const char* name;
  StmtParamState state;
  StmtExecute message;
  const char* bytes;
};

const std::vector<ExecuteCase>& executeCases() {
  static const std::vector<ExecuteCase> cases = {
      {"no_params", {}, {6, 0, 1, false, {}, {}}, "17 06000000 00 01000000"},
      {"last_prepared_id", {}, {kLastPreparedStatementId, 0, 1, false, {}, {}}, "17 ffffffff 00 01000000"},
      {"cursor_flag", {}, {4, 1, 1, false, {}, {}}, "17 04000000 01 01000000"},
      // Captured: SELECT * FROM types WHERE id > ? with a LONGLONG 0.
      {"one_longlong",
       {1, {}, {}},
       {1, 0, 1, true, {{CT::kLongLong, false}}, {int64_t{0}}},
       "17 01000000 00 01000000 00 01 0800 0000000000000000"},
      {"types_with_unsigned_and_null",
       {3, {}, {}},
       {2, 0, 1, true, {{CT::kTiny, false}, {CT::kLongLong, true}, {CT::kVarString, false}},
        {int64_t{-7}, NullValue{}, std::string_view("ab")}},
       "17 02000000 00 01000000 02 01 0100 0880 fd00 f9 026162"},
      {"not_rebound_uses_state",
       {2, {{CT::kLong, false}, {CT::kDate, false}}, {}},
       {2, 0, 1, false, {{CT::kLong, false}, {CT::kDate, false}}, {int64_t{42}, BinaryDateTime{2024, 2, 29}}},
       "17 02000000 00 01000000 00 00 2a000000 04e807021d"},
      {"long_data_param_has_no_bytes",
       {2, {}, {true, false}},
       {3, 0, 1, true, {{CT::kBlob, false}, {CT::kLongLong, false}}, {LongDataValue{}, int64_t{41}}},
       "17 03000000 00 01000000 01 01 fc00 0800 2900000000000000"},
      {"nine_params_two_bitmap_bytes",
       {9, {}, {}},
       {5, 0, 1, true, std::vector<BinaryType>(9, {CT::kTiny, false}),
        {int64_t{1}, NullValue{}, int64_t{3}, int64_t{4}, int64_t{5}, int64_t{6}, int64_t{7}, int64_t{8}, NullValue{}}},
       "17 05000000 00 01000000 0201 01 0100 0100 0100 0100 0100 0100 0100 0100 0100 01 03 04 05 06 07 08"},
  };
  return cases;
}

TEST(StmtExecute, Encode) {
  for (const auto& c : executeCases()) {
    SCOPED_TRACE(c.name);
    Bytes out;
    ASSERT_TRUE(encode(c.message, out).has_value());
    EXPECT_EQ(test::toHex(out), test::toHex(hex(c.bytes)));
  }
}

TEST(StmtExecute, Decode) {
  for (const auto& c : executeCases()) {
    SCOPED_TRACE(c.name);
    Bytes in = hex(c.bytes);
    ExactBuffer buf(in);
    auto m = decodeStmtExecute(buf.view(), c.state);
    ASSERT_TRUE(m.has_value()) << toString(m.error());
    EXPECT_EQ(*m, c.message);
  }
}

TEST(StmtExecute, EveryTruncationFails) {
  for (const auto& c : executeCases()) {
    SCOPED_TRACE(c.name);
    expectEveryPrefixFails(hex(c.bytes), [&](ByteView b) { return decodeStmtExecute(b, c.state); });
  }
}

TEST(StmtExecute, DecodeErrors) {
  StmtParamState one{1, {}, {}};
  // new_params_bound 0 before any types were bound.
  EXPECT_EQ(decodeStmtExecute(hex("17 01000000 00 01000000 00 00 01"), one).error(),
            DecodeError::kProtocolValue);
  // bound flag other than 0/1.
  EXPECT_EQ(decodeStmtExecute(hex("17 01000000 00 01000000 00 02 0100 01"), one).error(),
            DecodeError::kProtocolValue);
  // a parameter type with no binary layout.
  EXPECT_EQ(decodeStmtExecute(hex("17 01000000 00 01000000 00 01 2000 01"), one).error(),
            DecodeError::kProtocolValue);
  // trailing bytes, and parameters sent to a statement that has none.
  EXPECT_EQ(decodeStmtExecute(hex("17 01000000 00 01000000 00 01 0100 01 00"), one).error(),
            DecodeError::kExtraBytes);
  EXPECT_EQ(decodeStmtExecute(hex("17 01000000 00 01000000 00 01 0100 01"), StmtParamState{}).error(),
            DecodeError::kExtraBytes);
  // wrong command byte.
  EXPECT_EQ(decodeStmtExecute(hex("16 01000000 00 01000000"), StmtParamState{}).error(),
            DecodeError::kProtocolValue);
  // a huge parameter count cannot drive the allocation past the input.
  StmtParamState many{65535, {}, {}};
  EXPECT_FALSE(decodeStmtExecute(hex("17 01000000 00 01000000"), many).has_value());
}

TEST(StmtExecute, LenientWhereClientsDiffer) {
  StmtParamState one{1, {}, {}};
  // Unused NULL-bitmap bits and type-flag bits other than 0x80 are ignored.
  auto m = decodeStmtExecute(hex("17 01000000 00 01000000 fe 01 0181 ff"), one);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->types[0], (BinaryType{CT::kTiny, true}));
  EXPECT_EQ(m->values[0], BinaryValue(uint64_t{255}));
  // A NULL-typed parameter is NULL even without its bitmap bit.
  auto n = decodeStmtExecute(hex("17 01000000 00 01000000 00 01 0600"), one);
  ASSERT_TRUE(n.has_value());
  EXPECT_TRUE(isNull(n->values[0]));
  // Long data wins over the NULL bit (libmariadb sets it for long-data parameters).
  StmtParamState long_data{1, {}, {true}};
  auto l = decodeStmtExecute(hex("17 01000000 00 01000000 01 01 fc00"), long_data);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->values[0], BinaryValue(LongDataValue{}));
}

TEST(StmtExecute, EncodeErrorsAppendNothing) {
  Bytes out = hex("aa");
  StmtExecute count_mismatch{1, 0, 1, true, {{CT::kTiny, false}}, {}};
  EXPECT_FALSE(encode(count_mismatch, out).has_value());
  StmtExecute bad_value{1, 0, 1, true, {{CT::kTiny, false}, {CT::kLong, false}},
                        {int64_t{1}, std::string_view("x")}};
  EXPECT_EQ(encode(bad_value, out).error(), DecodeError::kProtocolValue);
  EXPECT_EQ(test::toHex(out), "aa");
}

TEST(StmtExecute, StateFollowsTheSession) {
  StmtParamState s{2, {}, {}};
  EXPECT_FALSE(s.noteLongData(2));
  EXPECT_TRUE(s.noteLongData(1));
  EXPECT_FALSE(s.hasLongData(0));
  EXPECT_TRUE(s.hasLongData(1));
  auto m = decodeStmtExecute(hex("17 09000000 00 01000000 00 01 0300 fc00 05000000"), s);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->values[1], BinaryValue(LongDataValue{}));
  rememberExecute(s, *m);
  EXPECT_FALSE(s.hasLongData(1));
  EXPECT_EQ(s.bound_types, (std::vector<BinaryType>{{CT::kLong, false}, {CT::kBlob, false}}));
  // The next execute may omit the types.
  auto again = decodeStmtExecute(hex("17 09000000 00 01000000 02 00 06000000"), s);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->values[0], BinaryValue(int64_t{6}));
  EXPECT_TRUE(isNull(again->values[1]));
}

TEST(StmtExecute, RetargetSendsTypes) {
  StmtExecute client{7, 0, 1, false, {{CT::kLong, false}}, {int64_t{5}}};
  StmtExecute backend = retarget(client, 99);
  EXPECT_EQ(backend.statement_id, 99u);
  EXPECT_TRUE(backend.new_params_bound);
  Bytes out;
  ASSERT_TRUE(encode(backend, out).has_value());
  EXPECT_EQ(test::toHex(out), test::toHex(hex("17 63000000 00 01000000 00 01 0300 05000000")));
}

}  // namespace
}  // namespace sp::protocol
