#include "protocol/auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdlib>
#include <initializer_list>

namespace sp::protocol {

namespace {

// Digest of the concatenation of `parts` (EVP, so it works with OpenSSL 3 providers).
std::string digest(const EVP_MD* md, std::initializer_list<std::string_view> parts) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int out_len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, md, nullptr) == 1;
  for (std::string_view p : parts) ok = ok && EVP_DigestUpdate(ctx, p.data(), p.size()) == 1;
  ok = ok && EVP_DigestFinal_ex(ctx, out, &out_len) == 1;
  EVP_MD_CTX_free(ctx);
  // Hashing only fails on allocation failure or a broken crypto library; an
  // empty string then makes every password check fail closed.
  if (!ok) return {};
  return std::string(reinterpret_cast<const char*>(out), out_len);
}

std::string xorStrings(std::string a, std::string_view b) {
  if (a.size() != b.size()) return {};
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<char>(a[i] ^ b[i]);
  return a;
}

}  // namespace

std::string nativePasswordResponse(std::string_view password, std::string_view scramble) {
  if (password.empty()) return {};
  std::string stage1 = digest(EVP_sha1(), {password});
  std::string stage2 = digest(EVP_sha1(), {stage1});
  return xorStrings(stage1, digest(EVP_sha1(), {scramble, stage2}));
}

bool verifyNativePassword(std::string_view password, std::string_view scramble,
                          std::string_view response) {
  std::string expected = nativePasswordResponse(password, scramble);
  if (expected.size() != response.size()) return false;
  if (expected.empty()) return password.empty();
  // Constant time so the comparison does not leak how many bytes matched.
  return CRYPTO_memcmp(expected.data(), response.data(), expected.size()) == 0;
}

std::string nativePasswordHash(std::string_view password) {
  if (password.empty()) return {};
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string stage2 = digest(EVP_sha1(), {digest(EVP_sha1(), {password})});
  std::string out = "*";
  for (unsigned char c : stage2) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

bool verifyNativePasswordHash(std::string_view hash, std::string_view scramble, std::string_view response) {
  if (hash.empty()) return response.empty();
  if (hash.size() != 41 || hash[0] != '*' || response.size() != 20) return false;
  std::string stage2(20, '\0');
  for (size_t i = 0; i < 20; ++i) {
    auto nibble = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    int hi = nibble(hash[1 + 2 * i]), lo = nibble(hash[2 + 2 * i]);
    if (hi < 0 || lo < 0) return false;
    stage2[i] = static_cast<char>(hi << 4 | lo);
  }
  // response = SHA1(pw) XOR SHA1(scramble + stage2): recover SHA1(pw) and
  // check that it hashes to stage2.
  std::string stage1 = xorStrings(std::string(response), digest(EVP_sha1(), {scramble, stage2}));
  std::string check = digest(EVP_sha1(), {stage1});
  return CRYPTO_memcmp(check.data(), stage2.data(), stage2.size()) == 0;
}

std::string cachingSha2Response(std::string_view password, std::string_view scramble) {
  if (password.empty()) return {};
  std::string stage1 = digest(EVP_sha256(), {password});
  std::string stage2 = digest(EVP_sha256(), {stage1});
  return xorStrings(stage1, digest(EVP_sha256(), {stage2, scramble}));
}

std::string makeScramble() {
  // Printable ASCII 0x21..0x7e: never NUL (the greeting NUL-terminates it) and
  // safe for any client. Rejection sampling keeps the distribution uniform.
  constexpr unsigned kAlphabet = 0x7e - 0x21 + 1;         // 94
  constexpr unsigned kLimit = 256 - (256 % kAlphabet);     // 188
  std::string out;
  out.reserve(kScrambleLength);
  while (out.size() < kScrambleLength) {
    unsigned char buf[32];
    if (RAND_bytes(buf, sizeof buf) != 1) {
      // Without a working CSPRNG every scramble would be guessable; refusing to
      // run is safer than authenticating with predictable challenges.
      std::abort();
    }
    for (unsigned char b : buf) {
      if (b < kLimit && out.size() < kScrambleLength) out.push_back(static_cast<char>(0x21 + b % kAlphabet));
    }
  }
  return out;
}

}  // namespace sp::protocol
