// Small RAII helpers over libmariadb's prepared-statement API (mysql_stmt_*)
// for the driver tests: connections, parameter binding of every MYSQL_TYPE,
// results fetched as strings (the client library converts each binary value
// by its column type, so the binary row format is what gets checked).
#pragma once
#include <mysql.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sp::drivers {

inline unsigned envPort(const char* name, unsigned fallback) {
  const char* value = std::getenv(name);
  return value && *value ? static_cast<unsigned>(std::strtoul(value, nullptr, 10)) : fallback;
}

// The proxy under test (one definition for every test file of a program).
inline const unsigned kProxyPort = envPort("SP_PROXY_PORT", 16033);

struct MysqlCloser {
  void operator()(MYSQL* m) const { mysql_close(m); }
};
using Connection = std::unique_ptr<MYSQL, MysqlCloser>;

// nullptr-free: the handle is returned even when the connect failed, so the
// caller can print mysql_error(); *ok says whether it worked.
inline Connection connectTo(unsigned port, const char* user, const char* password, const char* db, bool* ok) {
  Connection conn(mysql_init(nullptr));
  unsigned timeout = 10;
  mysql_options(conn.get(), MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  mysql_options(conn.get(), MYSQL_SET_CHARSET_NAME, "utf8mb4");
  *ok = mysql_real_connect(conn.get(), "127.0.0.1", user, password, db, port, nullptr, 0) != nullptr;
  return conn;
}

using Row = std::vector<std::optional<std::string>>;
using Rows = std::vector<Row>;

// Text-protocol query returning all rows (NULL as nullopt); empty on error.
inline Rows textRows(MYSQL* conn, const std::string& sql, std::string* error = nullptr) {
  Rows out;
  if (mysql_real_query(conn, sql.data(), sql.size()) != 0) {
    if (error) *error = mysql_error(conn);
    return out;
  }
  MYSQL_RES* res = mysql_store_result(conn);
  if (!res) return out;
  const unsigned columns = mysql_num_fields(res);
  while (MYSQL_ROW row = mysql_fetch_row(res)) {
    unsigned long* lengths = mysql_fetch_lengths(res);
    Row values;
    for (unsigned i = 0; i < columns; ++i) {
      values.push_back(row[i] ? std::optional<std::string>(std::string(row[i], lengths[i])) : std::nullopt);
    }
    out.push_back(std::move(values));
  }
  mysql_free_result(res);
  return out;
}

// Compact description of how two byte strings differ (gtest would print both in full).
inline std::string bytesDiff(const std::optional<std::string>& got, const std::string& want) {
  if (!got) return "got NULL, want " + std::to_string(want.size()) + " bytes";
  if (*got == want) return "";
  size_t i = 0;
  while (i < got->size() && i < want.size() && (*got)[i] == want[i]) ++i;
  return "got " + std::to_string(got->size()) + " bytes, want " + std::to_string(want.size()) +
         "; first difference at offset " + std::to_string(i);
}

inline MYSQL_TIME makeTime(enum_mysql_timestamp_type kind, unsigned y, unsigned mo, unsigned d, unsigned h = 0,
                           unsigned mi = 0, unsigned s = 0, unsigned long us = 0, bool neg = false) {
  MYSQL_TIME t;
  std::memset(&t, 0, sizeof t);
  t.year = y;
  t.month = mo;
  t.day = d;
  t.hour = h;
  t.minute = mi;
  t.second = s;
  t.second_part = us;
  t.neg = neg;
  t.time_type = kind;
  return t;
}

// Parameter values for one execute. Storage is stable (deque) so the
// MYSQL_BIND pointers stay valid until the execute.
class Params {
 public:
  template <typename T>
  Params& num(enum_field_types type, T value, bool is_unsigned = false) {
    auto& buf = store(&value, sizeof value);
    MYSQL_BIND& b = next(type);
    b.buffer = buf.data();
    b.buffer_length = sizeof value;
    b.is_unsigned = is_unsigned;
    return *this;
  }
  Params& text(enum_field_types type, const std::string& value) {
    auto& buf = store(value.data(), value.size());
    lengths_.push_back(value.size());
    MYSQL_BIND& b = next(type);
    b.buffer = buf.data();
    b.buffer_length = value.size();
    b.length = &lengths_.back();
    return *this;
  }
  Params& time(enum_field_types type, const MYSQL_TIME& value) {
    auto& buf = store(&value, sizeof value);
    MYSQL_BIND& b = next(type);
    b.buffer = buf.data();
    b.buffer_length = sizeof value;
    return *this;
  }
  Params& null() {
    MYSQL_BIND& b = next(MYSQL_TYPE_NULL);
    b.is_null = &kTrue;
    return *this;
  }
  // A parameter whose data goes with mysql_stmt_send_long_data before the execute.
  Params& longData(enum_field_types type, std::vector<std::string> chunks) {
    long_data_.push_back({binds_.size(), std::move(chunks)});
    next(type);
    return *this;
  }
  std::vector<MYSQL_BIND>& binds() { return binds_; }
  struct LongData {
    size_t index;
    std::vector<std::string> chunks;
  };
  const std::vector<LongData>& longDataParams() const { return long_data_; }

 private:
  static inline my_bool kTrue = 1;
  std::vector<char>& store(const void* data, size_t size) {
    storage_.emplace_back(static_cast<const char*>(data), static_cast<const char*>(data) + size);
    if (storage_.back().empty()) storage_.back().push_back('\0');
    return storage_.back();
  }
  MYSQL_BIND& next(enum_field_types type) {
    MYSQL_BIND b;
    std::memset(&b, 0, sizeof b);
    b.buffer_type = type;
    binds_.push_back(b);
    return binds_.back();
  }
  std::deque<std::vector<char>> storage_;
  std::deque<unsigned long> lengths_;
  std::vector<MYSQL_BIND> binds_;
  std::vector<LongData> long_data_;
};

// One prepared statement; execute() binds, sends long data, executes and
// fetches every row as strings.
class Stmt {
 public:
  Stmt(MYSQL* conn, const std::string& sql) : stmt_(mysql_stmt_init(conn)) {
    prepared_ = mysql_stmt_prepare(stmt_, sql.data(), sql.size()) == 0;
  }
  ~Stmt() { mysql_stmt_close(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  bool prepared() const { return prepared_; }
  MYSQL_STMT* get() { return stmt_; }
  unsigned errNo() { return mysql_stmt_errno(stmt_); }
  std::string error() { return mysql_stmt_error(stmt_); }
  std::string sqlstate() { return mysql_stmt_sqlstate(stmt_); }
  unsigned long paramCount() { return mysql_stmt_param_count(stmt_); }
  unsigned long long affected() { return mysql_stmt_affected_rows(stmt_); }

  // false on any error (errNo()/error() tell which); rows() then holds nothing.
  bool execute(Params& params) {
    rows_.clear();
    if (!params.binds().empty() && mysql_stmt_bind_param(stmt_, params.binds().data()) != 0) return false;
    for (const auto& ld : params.longDataParams()) {
      for (const auto& chunk : ld.chunks) {
        if (mysql_stmt_send_long_data(stmt_, ld.index, chunk.data(), chunk.size()) != 0) return false;
      }
    }
    if (mysql_stmt_execute(stmt_) != 0) return false;
    return fetchAll();
  }
  bool execute() {
    Params none;
    return execute(none);
  }
  const Rows& rows() const { return rows_; }
  // Column type codes of the last result (MYSQL_TYPE_*).
  const std::vector<enum_field_types>& columnTypes() const { return types_; }

 private:
  bool fetchAll() {
    types_.clear();
    MYSQL_RES* meta = mysql_stmt_result_metadata(stmt_);
    if (!meta) return mysql_stmt_errno(stmt_) == 0;  // no result set (DML)
    const unsigned columns = mysql_num_fields(meta);
    MYSQL_FIELD* fields = mysql_fetch_fields(meta);
    for (unsigned i = 0; i < columns; ++i) types_.push_back(fields[i].type);
    mysql_free_result(meta);
    std::vector<MYSQL_BIND> out(columns);
    std::vector<std::vector<char>> buffers(columns, std::vector<char>(256));
    std::vector<unsigned long> lengths(columns);
    std::vector<my_bool> nulls(columns), errors(columns);
    for (unsigned i = 0; i < columns; ++i) {
      std::memset(&out[i], 0, sizeof out[i]);
      out[i].buffer_type = MYSQL_TYPE_STRING;
      out[i].buffer = buffers[i].data();
      out[i].buffer_length = buffers[i].size();
      out[i].length = &lengths[i];
      out[i].is_null = &nulls[i];
      out[i].error = &errors[i];
    }
    if (mysql_stmt_bind_result(stmt_, out.data()) != 0) return false;
    for (;;) {
      int rc = mysql_stmt_fetch(stmt_);
      if (rc == MYSQL_NO_DATA) break;
      if (rc == 1) return false;
      Row row;
      for (unsigned i = 0; i < columns; ++i) {
        if (nulls[i]) {
          row.push_back(std::nullopt);
          continue;
        }
        if (lengths[i] <= buffers[i].size()) {
          row.push_back(std::string(buffers[i].data(), lengths[i]));
          continue;
        }
        // Truncated (MYSQL_DATA_TRUNCATED): fetch this column again in full.
        std::string whole(lengths[i], '\0');
        MYSQL_BIND col;
        std::memset(&col, 0, sizeof col);
        unsigned long len = 0;
        col.buffer_type = MYSQL_TYPE_STRING;
        col.buffer = whole.data();
        col.buffer_length = whole.size();
        col.length = &len;
        if (mysql_stmt_fetch_column(stmt_, &col, i, 0) != 0) return false;
        row.push_back(std::move(whole));
      }
      rows_.push_back(std::move(row));
    }
    return true;
  }

  MYSQL_STMT* stmt_;
  bool prepared_ = false;
  Rows rows_;
  std::vector<enum_field_types> types_;
};

}  // namespace sp::drivers
