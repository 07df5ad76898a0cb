// Golden-file tests: tests/unit/parser/golden/*.txt hold
//   # comment
//   SQL: <query on one line>
//   AST: <toSExpr output>      or      ERR: <error message>
// SP_REGENERATE_GOLDEN=1 rewrites the AST/ERR lines from the current parser
// (review the diff before committing). Every successful parse is also
// checked for structural invariants the routing rewriter relies on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "parser/ast_walk.hpp"
#include "parser/parse.hpp"

namespace sp::parser {
namespace {

namespace fs = std::filesystem;

std::string render(std::string_view sql) {
  ParseResult result = parse(sql);
  if (!result) return "ERR: " + result.error().message;
  return "AST: " + toSExpr(*result, sql);
}

bool within(SourceRange inner, SourceRange outer) {
  return inner.begin >= outer.begin && inner.end <= outer.end && inner.begin <= inner.end;
}

void checkIdentifier(const Identifier& id, std::string_view sql) {
  if (id.empty()) return;
  const std::string_view text = id.range.text(sql);
  EXPECT_EQ(text, id.quoted ? "`" + std::string(id.value) + "`" : std::string(id.value)) << sql;
}

// Ranges nest, identifiers match their bytes, every expression's text is
// itself parseable, and placeholders are numbered in text order.
void checkInvariants(const Statement& statement, std::string_view sql) {
  std::vector<std::pair<uint32_t, uint32_t>> placeholders;  // (offset, index)
  AstVisitor visitor;
  visitor.on_expr = [&](const Expr& e) {
    EXPECT_TRUE(within(e.range, statement.range)) << sql << " expr " << e.range.text(sql);
    for (const ExprPtr& arg : e.args) {
      EXPECT_TRUE(within(arg->range, e.range))
          << sql << ": child '" << arg->range.text(sql) << "' outside '" << e.range.text(sql) << "'";
    }
    checkIdentifier(e.column.db, sql);
    checkIdentifier(e.column.table, sql);
    checkIdentifier(e.column.column, sql);
    if (e.kind == ExprKind::kLiteral && e.literal_kind == LiteralKind::kPlaceholder) {
      placeholders.emplace_back(e.range.begin, e.placeholder_index);
    }
    const std::string reparsed = "SELECT " + std::string(e.range.text(sql));
    EXPECT_TRUE(parse(reparsed).has_value()) << sql << ": expression text not parseable: " << reparsed;
  };
  visitor.on_table_ref = [&](const TableRef& t) {
    EXPECT_TRUE(within(t.range, statement.range)) << sql;
    if (t.kind == TableRefKind::kTable) {
      checkIdentifier(t.name.db, sql);
      checkIdentifier(t.name.table, sql);
      EXPECT_TRUE(within(t.name.table.range, t.name.range)) << sql;
      EXPECT_TRUE(within(t.name.range, t.range)) << sql;
    }
    checkIdentifier(t.alias, sql);
  };
  visitor.on_table_name = [&](const TableName& name) {
    checkIdentifier(name.db, sql);
    checkIdentifier(name.table, sql);
  };
  walk(statement, visitor);
  std::sort(placeholders.begin(), placeholders.end());
  for (size_t i = 0; i < placeholders.size(); ++i) {
    EXPECT_EQ(placeholders[i].second, i) << sql << ": placeholders out of text order";
  }
  EXPECT_EQ(placeholders.size(), statement.placeholder_count) << sql;
  // The statement's own text parses to the same tree.
  const std::string_view text = statement.range.text(sql);
  ParseResult again = parse(text);
  ASSERT_TRUE(again.has_value()) << sql;
  EXPECT_EQ(toSExpr(*again, text), toSExpr(statement, sql)) << sql;
}

std::vector<fs::path> goldenFiles() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(SP_PARSER_GOLDEN_DIR)) {
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class Golden : public ::testing::TestWithParam<fs::path> {};

TEST_P(Golden, MatchesExpected) {
  const bool regenerate = std::getenv("SP_REGENERATE_GOLDEN") != nullptr &&
                          std::string(std::getenv("SP_REGENERATE_GOLDEN")) == "1";
  std::ifstream in(GetParam());
  ASSERT_TRUE(in) << GetParam();
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);

  std::vector<std::string> output;
  size_t cases = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.rfind("AST: ", 0) == 0 || line.rfind("ERR: ", 0) == 0) continue;  // regenerated below
    output.push_back(line);
    if (line.rfind("SQL: ", 0) != 0) continue;
    ++cases;
    const std::string sql = line.substr(5);
    const std::string actual = render(sql);
    output.push_back(actual);
    const bool has_expected = i + 1 < lines.size() && (lines[i + 1].rfind("AST: ", 0) == 0 ||
                                                       lines[i + 1].rfind("ERR: ", 0) == 0);
    if (!regenerate) {
      ASSERT_TRUE(has_expected) << "missing AST:/ERR: line after " << line;
      EXPECT_EQ(actual, lines[i + 1]) << "query: " << sql;
    }
    if (ParseResult result = parse(sql)) checkInvariants(*result, sql);
  }
  EXPECT_GT(cases, 0u);
  if (regenerate) {
    std::ofstream out(GetParam(), std::ios::trunc);
    for (const std::string& line : output) out << line << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Parser, Golden, ::testing::ValuesIn(goldenFiles()),
                         [](const auto& info) { return info.param.stem().string(); });

}  // namespace
}  // namespace sp::parser
