#include "protocol/wire.hpp"

namespace sp::protocol {

namespace {

// Little-endian read of `n` bytes at `p`; the caller has checked the bounds.
uint64_t loadLe(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

template <class T>
DecodeResult<T> readFixed(ByteView data, size_t& pos, size_t n) {
  if (data.size() - pos < n) return std::unexpected(DecodeError::kIncomplete);
  auto v = static_cast<T>(loadLe(data.data() + pos, n));
  pos += n;
  return v;
}

void storeLe(Bytes& out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

DecodeResult<uint8_t> Reader::u8() { return readFixed<uint8_t>(data_, pos_, 1); }
DecodeResult<uint16_t> Reader::u16() { return readFixed<uint16_t>(data_, pos_, 2); }
DecodeResult<uint32_t> Reader::u24() { return readFixed<uint32_t>(data_, pos_, 3); }
DecodeResult<uint32_t> Reader::u32() { return readFixed<uint32_t>(data_, pos_, 4); }
DecodeResult<uint64_t> Reader::u48() { return readFixed<uint64_t>(data_, pos_, 6); }
DecodeResult<uint64_t> Reader::u64() { return readFixed<uint64_t>(data_, pos_, 8); }

DecodeResult<uint64_t> Reader::lenenc() {
  auto first = u8();
  if (!first) return std::unexpected(first.error());
  switch (*first) {
    case 0xfc:
      return u16();
    case 0xfd:
      return u24();
    case 0xfe:
      return u64();
    case 0xfb:  // NULL marker: only meaningful in rows, never as a length.
    case 0xff:  // ERR header: never a length.
      return std::unexpected(DecodeError::kProtocolValue);
    default:
      return *first;
  }
}

DecodeResult<std::string_view> Reader::fixed(size_t n) {
  if (remaining() < n) return std::unexpected(DecodeError::kIncomplete);
  std::string_view s = asText(data_.subspan(pos_, n));
  pos_ += n;
  return s;
}

DecodeResult<std::string_view> Reader::lenencString() {
  auto len = lenenc();
  if (!len) return std::unexpected(len.error());
  // Compare in 64 bits before narrowing so a huge length cannot wrap.
  if (*len > remaining()) return std::unexpected(DecodeError::kIncomplete);
  return fixed(static_cast<size_t>(*len));
}

DecodeResult<std::string_view> Reader::nulString() {
  ByteView r = rest();
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i] == 0) {
      std::string_view s = asText(r.first(i));
      pos_ += i + 1;
      return s;
    }
  }
  return std::unexpected(DecodeError::kIncomplete);
}

std::string_view Reader::restString() {
  std::string_view s = asText(rest());
  pos_ = data_.size();
  return s;
}

DecodeResult<void> Reader::skip(size_t n) {
  if (remaining() < n) return std::unexpected(DecodeError::kIncomplete);
  pos_ += n;
  return {};
}

DecodeResult<void> Reader::expectEnd() const {
  if (!empty()) return std::unexpected(DecodeError::kExtraBytes);
  return {};
}

void Writer::u16(uint16_t v) { storeLe(out_, v, 2); }
void Writer::u24(uint32_t v) { storeLe(out_, v, 3); }
void Writer::u32(uint32_t v) { storeLe(out_, v, 4); }
void Writer::u64(uint64_t v) { storeLe(out_, v, 8); }

void Writer::lenenc(uint64_t v) {
  if (v < 0xfb) {
    u8(static_cast<uint8_t>(v));
  } else if (v <= 0xffff) {
    u8(0xfc);
    u16(static_cast<uint16_t>(v));
  } else if (v <= 0xffffff) {
    u8(0xfd);
    u24(static_cast<uint32_t>(v));
  } else {
    u8(0xfe);
    u64(v);
  }
}

void Writer::lenencString(std::string_view s) {
  lenenc(s.size());
  raw(s);
}

void Writer::nulString(std::string_view s) {
  raw(s);
  u8(0);
}

void Writer::raw(std::string_view s) { raw(asBytes(s)); }
void Writer::raw(ByteView b) { out_.insert(out_.end(), b.begin(), b.end()); }
void Writer::zeros(size_t n) { out_.insert(out_.end(), n, uint8_t{0}); }

size_t lenencSize(uint64_t v) {
  if (v < 0xfb) return 1;
  if (v <= 0xffff) return 3;
  if (v <= 0xffffff) return 4;
  return 9;
}

}  // namespace sp::protocol
