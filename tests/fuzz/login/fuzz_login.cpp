// libFuzzer target: the connection-phase state machines
// (protocol/server_login.hpp, protocol/client_login.hpp) fed a peer's bytes.
// Input: int<1> setup (bit 0: the proxy's role, 0 server / 1 client; bit 1:
// TLS offered / wanted; bits 2-3: the account the server side finds: none,
// clear password "pw", password hash of "pw", clear "pw" with require_tls),
// then the peer's byte stream, framed (MessageAssembler, limit 64 KiB) into
// messages the machine reads whenever it asks to. Invariants:
//  - whatever the bytes, each step ends in kRead/kStartTls/kLookupAccount
//    (more to do) or kDone/kFailed; the machine never crashes;
//  - everything the machine queues is well framed, with sequence ids that
//    follow the peer's;
//  - a server-side failure queues exactly one ERR (1043, 1045 or 1156); a
//    client-side failure says why.
#include <cstdio>
#include <cstdlib>

#include "protocol/auth.hpp"
#include "protocol/client_login.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/packet.hpp"
#include "protocol/server_login.hpp"

namespace {

using namespace sp::protocol;

void fail(const char* what) {
  std::fprintf(stderr, "login invariant broken: %s\n", what);
  std::abort();
}

// Checks the framing of what the machine queued; returns the packets' payloads.
std::vector<Bytes> queued(Bytes& out) {
  std::vector<Bytes> packets;
  MessageAssembler a(1u << 20);
  a.feed(out);
  for (;;) {
    auto m = a.next();
    if (!m) fail("queued bytes are not well framed");
    if (!*m) break;
    packets.push_back(std::move((*m)->payload));
  }
  if (a.buffered() != 0) fail("queued bytes end inside a packet");
  out.clear();
  return packets;
}

LoginAccount accountFor(unsigned kind) {
  LoginAccount a;
  if (kind == 0) return a;
  a.exists = true;
  if (kind == 2) a.password_hash = nativePasswordHash("pw");
  else a.password = "pw";
  a.require_tls = kind == 3;
  return a;
}

void runServer(bool tls, unsigned account_kind, MessageAssembler& peer) {
  ServerLoginOptions o;
  o.server_version = "11.0.0-fuzz";
  o.connection_id = 1;
  o.scramble = "abcdefghij0123456789";
  o.capabilities = 0xffffffffu;
  o.tls_available = tls;
  o.client_host = "h";
  ServerLogin login(o);
  using Next = ServerLogin::Next;
  Next next = login.start();
  for (int steps = 0; steps < 64; ++steps) {
    auto out = queued(login.output());
    if (next == Next::kFailed) {
      if (out.size() != 1 || !isErrPacket(out[0])) fail("a refusal queues one ERR");
      auto err = decodeErrPacket(out[0]);
      if (!err || (err->error_code != 1043 && err->error_code != 1045 && err->error_code != 1156)) fail("ERR code");
      return;
    }
    if (next == Next::kDone) return;
    if (next == Next::kLookupAccount) {
      next = login.onAccount(accountFor(account_kind));
      continue;
    }
    if (next == Next::kStartTls) {
      next = login.onTlsStarted();
      continue;
    }
    auto m = peer.next();
    if (!m) {
      next = m.error() == DecodeError::kTooLarge ? login.onTooLarge() : login.onOutOfOrder(login.nextSequenceId());
      continue;
    }
    if (!*m) return;  // the peer has no more: the caller's deadline would end it
    next = login.onMessage((*m)->payload, (*m)->first_sequence_id, (*m)->last_sequence_id);
  }
  fail("a login that never ends");
}

void runClient(bool tls, MessageAssembler& peer) {
  ClientLoginOptions o;
  o.capabilities = 0x000ff7ffu;
  o.extended_type_info = true;
  o.tls = tls;
  o.user = "proxy";
  o.password = "pw";
  o.database = "db";
  ClientLogin login(o);
  using Next = ClientLogin::Next;
  Next next = login.start();
  for (int steps = 0; steps < 64; ++steps) {
    queued(login.output());
    if (next == Next::kFailed) {
      if (login.error().kind != ClientLoginError::Kind::kServer && login.error().message.empty()) fail("no reason");
      return;
    }
    if (next == Next::kDone) return;
    if (next == Next::kStartTls) {
      next = login.onTlsStarted();
      continue;
    }
    auto m = peer.next();
    if (!m || !*m) return;
    next = login.onMessage((*m)->payload, (*m)->first_sequence_id, (*m)->last_sequence_id);
  }
  fail("a login that never ends");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t setup = data[0];
  MessageAssembler peer(64 * 1024);
  peer.feed(ByteView(data + 1, size - 1));
  if (setup & 1) {
    runClient(setup & 2, peer);
  } else {
    runServer(setup & 2, (setup >> 2) & 3, peer);
  }
  return 0;
}
