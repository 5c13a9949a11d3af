#include "core/lexer.h"

#include <gtest/gtest.h>

#include <vector>

namespace tso::text {
namespace {

bool word(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.'; }

constexpr Syntax kPlain{.name_char = word, .number_char = word, .punct = "(),="};
constexpr Syntax kRich{.name_char = word,
                       .number_char = word,
                       .punct = "(),=-<",
                       .pairs = true,
                       .params = true};
constexpr Syntax kSigned{.name_char = word, .number_char = word, .punct = "(),=", .signed_numbers = true};

std::vector<std::pair<Tok, std::string>> lex(std::string_view src, const Syntax& syntax) {
  Lexer l(src, syntax);
  std::vector<std::pair<Tok, std::string>> out;
  for (Token t = l.next();; t = l.next()) {
    out.emplace_back(t.kind, t.kind == Tok::kBad || t.kind == Tok::kString ? t.value
                                                                             : std::string(t.text));
    if (t.kind == Tok::kEnd || t.kind == Tok::kBad) break;
  }
  return out;
}

using V = std::vector<std::pair<Tok, std::string>>;

TEST(Lexer, SyntaxChoosesPairsParamsAndSignedNumbers) {
  EXPECT_EQ(lex("a<=-3", kRich), (V{{Tok::kName, "a"}, {Tok::kPunct, "<="}, {Tok::kPunct, "-"},
                                     {Tok::kNumber, "3"}, {Tok::kEnd, ""}}));
  EXPECT_EQ(lex("f(-3)", kSigned), (V{{Tok::kName, "f"}, {Tok::kPunct, "("}, {Tok::kNumber, "-3"},
                                      {Tok::kPunct, ")"}, {Tok::kEnd, ""}}));
  EXPECT_EQ(lex("?k", kRich), (V{{Tok::kParam, "?k"}, {Tok::kEnd, ""}}));
  EXPECT_EQ(lex("?k", kPlain), (V{{Tok::kBad, "unexpected character '?'"}}));
  EXPECT_EQ(lex("a<b", kPlain), (V{{Tok::kName, "a"}, {Tok::kBad, "unexpected character '<'"}}));
}

TEST(Lexer, NewlinesAreTokensCommentsAndBlanksAreNot) {
  EXPECT_EQ(lex("a # note\n\t%0 \"x\\\"y\"", kPlain),
            (V{{Tok::kName, "a"}, {Tok::kNewline, "\n"}, {Tok::kLocal, "%0"},
               {Tok::kString, "x\"y"}, {Tok::kEnd, ""}}));
  EXPECT_EQ(lex("%", kPlain), (V{{Tok::kBad, "expected a name after '%', like %0"}}));
  EXPECT_EQ(lex("\"open\nx", kPlain), (V{{Tok::kBad, "unterminated string"}}));
}

TEST(Lexer, RawValuesAndBracedBlocksKeepTheirPositions) {
  Lexer l("k=[1, 2] {a\n{b}\n} end", kPlain);
  EXPECT_EQ(l.next().text, "k");
  EXPECT_EQ(l.next().text, "=");
  EXPECT_EQ(l.raw_value().text, "[1, 2]");
  Token b = l.braced();
  EXPECT_EQ(b.kind, Tok::kValue);
  EXPECT_EQ(b.value, "a\n{b}\n");
  Token end = l.next();
  EXPECT_EQ(end.text, "end");
  EXPECT_EQ(end.line, 3);
  EXPECT_EQ(end.col, 3);
  EXPECT_EQ(Lexer("[1, 2", kPlain).raw_value().value, "missing ']' in value");
  EXPECT_EQ(Lexer("{a{", kPlain).braced().value, "missing '}' closing the '{' here");
}

}  // namespace
}  // namespace tso::text
