#include "proxy/observe/slow_log.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

namespace sp::proxy {

namespace {

std::string isoTime(int64_t ms) {
  std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
}

// Length of the valid UTF-8 sequence at s[i], 0 when it is not one.
size_t utf8Length(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

void appendJsonString(std::string& out, std::string_view text) {
  out += '"';
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      default: break;
    }
    size_t n = utf8Length(text, i);
    if (n == 0 || static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
      ++i;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  out += '"';
}

std::string slowLogLine(const SlowQueryEntry& e) {
  std::string out = "{\"time\":";
  appendJsonString(out, isoTime(e.time_ms));
  out += ",\"user\":";
  appendJsonString(out, e.user);
  out += ",\"client\":";
  appendJsonString(out, e.client);
  out += fmt::format(",\"connection_id\":{},\"plan\":", e.connection_id);
  appendJsonString(out, e.plan);
  out += ",\"table\":";
  if (e.table.empty()) out += "null";
  else appendJsonString(out, e.table);
  out += ",\"backends\":[";
  for (size_t i = 0; i < e.backends.size(); ++i) {
    if (i) out += ',';
    appendJsonString(out, e.backends[i]);
  }
  out += fmt::format("],\"total_ms\":{:.3f},\"rows\":{},\"error\":", e.total_ms, e.rows);
  out += e.error_code ? std::to_string(e.error_code) : std::string("null");
  out += ",\"digest\":";
  appendJsonString(out, e.digest);
  out += ",\"statement\":";
  appendJsonString(out, e.statement);
  if (!e.shards.empty()) {
    out += ",\"shards\":[";
    for (size_t i = 0; i < e.shards.size(); ++i) {
      const auto& s = e.shards[i];
      if (i) out += ',';
      out += "{\"shard\":";
      appendJsonString(out, s.shard);
      out += ",\"backend\":";
      appendJsonString(out, s.backend);
      out += fmt::format(",\"ms\":{:.3f},\"rows\":{}}}", static_cast<double>(s.micros) / 1000.0, s.rows);
    }
    out += ']';
  }
  out += "}\n";
  return out;
}

SlowQueryLog::~SlowQueryLog() {
  if (file_) std::fclose(file_);
}

std::string SlowQueryLog::open(const std::string& path) {
  std::lock_guard lock(mutex_);
  path_ = path;
  std::error_code ec;
  auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);  // a failure shows in fopen's error
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (!f) return fmt::format("cannot open slow-query log {}: {}", path, std::strerror(errno));
  if (file_) std::fclose(file_);
  file_ = f;
  return {};
}

std::string SlowQueryLog::reopen() {
  std::string path;
  {
    std::lock_guard lock(mutex_);
    if (path_.empty()) return {};
    path = path_;
  }
  return open(path);
}

void SlowQueryLog::write(const std::string& line) {
  std::lock_guard lock(mutex_);
  if (!file_) return;
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

}  // namespace sp::proxy
