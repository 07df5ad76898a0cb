#include "protocol/sql_literal.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace sp::protocol {

namespace {

bool isBlobType(ColumnType t) {
  return t == ColumnType::kTinyBlob || t == ColumnType::kMediumBlob || t == ColumnType::kLongBlob ||
         t == ColumnType::kBlob;
}

// [+-]digits[.digits] or [+-].digits: what a DECIMAL parameter may hold.
bool isPlainDecimal(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t digits = 0;
  bool dot = false;
  for (; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++digits;
    } else if (s[i] == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  return digits > 0;
}


std::string quoted(std::string_view bytes, const SqlLiteralOptions& options) {
  std::string out = "'";
  out.reserve(bytes.size() + 2);
  for (char c : bytes) {
    if (c == '\'') {
      out += options.backslash_escapes ? "\\'" : "''";
    } else if (options.backslash_escapes && c == '\\') {
      out += "\\\\";
    } else if (options.backslash_escapes && c == '\0') {
      out += "\\0";
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

// Negative numbers are parenthesised so that no operator before the
// placeholder can merge with the sign ("a -?" must not become "a --5").
std::string signedText(std::string text) {
  return text.starts_with('-') ? "(" + text + ")" : text;
}

std::string doubleText(double d) {
  std::array<char, 40> buf{};
  std::snprintf(buf.data(), buf.size(), "%.17e", d);
  return signedText(buf.data());
}

}  // namespace

std::string hexLiteral(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "X'";
  out.reserve(bytes.size() * 2 + 3);
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xf]);
  }
  out.push_back('\'');
  return out;
}

std::expected<std::string, std::string> sqlLiteral(const BinaryValue& v, BinaryType t,
                                                   const SqlLiteralOptions& options) {
  if (std::holds_alternative<NullValue>(v)) return std::string("NULL");
  if (const auto* i = std::get_if<int64_t>(&v)) return signedText(std::to_string(*i));
  if (const auto* u = std::get_if<uint64_t>(&v)) return std::to_string(*u);
  if (const auto* f = std::get_if<float>(&v)) {
    if (!std::isfinite(*f)) return std::unexpected(std::string("a FLOAT parameter that is not a finite number"));
    return doubleText(double(*f));
  }
  if (const auto* d = std::get_if<double>(&v)) {
    if (!std::isfinite(*d)) return std::unexpected(std::string("a DOUBLE parameter that is not a finite number"));
    return doubleText(*d);
  }
  if (std::holds_alternative<BinaryDateTime>(v) || std::holds_alternative<BinaryTime>(v)) {
    auto text = describeParam(v, t);
    if (!text) return std::unexpected(std::string("a date or time parameter that cannot be written"));
    std::string_view type = "TIME";
    if (std::holds_alternative<BinaryDateTime>(v)) type = t.type == ColumnType::kDate ? "DATE" : "TIMESTAMP";
    return std::string(type) + "'" + text->s + "'";
  }
  if (const auto* s = std::get_if<std::string_view>(&v)) {
    if (t.type == ColumnType::kDecimal || t.type == ColumnType::kNewDecimal) {
      if (!isPlainDecimal(*s)) return std::unexpected("a DECIMAL parameter '" + std::string(s->substr(0, 40)) +
                                                      "' that is not a plain decimal number");
      return signedText(std::string(*s));
    }
    if (isBlobType(t.type)) return hexLiteral(*s);
    return quoted(*s, options);
  }
  return std::unexpected(std::string("long data that was not substituted"));
}

bool quotingUnsafeCharset(std::string_view charset) {
  static constexpr std::array<std::string_view, 5> kUnsafe = {"big5", "cp932", "gbk", "gb18030", "sjis"};
  for (auto u : kUnsafe) {
    if (charset.size() == u.size()) {
      bool same = true;
      for (size_t i = 0; i < u.size(); ++i) {
        same &= std::tolower(static_cast<unsigned char>(charset[i])) == u[i];
      }
      if (same) return true;
    }
  }
  return false;
}

}  // namespace sp::protocol
