// Internal to substitutions/: the tokens of rule files. Newlines are tokens
// (one statement per line); blanks and `#` comments are not.
#pragma once

#include <string>
#include <string_view>

namespace tso::rules_internal {

enum class Tok : uint8_t {
  kName,     // x, conv2d, dim, w1.a
  kLocal,    // %0, %t
  kParam,    // ?k
  kNumber,   // 42 (digits; trailing letters make it a bad number later)
  kString,   // "..." (value holds the decoded text)
  kPunct,    // { } ( ) [ ] , : = + - * < and the pairs == != <=
  kValue,    // raw text read by `raw_value` or `braced`
  kNewline,
  kEnd,
  kBad,      // value says what is wrong
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string_view text;
  std::string value;
  int line = 1;
  int col = 1;
};

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

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
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

std::string describe(const Token& t);

}  // namespace tso::rules_internal
