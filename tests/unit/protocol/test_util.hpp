// Helpers shared by the protocol codec tests.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "protocol/wire.hpp"

namespace sp::protocol::test {

// "0a 35 2e" or "0a352e" -> bytes. Whitespace is ignored.
inline Bytes hex(std::string_view text) {
  Bytes out;
  int hi = -1;
  for (char c : text) {
    int v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    else continue;
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(static_cast<uint8_t>(hi * 16 + v));
      hi = -1;
    }
  }
  EXPECT_EQ(hi, -1) << "odd number of hex digits";
  return out;
}

inline std::string toHex(ByteView b) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (uint8_t c : b) {
    s.push_back(kDigits[c >> 4]);
    s.push_back(kDigits[c & 15]);
  }
  return s;
}

inline Bytes bytesOf(std::string_view s) { return Bytes(s.begin(), s.end()); }

inline Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// A heap copy of exactly `n` bytes, so that AddressSanitizer flags any read
// past the end (a std::vector may have spare capacity after its size).
class ExactBuffer {
 public:
  ExactBuffer(ByteView src, size_t n) : data_(new uint8_t[n == 0 ? 1 : n]), size_(n) {
    std::copy_n(src.begin(), n, data_.get());
  }
  explicit ExactBuffer(ByteView src) : ExactBuffer(src, src.size()) {}
  ByteView view() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t size_;
};

// Decodes every proper prefix of `full` with `decode` and checks it fails,
// except the prefix lengths in `valid_prefixes` (where the protocol makes the
// rest optional), which must decode to something different from the full message.
template <class Decode>
void expectEveryPrefixFails(ByteView full, Decode decode, std::set<size_t> valid_prefixes = {}) {
  auto whole = decode(ExactBuffer(full).view());
  ASSERT_TRUE(whole.has_value()) << "the full message must decode";
  for (size_t n = 0; n < full.size(); ++n) {
    ExactBuffer prefix(full, n);
    auto r = decode(prefix.view());
    if (valid_prefixes.contains(n)) {
      ASSERT_TRUE(r.has_value()) << "prefix " << n << " should be a valid shorter message";
      EXPECT_FALSE(*r == *whole) << "prefix " << n << " decoded to the full message";
    } else {
      EXPECT_FALSE(r.has_value()) << "prefix of " << n << " / " << full.size() << " bytes decoded";
    }
  }
}

}  // namespace sp::protocol::test
