#include "routing/merge/decimal.hpp"

#include <algorithm>
#include <vector>

namespace sp::routing::decimal {
namespace {

struct Parts {
  bool negative = false;
  std::string int_digits;   // no leading zeros ("" for zero)
  std::string frac_digits;  // as written
};

std::optional<Parts> split(std::string_view t) {
  Parts p;
  size_t i = 0;
  if (i < t.size() && (t[i] == '-' || t[i] == '+')) p.negative = t[i++] == '-';
  size_t digits = 0;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
    if (!(p.int_digits.empty() && t[i] == '0')) p.int_digits += t[i];
    ++i, ++digits;
  }
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') p.frac_digits += t[i++], ++digits;
  }
  if (i != t.size() || digits == 0) return std::nullopt;
  return p;
}

bool isZero(const Parts& p) {
  return p.int_digits.empty() && std::all_of(p.frac_digits.begin(), p.frac_digits.end(), [](char c) { return c == '0'; });
}

// Magnitudes as aligned digit strings (same length, same scale).
void align(const Parts& a, const Parts& b, std::string& x, std::string& y, size_t& scale) {
  scale = std::max(a.frac_digits.size(), b.frac_digits.size());
  size_t ints = std::max(a.int_digits.size(), b.int_digits.size());
  auto make = [&](const Parts& p) {
    return std::string(ints - p.int_digits.size(), '0') + p.int_digits + p.frac_digits +
           std::string(scale - p.frac_digits.size(), '0');
  };
  x = make(a);
  y = make(b);
}

std::string addMagnitudes(const std::string& x, const std::string& y) {
  std::string out(x.size() + 1, '0');
  int carry = 0;
  for (size_t i = x.size(); i-- > 0;) {
    int d = (x[i] - '0') + (y[i] - '0') + carry;
    out[i + 1] = static_cast<char>('0' + d % 10);
    carry = d / 10;
  }
  out[0] = static_cast<char>('0' + carry);
  return out;
}

std::string subMagnitudes(const std::string& x, const std::string& y) {  // x >= y
  std::string out(x.size(), '0');
  int borrow = 0;
  for (size_t i = x.size(); i-- > 0;) {
    int d = (x[i] - '0') - (y[i] - '0') - borrow;
    borrow = d < 0;
    out[i] = static_cast<char>('0' + (d + 10) % 10);
  }
  return out;
}

// Digits with the last `scale` after the point, leading zeros trimmed.
std::string format(bool negative, const std::string& digits, size_t scale) {
  std::string ints = digits.substr(0, digits.size() - scale);
  size_t nz = ints.find_first_not_of('0');
  ints = nz == std::string::npos ? "0" : ints.substr(nz);
  std::string frac = digits.substr(digits.size() - scale);
  bool zero = ints == "0" && frac.find_first_not_of('0') == std::string::npos;
  std::string out = negative && !zero ? "-" : "";
  out += ints;
  if (scale) out += "." + frac;
  return out;
}

}  // namespace


std::optional<std::string> add(std::string_view a, std::string_view b) {
  auto pa = split(a), pb = split(b);
  if (!pa || !pb) return std::nullopt;
  std::string x, y;
  size_t scale = 0;
  align(*pa, *pb, x, y, scale);
  if (pa->negative == pb->negative) return format(pa->negative, addMagnitudes(x, y), scale);
  if (x >= y) return format(pa->negative, subMagnitudes(x, y), scale);
  return format(pb->negative, subMagnitudes(y, x), scale);
}

namespace {

// A decimal's pieces as views (no allocation: merge sort compares a lot).
struct View {
  bool negative = false;
  std::string_view ints;  // without leading zeros
  std::string_view frac;  // without trailing zeros
  bool valid = false;
};

View viewOf(std::string_view t) {
  View v;
  size_t i = 0;
  if (i < t.size() && (t[i] == '-' || t[i] == '+')) v.negative = t[i++] == '-';
  size_t int_begin = i;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  size_t int_end = i;
  size_t frac_begin = i, frac_end = i;
  if (i < t.size() && t[i] == '.') {
    frac_begin = ++i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    frac_end = i;
  }
  v.valid = i == t.size() && (int_end > int_begin || frac_end > frac_begin);
  while (int_begin < int_end && t[int_begin] == '0') ++int_begin;
  while (frac_end > frac_begin && t[frac_end - 1] == '0') --frac_end;
  v.ints = t.substr(int_begin, int_end - int_begin);
  v.frac = t.substr(frac_begin, frac_end - frac_begin);
  if (v.ints.empty() && v.frac.empty()) v.negative = false;  // -0 == 0
  return v;
}

int compareMagnitudes(const View& x, const View& y) {
  if (x.ints.size() != y.ints.size()) return x.ints.size() < y.ints.size() ? -1 : 1;
  if (int c = x.ints.compare(y.ints)) return c < 0 ? -1 : 1;
  int c = x.frac.compare(y.frac);  // no trailing zeros: plain byte order is numeric order
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

}  // namespace

int compare(std::string_view a, std::string_view b) {
  View x = viewOf(a), y = viewOf(b);
  if (!x.valid || !y.valid) return a.compare(b) < 0 ? -1 : a == b ? 0 : 1;
  if (x.negative != y.negative) return x.negative ? -1 : 1;
  int c = compareMagnitudes(x, y);
  return x.negative ? -c : c;
}

bool isDecimal(std::string_view text) { return viewOf(text).valid; }

std::optional<std::string> divide(std::string_view a, uint64_t b, uint32_t scale) {
  auto pa = split(a);
  if (!pa || b == 0) return std::nullopt;
  // Long division of the digits scaled to `scale` + 1 places, then round the last.
  std::string digits = pa->int_digits + pa->frac_digits;
  size_t have = pa->frac_digits.size();
  if (have < scale + 1) digits += std::string(scale + 1 - have, '0');
  else digits.resize(digits.size() - (have - (scale + 1)));  // extra digits: truncated below the rounding digit
  std::string quotient;
  unsigned __int128 rem = 0;
  for (char c : digits) {
    rem = rem * 10 + static_cast<unsigned>(c - '0');
    quotient += static_cast<char>('0' + static_cast<int>(rem / b));
    rem %= b;
  }
  if (quotient.empty()) quotient = "0";
  // Round half away from zero on the extra digit.
  bool up = quotient.back() >= '5';
  quotient.pop_back();
  if (quotient.empty()) quotient = "0";
  if (up) {
    std::string one(quotient.size(), '0');
    one.back() = '1';
    quotient = addMagnitudes(quotient, one);
  }
  if (quotient.size() < scale + 1) quotient = std::string(scale + 1 - quotient.size(), '0') + quotient;
  return format(pa->negative, quotient, scale);
}

std::optional<std::string> negate(std::string_view a) {
  auto p = split(a);
  if (!p) return std::nullopt;
  std::string digits = (p->int_digits.empty() ? "0" : p->int_digits) + p->frac_digits;
  return format(!p->negative, digits, p->frac_digits.size());
}

std::optional<std::string> multiply(std::string_view a, std::string_view b) {
  auto pa = split(a), pb = split(b);
  if (!pa || !pb) return std::nullopt;
  std::string x = pa->int_digits + pa->frac_digits, y = pb->int_digits + pb->frac_digits;
  size_t scale = pa->frac_digits.size() + pb->frac_digits.size();
  std::vector<uint32_t> acc(x.size() + y.size(), 0);
  for (size_t i = x.size(); i-- > 0;) {
    for (size_t j = y.size(); j-- > 0;) {
      acc[i + j + 1] += static_cast<uint32_t>((x[i] - '0') * (y[j] - '0'));
    }
  }
  // Carries, least significant first (each cell holds at most 9*9*digits: no overflow for SQL sizes).
  for (size_t k = acc.size(); k-- > 1;) {
    acc[k - 1] += acc[k] / 10;
    acc[k] %= 10;
  }
  std::string digits;
  for (uint32_t d : acc) digits += static_cast<char>('0' + d);
  if (digits.size() < scale + 1) digits = std::string(scale + 1 - digits.size(), '0') + digits;
  return format(pa->negative != pb->negative, digits, scale);
}

std::optional<std::string> divideBy(std::string_view a, std::string_view b, uint32_t scale) {
  auto pa = split(a), pb = split(b);
  if (!pa || !pb || isZero(*pb)) return std::nullopt;
  // a / b == (a * 10^k) / (b * 10^k) with k = b's scale, so the divisor is an integer.
  std::string divisor = pb->int_digits + pb->frac_digits;
  size_t nz = divisor.find_first_not_of('0');
  divisor = divisor.substr(nz);
  if (divisor.size() > 19) return std::nullopt;
  uint64_t d = 0;
  for (char c : divisor) {
    if (d > (UINT64_MAX - static_cast<uint64_t>(c - '0')) / 10) return std::nullopt;
    d = d * 10 + static_cast<uint64_t>(c - '0');
  }
  size_t k = pb->frac_digits.size();
  std::string ints = pa->int_digits, frac = pa->frac_digits;
  if (frac.size() < k) frac += std::string(k - frac.size(), '0');
  ints += frac.substr(0, k);
  frac = frac.substr(k);
  std::string shifted = (pa->negative != pb->negative ? "-" : "") + (ints.empty() ? std::string("0") : ints);
  if (!frac.empty()) shifted += "." + frac;
  return divide(shifted, d, scale);
}

std::optional<std::string> rescale(std::string_view a, uint32_t scale) {
  auto p = split(a);
  if (!p) return std::nullopt;
  if (p->frac_digits.size() <= scale) {
    std::string out(a.substr(0, a.size()));
    if (p->frac_digits.empty() && scale > 0) out += ".";
    out += std::string(scale - p->frac_digits.size(), '0');
    return out;
  }
  return divide(a, 1, scale);
}

uint32_t scaleOf(std::string_view a) {
  size_t dot = a.find('.');
  return dot == std::string_view::npos ? 0 : static_cast<uint32_t>(a.size() - dot - 1);
}

std::string canonical(std::string_view a) {
  auto p = split(a);
  if (!p) return std::string(a);
  while (!p->frac_digits.empty() && p->frac_digits.back() == '0') p->frac_digits.pop_back();
  std::string out = p->negative && !isZero(*p) ? "-" : "";
  out += p->int_digits.empty() ? "0" : p->int_digits;
  if (!p->frac_digits.empty()) out += "." + p->frac_digits;
  return out;
}

}  // namespace sp::routing::decimal
