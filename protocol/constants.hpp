// Protocol constants, named after the MySQL/MariaDB client/server protocol documentation.
#pragma once
#include <cstdint>

namespace sp::protocol {

// Capability flags (Protocol::CapabilityFlags).
namespace cap {
inline constexpr uint32_t kLongPassword = 1u << 0;
inline constexpr uint32_t kFoundRows = 1u << 1;
inline constexpr uint32_t kLongFlag = 1u << 2;
inline constexpr uint32_t kConnectWithDb = 1u << 3;
inline constexpr uint32_t kNoSchema = 1u << 4;
inline constexpr uint32_t kCompress = 1u << 5;
inline constexpr uint32_t kOdbc = 1u << 6;
inline constexpr uint32_t kLocalFiles = 1u << 7;
inline constexpr uint32_t kIgnoreSpace = 1u << 8;
inline constexpr uint32_t kProtocol41 = 1u << 9;
inline constexpr uint32_t kInteractive = 1u << 10;
inline constexpr uint32_t kSsl = 1u << 11;
inline constexpr uint32_t kIgnoreSigpipe = 1u << 12;
inline constexpr uint32_t kTransactions = 1u << 13;
inline constexpr uint32_t kReserved = 1u << 14;
inline constexpr uint32_t kSecureConnection = 1u << 15;
inline constexpr uint32_t kMultiStatements = 1u << 16;
inline constexpr uint32_t kMultiResults = 1u << 17;
inline constexpr uint32_t kPsMultiResults = 1u << 18;
inline constexpr uint32_t kPluginAuth = 1u << 19;
inline constexpr uint32_t kConnectAttrs = 1u << 20;
inline constexpr uint32_t kPluginAuthLenencClientData = 1u << 21;
inline constexpr uint32_t kCanHandleExpiredPasswords = 1u << 22;
inline constexpr uint32_t kSessionTrack = 1u << 23;
inline constexpr uint32_t kDeprecateEof = 1u << 24;
inline constexpr uint32_t kOptionalResultsetMetadata = 1u << 25;
inline constexpr uint32_t kQueryAttributes = 1u << 27;
inline constexpr uint32_t kSslVerifyServerCert = 1u << 30;
inline constexpr uint32_t kRememberOptions = 1u << 31;
}  // namespace cap

// MariaDB extended capabilities (the 4 bytes at the end of the reserved filler).
namespace mariadb_cap {
inline constexpr uint32_t kProgress = 1u << 0;
inline constexpr uint32_t kComMulti = 1u << 1;
inline constexpr uint32_t kStmtBulkOperations = 1u << 2;
inline constexpr uint32_t kExtendedTypeInfo = 1u << 3;
inline constexpr uint32_t kCacheMetadata = 1u << 4;
}  // namespace mariadb_cap

// Server status flags carried by OK and EOF packets.
namespace status {
inline constexpr uint16_t kInTrans = 0x0001;
inline constexpr uint16_t kAutocommit = 0x0002;
inline constexpr uint16_t kMoreResultsExist = 0x0008;
inline constexpr uint16_t kNoGoodIndexUsed = 0x0010;
inline constexpr uint16_t kNoIndexUsed = 0x0020;
inline constexpr uint16_t kCursorExists = 0x0040;
inline constexpr uint16_t kLastRowSent = 0x0080;
inline constexpr uint16_t kDbDropped = 0x0100;
inline constexpr uint16_t kNoBackslashEscapes = 0x0200;
inline constexpr uint16_t kMetadataChanged = 0x0400;
inline constexpr uint16_t kQueryWasSlow = 0x0800;
inline constexpr uint16_t kPsOutParams = 0x1000;
inline constexpr uint16_t kInTransReadonly = 0x2000;
inline constexpr uint16_t kSessionStateChanged = 0x4000;
inline constexpr uint16_t kAnsiQuotes = 0x8000;  // MariaDB: sql_mode has ANSI_QUOTES
}  // namespace status

// Command bytes (first byte of a client command packet).
enum class Command : uint8_t {
  kSleep = 0x00,
  kQuit = 0x01,
  kInitDb = 0x02,
  kQuery = 0x03,
  kFieldList = 0x04,
  kCreateDb = 0x05,
  kDropDb = 0x06,
  kRefresh = 0x07,
  kShutdown = 0x08,
  kStatistics = 0x09,
  kProcessInfo = 0x0a,
  kConnect = 0x0b,
  kProcessKill = 0x0c,
  kDebug = 0x0d,
  kPing = 0x0e,
  kTime = 0x0f,
  kDelayedInsert = 0x10,
  kChangeUser = 0x11,
  kBinlogDump = 0x12,
  kTableDump = 0x13,
  kConnectOut = 0x14,
  kRegisterSlave = 0x15,
  kStmtPrepare = 0x16,
  kStmtExecute = 0x17,
  kStmtSendLongData = 0x18,
  kStmtClose = 0x19,
  kStmtReset = 0x1a,
  kSetOption = 0x1b,
  kStmtFetch = 0x1c,
  kDaemon = 0x1d,
  kBinlogDumpGtid = 0x1e,
  kResetConnection = 0x1f,
  kStmtBulkExecute = 0xfa,
};

// Column types (Protocol::ColumnType).
enum class ColumnType : uint8_t {
  kDecimal = 0x00,
  kTiny = 0x01,
  kShort = 0x02,
  kLong = 0x03,
  kFloat = 0x04,
  kDouble = 0x05,
  kNull = 0x06,
  kTimestamp = 0x07,
  kLongLong = 0x08,
  kInt24 = 0x09,
  kDate = 0x0a,
  kTime = 0x0b,
  kDateTime = 0x0c,
  kYear = 0x0d,
  kNewDate = 0x0e,
  kVarchar = 0x0f,
  kBit = 0x10,
  kTimestamp2 = 0x11,
  kDateTime2 = 0x12,
  kTime2 = 0x13,
  kJson = 0xf5,
  kNewDecimal = 0xf6,
  kEnum = 0xf7,
  kSet = 0xf8,
  kTinyBlob = 0xf9,
  kMediumBlob = 0xfa,
  kLongBlob = 0xfb,
  kBlob = 0xfc,
  kVarString = 0xfd,
  kString = 0xfe,
  kGeometry = 0xff,
};

// Column definition flags.
namespace column_flag {
inline constexpr uint16_t kNotNull = 0x0001;
inline constexpr uint16_t kPrimaryKey = 0x0002;
inline constexpr uint16_t kUniqueKey = 0x0004;
inline constexpr uint16_t kMultipleKey = 0x0008;
inline constexpr uint16_t kBlob = 0x0010;
inline constexpr uint16_t kUnsigned = 0x0020;
inline constexpr uint16_t kZerofill = 0x0040;
inline constexpr uint16_t kBinary = 0x0080;
inline constexpr uint16_t kEnum = 0x0100;
inline constexpr uint16_t kAutoIncrement = 0x0200;
inline constexpr uint16_t kTimestamp = 0x0400;
inline constexpr uint16_t kSet = 0x0800;
inline constexpr uint16_t kNum = 0x8000;
}  // namespace column_flag

// First byte of a response payload.
inline constexpr uint8_t kOkHeader = 0x00;
inline constexpr uint8_t kEofHeader = 0xfe;
inline constexpr uint8_t kErrHeader = 0xff;
inline constexpr uint8_t kLocalInfileHeader = 0xfb;
inline constexpr uint8_t kAuthMoreDataHeader = 0x01;
inline constexpr uint8_t kAuthSwitchHeader = 0xfe;

// Character set / collation ids used by the proxy.
inline constexpr uint8_t kCollationUtf8mb4GeneralCi = 45;
inline constexpr uint8_t kCollationBinary = 63;

}  // namespace sp::protocol
