#include "proxy/lifecycle_command.hpp"

#include <charconv>

#include "parser/lexer.hpp"
#include "routing/conditions.hpp"

namespace sp::proxy {

namespace {

using parser::Token;
using parser::TokenKind;

// A cursor over the significant tokens of one command (no trailing ';').
class Cursor {
 public:
  explicit Cursor(std::string_view sql) : sql_(sql), tokens_(parser::tokenize(sql)) {
    while (!tokens_.empty() && (tokens_.back().is(TokenKind::kEnd) || tokens_.back().is(TokenKind::kSemicolon))) {
      tokens_.pop_back();
    }
  }
  bool done() const { return pos_ >= tokens_.size(); }
  bool hasError() const {
    for (const auto& t : tokens_) {
      if (t.isError()) return true;
    }
    return false;
  }
  // Consumes the bare words if they come next.
  bool accept(std::initializer_list<std::string_view> words) {
    size_t i = pos_;
    for (auto w : words) {
      if (i >= tokens_.size() || !tokens_[i].is(TokenKind::kIdentifier) || !routing::equalsIgnoreCase(tokens_[i].text(sql_), w)) {
        return false;
      }
      ++i;
    }
    pos_ = i;
    return true;
  }
  std::optional<uint64_t> integer() {
    if (done() || !tokens_[pos_].is(TokenKind::kInteger)) return std::nullopt;
    auto text = tokens_[pos_].text(sql_);
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
    ++pos_;
    return v;
  }
  std::optional<std::string> name() {
    if (done()) return std::nullopt;
    const Token& t = tokens_[pos_];
    if (t.is(TokenKind::kIdentifier)) {
      ++pos_;
      return std::string(t.text(sql_));
    }
    if (t.is(TokenKind::kQuotedIdentifier)) {
      ++pos_;
      return parser::unquoteIdentifier(t.text(sql_));
    }
    return std::nullopt;
  }
  std::optional<std::string> string() {
    if (done() || !tokens_[pos_].is(TokenKind::kString)) return std::nullopt;
    return parser::unquoteString(tokens_[pos_++].text(sql_));
  }

 private:
  std::string_view sql_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

using Parsed = std::expected<LifecycleCommand, std::string>;

Parsed malformed(std::string_view form) {
  return std::unexpected("shardproxy admin: expected " + std::string(form));
}

// '<date>' or '<date time>' (UTC).
std::optional<routing::DateTimeValue> dateLiteral(Cursor& c) {
  auto text = c.string();
  if (!text) return std::nullopt;
  return routing::parseDateTime(*text);
}

// The optional tail [OF <table>] [AS OF '<date>'].
bool readTail(Cursor& c, LifecycleCommand& cmd, bool allow_table) {
  if (allow_table && c.accept({"of"})) {
    auto table = c.name();
    if (!table) return false;
    cmd.table = *table;
  }
  if (c.accept({"as", "of"})) {
    cmd.as_of = dateLiteral(c);
    if (!cmd.as_of) return false;
  }
  return c.done();
}

constexpr std::string_view kShowForm = "SHOW PARTITIONS [OF <table>] [AS OF 'YYYY-MM-DD']";
constexpr std::string_view kEnsureForm = "ENSURE PARTITIONS AHEAD <n> [OF <table>] [AS OF 'YYYY-MM-DD'] (n = 0..120)";
constexpr std::string_view kArchiveForm =
    "ARCHIVE <table> OLDER THAN <n> DAYS [AS OF 'YYYY-MM-DD'] or ARCHIVE <table> BEFORE 'YYYY-MM-DD' [EXPORT ONLY]";

Parsed parseArchive(Cursor& c) {
  LifecycleCommand cmd;
  auto table = c.name();
  if (!table) return malformed(kArchiveForm);
  cmd.table = *table;
  if (c.accept({"older", "than"})) {
    auto days = c.integer();
    if (!days || *days == 0 || *days > 36500 || !(c.accept({"days"}) || c.accept({"day"}))) {
      return malformed(kArchiveForm);
    }
    cmd.kind = LifecycleCommandKind::kArchiveOlderThan;
    cmd.days = static_cast<uint32_t>(*days);
    if (!readTail(c, cmd, false)) return malformed(kArchiveForm);
    return cmd;
  }
  if (c.accept({"before"})) {
    cmd.kind = LifecycleCommandKind::kArchiveBefore;
    cmd.before = dateLiteral(c);
    cmd.export_only = c.accept({"export", "only"});
    if (!cmd.before || !c.done()) return malformed(kArchiveForm);
    return cmd;
  }
  return malformed(kArchiveForm);
}

}  // namespace

std::optional<std::expected<LifecycleCommand, std::string>> parseLifecycleCommand(std::string_view sql) {
  Cursor c(sql);
  if (c.hasError()) return std::nullopt;  // the admin parser reports where
  LifecycleCommand cmd;
  if (c.accept({"show", "partitions"})) {
    cmd.kind = LifecycleCommandKind::kShowPartitions;
    if (!readTail(c, cmd, true)) return malformed(kShowForm);
    return cmd;
  }
  if (c.accept({"ensure", "partitions"})) {
    cmd.kind = LifecycleCommandKind::kEnsurePartitions;
    if (!c.accept({"ahead"})) return malformed(kEnsureForm);
    auto n = c.integer();
    if (!n || *n > 120) return malformed(kEnsureForm);
    cmd.ahead = static_cast<uint32_t>(*n);
    if (!readTail(c, cmd, true)) return malformed(kEnsureForm);
    return cmd;
  }
  if (c.accept({"show", "archives"})) {
    cmd.kind = LifecycleCommandKind::kShowArchives;
    if (!c.done()) return malformed("SHOW ARCHIVES");
    return cmd;
  }
  if (c.accept({"archive"})) return parseArchive(c);
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> lifecycleCommandHelp() {
  return {
      {std::string(kShowForm), "per shard and month partition: rows, data and index bytes; missing future months; "
                               "rows in pmax"},
      {std::string(kEnsureForm), "REORGANIZE pmax on every shard so the next n months have partitions (idempotent)"},
      {"ARCHIVE msg OLDER THAN <n> DAYS", "move old rows of msg_NN into msg_archive_NN in batches (resumable)"},
      {"ARCHIVE tg_channel_message BEFORE 'YYYY-MM-01' [EXPORT ONLY]",
       "export, verify and drop the month partitions before the date"},
      {"SHOW ARCHIVES", "archive runs and their progress"},
  };
}

}  // namespace sp::proxy
