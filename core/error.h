// Error values for user-facing failures (bad files, bad flags, impossible
// shapes). Broken internal invariants abort through TSO_CHECK instead.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tso {

struct Error {
  std::string message;  // full text, already carrying its location
};

// Either a value or an Error; a minimal stand-in for C++23 std::expected.
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error e) : v_(std::move(e)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error e) : error_(std::move(e)), ok_(false) {}
  static Status Ok() { return {}; }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

// `text` in single quotes, for an error message that quotes what a file
// holds; past 60 characters its first 60 and its length (one token of a
// hostile file can be megabytes).
inline std::string quoted(std::string_view text) {
  constexpr size_t kMost = 60;
  if (text.size() <= kMost) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kMost)) + "...' (" + std::to_string(text.size()) +
         " characters)";
}

[[noreturn]] inline void check_failed(const char* cond, const char* file, int line,
                                      const std::string& msg) {
  std::fprintf(stderr, "%s:%d: internal error: check `%s` failed%s%s\n", file, line, cond,
               msg.empty() ? "" : ": ", msg.c_str());
  std::abort();
}

}  // namespace tso

// Aborts with context when an internal invariant does not hold.
#define TSO_CHECK(cond, ...)                                                   \
  do {                                                                         \
    if (!(cond)) ::tso::check_failed(#cond, __FILE__, __LINE__, std::string{__VA_ARGS__}); \
  } while (0)

// Propagates an Error out of the calling function.
#define TSO_RETURN_IF_ERROR(expr)                      \
  do {                                                 \
    auto tso_status_ = (expr);                         \
    if (!tso_status_.ok()) return tso_status_.error(); \
  } while (0)
