#include "proxy/lifecycle/partition_archiver.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "conf/config.hpp"
#include "proxy/lifecycle/archive_store.hpp"
#include "proxy/lifecycle/archived_months.hpp"
#include "proxy/lifecycle/lifecycle_links.hpp"
#include "proxy/lifecycle/partition_admin.hpp"
#include "routing/archive_sql.hpp"
#include "routing/map/crc32.hpp"
#include "routing/map/partition_layout.hpp"

namespace sp::proxy {

namespace {

namespace fs = std::filesystem;
using Row = std::vector<std::optional<std::string>>;
constexpr uint32_t kExportPageRows = 5000;

// Streaming SHA-256 (OpenSSL): exports can be larger than memory.
class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) { EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr); }
  void add(std::string_view bytes) { EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()); }
  std::string hex() {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx_.get(), out, &n);
    std::string text;
    for (unsigned i = 0; i < n; ++i) text += fmt::format("{:02x}", out[i]);
    return text;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_;
};

// What a partition holds, as the server and the file both compute it.
struct Fingerprint {
  uint64_t rows = 0;
  uint64_t crc_sum = 0;  // SUM(CRC32(CONCAT_WS('|', columns...)))
  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
};

// CONCAT_WS skips NULLs: the same bytes the server hashes.
uint32_t rowCrc(const Row& row) {
  std::string joined;
  bool first = true;
  for (const auto& v : row) {
    if (!v) continue;
    if (!first) joined += '|';
    joined += *v;
    first = false;
  }
  return routing::crc32(joined);
}

// LOAD DATA's default escaping.
void appendField(std::string& line, const std::optional<std::string>& v) {
  if (!v) {
    line += "\\N";
    return;
  }
  for (char c : *v) {
    switch (c) {
      case '\\': line += "\\\\"; break;
      case '\t': line += "\\t"; break;
      case '\n': line += "\\n"; break;
      case '\r': line += "\\r"; break;
      case '\0': line += "\\0"; break;
      default: line += c;
    }
  }
}

Row parseLine(std::string_view line) {
  Row row;
  std::string field;
  bool null_field = false;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == '\t') {
      row.push_back(null_field ? std::nullopt : std::optional(field));
      field.clear();
      null_field = false;
      continue;
    }
    char c = line[i];
    if (c == '\\' && i + 1 < line.size()) {
      char e = line[++i];
      if (e == 'N' && field.empty() && (i + 1 == line.size() || line[i + 1] == '\t')) null_field = true;
      else field += e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == '0' ? '\0' : e;
    } else {
      field += c;
    }
  }
  return row;
}

// Reads a finished export back: its fingerprint and SHA-256.
std::expected<std::pair<Fingerprint, std::string>, std::string> readExport(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::unexpected("cannot read " + file.string());
  Fingerprint f;
  Sha256 sha;
  std::string line;
  while (std::getline(in, line)) {
    sha.add(line);
    sha.add("\n");
    f.rows += 1;
    f.crc_sum += rowCrc(parseLine(line));
  }
  return std::pair{f, sha.hex()};
}

std::string literal(const std::string& value, bool integer) {
  if (integer) return value;
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

struct Columns {
  std::vector<std::string> all;     // in table order
  std::vector<std::string> key;     // primary key, in key order
  std::vector<bool> key_integer;    // per key column
};

awaitable<std::expected<Columns, std::string>> readColumns(LifecycleLinks& links, const PartitionTarget& t) {
  auto all = co_await links.rows(t.backend, fmt::format("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE "
                                                        "TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{}' "
                                                        "ORDER BY ORDINAL_POSITION", t.physical));
  if (!all) co_return std::unexpected(all.error());
  auto key = co_await links.rows(
      t.backend, fmt::format("SELECT k.COLUMN_NAME, c.DATA_TYPE FROM information_schema.KEY_COLUMN_USAGE k JOIN "
                             "information_schema.COLUMNS c ON c.TABLE_SCHEMA = k.TABLE_SCHEMA AND c.TABLE_NAME = "
                             "k.TABLE_NAME AND c.COLUMN_NAME = k.COLUMN_NAME WHERE k.TABLE_SCHEMA = DATABASE() AND "
                             "k.TABLE_NAME = '{}' AND k.CONSTRAINT_NAME = 'PRIMARY' ORDER BY k.ORDINAL_POSITION",
                             t.physical));
  if (!key) co_return std::unexpected(key.error());
  if (key->empty()) co_return std::unexpected(t.physical + " has no primary key (exports are read in key order)");
  Columns c;
  for (const auto& r : *all) c.all.push_back(r[0].value_or(""));
  for (const auto& r : *key) {
    c.key.push_back(r[0].value_or(""));
    std::string type = r[1].value_or("");
    c.key_integer.push_back(type == "tinyint" || type == "smallint" || type == "mediumint" || type == "int" ||
                            type == "bigint");
  }
  co_return c;
}

std::string quotedList(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "`" : ", `") + n + "`";
  return out;
}

awaitable<std::expected<Fingerprint, std::string>> serverFingerprint(LifecycleLinks& links, const PartitionTarget& t,
                                                                     const std::string& partition, const Columns& c) {
  auto r = co_await links.rows(t.backend, fmt::format("SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT_WS('|', {}))), 0) "
                                                      "FROM `{}` PARTITION (`{}`)",
                                                      quotedList(c.all), t.physical, partition));
  if (!r) co_return std::unexpected(r.error());
  if (r->size() != 1 || r->front().size() != 2) co_return std::unexpected(std::string("unexpected fingerprint answer"));
  co_return Fingerprint{std::stoull(r->front()[0].value_or("0")), std::stoull(r->front()[1].value_or("0"))};
}

// Writes the partition to `file` (through a temporary name) in key order, in pages.
awaitable<std::expected<void, std::string>> writeExport(LifecycleLinks& links, const PartitionTarget& t,
                                                        const std::string& partition, const Columns& c,
                                                        const fs::path& file) {
  fs::path tmp = file;
  tmp += ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) co_return std::unexpected("cannot write " + tmp.string());
  routing::KeyTuple cursor;
  for (;;) {
    std::string where = cursor.empty() ? std::string() : " WHERE " + routing::keyAfter(c.key, cursor);
    auto page = co_await links.rows(t.backend, fmt::format("SELECT {} FROM `{}` PARTITION (`{}`){} ORDER BY {} LIMIT {}",
                                                           quotedList(c.all), t.physical, partition, where,
                                                           quotedList(c.key), kExportPageRows));
    if (!page) co_return std::unexpected(page.error());
    for (const auto& row : *page) {
      std::string line;
      for (size_t i = 0; i < row.size(); ++i) {
        if (i) line += '\t';
        appendField(line, row[i]);
      }
      line += '\n';
      out.write(line.data(), static_cast<std::streamsize>(line.size()));
    }
    if (page->size() < kExportPageRows) break;
    cursor.clear();
    const Row& last = page->back();
    for (size_t k = 0; k < c.key.size(); ++k) {
      auto pos = std::find(c.all.begin(), c.all.end(), c.key[k]) - c.all.begin();
      cursor.push_back(literal(last[pos].value_or(""), c.key_integer[k]));
    }
  }
  out.close();
  if (!out) co_return std::unexpected("cannot write " + tmp.string());
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) co_return std::unexpected("cannot rename " + tmp.string() + ": " + ec.message());
  co_return std::expected<void, std::string>{};
}

std::string manifestText(const Fingerprint& f, const std::string& sha) {
  return fmt::format("rows={}\ncrc32_sum={}\nsha256={}\n", f.rows, f.crc_sum, sha);
}

// One partition: export (or reuse a matching export), verify, drop.
class MonthArchive {
 public:
  MonthArchive(ProxyContext& context, LifecycleLinks& links, const PartitionTarget& t, const Columns& c,
               const std::string& partition, bool export_only)
      : context_(context), links_(links), t_(t), c_(c), partition_(partition), export_only_(export_only) {}

  // The row of the result; `state` done / exported / refused / failed.
  awaitable<Row> run() {
    fs::path dir = fs::path(context_.config().archive.export_dir) / t_.physical;
    file_ = dir / (partition_ + ".tsv");
    fs::path manifest = dir / (partition_ + ".manifest");
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) co_return result("failed", "cannot create " + dir.string() + ": " + ec.message());
    auto server = co_await serverFingerprint(links_, t_, partition_, c_);
    if (!server) co_return result("failed", server.error());
    rows_ = server->rows;
    if (fs::exists(file_)) {
      auto existing = readExport(file_);
      if (!existing) co_return result("failed", existing.error());
      if (!(existing->first == *server)) {
        co_return result("refused", fmt::format("the month has rows newer than (or different from) its export: {} "
                                                "rows now, {} in {}; remove that file (and its .manifest) to export "
                                                "again", server->rows, existing->first.rows, file_.string()));
      }
      sha_ = existing->second;
    } else {
      if (auto w = co_await writeExport(links_, t_, partition_, c_, file_); !w) co_return result("failed", w.error());
      auto written = readExport(file_);
      if (!written) co_return result("failed", written.error());
      if (!(written->first == *server)) {
        fs::remove(file_, ec);
        co_return result("failed", fmt::format("verification failed: the export holds {} rows (crc sum {}), the "
                                               "partition {} (crc sum {}); rows changed during the export? run again",
                                               written->first.rows, written->first.crc_sum, server->rows,
                                               server->crc_sum));
      }
      sha_ = written->second;
      std::ofstream m(manifest, std::ios::trunc);
      m << manifestText(*server, sha_);
      if (!m) co_return result("failed", "cannot write " + manifest.string());
    }
    if (export_only_) co_return result("exported", "");
    co_return co_await drop(*server);
  }

 private:
  // The last check and the DROP under one table lock: no write can slip in between.
  awaitable<Row> drop(const Fingerprint& exported) {
    if (auto l = co_await links_.run(t_.backend, fmt::format("LOCK TABLES `{}` WRITE", t_.physical)); !l) {
      co_return result("failed", l.error());
    }
    auto now = co_await serverFingerprint(links_, t_, partition_, c_);
    Row out;
    if (!now) {
      out = result("failed", now.error());
    } else if (!(*now == exported)) {
      out = result("refused", fmt::format("the month has rows newer than its export ({} rows now, {} exported); "
                                          "run ARCHIVE again after removing {}", now->rows, exported.rows,
                                          file_.string()));
    } else if (auto d = co_await links_.run(t_.backend, fmt::format("ALTER TABLE `{}` DROP PARTITION `{}`", t_.physical,
                                                                    partition_));
               !d) {
      out = result("failed", d.error());
    } else {
      context_.lifecycle.dropped_partitions.fetch_add(1);
      out = result("dropped", "");
    }
    co_await links_.run(t_.backend, "UNLOCK TABLES");
    co_return out;
  }

  Row result(const char* state, const std::string& message) {
    auto level = std::string_view(state) == "failed" || std::string_view(state) == "refused" ? spdlog::level::warn
                                                                                              : spdlog::level::info;
    spdlog::log(level, "archive {} shard {} partition {} ({} on {}): {} {}", t_.table, t_.shard, partition_,
                t_.physical, t_.backend, state, message);
    return Row{t_.table, t_.shard, t_.backend, t_.physical, partition_, std::to_string(rows_),
               file_.empty() ? std::nullopt : std::optional(file_.string()),
               sha_.empty() ? std::nullopt : std::optional(sha_), std::string(state),
               message.empty() ? std::nullopt : std::optional(message)};
  }

  ProxyContext& context_;
  LifecycleLinks& links_;
  const PartitionTarget& t_;
  const Columns& c_;
  std::string partition_;
  bool export_only_;
  fs::path file_;
  std::string sha_;
  uint64_t rows_ = 0;
};

std::string recordRetention(ProxyContext& context, const std::string& table, const routing::DateTimeValue& before) {
  auto store = ArchiveStore::open(context.config().cache_path);
  if (!store) return "the retention was not recorded: " + store.error();
  ArchiveProgress p;
  p.kind = "retention";
  p.table = table;
  p.shard = "-";
  p.source = table;
  p.target = "-";
  p.cutoff = routing::formatMonthStart(routing::monthIndexOf(before.date));
  p.state = "done";
  p.message = "writes dated before " + p.cutoff + " are refused (9122)";
  if (auto saved = (*store)->save(p); !saved) return "the retention was not recorded: " + saved.error();
  return loadArchivedMonths(context);
}

}  // namespace

awaitable<std::expected<LocalResult, std::string>> archiveMonths(ProxyContext& context, const LifecycleCommand& command) {
  const auto& before = *command.before;
  if (!routing::isMonthStart(before)) {
    co_return std::unexpected(std::string("shardproxy admin: ARCHIVE ... BEFORE on a month-partitioned table takes the "
                                          "first day of a month ('2025-01-01'): whole month partitions are dropped"));
  }
  if (context.config().archive.export_dir.empty()) {
    co_return std::unexpected(std::string("shardproxy admin: archive.export_dir is not set in the config: months are "
                                          "exported there before their partitions are dropped"));
  }
  auto targets = partitionTargets(context.shard_map.load().get(), command.table);
  if (!targets) co_return std::unexpected(targets.error());
  const routing::MonthIndex cutoff = routing::monthIndexOf(before.date);
  LifecycleLinks links(context);
  LocalResult r;
  r.columns = {"table", "shard", "backend", "physical_table", "partition", "rows", "file", "sha256", "state", "message"};
  bool dropped_any = false;
  for (const auto& t : *targets) {
    auto fail = [&](const std::string& message) {
      r.rows.push_back(Row{t.table, t.shard, t.backend, t.physical, std::nullopt, std::nullopt, std::nullopt,
                           std::nullopt, std::string("failed"), message});
    };
    auto parts = co_await readPartitions(links, t);
    if (!parts) {
      fail(parts.error());
      continue;
    }
    auto layout = routing::readPartitionLayout(*parts);
    if (!layout) {
      fail(layout.error());
      continue;
    }
    auto columns = co_await readColumns(links, t);
    if (!columns) {
      fail(columns.error());
      continue;
    }
    for (const auto& p : layout->partitions) {
      if (!p.last || *p.last >= cutoff) continue;  // pmax and months at or after the cutoff stay
      MonthArchive month(context, links, t, *columns, p.row.name, command.export_only);
      r.rows.push_back(co_await month.run());
      dropped_any = dropped_any || r.rows.back()[8] == "dropped";
    }
  }
  if (dropped_any) {
    // From now on writes dated before the cutoff are refused (archived_months.hpp).
    if (auto err = recordRetention(context, targets->front().table, before); !err.empty()) {
      co_return std::unexpected("shardproxy admin: partitions dropped, but " + err);
    }
  }
  co_return r;
}

}  // namespace sp::proxy
