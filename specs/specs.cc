#include "specs/specs.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "core/fnv.h"

namespace tso::specs {

namespace {

namespace fs = std::filesystem;

Error at(const std::string& file, int line, const std::string& msg) {
  return Error{file + ":" + std::to_string(line) + ": " + msg};
}

// FNV-1a over each file's base name and text, each followed by a 0xff byte.
std::string hash_files(const std::vector<SpecFile>& files) {
  uint64_t h = kFnvOffset;
  for (const SpecFile& f : files) {
    h = fnv1a("\xff", fnv1a(fs::path(f.path).filename().string(), h));
    h = fnv1a("\xff", fnv1a(f.text, h));
  }
  return hex64(h);
}

bool parse_int(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || v > (int64_t{1} << 40)) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = s[0] == '-' ? -v : v;
  return true;
}

// "[1,2,3]" (possibly empty) into its entries.
bool parse_list(std::string_view s, std::vector<int64_t>* out) {
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') return false;
  s = s.substr(1, s.size() - 2);
  out->clear();
  while (!s.empty()) {
    size_t comma = s.find(',');
    int64_t v;
    if (!parse_int(s.substr(0, comma), &v)) return false;
    out->push_back(v);
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
    if (s.empty()) return false;
  }
  return true;
}

Expected<TestValue> parse_value(std::string_view text) {
  TestValue v;
  size_t bracket = text.find('[');
  if (bracket != std::string_view::npos && bracket > 0) {
    v.kind = TestValue::Kind::kTensor;
    std::vector<int64_t> dims;
    if (!parse_dtype(text.substr(0, bracket), &v.type.dtype) ||
        !parse_list(text.substr(bracket), &dims) || dims.size() > Shape::kMaxRank ||
        std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 1; }))
      return Error{"bad tensor type '" + std::string(text) + "'"};
    v.type.shape = Shape(std::span<const int64_t>(dims));
  } else if (bracket == 0) {
    v.kind = TestValue::Kind::kInts;
    if (!parse_list(text, &v.list)) return Error{"bad list '" + std::string(text) + "'"};
  } else {
    v.kind = TestValue::Kind::kInt;
    if (!parse_int(text, &v.value)) return Error{"bad integer '" + std::string(text) + "'"};
  }
  return v;
}

// The words after "; test": NAME=VALUE each.
Expected<AxiomTest> parse_test(std::string_view rest, int line) {
  AxiomTest t;
  t.line = line;
  std::istringstream in{std::string(rest)};
  std::string word;
  while (in >> word) {
    size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0)
      return Error{"expected NAME=VALUE in test, got '" + word + "'"};
    Expected<TestValue> v = parse_value(std::string_view(word).substr(eq + 1));
    if (!v) return v.error();
    if (!t.values.emplace(word.substr(0, eq), *v).second)
      return Error{"variable '" + word.substr(0, eq) + "' given twice"};
  }
  if (t.values.empty()) return Error{"empty test"};
  return t;
}

// The axiom comments and assertion starts of one file, in order.
struct Block {
  std::string name;
  int line = 0;
  std::vector<AxiomTest> tests;
};

Expected<std::vector<Block>> scan_file(const SpecFile& f) {
  std::vector<Block> blocks;
  std::optional<Block> open;
  std::istringstream in(f.text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::string_view s = line;
    if (s.starts_with("; axiom ")) {
      if (open) return at(f.path, n, "axiom '" + open->name + "' has no (assert ...)");
      std::string name(s.substr(8));
      while (!name.empty() && name.back() == ' ') name.pop_back();
      if (name.empty() || name.find(' ') != std::string::npos)
        return at(f.path, n, "expected '; axiom NAME'");
      open = Block{name, 0, {}};
    } else if (s.starts_with("; test")) {
      if (!open) return at(f.path, n, "'; test' outside an axiom");
      Expected<AxiomTest> t = parse_test(s.substr(6), n);
      if (!t) return at(f.path, n, t.error().message);
      open->tests.push_back(std::move(*t));
    } else if (s.starts_with("(assert")) {
      if (!open) return at(f.path, n, "assertion without a '; axiom NAME' comment before it");
      if (open->tests.empty()) return at(f.path, n, "axiom '" + open->name + "' has no tests");
      open->line = n;
      blocks.push_back(std::move(*open));
      open.reset();
    }
  }
  if (open) return at(f.path, 0, "axiom '" + open->name + "' has no (assert ...)");
  return blocks;
}

// Maps Z3's "line N column M: message" in the joined text back to a file.
Error z3_error(const SpecSource& src, const std::vector<int>& first_line, std::string msg) {
  std::smatch m;
  std::regex re("line ([0-9]+) column ([0-9]+): ([^\"]*)");
  if (std::regex_search(msg, m, re)) {
    int line = std::stoi(m[1]);
    size_t i = std::upper_bound(first_line.begin(), first_line.end(), line) - first_line.begin();
    if (i > 0) {
      --i;
      std::string text = m[3];
      while (!text.empty() && (text.back() == '\n' || text.back() == ')')) text.pop_back();
      return Error{src.files[i].path + ":" + std::to_string(line - first_line[i] + 1) + ":" +
                   m[2].str() + ": SMT-LIB2: " + text};
    }
  }
  return Error{"specs: SMT-LIB2: " + msg};
}

void collect_functions(const z3::expr& e, std::set<std::string>* out, std::set<unsigned>* seen) {
  if (!seen->insert(e.id()).second) return;
  if (e.is_app()) {
    if (e.decl().decl_kind() == Z3_OP_UNINTERPRETED) out->insert(e.decl().name().str());
    for (unsigned i = 0; i < e.num_args(); ++i) collect_functions(e.arg(i), out, seen);
  } else if (e.is_quantifier()) {
    collect_functions(e.body(), out, seen);
  }
}

void collect_vars(const z3::expr& e, std::set<unsigned>* out) {
  if (e.is_var()) {
    out->insert(Z3_get_index_value(e.ctx(), e));
  } else if (e.is_app()) {
    for (unsigned i = 0; i < e.num_args(); ++i) collect_vars(e.arg(i), out);
  }
}

// Z3 only warns about a pattern that leaves a variable unbound; in a spec it
// is a mistake (the axiom would be instantiated arbitrarily or never).
Status check_patterns(const z3::expr& q, const std::string& file, int line,
                      const std::string& name) {
  if (!q.is_quantifier()) return Status::Ok();
  Z3_context c = q.ctx();
  unsigned vars = Z3_get_quantifier_num_bound(c, q);
  unsigned n = Z3_get_quantifier_num_patterns(c, q);
  for (unsigned i = 0; i < n; ++i) {
    Z3_pattern p = Z3_get_quantifier_pattern_ast(c, q, i);
    std::set<unsigned> seen;
    for (unsigned t = 0; t < Z3_get_pattern_num_terms(c, p); ++t)
      collect_vars(z3::expr(q.ctx(), Z3_get_pattern(c, p, t)), &seen);
    if (seen.size() != vars)
      return at(file, line,
                "pattern " + std::to_string(i + 1) + " of axiom '" + name +
                    "' does not mention every bound variable");
  }
  return Status::Ok();
}

}  // namespace

std::string default_specs_dir() { return TSO_SPECS_DIR; }

SpecSource specs_from_text(std::vector<SpecFile> files) {
  SpecSource s;
  s.files = std::move(files);
  s.hash = hash_files(s.files);
  return s;
}

Expected<SpecSource> read_specs(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> paths;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".smt2") paths.push_back(it->path().string());
  if (ec) return Error{dir + ": cannot read the specs folder: " + ec.message()};
  if (paths.empty()) return Error{dir + ": no .smt2 specification files"};
  std::sort(paths.begin(), paths.end());
  std::vector<SpecFile> files;
  for (const std::string& p : paths) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) return Error{p + ": cannot read"};
    files.push_back({p, ss.str()});
  }
  return specs_from_text(std::move(files));
}

Expected<std::vector<Axiom>> parse_axioms(const SpecSource& src, const OpFunctions& fns) {
  std::string joined;
  std::vector<int> first_line;                // line of the joined text where each file starts
  std::vector<std::pair<int, Block>> blocks;  // (file index, block)
  int line = 1;
  for (size_t i = 0; i < src.files.size(); ++i) {
    const SpecFile& f = src.files[i];
    Expected<std::vector<Block>> b = scan_file(f);
    if (!b) return b.error();
    for (Block& blk : *b) blocks.emplace_back(static_cast<int>(i), std::move(blk));
    first_line.push_back(line);
    joined += f.text;
    if (joined.empty() || joined.back() != '\n') joined += '\n';
    line += static_cast<int>(std::count(f.text.begin(), f.text.end(), '\n')) +
            (f.text.empty() || f.text.back() != '\n' ? 1 : 0);
  }
  z3::context& ctx = fns.ctx();
  z3::set_param("warning", false);  // pattern problems are reported as errors below
  z3::expr_vector asserted(ctx);
  try {
    asserted = ctx.parse_string(joined.c_str(), fns.sorts(), fns.decls());
  } catch (const z3::exception& e) {
    return z3_error(src, first_line, e.msg());
  }
  if (asserted.size() != blocks.size())
    return Error{"specs: " + std::to_string(asserted.size()) + " assertions but " +
                 std::to_string(blocks.size()) + " '(assert' lines; start each assertion on " +
                 "its own line"};
  std::vector<Axiom> axioms;
  std::set<std::string> names;
  for (unsigned i = 0; i < asserted.size(); ++i) {
    auto& [file, blk] = blocks[i];
    const std::string& path = src.files[file].path;
    if (!names.insert(blk.name).second)
      return at(path, blk.line, "axiom '" + blk.name + "' is defined twice");
    TSO_RETURN_IF_ERROR(check_patterns(asserted[i], path, blk.line, blk.name));
    axioms.push_back(Axiom{blk.name, path, blk.line, asserted[i], std::move(blk.tests)});
  }
  return axioms;
}

std::set<std::string> specified_functions(const std::vector<Axiom>& axioms) {
  std::set<std::string> out, seen_names;
  std::set<unsigned> seen;
  for (const Axiom& a : axioms) collect_functions(a.formula, &out, &seen);
  return out;
}

}  // namespace tso::specs
