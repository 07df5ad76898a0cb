// The HTTP/1.1 client side the etcd JSON gateway needs: a POST request, and
// an incremental response reader (status line, headers, a body framed by
// Content-Length, chunked transfer coding, or the connection's end). Pure:
// proxy/fleet/etcd_client.cpp moves the bytes; every input split is handled.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sp::coord {

struct HttpPost {
  std::string host;    // Host header: "127.0.0.1:2379"
  std::string target;  // "/v3/kv/range"
  std::string body;    // JSON
  bool keep_alive = false;
  std::vector<std::pair<std::string, std::string>> headers;  // more header fields, in order
};

std::string encodeHttpPost(const HttpPost& request);

enum class HttpReadError : uint8_t {
  kNone,
  kMalformedStatusLine,
  kMalformedHeader,
  kHeadTooLarge,
  kBadContentLength,
  kBadChunk,
  kBodyTooLarge,
  kTruncated,  // the connection ended inside the head, a chunk or a Content-Length body
};
std::string_view httpReadErrorText(HttpReadError error);

// Feed it what the socket reads; take the decoded body bytes as they come
// (a streaming response such as /v3/watch never ends). Once an error is
// reported the reader stays in error.
class HttpResponseReader {
 public:
  static constexpr size_t kMaxHeadBytes = 16 * 1024;

  explicit HttpResponseReader(uint64_t max_body_bytes) : max_body_(max_body_bytes) {}

  HttpReadError feed(std::string_view bytes);
  // The peer closed the connection: completes a close-delimited body, else
  // reports kTruncated unless the response was already complete.
  HttpReadError finish();

  bool headComplete() const { return state_ > State::kHead; }
  bool complete() const { return state_ == State::kDone; }
  int status() const { return status_; }
  HttpReadError error() const { return error_; }
  // Decoded body bytes received since the last call.
  std::string takeBody();

 private:
  enum class State : uint8_t { kHead, kLengthBody, kCloseBody, kChunkSize, kChunkData, kChunkDataEnd, kTrailer, kDone, kError };

  HttpReadError fail(HttpReadError e);
  HttpReadError parseHead(std::string_view head);
  HttpReadError appendBody(std::string_view bytes);
  // Consumes what it can of pending_; false when more input is needed.
  bool step(HttpReadError& error);

  uint64_t max_body_;
  State state_ = State::kHead;
  HttpReadError error_ = HttpReadError::kNone;
  int status_ = 0;
  std::string pending_;        // unparsed input
  std::string body_;           // decoded, not yet taken
  uint64_t body_total_ = 0;    // decoded so far
  uint64_t remaining_ = 0;     // of a Content-Length body or of the current chunk
};

}  // namespace sp::coord
