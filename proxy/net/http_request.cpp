#include "proxy/net/http_request.hpp"

#include <fmt/format.h>

namespace sp::proxy {

namespace {
std::string_view reasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

bool isToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < 'A' || c > 'Z') return false;
  }
  return true;
}
}  // namespace

std::expected<HttpRequestHead, int> parseHttpRequestHead(std::string_view head) {
  auto eol = head.find("\r\n");
  if (eol == std::string_view::npos) return std::unexpected(400);
  std::string_view line = head.substr(0, eol);
  auto sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return std::unexpected(400);
  auto sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) return std::unexpected(400);
  HttpRequestHead r;
  r.method = std::string(line.substr(0, sp1));
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  r.version = std::string(line.substr(sp2 + 1));
  if (!isToken(r.method) || target.empty() || target[0] != '/') return std::unexpected(400);
  if (r.version != "HTTP/1.1" && r.version != "HTTP/1.0") {
    return std::unexpected(r.version.starts_with("HTTP/") ? 505 : 400);
  }
  const size_t question = target.find('?');
  r.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) r.query = std::string(target.substr(question + 1));
  return r;
}

std::string httpResponse(int status, std::string_view content_type, std::string_view body, bool head_only) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
                                status, reasonPhrase(status), content_type, body.size());
  if (status == 405) out += "Allow: GET, HEAD\r\n";
  out += "\r\n";
  if (!head_only) out += body;
  return out;
}

}  // namespace sp::proxy
