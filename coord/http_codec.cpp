#include "coord/http_codec.hpp"

#include <boost/algorithm/string/predicate.hpp>

#include <charconv>
#include <locale>

namespace sp::coord {

namespace {

// Header names and tokens are ASCII; the classic locale keeps it so.
bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return boost::algorithm::iequals(a, b, std::locale::classic());
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool containsToken(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    if (equalsIgnoreCase(trim(list.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

std::string encodeHttpPost(const HttpPost& request) {
  std::string out;
  out.reserve(request.body.size() + 160);
  out += "POST ";
  out += request.target;
  out += " HTTP/1.1\r\nHost: ";
  out += request.host;
  out += "\r\nContent-Type: application/json\r\nContent-Length: ";
  out += std::to_string(request.body.size());
  for (const auto& [name, value] : request.headers) {
    out += "\r\n";
    out += name;
    out += ": ";
    out += value;
  }
  out += request.keep_alive ? "\r\nConnection: keep-alive\r\n\r\n" : "\r\nConnection: close\r\n\r\n";
  out += request.body;
  return out;
}

std::string_view httpReadErrorText(HttpReadError error) {
  switch (error) {
    case HttpReadError::kNone: return "no error";
    case HttpReadError::kMalformedStatusLine: return "malformed HTTP status line";
    case HttpReadError::kMalformedHeader: return "malformed HTTP header";
    case HttpReadError::kHeadTooLarge: return "HTTP response head too large";
    case HttpReadError::kBadContentLength: return "bad Content-Length";
    case HttpReadError::kBadChunk: return "malformed chunk in a chunked body";
    case HttpReadError::kBodyTooLarge: return "HTTP response body too large (fleet.etcd.max_response_bytes)";
    case HttpReadError::kTruncated: return "the connection ended inside the HTTP response";
  }
  return "unknown HTTP error";
}

HttpReadError HttpResponseReader::fail(HttpReadError e) {
  state_ = State::kError;
  error_ = e;
  pending_.clear();
  return e;
}

std::string HttpResponseReader::takeBody() {
  std::string out;
  out.swap(body_);
  return out;
}

HttpReadError HttpResponseReader::appendBody(std::string_view bytes) {
  body_total_ += bytes.size();
  if (body_total_ > max_body_) return fail(HttpReadError::kBodyTooLarge);
  body_.append(bytes);
  return HttpReadError::kNone;
}

HttpReadError HttpResponseReader::parseHead(std::string_view head) {
  // "HTTP/1.1 200 OK"
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  if (!line.starts_with("HTTP/1.") || line.size() < 12 || line[8] != ' ') return fail(HttpReadError::kMalformedStatusLine);
  std::string_view code = line.substr(9, 3);
  auto [p, ec] = std::from_chars(code.data(), code.data() + 3, status_);
  if (ec != std::errc() || p != code.data() + 3 || status_ < 100 || (line.size() > 12 && line[12] != ' ')) {
    return fail(HttpReadError::kMalformedStatusLine);
  }
  bool chunked = false;
  bool has_length = false;
  uint64_t length = 0;
  std::string_view rest = head.substr(eol + 2);
  while (!rest.empty()) {
    size_t end = rest.find("\r\n");
    std::string_view field = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 2);
    if (field.empty()) break;
    size_t colon = field.find(':');
    if (colon == std::string_view::npos || colon == 0) return fail(HttpReadError::kMalformedHeader);
    std::string_view name = field.substr(0, colon);
    std::string_view value = trim(field.substr(colon + 1));
    if (equalsIgnoreCase(name, "transfer-encoding")) {
      chunked = containsToken(value, "chunked");
    } else if (equalsIgnoreCase(name, "content-length")) {
      uint64_t n = 0;
      auto [q, ec2] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec2 != std::errc() || q != value.data() + value.size() || value.empty() || (has_length && n != length)) {
        return fail(HttpReadError::kBadContentLength);
      }
      has_length = true;
      length = n;
    }
  }
  if (status_ == 204 || status_ == 304 || (status_ >= 100 && status_ < 200)) {
    state_ = State::kDone;
  } else if (chunked) {
    state_ = State::kChunkSize;
  } else if (has_length) {
    if (length > max_body_) return fail(HttpReadError::kBodyTooLarge);
    remaining_ = length;
    state_ = length == 0 ? State::kDone : State::kLengthBody;
  } else {
    state_ = State::kCloseBody;
  }
  return HttpReadError::kNone;
}

bool HttpResponseReader::step(HttpReadError& error) {
  switch (state_) {
    case State::kHead: {
      size_t end = pending_.find("\r\n\r\n");
      if (end == std::string::npos) {
        if (pending_.size() > kMaxHeadBytes) error = fail(HttpReadError::kHeadTooLarge);
        return false;
      }
      if (end + 4 > kMaxHeadBytes) {
        error = fail(HttpReadError::kHeadTooLarge);
        return false;
      }
      std::string head = pending_.substr(0, end + 2);
      pending_.erase(0, end + 4);
      error = parseHead(head);
      return error == HttpReadError::kNone;
    }
    case State::kLengthBody:
    case State::kChunkData: {
      if (pending_.empty()) return false;
      size_t n = static_cast<size_t>(std::min<uint64_t>(remaining_, pending_.size()));
      error = appendBody(std::string_view(pending_).substr(0, n));
      if (error != HttpReadError::kNone) return false;
      pending_.erase(0, n);
      remaining_ -= n;
      if (remaining_ == 0) state_ = state_ == State::kLengthBody ? State::kDone : State::kChunkDataEnd;
      return true;
    }
    case State::kCloseBody: {
      if (pending_.empty()) return false;
      error = appendBody(pending_);
      pending_.clear();
      return false;
    }
    case State::kChunkSize: {
      size_t eol = pending_.find("\r\n");
      if (eol == std::string::npos) {
        if (pending_.size() > 1024) error = fail(HttpReadError::kBadChunk);
        return false;
      }
      std::string_view line(pending_.data(), eol);
      line = line.substr(0, line.find(';'));  // chunk extensions are ignored
      line = trim(line);
      uint64_t size = 0;
      auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), size, 16);
      if (line.empty() || ec != std::errc() || p != line.data() + line.size()) {
        error = fail(HttpReadError::kBadChunk);
        return false;
      }
      if (size > max_body_) {
        error = fail(HttpReadError::kBodyTooLarge);
        return false;
      }
      pending_.erase(0, eol + 2);
      remaining_ = size;
      state_ = size == 0 ? State::kTrailer : State::kChunkData;
      return true;
    }
    case State::kChunkDataEnd: {
      if (pending_.empty()) return false;
      if (pending_[0] != '\r' || (pending_.size() >= 2 && pending_[1] != '\n')) {
        error = fail(HttpReadError::kBadChunk);
        return false;
      }
      if (pending_.size() < 2) return false;
      pending_.erase(0, 2);
      state_ = State::kChunkSize;
      return true;
    }
    case State::kTrailer: {
      // Trailer fields (etcd sends none) end with an empty line.
      size_t eol = pending_.find("\r\n");
      if (eol == std::string::npos) {
        if (pending_.size() > kMaxHeadBytes) error = fail(HttpReadError::kHeadTooLarge);
        return false;
      }
      pending_.erase(0, eol + 2);
      if (eol == 0) state_ = State::kDone;
      return true;
    }
    case State::kDone:
    case State::kError:
      return false;
  }
  return false;
}

HttpReadError HttpResponseReader::feed(std::string_view bytes) {
  if (state_ == State::kError) return error_;
  if (state_ == State::kDone) return HttpReadError::kNone;  // bytes after the response are ignored
  pending_.append(bytes);
  HttpReadError error = HttpReadError::kNone;
  while (step(error)) {
  }
  return error;
}

HttpReadError HttpResponseReader::finish() {
  if (state_ == State::kError) return error_;
  if (state_ == State::kCloseBody) {
    state_ = State::kDone;
    return HttpReadError::kNone;
  }
  if (state_ == State::kDone) return HttpReadError::kNone;
  return fail(HttpReadError::kTruncated);
}

}  // namespace sp::coord
