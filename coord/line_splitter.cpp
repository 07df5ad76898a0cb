#include "coord/line_splitter.hpp"

namespace sp::coord {

std::optional<std::string> LineSplitter::next() {
  size_t nl = buffer_.find('\n', start_);
  if (nl == std::string::npos) {
    // Compact once the consumed prefix dominates.
    if (start_ > 0 && start_ * 2 >= buffer_.size()) {
      buffer_.erase(0, start_);
      start_ = 0;
    }
    return std::nullopt;
  }
  size_t end = nl;
  if (end > start_ && buffer_[end - 1] == '\r') --end;
  std::string line = buffer_.substr(start_, end - start_);
  start_ = nl + 1;
  return line;
}

}  // namespace sp::coord
