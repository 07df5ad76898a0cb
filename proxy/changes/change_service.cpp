#include "proxy/changes/change_service.hpp"

#include <fmt/format.h>

#include "conf/config.hpp"

#include "proxy/changes/change_json.hpp"
#include "proxy/changes/changes_http.hpp"
#include "proxy/core/proxy_context.hpp"
#include "proxy/net/client_errors.hpp"

namespace sp::proxy::changes {

ConsumerSlot::~ConsumerSlot() { service_->release(number_); }

ChangeService::ChangeService(ProxyContext& context)
    : context_(context), taken_(context.config().changes.max_consumers, false) {}

ChangeService::~ChangeService() { stop(); }

std::string ChangeService::start() {
  if (!context_.config().changes.listen) return {};
  http_ = std::make_unique<ChangesHttpServer>(*this);
  return http_->start();
}

void ChangeService::stop() {
  if (http_) http_->stop();
}

std::unique_ptr<ConsumerSlot> ChangeService::admit() {
  std::lock_guard lock(mutex_);
  for (uint32_t i = 0; i < taken_.size(); ++i) {
    if (!taken_[i]) {
      taken_[i] = true;
      context_.change_stats.consumers.fetch_add(1);
      return std::make_unique<ConsumerSlot>(*this, i);
    }
  }
  context_.change_stats.consumers_refused.fetch_add(1);
  return nullptr;
}

void ChangeService::release(uint32_t number) {
  std::lock_guard lock(mutex_);
  taken_[number] = false;
  context_.change_stats.consumers.fetch_sub(1);
  if (context_.change_stats.consumers.load() == 0) context_.change_stats.lag_seconds.store(0);
}

int64_t lagSeconds(const ChangeTransaction& txn) {
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  return std::max<int64_t>(0, now - static_cast<int64_t>(txn.timestamp));
}

void countSent(ProxyContext& context, const ChangeTransaction& txn) {
  context.change_stats.events.fetch_add(txn.rows.size());
  context.change_stats.transactions.fetch_add(1);
  context.change_stats.lag_seconds.store(lagSeconds(txn));
}

awaitable<AdminReply> ChangeService::read(const ChangesRead& read_ref) {
  const ChangesRead read = read_ref;
  auto slot = admit();
  if (!slot) {
    co_return AdminError{client_error::kChangesTooManyConsumers.number, "HY000",
                         fmt::format("shardproxy: {} change streams are open (changes.max_consumers)",
                                     context_.config().changes.max_consumers)};
  }
  const uint32_t consumer = slot->number();
  auto stream = co_await ChangeStream::open(context_, read.request, consumer);
  if (!stream) co_return AdminError{client_error::kChangesBadRequest.number, "HY000", "shardproxy: " + stream.error()};
  LocalResult r;
  r.columns = {"position", "last", "table", "key", "op", "change"};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(read.wait_ms);
  uint64_t sent = 0;
  while (sent < read.limit) {
    const auto now = std::chrono::steady_clock::now();
    if ((*stream)->caughtUp() || now >= deadline) break;
    auto txn = co_await (*stream)->next(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now));
    if (!txn) co_return AdminError{client_error::kChangesReaderFailed.number, "HY000", "shardproxy: " + txn.error()};
    if (!*txn) continue;
    const std::string position = (*stream)->position();
    for (size_t i = 0; i < (*txn)->rows.size(); ++i) {
      const auto& row = (*txn)->rows[i];
      const bool last = i + 1 == (*txn)->rows.size();
      r.rows.push_back({position, last ? "1" : "0", row.table->name, keyText(row), std::string(opName(row.op)),
                        changeJson(row, **txn, position, last)});
    }
    sent += (*txn)->rows.size();
    countSent(context_, **txn);
  }
  // The last row: where the next read starts (also when nothing changed).
  r.rows.push_back({(*stream)->position(), "1", std::nullopt, std::nullopt, std::nullopt, std::nullopt});
  co_return r;
}

}  // namespace sp::proxy::changes
