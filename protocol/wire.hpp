// Bounds-checked readers and writers for the protocol's basic data types
// (fixed-length little-endian integers, length-encoded integers and strings,
// NUL-terminated strings). Every read checks the remaining length first and
// reports kIncomplete instead of reading past the end.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/error.hpp"

namespace sp::protocol {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;

inline std::string_view asText(ByteView b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}
inline ByteView asBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// Reads fields from one message payload. Returned string_views point into the payload.
class Reader {
 public:
  explicit Reader(ByteView data) : data_(data) {}

  size_t remaining() const { return data_.size() - pos_; }
  bool empty() const { return pos_ == data_.size(); }
  size_t position() const { return pos_; }
  ByteView rest() const { return data_.subspan(pos_); }

  DecodeResult<uint8_t> u8();
  DecodeResult<uint16_t> u16();
  DecodeResult<uint32_t> u24();
  DecodeResult<uint32_t> u32();
  DecodeResult<uint64_t> u48();
  DecodeResult<uint64_t> u64();
  // Length-encoded integer; 0xfb (NULL marker) and 0xff are kProtocolValue here.
  DecodeResult<uint64_t> lenenc();
  DecodeResult<std::string_view> fixed(size_t n);
  DecodeResult<std::string_view> lenencString();
  // Up to (not including) the next NUL; consumes the NUL. Missing NUL is kIncomplete.
  DecodeResult<std::string_view> nulString();
  // Everything that is left.
  std::string_view restString();
  DecodeResult<void> skip(size_t n);
  // kExtraBytes unless everything was consumed.
  DecodeResult<void> expectEnd() const;

 private:
  ByteView data_;
  size_t pos_ = 0;
};

// Appends fields to a byte buffer.
class Writer {
 public:
  explicit Writer(Bytes& out) : out_(out) {}
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v);
  void u24(uint32_t v);
  void u32(uint32_t v);
  void u64(uint64_t v);
  void lenenc(uint64_t v);
  void lenencString(std::string_view s);
  void nulString(std::string_view s);
  void raw(std::string_view s);
  void raw(ByteView b);
  void zeros(size_t n);
  Bytes& buffer() { return out_; }

 private:
  Bytes& out_;
};

// Size in bytes of v written as a length-encoded integer.
size_t lenencSize(uint64_t v);

}  // namespace sp::protocol
