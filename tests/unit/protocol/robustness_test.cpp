// Deterministic mutation test: every decoder, fed thousands of corrupted real
// packets, must return a value or an error (never crash; run it under
// -DSHARDPROXY_SANITIZE=ON to catch out-of-bounds reads), and whatever it
// accepts must survive a re-encode unchanged. Same checks as the libFuzzer
// target in tests/fuzz/protocol.
#include <gtest/gtest.h>

#include <random>

#include "../../fuzz/protocol/decode_all.hpp"
#include "captured_mariadb.inc"
#include "test_util.hpp"

namespace sp::protocol {
namespace {

std::vector<Bytes> seeds() {
  std::vector<Bytes> out;
  auto add = [&](const auto& session) {
    for (const auto& p : session) {
      Bytes framed = test::hex(p.hex);
      out.push_back(framed);                                // as a framed stream
      out.emplace_back(framed.begin() + 4, framed.end());   // as a payload
    }
  };
  add(test::kCliSession);
  add(test::kDeniedSession);
  add(test::kRawDeprecateEofSession);
  add(test::kRawClassicSession);
  return out;
}

Bytes mutate(Bytes b, std::mt19937& rng) {
  static const uint8_t kInteresting[] = {0x00, 0x01, 0x0c, 0x23, 0xfb, 0xfc, 0xfd, 0xfe, 0xff};
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    size_t pos = b.empty() ? 0 : rng() % b.size();
    switch (rng() % 5) {
      case 0:
        if (!b.empty()) b[pos] = static_cast<uint8_t>(rng());
        break;
      case 1:
        if (!b.empty()) b[pos] = kInteresting[rng() % std::size(kInteresting)];
        break;
      case 2:
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(pos), static_cast<uint8_t>(rng()));
        break;
      case 3:
        if (!b.empty()) b.erase(b.begin() + static_cast<std::ptrdiff_t>(pos));
        break;
      case 4:
        b.resize(pos);
        break;
    }
  }
  return b;
}

TEST(Robustness, MutatedCapturedPackets) {
  const std::vector<Bytes> base = seeds();
  std::mt19937 rng(20261130);
  size_t accepted = 0;
  std::vector<std::string> failures;
  for (int i = 0; i < 200000; ++i) {
    Bytes input = mutate(base[rng() % base.size()], rng);
    test::ExactBuffer buf(input);
    accepted += fuzz::decodeAll(buf.view(), [&](const char* what) { failures.push_back(what); });
    ASSERT_TRUE(failures.empty()) << failures.front() << " on " << test::toHex(input);
  }
  // Mutations keep many packets valid: make sure the checks above ran on some.
  EXPECT_GT(accepted, 1000u);
}

TEST(Robustness, UnmutatedSeedsAreAccepted) {
  size_t accepted = 0;
  for (const Bytes& s : seeds()) {
    accepted += fuzz::decodeAll(s, [](const char* what) { ADD_FAILURE() << what; }) > 0;
  }
  EXPECT_GT(accepted, seeds().size() / 2);
}

}  // namespace
}  // namespace sp::protocol
