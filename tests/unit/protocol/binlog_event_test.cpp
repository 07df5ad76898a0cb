// Binlog events captured from a real MariaDB 10.11 (captured_binlog.inc):
// the decoder's reading of the whole dump, every truncation of every event,
// every single-byte corruption (the CRC32 footer), and refused event kinds.
#include <gtest/gtest.h>

#include <variant>

#include "protocol/binlog_decoder.hpp"
#include "tests/unit/protocol/captured_binlog.inc"
#include "tests/unit/protocol/test_util.hpp"

namespace sp::protocol {
namespace {

using test::hex;
using test::kCapturedBinlog;

std::vector<Bytes> capturedEvents() {
  std::vector<Bytes> out;
  for (const auto& e : kCapturedBinlog) out.push_back(hex(e.hex));
  return out;
}

BinlogPosition captureStart() { return {test::kCapturedBinlogFile, 4}; }

// One line per event: what a consumer of the decoder sees.
std::string describe(const BinlogEvent& e) {
  std::string out = std::to_string(e.header.type) + "@" + toString(e.end) + " ";
  if (const auto* rows = std::get_if<BinlogRowsEvent>(&e.body)) {
    out += "rows " + std::to_string(static_cast<int>(rows->kind)) + " " + rows->schema + "." + rows->table;
    for (const auto& n : rows->column_names) out += " " + n;
    for (const auto& image : rows->rows) {
      out += " |";
      for (const auto& v : image) out += " " + binlogValueLiteral(v);
    }
  } else if (const auto* commit = std::get_if<BinlogCommitEvent>(&e.body)) {
    out += "commit " + std::to_string(commit->xid);
  } else if (const auto* query = std::get_if<BinlogQueryEvent>(&e.body)) {
    out += "query " + query->schema + " " + query->query;
  } else if (const auto* gtid = std::get_if<BinlogGtidEvent>(&e.body)) {
    out += "gtid " + std::to_string(gtid->gtid.domain_id) + "-" + std::to_string(gtid->gtid.seq_no) + " " +
           std::to_string(gtid->gtid.flags);
  } else if (const auto* rotate = std::get_if<BinlogRotateEvent>(&e.body)) {
    out += "rotate " + rotate->rotate.next_file + ":" + std::to_string(rotate->rotate.position);
  } else if (std::holds_alternative<BinlogHeartbeatEvent>(e.body)) {
    out += "heartbeat";
  } else {
    out += "other";
  }
  return out;
}

// A decoder that has read the first `n` captured events.
BinlogDecoder primed(const std::vector<Bytes>& events, size_t n) {
  BinlogDecoder d(captureStart(), true);
  for (size_t i = 0; i < n; ++i) EXPECT_TRUE(d.decode(events[i]).has_value()) << "event " << i;
  return d;
}

// The event with its post-header and body cut to `body_size` bytes, and its
// size and CRC32 made right again: the truncation reaches the body decoders.
Bytes truncatedBody(const Bytes& event, size_t body_size) {
  Bytes out(event.begin(), event.begin() + kBinlogHeaderSize + body_size);
  const uint32_t size = static_cast<uint32_t>(out.size() + kBinlogChecksumSize);
  for (int k = 0; k < 4; ++k) out[9 + k] = static_cast<uint8_t>(size >> (8 * k));
  const uint32_t crc = binlogCrc32(out);
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<uint8_t>(crc >> (8 * k)));
  return out;
}

TEST(BinlogDecoder, ReadsTheCapturedDump) {
  auto events = capturedEvents();
  BinlogDecoder d(captureStart(), true);
  std::vector<std::string> seen;
  std::vector<BinlogEvent> decoded;
  for (const auto& bytes : events) {
    auto e = d.decode(test::ExactBuffer(bytes).view());
    ASSERT_TRUE(e.has_value()) << e.error().message;
    seen.push_back(describe(*e));
    decoded.push_back(std::move(*e));
  }
  ASSERT_EQ(decoded.size(), 25u);
  // The fake ROTATE names the file; the artificial FORMAT_DESCRIPTION does not move the position.
  EXPECT_EQ(seen[0], std::string("4@") + test::kCapturedBinlogFile + ":4 rotate " + test::kCapturedBinlogFile + ":4");
  EXPECT_TRUE(d.checksum());
  EXPECT_TRUE(std::holds_alternative<BinlogGtidEvent>(decoded[5].body));
  EXPECT_NE(seen[6].find("query  DROP TABLE IF EXISTS `im`.`cap_bl`"), std::string::npos) << seen[6];
  EXPECT_NE(seen[8].find("query  CREATE TABLE im.cap_bl"), std::string::npos) << seen[8];

  const std::string columns = "id u big s d t dt ts e st f db bt y dte bl ch";
  const std::string first =
      "1 4294967295 -5 X'68C3A96C6C6F' -12.345 '-01:02:03.500' '2024-02-29 13:01:02.123456' "
      "'2024-01-01 00:00:00.25' 2 5 5e-01 -2.25e+00 682 '2024' '2024-02-29' X'00275C' X'6162'";
  const std::string nulls = "2 NULL NULL NULL NULL NULL NULL NULL NULL NULL NULL NULL NULL NULL NULL NULL NULL";
  auto rowsPart = [&](size_t i) { return seen[i].substr(seen[i].find(" rows ")); };
  EXPECT_EQ(rowsPart(11), " rows 0 im.cap_bl " + columns + " | " + first);
  EXPECT_EQ(rowsPart(15), " rows 0 im.cap_bl " + columns + " | " + nulls);
  std::string after = first;
  after.replace(0, 1, "3");
  after.replace(after.find(" -5 "), 4, " 7 ");
  EXPECT_EQ(rowsPart(19), " rows 1 im.cap_bl " + columns + " | " + first + " | " + after);
  EXPECT_EQ(rowsPart(23), " rows 2 im.cap_bl " + columns + " | " + nulls);
  const auto& insert = std::get<BinlogRowsEvent>(decoded[11].body);
  EXPECT_EQ(insert.primary_key, std::vector<uint32_t>{0});
  EXPECT_TRUE(insert.full_images);

  for (size_t i : {12u, 16u, 20u, 24u}) {
    ASSERT_TRUE(std::holds_alternative<BinlogCommitEvent>(decoded[i].body)) << seen[i];
    EXPECT_NE(std::get<BinlogCommitEvent>(decoded[i].body).xid, 0u);
  }
  // Positions: each event's end is its log_pos, in the captured file; the
  // source leaves out ANNOTATE_ROWS (not asked for), so events may not touch.
  for (size_t i = 2; i < decoded.size(); ++i) {
    EXPECT_EQ(decoded[i].end.file, test::kCapturedBinlogFile);
    EXPECT_EQ(decoded[i].end.pos, decoded[i].header.log_pos) << seen[i];
    if (i > 2) {
      EXPECT_GE(decoded[i].end.pos, decoded[i - 1].end.pos + decoded[i].header.event_size) << seen[i];
    }
  }
}

TEST(BinlogDecoder, RefusesEveryTruncationOfEveryEvent) {
  auto events = capturedEvents();
  for (size_t i = 0; i < events.size(); ++i) {
    const Bytes& full = events[i];
    auto whole = primed(events, i).decode(full);
    ASSERT_TRUE(whole.has_value());
    const std::string expected = describe(*whole);
    // Cut anywhere: the size in the header no longer matches.
    for (size_t n = 0; n < full.size(); ++n) {
      auto d = primed(events, i);
      EXPECT_FALSE(d.decode(test::ExactBuffer(full, n).view()).has_value()) << "event " << i << " cut at " << n;
    }
    // Cut in the body with size and CRC made right: the body decoders must
    // refuse, or (a text that runs to the end, optional metadata) read less.
    const uint8_t type = full[4];
    const bool fixed = type == binlog_type::kXid || isRowsEventType(type);
    // GTID: fields after seq_no, domain and flags are skipped; GTID_LIST and
    // BINLOG_CHECKPOINT are skipped whole; TABLE_MAP: tableMapPrefixes below.
    const size_t gtid_fields = type == binlog_type::kGtid ? 13 : SIZE_MAX;
    if (type == binlog_type::kGtidList || type == binlog_type::kBinlogCheckpoint || type == binlog_type::kTableMap) {
      continue;
    }
    const size_t body = full.size() - kBinlogHeaderSize - kBinlogChecksumSize;
    if (type == binlog_type::kFormatDescription) continue;  // checksummed by itself; covered above
    for (size_t n = 0; n < body; ++n) {
      auto d = primed(events, i);
      Bytes cut = truncatedBody(full, n);
      auto r = d.decode(test::ExactBuffer(cut).view());
      if (n >= gtid_fields) continue;
      if (fixed || type == binlog_type::kGtid) {
        EXPECT_FALSE(r.has_value()) << "event " << i << " (type " << int(type) << ") body cut at " << n;
      } else if (r) {
        EXPECT_NE(describe(*r).substr(describe(*r).find(' ')), expected.substr(expected.find(' ')))
            << "event " << i << " body cut at " << n << " reads as the whole event";
      }
    }
  }
}

TEST(BinlogDecoder, TableMapPrefixesFailOrLackOptionalMetadata) {
  auto events = capturedEvents();
  const Bytes& full = events[10];
  ASSERT_EQ(full[4], binlog_type::kTableMap);
  Bytes body(full.begin() + kBinlogHeaderSize, full.end() - kBinlogChecksumSize);
  auto whole = decodeTableMap(test::ExactBuffer(body).view(), 8);
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->schema, "im");
  EXPECT_EQ(whole->table, "cap_bl");
  EXPECT_EQ(whole->column_names.size(), 17u);
  EXPECT_TRUE(whole->has_signedness);
  EXPECT_TRUE(whole->is_unsigned[1]);   // u INT UNSIGNED
  EXPECT_FALSE(whole->is_unsigned[2]);  // big BIGINT
  EXPECT_EQ(whole->primary_key, std::vector<uint32_t>{0});
  size_t shorter = 0;
  for (size_t n = 0; n < body.size(); ++n) {
    auto r = decodeTableMap(test::ExactBuffer(body, n).view(), 8);
    if (!r) continue;
    ++shorter;  // ends between two optional fields: one of them is missing
    EXPECT_TRUE(r->column_names.size() != 17 || !r->has_signedness || r->primary_key.empty()) << n;
    EXPECT_EQ(r->column_types, whole->column_types);
  }
  EXPECT_LE(shorter, 8u);
}

TEST(BinlogDecoder, RefusesEverySingleByteCorruption) {
  auto events = capturedEvents();
  for (size_t i = 0; i < events.size(); ++i) {
    for (size_t k = 0; k < events[i].size(); ++k) {
      Bytes bad = events[i];
      bad[k] ^= 0x01;
      // The FORMAT_DESCRIPTION's algorithm byte itself: 1 -> 0 says "no
      // checksum", which no CRC can contradict (the server writes the footer
      // of that event whatever the algorithm).
      if (events[i][4] == binlog_type::kFormatDescription && k == events[i].size() - 5) continue;
      auto d = primed(events, i);
      auto r = d.decode(test::ExactBuffer(bad).view());
      EXPECT_FALSE(r.has_value()) << "event " << i << " byte " << k << " flipped was accepted";
    }
  }
}

TEST(BinlogDecoder, AFormatDescriptionResentMidFileDoesNotMoveThePositionBack) {
  auto events = capturedEvents();
  BinlogDecoder d({test::kCapturedBinlogFile, 1411}, true);  // a dump from the middle of the file
  // The captured one has log_pos 0; a server may send the file's own (its end, 256).
  Bytes fde = events[1];
  fde[13] = 0x00;
  fde[14] = 0x01;
  const uint32_t crc = binlogCrc32(ByteView(fde).first(fde.size() - 4));
  for (int k = 0; k < 4; ++k) fde[fde.size() - 4 + k] = static_cast<uint8_t>(crc >> (8 * k));
  ASSERT_TRUE(d.decode(fde).has_value());
  EXPECT_EQ(d.position(), (BinlogPosition{test::kCapturedBinlogFile, 1411}));
  auto e = d.decode(events[13]);  // the next event read from there
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->end.pos, e->header.log_pos);
}

TEST(BinlogDecoder, NamesTheChecksumMismatch) {
  auto events = capturedEvents();
  Bytes bad = events[11];
  bad[bad.size() - 1] ^= 0xff;
  auto r = primed(events, 11).decode(bad);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("checksum mismatch"), std::string::npos) << r.error().message;
}

// An event of `type` with `body`, its size and CRC right.
Bytes makeEvent(uint8_t type, const Bytes& body, uint32_t log_pos) {
  Bytes out;
  Writer w(out);
  w.u32(1700000000);
  w.u8(type);
  w.u32(3430);
  w.u32(static_cast<uint32_t>(kBinlogHeaderSize + body.size() + kBinlogChecksumSize));
  w.u32(log_pos);
  w.u16(0);
  w.raw(body);
  w.u32(binlogCrc32(out));
  return out;
}

TEST(BinlogDecoder, RefusesCompressedAndEncryptedEventsAndUnknownTables) {
  auto events = capturedEvents();
  for (uint8_t type : {uint8_t(165), uint8_t(166), uint8_t(169), uint8_t(171), uint8_t(164)}) {
    auto r = primed(events, 12).decode(makeEvent(type, hex("0000000000000100"), 9000));
    ASSERT_FALSE(r.has_value()) << int(type);
    EXPECT_NE(r.error().message.find(type == 164 ? "encrypted" : "compressed"), std::string::npos) << r.error().message;
  }
  // Rows for a table id no TABLE_MAP announced.
  Bytes rows = events[11];
  Bytes body(rows.begin() + kBinlogHeaderSize, rows.end() - kBinlogChecksumSize);
  body[0] ^= 0x40;
  auto r = primed(events, 11).decode(makeEvent(binlog_type::kWriteRowsV1, body, 9000));
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("without TABLE_MAP"), std::string::npos) << r.error().message;
}

TEST(BinlogDecoder, SkipsUnknownTypesAndFollowsHeartbeatsAndRotates) {
  auto events = capturedEvents();
  auto d = primed(events, 13);
  auto other = d.decode(makeEvent(150, hex("01020304"), 9000));
  ASSERT_TRUE(other.has_value());
  EXPECT_TRUE(std::holds_alternative<BinlogOtherEvent>(other->body));
  EXPECT_EQ(other->end.pos, 9000u);
  auto beat = d.decode(makeEvent(binlog_type::kHeartbeat, Bytes{'m', 'b', '.', '7'}, 9100));
  ASSERT_TRUE(beat.has_value());
  EXPECT_EQ(beat->end, (BinlogPosition{"mb.7", 9100}));
  Bytes rotate_body;
  Writer w(rotate_body);
  w.u64(4);
  w.raw(std::string_view("mariadb-bin.000009"));
  auto rotate = d.decode(makeEvent(binlog_type::kRotate, rotate_body, 0));
  ASSERT_TRUE(rotate.has_value());
  EXPECT_EQ(d.position(), (BinlogPosition{"mariadb-bin.000009", 4}));
}

}  // namespace
}  // namespace sp::protocol
