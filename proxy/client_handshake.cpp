// Connection phase of a client session: greeting, login, authentication.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "protocol/auth.hpp"
#include "protocol/constants.hpp"
#include "protocol/handshake.hpp"
#include "proxy/backend_pool.hpp"
#include "proxy/client_errors.hpp"
#include "proxy/client_session.hpp"
#include "proxy/server_handshake.hpp"
#include "proxy/worker.hpp"

namespace sp::proxy {

namespace {
// The status bits a session inherits from the server's defaults.
constexpr uint16_t kCarriedStatus = protocol::status::kAutocommit | protocol::status::kNoBackslashEscapes |
                                    protocol::status::kAnsiQuotes;
}  // namespace

awaitable<bool> ClientSession::handshake() {
  auto& ctx = worker_.context();
  LoginRequest request{connection_id_, ctx.server_version, &ctx.config.users, peer_};
  auto login = co_await acceptLogin(client_, request);
  if (!login) co_return false;
  capabilities_ = login->capabilities;
  user_ = login->account->name;
  uint8_t seq = login->next_seq;
  std::string db = login->database.empty() ? login->account->default_database : login->database;
  desired_.names = namesForCollation(login->collation);
  desired_.database = db;
  initial_ = desired_;
  // A backend connection brought to the session's state tells the status
  // flags the session starts with (autocommit and NO_BACKSLASH_ESCAPES follow
  // the server's global defaults); like MySQL, a login to a database that
  // does not exist is refused. A backend that is down does not block the
  // login: statements will report it.
  auto acquired = co_await defaultPool().acquire(capabilities_, connection_id_);
  if (acquired) {
    auto conn = std::move(*acquired);
    auto r = co_await conn->sync(desired_);
    bool refused = !r && r.error().kind == BackendError::Kind::kServer;
    if (!r && !refused) conn->markBroken();
    if (r) initial_status_ = conn->status() & kCarriedStatus;
    defaultPool().release(std::move(conn));
    if (refused) {
      queueError(seq, r.error().toErrPacket());
      co_await client_.flush();
      co_return false;
    }
  }
  txn_.reset(initial_status_);
  spdlog::debug("session {} user {} from {} logged in (db '{}')", connection_id_, user_, peer_, db);
  co_return co_await sendOk(seq);
}

}  // namespace sp::proxy
