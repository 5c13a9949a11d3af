#include "substitutions/rule_lexer.h"

#include "core/attrs.h"

namespace tso::rules_internal {
namespace {

// ASCII only, on purpose: the format must not depend on the locale.
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word_char(char c) { return is_letter(c) || is_digit(c) || c == '.'; }

}  // namespace

void Lexer::skip_blanks() {
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (c == '#') {
      while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
}

Token Lexer::start() const {
  Token t;
  t.line = line_;
  t.col = static_cast<int>(pos_ - line_start_) + 1;
  t.text = pos_ == src_.size() ? std::string_view() : src_.substr(pos_, 1);
  return t;
}

Token Lexer::finish(Token t, Tok kind, size_t begin) const {
  t.kind = kind;
  t.text = src_.substr(begin, pos_ - begin);
  return t;
}

Token Lexer::bad(Token t, std::string why) const {
  t.kind = Tok::kBad;
  t.value = std::move(why);
  return t;
}

bool Lexer::scan_string() {
  for (++pos_; pos_ < src_.size() && src_[pos_] != '\n'; ++pos_) {
    if (src_[pos_] == '\\' && pos_ + 1 < src_.size() && src_[pos_ + 1] != '\n') {
      ++pos_;
    } else if (src_[pos_] == '"') {
      ++pos_;
      return true;
    }
  }
  return false;
}

char Lexer::peek() {
  skip_blanks();
  return pos_ < src_.size() ? src_[pos_] : '\0';
}

Token Lexer::next() {
  skip_blanks();
  Token t = start();
  if (pos_ == src_.size()) return t;
  const size_t begin = pos_;
  const char c = src_[pos_];
  auto word = [&](Tok kind, const char* what) {
    ++pos_;
    while (pos_ < src_.size() && is_word_char(src_[pos_])) ++pos_;
    if (kind != Tok::kName && pos_ == begin + 1)
      return bad(t, std::string("expected a name after '") + c + "', like " + what);
    return finish(t, kind, begin);
  };
  if (c == '\n') {
    ++pos_;
    ++line_;
    line_start_ = pos_;
    return finish(t, Tok::kNewline, begin);
  }
  if (is_letter(c)) return word(Tok::kName, "x");
  if (c == '%') return word(Tok::kLocal, "%0");
  if (c == '?') return word(Tok::kParam, "?k");
  if (is_digit(c)) {
    while (pos_ < src_.size() && is_word_char(src_[pos_])) ++pos_;
    return finish(t, Tok::kNumber, begin);
  }
  if (c == '"') {
    if (!scan_string()) return bad(t, "unterminated string");
    t = finish(t, Tok::kString, begin);
    Expected<AttrValue> s = parse_attr_value(AttrType::Str, t.text);
    if (!s) return bad(t, "bad string: " + s.error().message);
    t.value = std::get<std::string>(*s);
    return t;
  }
  if ((c == '=' || c == '!' || c == '<') && pos_ + 1 < src_.size() && src_[pos_ + 1] == '=') {
    pos_ += 2;
    return finish(t, Tok::kPunct, begin);
  }
  if (std::string_view("{}()[],:=+-*<").find(c) != std::string_view::npos) {
    ++pos_;
    return finish(t, Tok::kPunct, begin);
  }
  return bad(t, std::string("unexpected character '") + c + "'");
}

Token Lexer::raw_value() {
  skip_blanks();
  Token t = start();
  const size_t begin = pos_;
  const char c = pos_ < src_.size() ? src_[pos_] : '\n';
  if (c == '[') {
    while (pos_ < src_.size() && src_[pos_] != ']' && src_[pos_] != '\n') ++pos_;
    if (pos_ == src_.size() || src_[pos_] != ']') return bad(t, "missing ']' in value");
    ++pos_;
  } else if (c == '"') {
    if (!scan_string()) return bad(t, "unterminated string");
  } else {
    while (pos_ < src_.size() &&
           std::string_view(",) \t\r\n#").find(src_[pos_]) == std::string_view::npos)
      ++pos_;
  }
  if (pos_ == begin) return bad(t, "expected a value after '='");
  return finish(t, Tok::kValue, begin);
}

Token Lexer::braced() {
  skip_blanks();
  Token t = start();
  if (pos_ == src_.size() || src_[pos_] != '{') return bad(t, "expected '{'");
  const size_t begin = pos_;
  int depth = 0;
  for (; pos_ < src_.size(); ++pos_) {
    char c = src_[pos_];
    if (c == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (depth == 0) break;
  }
  if (pos_ == src_.size()) return bad(t, "missing '}' closing the '{' here");
  ++pos_;
  t = finish(t, Tok::kValue, begin);
  t.value = std::string(t.text.substr(1, t.text.size() - 2));
  return t;
}

std::string describe(const Token& t) {
  if (t.kind == Tok::kEnd) return "end of file";
  if (t.kind == Tok::kNewline) return "end of line";
  return "'" + std::string(t.text) + "'";
}

}  // namespace tso::rules_internal
