// The little of HTTP/1.1 the metrics endpoint needs: reading a request head
// (request line; headers are skipped) and writing a complete response.
// Pure: the server (metrics_server.cpp) moves the bytes.
#pragma once
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace sp::proxy {

struct HttpRequestHead {
  std::string method;   // "GET"
  std::string path;     // "/metrics" (query string removed)
  std::string query;    // what follows '?' (not decoded), empty when none
  std::string version;  // "HTTP/1.1"
};

// `head`: the bytes up to and including the blank line ending the headers.
// Error: the status code to answer (400 malformed, 505 unsupported version).
std::expected<HttpRequestHead, int> parseHttpRequestHead(std::string_view head);

// A response with Content-Length and Connection: close.
std::string httpResponse(int status, std::string_view content_type, std::string_view body, bool head_only = false);

}  // namespace sp::proxy
