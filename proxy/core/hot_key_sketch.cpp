#include "proxy/core/hot_key_sketch.hpp"

#include <cmath>

namespace sp::proxy {

double DecayClock::weight(double now) const { return std::exp((now - landmark_) / tau_); }

double DecayClock::rate(double sum, double now) const {
  // A steady r statements/s gives sum -> r * tau * e^((now - landmark)/tau).
  return sum * std::exp(-(now - landmark_) / tau_) / tau_;
}

double DecayClock::rescale(double now) {
  const double factor = std::exp(-(now - landmark_) / tau_);
  landmark_ = now;
  return factor;
}

void HotKeySketch::add(uint64_t key, double weight, bool write, std::string_view shard, std::string_view backend) {
  size_t at = 0;
  if (auto it = index_.find(key); it != index_.end()) {
    at = it->second;
  } else if (entries_.size() < capacity_) {
    at = entries_.size();
    Entry fresh;
    fresh.key = key;
    entries_.push_back(std::move(fresh));
    index_.emplace(key, at);
  } else {
    // The smallest counter goes to the new key, its count as the new key's error.
    at = smallest();
    Entry& e = entries_[at];
    index_.erase(e.key);
    index_.emplace(key, at);
    e.key = key;
    e.error = e.count;
    e.writes = 0;
  }
  Entry& e = entries_[at];
  e.count += weight;
  if (write) e.writes += weight;
  if (e.shard != shard) e.shard.assign(shard);
  if (e.backend != backend) e.backend.assign(backend);
}

void HotKeySketch::scale(double factor) {
  for (auto& e : entries_) {
    e.count *= factor;
    e.error *= factor;
    e.writes *= factor;
  }
}

size_t HotKeySketch::smallest() const {
  // Linear: capacity is small (tens), and this runs only for a key not counted.
  size_t best = 0;
  for (size_t i = 1; i < entries_.size(); ++i) {
    if (entries_[i].count < entries_[best].count) best = i;
  }
  return best;
}

}  // namespace sp::proxy
