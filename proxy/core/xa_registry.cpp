#include "proxy/core/xa_registry.hpp"

#include <fmt/format.h>

namespace sp::proxy {

namespace {

std::string base36(uint64_t v) {
  constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string out;
  do {
    out.insert(out.begin(), kDigits[v % 36]);
    v /= 36;
  } while (v != 0);
  return out;
}

}  // namespace

std::string_view xaPhaseName(XaPhase phase) {
  switch (phase) {
    case XaPhase::kActive: return "active";
    case XaPhase::kPreparing: return "preparing";
    case XaPhase::kCommitting: return "committing";
    case XaPhase::kRollingBack: return "rolling_back";
  }
  return "?";
}

void XaRegistry::configure(std::string prefix, int64_t boot_unix_ms, std::string member) {
  std::lock_guard lock(mu_);
  prefix_ = std::move(prefix);
  member_ = std::move(member);
  boot_ = base36(static_cast<uint64_t>(boot_unix_ms));
}

std::string XaRegistry::start(uint32_t session) {
  std::lock_guard lock(mu_);
  std::string gtrid = member_.empty() ? fmt::format("{}-{}-{}", prefix_, boot_, base36(++next_))
                                      : fmt::format("{}-{}-{}-{}", prefix_, member_, boot_, base36(++next_));
  open_.emplace(gtrid, Open{gtrid, session, XaPhase::kActive, 1, std::chrono::steady_clock::now()});
  return gtrid;
}

void XaRegistry::setPhase(const std::string& gtrid, XaPhase phase) {
  std::lock_guard lock(mu_);
  if (auto it = open_.find(gtrid); it != open_.end()) it->second.phase = phase;
}

void XaRegistry::setBranches(const std::string& gtrid, uint32_t branches) {
  std::lock_guard lock(mu_);
  if (auto it = open_.find(gtrid); it != open_.end()) it->second.branches = branches;
}

void XaRegistry::finish(const std::string& gtrid) {
  std::lock_guard lock(mu_);
  open_.erase(gtrid);
}

bool XaRegistry::live(const std::string& gtrid) const {
  std::lock_guard lock(mu_);
  return open_.contains(gtrid);
}

std::vector<XaRegistry::Open> XaRegistry::open() const {
  std::lock_guard lock(mu_);
  std::vector<Open> out;
  out.reserve(open_.size());
  for (const auto& [id, row] : open_) out.push_back(row);
  return out;
}

void XaRegistry::setInDoubt(std::vector<InDoubt> rows) {
  std::lock_guard lock(mu_);
  for (auto& row : rows) {
    for (const auto& old : in_doubt_) {
      if (old.gtrid == row.gtrid && old.backend == row.backend) row.first_seen = old.first_seen;
    }
  }
  in_doubt_ = std::move(rows);
}

std::vector<XaRegistry::InDoubt> XaRegistry::inDoubt() const {
  std::lock_guard lock(mu_);
  return in_doubt_;
}

void XaRegistry::addRecovered(Recovered row) {
  std::lock_guard lock(mu_);
  if (recovered_.size() == kRecentRecoveries) recovered_.erase(recovered_.begin());
  recovered_.push_back(std::move(row));
}

std::vector<XaRegistry::Recovered> XaRegistry::recovered() const {
  std::lock_guard lock(mu_);
  return recovered_;
}

}  // namespace sp::proxy
