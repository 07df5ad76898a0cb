#include "proxy/core/write_hold.hpp"

#include <boost/asio/post.hpp>
#include <fmt/format.h>

#include <algorithm>

namespace sp::proxy {

namespace {
using EpochCounts = std::vector<std::pair<uint64_t, uint32_t>>;

void countUp(EpochCounts& counts, uint64_t epoch) {
  for (auto& [e, count] : counts) {
    if (e == epoch) {
      ++count;
      return;
    }
  }
  counts.emplace_back(epoch, 1);
}

void countDown(EpochCounts& counts, uint64_t epoch) {
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    if (it->first == epoch) {
      if (--it->second == 0) counts.erase(it);
      return;
    }
  }
}

uint32_t countBefore(const EpochCounts& counts, uint64_t epoch) {
  uint32_t n = 0;
  for (const auto& [e, count] : counts) {
    if (e < epoch) n += count;
  }
  return n;
}
}  // namespace

struct WriteHold::Watch {
  uint64_t id = 0;
  uint64_t epoch = 0;  // epoch_ after this watch began
  routing::MovingKeys keys;
  std::string source_table;
  bool held = false;
  bool refusing = false;
  uint64_t switched_version = 0;  // 0: not switched
  uint32_t in_flight = 0;
  std::vector<std::shared_ptr<Waiter>> waiters;
};

// A waiting write: its timer lives in the waiting coroutine (null once it
// returned); wake() cancels it on the waiter's own executor.
struct WriteHold::Waiter {
  asio::any_io_executor executor;
  asio::steady_timer* timer = nullptr;
};

WriteHold::WriteHold() = default;
WriteHold::~WriteHold() = default;

WriteHold::Watch* WriteHold::find(uint64_t id) {
  for (auto& w : watches_) {
    if (w->id == id) return w.get();
  }
  return nullptr;
}

const WriteHold::Watch* WriteHold::find(uint64_t id) const {
  for (const auto& w : watches_) {
    if (w->id == id) return w.get();
  }
  return nullptr;
}

uint64_t WriteHold::watch(routing::MovingKeys keys, std::string source_table) {
  std::lock_guard lock(mutex_);
  auto w = std::make_unique<Watch>();
  w->id = next_id_++;
  w->epoch = epoch_.fetch_add(1) + 1;
  w->keys = std::move(keys);
  w->source_table = std::move(source_table);
  uint64_t id = w->id;
  watches_.push_back(std::move(w));
  count_.store(watches_.size());
  return id;
}

void WriteHold::wake(std::vector<std::shared_ptr<Waiter>>& waiters) {
  for (auto& waiter : waiters) {
    asio::post(waiter->executor, [waiter] {
      if (waiter->timer) waiter->timer->cancel();
    });
  }
  waiters.clear();
}

void WriteHold::unwatch(uint64_t id) {
  std::lock_guard lock(mutex_);
  auto it = std::find_if(watches_.begin(), watches_.end(), [id](const auto& w) { return w->id == id; });
  if (it == watches_.end()) return;
  wake((*it)->waiters);
  watches_.erase(it);
  count_.store(watches_.size());
}

void WriteHold::hold(uint64_t id) {
  std::lock_guard lock(mutex_);
  if (auto* w = find(id)) w->held = true;
}

uint32_t WriteHold::inFlight(uint64_t id) const {
  std::lock_guard lock(mutex_);
  const auto* w = find(id);
  return w ? w->in_flight : 0;
}

void WriteHold::release(uint64_t id) {
  std::lock_guard lock(mutex_);
  if (auto* w = find(id)) {
    w->held = false;
    wake(w->waiters);
  }
}

void WriteHold::switched(uint64_t id, uint64_t version) {
  std::lock_guard lock(mutex_);
  if (auto* w = find(id)) {
    w->held = false;
    w->switched_version = version;
    wake(w->waiters);
  }
}

uint32_t WriteHold::olderTransactions(uint64_t id) const {
  std::lock_guard lock(mutex_);
  const auto* w = find(id);
  return w ? countBefore(open_transactions_, w->epoch) : 0;
}


void WriteHold::transactionOpened(uint64_t epoch) {
  std::lock_guard lock(mutex_);
  countUp(open_transactions_, epoch);
}

void WriteHold::transactionClosed(uint64_t epoch) {
  std::lock_guard lock(mutex_);
  countDown(open_transactions_, epoch);
}

uint64_t WriteHold::openWrite() {
  std::lock_guard lock(mutex_);
  uint64_t epoch = epoch_.load();
  countUp(open_writes_, epoch);
  return epoch;
}

void WriteHold::closeWrite(uint64_t epoch) {
  std::lock_guard lock(mutex_);
  countDown(open_writes_, epoch);
}

uint32_t WriteHold::olderWrites(uint64_t id) const {
  std::lock_guard lock(mutex_);
  const auto* w = find(id);
  return w ? countBefore(open_writes_, w->epoch) : 0;
}

bool WriteHold::drained(uint64_t id) const {
  std::lock_guard lock(mutex_);
  const auto* w = find(id);
  if (!w) return true;
  return w->in_flight == 0 && countBefore(open_writes_, w->epoch) == 0 &&
         countBefore(open_transactions_, w->epoch) == 0;
}

void WriteHold::refuse(uint64_t id, bool refusing) {
  std::lock_guard lock(mutex_);
  if (auto* w = find(id)) {
    w->refusing = refusing;
    if (refusing) wake(w->waiters);
  }
}

uint64_t WriteHold::advanceEpoch() {
  std::lock_guard lock(mutex_);
  return epoch_.fetch_add(1) + 1;
}

uint32_t WriteHold::openTransactionsBefore(uint64_t epoch) const {
  std::lock_guard lock(mutex_);
  return countBefore(open_transactions_, epoch);
}

void WriteHold::setLimits(WriteHoldLimits limits) {
  std::lock_guard lock(mutex_);
  limits_ = limits;
}

WriteHoldLimits WriteHold::limits() const {
  std::lock_guard lock(mutex_);
  return limits_;
}

uint32_t WriteHold::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_;
}

bool WriteHold::empty() const { return count_.load() == 0; }

std::vector<uint64_t> WriteHold::touched(const WriteTouch& touch) const {
  std::vector<uint64_t> ids;
  std::lock_guard lock(mutex_);
  for (const auto& w : watches_) {
    if (w->keys.table != touch.table) continue;
    bool hit = false;
    if (touch.key_values.empty()) {
      // Keys unknown (a physical table named directly): any write to the source table.
      hit = std::find(touch.physical_tables.begin(), touch.physical_tables.end(), w->source_table) !=
            touch.physical_tables.end();
    } else {
      hit = std::any_of(touch.key_values.begin(), touch.key_values.end(),
                        [&](uint64_t k) { return w->keys.contains(k); });
    }
    if (hit) ids.push_back(w->id);
  }
  return ids;
}

awaitable<WriteHold::Admitted> WriteHold::admit(uint64_t id, uint64_t map_version,
                                                std::optional<uint64_t> open_write) {
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor);
  bool deadline_set = false;
  auto waiter = std::make_shared<Waiter>();
  waiter->executor = executor;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      Watch* w = find(id);
      // The move ended while this write waited: its plan may be stale.
      if (!w) co_return Admitted{deadline_set ? Admission::kReplan : Admission::kPass, false};
      if (w->refusing) co_return Admitted{Admission::kUnsynchronised, false};
      if (w->switched_version != 0) {
        co_return Admitted{map_version < w->switched_version ? Admission::kReplan : Admission::kPass, false};
      }
      if (!w->held) {
        ++w->in_flight;
        co_return Admitted{Admission::kPass, true};
      }
      if (!deadline_set) {
        if (waiting_ >= limits_.max_waiting) co_return Admitted{Admission::kFull, false};
        timer.expires_after(limits_.timeout);
        deadline_set = true;
      } else if (timer.expiry() <= asio::steady_timer::clock_type::now()) {
        co_return Admitted{Admission::kTimeout, false};
      }
      waiter->timer = &timer;
      w->waiters.push_back(waiter);
      ++waiting_;
      if (open_write) countDown(open_writes_, *open_write);
    }
    co_await timer.async_wait(kNoThrow);
    std::lock_guard lock(mutex_);
    if (open_write) countUp(open_writes_, *open_write);
    --waiting_;
    waiter->timer = nullptr;
    if (Watch* w = find(id)) std::erase(w->waiters, waiter);
  }
}

void WriteHold::giveBack(uint64_t id) {
  std::lock_guard lock(mutex_);
  if (auto* w = find(id); w && w->in_flight > 0) --w->in_flight;
}

awaitable<Admission> SessionWriteGate::admit(const routing::Plan& plan, uint64_t map_version) {
  if (!plan.table) co_return Admission::kPass;
  if (!write_epoch_) write_epoch_ = hold_.openWrite();
  if (hold_.empty()) co_return Admission::kPass;
  WriteTouch touch{plan.table->name, plan.key_values, {}};
  for (const auto& t : plan.targets) touch.physical_tables.push_back(t.physical_table);
  for (uint64_t id : hold_.touched(touch)) {
    if (std::find(tickets_.begin(), tickets_.end(), id) != tickets_.end()) continue;  // this transaction's
    auto admitted = co_await hold_.admit(id, map_version, write_epoch_);
    if (admitted.ticket) tickets_.push_back(id);
    if (admitted.admission != Admission::kPass) co_return admitted.admission;
  }
  co_return Admission::kPass;
}

void SessionWriteGate::settle(bool in_transaction) {
  if (in_transaction && !transaction_epoch_) {
    transaction_epoch_ = command_epoch_;
    hold_.transactionOpened(command_epoch_);
  } else if (!in_transaction && transaction_epoch_) {
    hold_.transactionClosed(*transaction_epoch_);
    transaction_epoch_.reset();
  }
  if (in_transaction) return;
  if (write_epoch_) {
    hold_.closeWrite(*write_epoch_);
    write_epoch_.reset();
  }
  for (uint64_t id : tickets_) hold_.giveBack(id);
  tickets_.clear();
}

HoldRefusal holdRefusal(Admission admission, const WriteHoldLimits& limits) {
  if (admission == Admission::kUnsynchronised) {
    return {routing::move_error::kFleetUnsynchronised,
            "shardproxy: these keys are fenced for a move's cut-over across the fleet and this proxy lost its "
            "session with the coordination store (etcd): writes to them are refused until it has re-read the "
            "fleet's map and fences; retry (nothing ran)"};
  }
  if (admission == Admission::kFull) {
    return {routing::move_error::kHoldFull,
            fmt::format("shardproxy: writes to these keys are held for a move's cut-over and {} writes are already "
                        "waiting (moves.hold_max_waiting); retry",
                        limits.max_waiting)};
  }
  return {routing::move_error::kHoldTimeout,
          fmt::format("shardproxy: writes to these keys are held for a move's cut-over, and this one waited "
                      "{} ms (moves.hold_timeout_ms); retry",
                      limits.timeout.count())};
}

}  // namespace sp::proxy
