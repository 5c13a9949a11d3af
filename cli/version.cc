#include "cli/version.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/fnv.h"
#include "frontend/onnx.h"
#include "optimizer/defaults.h"
#include "runtime/cpu/executor.h"
#include "specs/specs.h"
#include "verifier/verify.h"

namespace tso::cli {

namespace {

namespace fs = std::filesystem;

std::string file_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "unreadable";
  std::ostringstream text;
  text << in.rdbuf();
  return hex64(fnv1a(text.str()));
}

}  // namespace

std::string version_text() {
  std::ostringstream out;
  out << "tso " << TSO_VERSION << "\n";
  out << "rules (default, FNV-1a of each file) in " << opt::default_rules_dir() << ":\n";
  for (const std::string& f : opt::default_rule_files())
    out << "  " << file_hash(f) << "  " << fs::path(f).filename().string() << "\n";
  Expected<specs::SpecSource> specs = specs::read_specs(specs::default_specs_dir());
  out << "specs " << (specs ? specs->hash : "unreadable: " + specs.error().message) << " ("
      << specs::default_specs_dir() << ")\n";
  out << "libraries: " << cpu::Executor::library_info() << "; " << verifier::z3_version() << "; "
      << onnx_library_versions();
#ifdef TSO_CUDA_TOOLKIT
  out << "; CUDA toolkit " << TSO_CUDA_TOOLKIT;
#else
  out << "; no CUDA runtime (built without the CUDA toolkit)";
#endif
  return out.str();
}

}  // namespace tso::cli
