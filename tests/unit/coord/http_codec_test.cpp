#include "coord/http_codec.hpp"

#include <gtest/gtest.h>

namespace sp::coord {
namespace {

// Bytes as etcd 3.4's gateway sends them (captured with curl -i).
const std::string kChunkedHead =
    "HTTP/1.1 200 OK\r\nAccess-Control-Allow-Origin: *\r\nContent-Type: application/json\r\n"
    "Grpc-Metadata-Content-Type: application/grpc\r\nDate: Tue, 01 Dec 2026 19:32:58 GMT\r\n"
    "Transfer-Encoding: chunked\r\n\r\n";
const std::string kLine1 = "{\"result\":{\"header\":{\"revision\":\"4\"},\"created\":true}}\n";
const std::string kLine2 = "{\"result\":{\"header\":{\"revision\":\"5\"},\"events\":[]}}\n";

std::string chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

TEST(HttpPost, EncodesRequestLineHeadersAndBody) {
  EXPECT_EQ(encodeHttpPost({"127.0.0.1:2379", "/v3/kv/range", "{\"key\":\"Zm9v\"}", false, {}}),
            "POST /v3/kv/range HTTP/1.1\r\nHost: 127.0.0.1:2379\r\nContent-Type: application/json\r\n"
            "Content-Length: 14\r\nConnection: close\r\n\r\n{\"key\":\"Zm9v\"}");
  EXPECT_EQ(encodeHttpPost({"h:1", "/v3/watch", "{}", true, {{"Grpc-Metadata-Hasleader", "true"}}}),
            "POST /v3/watch HTTP/1.1\r\nHost: h:1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
            "Grpc-Metadata-Hasleader: true\r\nConnection: keep-alive\r\n\r\n{}");
}

TEST(HttpResponseReader, ContentLengthBodyAtEverySplit) {
  const std::string bytes = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world";
  for (size_t split = 0; split <= bytes.size(); ++split) {
    HttpResponseReader r(1 << 20);
    ASSERT_EQ(r.feed(bytes.substr(0, split)), HttpReadError::kNone);
    std::string body = r.takeBody();
    ASSERT_EQ(r.feed(bytes.substr(split)), HttpReadError::kNone);
    body += r.takeBody();
    EXPECT_TRUE(r.complete()) << split;
    EXPECT_EQ(r.status(), 200);
    EXPECT_EQ(body, "hello world") << split;
  }
}

TEST(HttpResponseReader, ChunkedStreamByteByByte) {
  const std::string bytes = kChunkedHead + chunk(kLine1) + chunk(kLine2.substr(0, 10)) + chunk(kLine2.substr(10));
  HttpResponseReader r(1 << 20);
  std::string body;
  for (char c : bytes) {
    ASSERT_EQ(r.feed(std::string_view(&c, 1)), HttpReadError::kNone);
    body += r.takeBody();
  }
  EXPECT_TRUE(r.headComplete());
  EXPECT_FALSE(r.complete());  // a watch stream has not ended
  EXPECT_EQ(body, kLine1 + kLine2);
  ASSERT_EQ(r.feed("0\r\n\r\n"), HttpReadError::kNone);
  EXPECT_TRUE(r.complete());
}

TEST(HttpResponseReader, ChunkExtensionsAndTrailersAreSkipped) {
  HttpResponseReader r(1 << 20);
  ASSERT_EQ(r.feed(kChunkedHead + "3;ext=1\r\nabc\r\n0\r\nX-Trailer: y\r\n\r\n"), HttpReadError::kNone);
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.takeBody(), "abc");
}

TEST(HttpResponseReader, CloseDelimitedBodyEndsWithTheConnection) {
  HttpResponseReader r(1 << 20);
  ASSERT_EQ(r.feed("HTTP/1.0 200 OK\r\n\r\npartial"), HttpReadError::kNone);
  EXPECT_FALSE(r.complete());
  EXPECT_EQ(r.finish(), HttpReadError::kNone);
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.takeBody(), "partial");
}

TEST(HttpResponseReader, ErrorStatusKeepsItsBody) {
  HttpResponseReader r(1 << 20);
  ASSERT_EQ(r.feed("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\n\r\nno"), HttpReadError::kNone);
  EXPECT_EQ(r.status(), 503);
  EXPECT_EQ(r.takeBody(), "no");
}

TEST(HttpResponseReader, MalformedInputIsReported) {
  struct Bad {
    std::string bytes;
    HttpReadError error;
  };
  const Bad cases[] = {
      {"HTTX/1.1 200 OK\r\n\r\n", HttpReadError::kMalformedStatusLine},
      {"HTTP/1.1 2x0 OK\r\n\r\n", HttpReadError::kMalformedStatusLine},
      {"HTTP/1.1 200 OK\r\nno colon\r\n\r\n", HttpReadError::kMalformedHeader},
      {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", HttpReadError::kBadContentLength},
      {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", HttpReadError::kBadContentLength},
      {kChunkedHead + "zz\r\n", HttpReadError::kBadChunk},
      {kChunkedHead + "2\r\nabX", HttpReadError::kBadChunk},
      {"HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n", HttpReadError::kBodyTooLarge},
      {kChunkedHead + "7d1\r\n", HttpReadError::kBodyTooLarge},
      {"HTTP/1.1 200 OK\r\nX: " + std::string(HttpResponseReader::kMaxHeadBytes, 'a'), HttpReadError::kHeadTooLarge},
  };
  for (const auto& c : cases) {
    HttpResponseReader r(1000);
    EXPECT_EQ(r.feed(c.bytes), c.error) << c.bytes.substr(0, 60);
    EXPECT_EQ(r.feed("more"), c.error) << "stays in error";
  }
}

TEST(HttpResponseReader, TruncationIsReportedAtEveryCut) {
  const std::string full = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
  for (size_t cut = 0; cut < full.size(); ++cut) {
    HttpResponseReader r(1 << 20);
    ASSERT_EQ(r.feed(full.substr(0, cut)), HttpReadError::kNone);
    EXPECT_EQ(r.finish(), HttpReadError::kTruncated) << cut;
  }
  const std::string chunked = kChunkedHead + chunk("abc") + "0\r\n\r\n";
  for (size_t cut = 0; cut < chunked.size(); ++cut) {
    HttpResponseReader r(1 << 20);
    ASSERT_EQ(r.feed(chunked.substr(0, cut)), HttpReadError::kNone);
    EXPECT_EQ(r.finish(), HttpReadError::kTruncated) << cut;
  }
}

}  // namespace
}  // namespace sp::coord
