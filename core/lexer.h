// The tokens of tso's line-oriented text formats (graphs, rule files) and a
// base for their recursive-descent parsers. Newlines are tokens (one
// statement per line); blanks and `#` comments are not. The two formats
// differ only in a few lexical choices, which a `Syntax` names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace tso::text {

enum class Tok : uint8_t {
  kName,     // x, conv2d, w1.a
  kLocal,    // %0, %t
  kParam,    // ?k (only where Syntax::params)
  kNumber,   // 42, 1e-05; trailing letters make it one bad number for the parser
  kString,   // "..." (value holds the decoded text)
  kPunct,    // one of Syntax::punct, or ==, !=, <= where Syntax::pairs
  kValue,    // raw text read by `raw_value` or `braced`
  kNewline,
  kEnd,
  kBad,      // value says what is wrong
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string_view text;  // as written
  std::string value;      // kString: the decoded string; kBad: what is wrong
  int line = 1;
  int col = 1;
};

struct Syntax {
  bool (*name_char)(char);    // characters after a name's first letter
  bool (*number_char)(char);  // characters after a number's first digit
  std::string_view punct;     // one-character punctuation
  bool pairs = false;         // ==, != and <= are tokens
  bool params = false;        // ?name is a token
  bool signed_numbers = false;  // -3 is one number, not '-' then 3
};

class Lexer {
 public:
  Lexer(std::string_view src, const Syntax& syntax) : src_(src), syntax_(&syntax) {}

  Token next();
  // The raw text of a value up to ',', ')', a blank or the end of the line
  // (a quoted string or a bracketed list taken whole).
  Token raw_value();
  // '{' ... '}' with nested braces, possibly over several lines; the token's
  // value is the text between the outer braces.
  Token braced();
  // The next character after blanks, not consumed.
  char peek();

 private:
  void skip_blanks();
  Token start() const;
  Token finish(Token t, Tok kind, size_t begin) const;
  Token bad(Token t, std::string why) const;
  bool scan_string();

  std::string_view src_;
  const Syntax* syntax_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

// "end of file", "end of line" or the token's text in quotes.
std::string describe(const Token& t);

// The current token and the checks every statement parser makes; errors read
// FILE:LINE:COL: message.
class TokenParser {
 protected:
  TokenParser(std::string_view text, std::string_view file, const Syntax& syntax)
      : lex_(text, syntax), file_(file) {}

  Error error_at(const Token& t, const std::string& msg) const;
  Status advance();
  bool at(std::string_view punct) const { return tok_.kind == Tok::kPunct && tok_.text == punct; }
  bool at_word(std::string_view w) const { return tok_.kind == Tok::kName && tok_.text == w; }
  // Consumes `punct`, else an error "expected WHAT, got ..." (WHAT defaults
  // to the punctuation in quotes).
  Status expect(std::string_view punct, std::string_view what = {});
  Status skip_newlines();
  Status end_of_statement();
  // The token after the current one, consuming nothing.
  Token peek_token() const;

  Lexer lex_;
  std::string_view file_;
  Token tok_;
};

}  // namespace tso::text
