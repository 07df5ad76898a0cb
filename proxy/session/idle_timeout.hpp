// A session's idle limit as MariaDB keeps it: wait_timeout. At login it is
// server.wait_timeout_s, or server.interactive_timeout_s for a client that
// sets CLIENT_INTERACTIVE (as the server copies interactive_timeout into the
// session's wait_timeout at authentication); `SET [SESSION] wait_timeout = N`
// (or @@wait_timeout, @@session., @@local.) changes it for that session, `=
// DEFAULT` brings it back to the proxy's global (server.wait_timeout_s, even
// for an interactive client, as on the server). A session's own
// `SET interactive_timeout` changes nothing now, as on the server: it is read
// only at login. Pure (no sockets); the worker's idle sweep reads limit().
#pragma once
#include <chrono>
#include <cstdint>
#include <span>

#include "conf/server_config.hpp"
#include "parser/classify.hpp"
#include "protocol/session_track.hpp"

namespace sp::proxy {

class IdleTimeout {
 public:
  // A login (handshake or COM_CHANGE_USER).
  void onLogin(const conf::ServerConfig& server, bool interactive);
  // COM_RESET_CONNECTION: the server re-reads its session variables from
  // the globals (THD::change_user), interactive or not.
  void onReset(const conf::ServerConfig& server);
  // After a statement: `settings` are its SET assignments (empty for other
  // statements), `changes` what the server reported (when `tracked`). The
  // reported value is authoritative (clamping, expressions, procedures);
  // without one (untracked, or a form the server does not report) an
  // integer literal is taken as the server would clamp it.
  void onStatement(std::span<const parser::SessionSetting> settings, const protocol::SessionChanges& changes,
                   bool tracked, const conf::ServerConfig& server);

  std::chrono::seconds limit() const { return std::chrono::seconds(seconds_); }

  // MariaDB's range for wait_timeout.
  static constexpr uint32_t kMin = 1;
  static constexpr uint32_t kMax = 31'536'000;

 private:
  uint32_t seconds_ = 28800;
};

}  // namespace sp::proxy
