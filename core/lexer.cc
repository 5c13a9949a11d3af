#include "core/lexer.h"

#include "core/attrs.h"

namespace tso::text {
namespace {

// ASCII only, on purpose: the formats must not depend on the locale.
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
// The characters of %locals and ?params after the sigil.
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

// Advances past a quoted string (escapes included); false if it does not
// close on its line.
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
  auto skip = [&](bool (*pred)(char)) {
    while (pos_ < src_.size() && pred(src_[pos_])) ++pos_;
  };
  auto sigil_word = [&](Tok kind, const char* example) {
    ++pos_;
    skip(is_word_char);
    if (pos_ == begin + 1)
      return bad(t, std::string("expected a name after '") + c + "', like " + example);
    return finish(t, kind, begin);
  };
  if (c == '\n') {
    ++pos_;
    ++line_;
    line_start_ = pos_;
    return finish(t, Tok::kNewline, begin);
  }
  if (is_letter(c)) {
    ++pos_;
    skip(syntax_->name_char);
    return finish(t, Tok::kName, begin);
  }
  if (c == '%') return sigil_word(Tok::kLocal, "%0");
  if (c == '?' && syntax_->params) return sigil_word(Tok::kParam, "?k");
  const bool negative = syntax_->signed_numbers && c == '-' && pos_ + 1 < src_.size() &&
                        is_digit(src_[pos_ + 1]);
  if (is_digit(c) || negative) {
    ++pos_;
    skip(syntax_->number_char);
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
  if (syntax_->pairs && (c == '=' || c == '!' || c == '<') && pos_ + 1 < src_.size() &&
      src_[pos_ + 1] == '=') {
    pos_ += 2;
    return finish(t, Tok::kPunct, begin);
  }
  if (syntax_->punct.find(c) != std::string_view::npos) {
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
  return quoted(t.text);
}

Error TokenParser::error_at(const Token& t, const std::string& msg) const {
  return Error{std::string(file_) + ":" + std::to_string(t.line) + ":" + std::to_string(t.col) +
               ": " + msg};
}

Status TokenParser::advance() {
  tok_ = lex_.next();
  if (tok_.kind == Tok::kBad) return error_at(tok_, tok_.value);
  return {};
}

Status TokenParser::expect(std::string_view punct, std::string_view what) {
  if (!at(punct))
    return error_at(tok_, "expected " +
                              (what.empty() ? "'" + std::string(punct) + "'" : std::string(what)) +
                              ", got " + describe(tok_));
  return advance();
}

Status TokenParser::skip_newlines() {
  while (tok_.kind == Tok::kNewline) TSO_RETURN_IF_ERROR(advance());
  return {};
}

Status TokenParser::end_of_statement() {
  if (tok_.kind == Tok::kEnd) return {};
  if (tok_.kind != Tok::kNewline)
    return error_at(tok_, "end of line expected after the statement, got " + describe(tok_));
  return advance();
}

Token TokenParser::peek_token() const {
  Lexer copy = lex_;
  return copy.next();
}

}  // namespace tso::text
