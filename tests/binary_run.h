// Running the built `tso` binary from a test: its stdout, stderr and exit
// code, captured through files in a scratch directory. Shared by the
// command-line tests.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tso::testing {

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

// `s` single-quoted for the shell.
inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `binary` with `args`, capturing its output in files under `scratch`.
inline RunResult run_binary(const std::string& binary, const std::vector<std::string>& args,
                            const std::filesystem::path& scratch) {
  std::string cmd = quote(binary);
  for (const std::string& a : args) cmd += " " + quote(a);
  const std::string out = (scratch / "stdout").string(), err = (scratch / "stderr").string();
  cmd += " >" + quote(out) + " 2>" + quote(err);
  const int status = std::system(cmd.c_str());
  RunResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out), read_file(err)};
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

}  // namespace tso::testing
