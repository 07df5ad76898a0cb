// The slow-query log (config log.slow_query_file, log.slow_query_ms): one
// JSON object per line for each statement that took at least the threshold.
// Shared by the worker threads (slow statements are rare: a mutex around the
// write is enough); reopen() after a log rotation (SIGHUP).
#pragma once
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/observe/metrics.hpp"

namespace sp::proxy {

struct SlowQueryEntry {
  int64_t time_ms = 0;           // Unix time the statement ended, milliseconds
  std::string user;
  std::string client;            // host:port
  uint32_t connection_id = 0;
  std::string_view plan;
  std::string_view table;
  std::string_view digest;       // the normalized statement
  std::string statement;         // as sent, literals masked unless log.slow_query_keep_values
  std::vector<std::string> backends;
  std::vector<StatementRecord::Shard> shards;
  double total_ms = 0;
  uint64_t rows = 0;
  uint16_t error_code = 0;
};

// One JSON line (with the trailing '\n').
std::string slowLogLine(const SlowQueryEntry& e);
// `text` as a JSON string literal, quotes included (invalid UTF-8 bytes as \u00XX).
void appendJsonString(std::string& out, std::string_view text);

class SlowQueryLog {
 public:
  ~SlowQueryLog();
  // Opens (appends to) the file; returns an error message, empty on success.
  std::string open(const std::string& path);
  // Closes and opens the same path again (after logrotate moved the file).
  std::string reopen();
  void write(const std::string& line);

 private:
  std::mutex mutex_;
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace sp::proxy
