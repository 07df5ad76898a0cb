// Deterministic mutation testing: every golden query, mangled in many ways,
// must lex, classify and parse without crashing, looping or reporting an
// out-of-range offset. Run under ASan/UBSan (SHARDPROXY_SANITIZE=ON) to make
// memory errors visible.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "parser/classify.hpp"
#include "parser/lexer.hpp"
#include "parser/parse.hpp"

namespace sp::parser {
namespace {

std::vector<std::string> goldenQueries() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(SP_PARSER_GOLDEN_DIR)) {
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("SQL: ", 0) == 0) out.push_back(line.substr(5));
    }
  }
  return out;
}

std::string mutate(const std::string& sql, std::mt19937& rng) {
  static const std::string kAlphabet = "'\"`()?,.;@*/-#!=<>+ \n\\xXbBN0123456789aeSELECTFROM";
  std::string out = sql;
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < edits; ++i) {
    const size_t pos = out.empty() ? 0 : rng() % (out.size() + 1);
    switch (rng() % 4) {
      case 0:  // delete a range
        if (!out.empty() && pos < out.size()) out.erase(pos, 1 + rng() % 8);
        break;
      case 1:  // insert a special character
        out.insert(pos, 1, kAlphabet[rng() % kAlphabet.size()]);
        break;
      case 2:  // duplicate a slice (repeats tokens, parentheses, clauses)
        if (!out.empty()) {
          const size_t from = rng() % out.size();
          out.insert(pos, out.substr(from, 1 + rng() % 16));
        }
        break;
      default:  // truncate
        out.resize(pos);
        break;
    }
  }
  return out;
}

TEST(Mutation, ParserAndClassifierSurviveMangledQueries) {
  const std::vector<std::string> queries = goldenQueries();
  ASSERT_GT(queries.size(), 100u);
  std::mt19937 rng(12345);  // fixed seed: failures are reproducible
  size_t parsed = 0;
  for (int round = 0; round < 40; ++round) {
    for (const std::string& base : queries) {
      const std::string sql = mutate(base, rng);
      ParseResult result = parse(sql);
      if (result) {
        ++parsed;
        EXPECT_LE(result->range.end, sql.size()) << sql;
        EXPECT_LE(result->range.begin, result->range.end) << sql;
      } else {
        EXPECT_LE(result.error().offset, sql.size()) << sql;
        EXPECT_NE(result.error().message.find(" at offset "), std::string::npos) << sql;
      }
      const StatementInfo info = classify(sql);
      for (const SessionSetting& s : info.settings) EXPECT_LE(s.value.size(), sql.size()) << sql;
      const std::vector<Token> tokens = tokenize(sql);
      ASSERT_FALSE(tokens.empty());
      EXPECT_EQ(tokens.back().kind, TokenKind::kEnd);
      for (size_t i = 1; i < tokens.size(); ++i) {
        EXPECT_LE(tokens[i - 1].end, tokens[i].begin) << sql;  // ordered, non-overlapping
      }
    }
  }
  // Many mutations (e.g. an added space) keep the query valid; the test would
  // be vacuous if none did.
  EXPECT_GT(parsed, 100u);
}

}  // namespace
}  // namespace sp::parser
