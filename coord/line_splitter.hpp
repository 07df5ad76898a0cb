// Splits a byte stream into '\n'-terminated lines: the etcd gateway writes a
// streaming response (/v3/watch) as one JSON object per line, and chunk
// boundaries fall anywhere. Pure.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace sp::coord {

class LineSplitter {
 public:
  explicit LineSplitter(size_t max_line_bytes) : max_line_(max_line_bytes) {}

  void append(std::string_view bytes) { buffer_.append(bytes); }
  // The next complete line without its '\n' (and a '\r' before it);
  // nullopt when none is complete yet.
  std::optional<std::string> next();
  // True when the incomplete tail is longer than max_line_bytes.
  bool overflowed() const { return buffer_.size() - start_ > max_line_; }

 private:
  size_t max_line_;
  std::string buffer_;
  size_t start_ = 0;
};

}  // namespace sp::coord
