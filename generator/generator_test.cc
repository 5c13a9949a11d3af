// The generator: op-set errors name file and line; a small run is the same
// whatever the number of threads and parses back as a rule file; recorded
// graphs read variables in first-use order; independent parts are detected;
// part files round-trip and merge into the whole enumeration; rules derived
// by rewrites from both sides are implied.
#include "generator/generator.h"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <tuple>

#include "generator/candidates.h"
#include "generator/part_file.h"
#include "generator/rule_writer.h"
#include "generator/values.h"
#include "runtime/reference/executor.h"

namespace tso::gen {
namespace {

OpSet taso() {
  Expected<OpSet> s = load_op_set("generator/taso.ops");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : OpSet{};
}

std::string op_set_error(const std::string& text) {
  Expected<OpSet> s = parse_op_set(text, "bad.ops");
  EXPECT_FALSE(s.ok());
  return s.ok() ? "" : s.error().message;
}

TEST(OpSet, TasoSetLoads) {
  OpSet s = taso();
  EXPECT_EQ(s.name, "taso");
  EXPECT_EQ(s.vars.size(), 20u);
  EXPECT_EQ(s.ops.size(), 25u);
}

TEST(OpSet, ErrorsNameFileAndLine) {
  EXPECT_EQ(op_set_error("name t\ninput x : f32[2]\nop frobnicate\n"),
            "bad.ops:3: unknown operator 'frobnicate'");
  EXPECT_EQ(op_set_error("name t\ninput x : f32[2]\nop softmax axis=1\n"),
            "bad.ops:3: operator 'softmax' is not supported by the generator");
  EXPECT_EQ(op_set_error("name t\ninput x : f32[2]\nop isnan\n"),
            "bad.ops:3: operator 'isnan' is not supported by the generator");
  EXPECT_EQ(op_set_error("name t\ninput x : f32[2]\nop where\n"),
            "bad.ops:3: operator 'where' is not supported by the generator");
  EXPECT_EQ(op_set_error("name t\ninput x : f32[2]\nop update_slice starts=[0]\n"),
            "bad.ops:3: operator 'update_slice' is not supported by the generator");
  EXPECT_EQ(op_set_error("name t\ninput x : f32[2,\n"),
            "bad.ops:2: bad tensor type 'f32[2,' (expected e.g. f32[2,4], rank <= 4)");
  EXPECT_EQ(op_set_error("name t\ninput x : f32[2]\nop split axis=0 sizes=[1,1]\n"),
            "bad.ops:3: 'sizes' is derived from the arguments; do not set it");
}

TEST(Generate, RejectsMaxOpsOutOfRange) {
  OpSet s = taso();
  GenerateOptions o;
  o.max_ops = 7;
  Expected<GenerateResult> r = generate(s, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "--max-ops must be in 1..6, got 7");
}

std::string run(int threads, int max_ops) {
  tbb::global_control c(tbb::global_control::max_allowed_parallelism, threads);
  GenerateOptions o;
  o.max_ops = max_ops;
  Expected<GenerateResult> r = generate(taso(), o);
  EXPECT_TRUE(r.ok());
  return r.ok() ? print_rules(r->rules) : "";
}

TEST(Generate, SameOutputWhateverTheThreadCount) {
  std::string one = run(1, 2), two = run(2, 2), four = run(4, 2);
  EXPECT_FALSE(one.empty());
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, four);
}

TEST(Generate, RulesParseAndBothSidesInstantiate) {
  std::string text = run(2, 2);
  Expected<RuleSet> set = parse_rules(text, "n2.rules");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_GT(set->rules.size(), 50u);
  for (const Rule& r : set->rules) {
    EXPECT_EQ(r.status.kind, RuleStatus::Kind::kUnverified);
    EXPECT_EQ(r.origin.ops, "taso");
    EXPECT_TRUE(instantiate(r, RuleSideKind::kSource).ok()) << r.name;
    EXPECT_TRUE(instantiate(r, RuleSideKind::kTarget).ok()) << r.name;
  }
}

// Within each renaming class, every recorded graph reads a prefix of the
// class (x1, or x1 x2, ...), and renamed copies are not recorded.
TEST(Enumerate, RecordsVariablesInFirstUseOrder) {
  OpSet s = taso();
  EnumerateOptions o;
  o.max_ops = 2;
  EnumerateResult r = enumerate(s, o, nullptr);
  ASSERT_GT(r.records.size(), 1000u);
  EXPECT_GT(r.not_first_use, 0u);
  KindTable table(s);
  int with_x2 = 0;
  for (const Record& rec : r.records) {
    Replayed rp = replay(table, decode(s, rec.code));
    std::vector<int> used = used_vars(rp);
    for (int v : used)
      for (int u = 0; u < v; ++u)
        if (s.vars[u].renaming_class == s.vars[v].renaming_class) {
          ASSERT_TRUE(std::count(used.begin(), used.end(), u))
              << s.vars[v].name << " without " << s.vars[u].name;
        }
    with_x2 += std::count(used.begin(), used.end(), 1) > 0;  // x2
  }
  EXPECT_GT(with_x2, 0);
}

// relu(x1), relu(x2) against split(relu(concat(x1, x2))) is one rule; the
// same next to an unrelated transpose pair is two independent parts.
TEST(Candidates, IndependentParts) {
  OpSet s = taso();
  auto tmpl = [&](const std::string& text) {
    for (size_t i = 0; i < s.ops.size(); ++i)
      if (s.ops[i].text == text) return static_cast<uint8_t>(i);
    ADD_FAILURE() << text;
    return uint8_t{0};
  };
  const uint8_t relu = tmpl("relu"), concat = tmpl("concat axis=0"), split = tmpl("split axis=0"),
                transpose = tmpl("transpose perm=[1,0]");
  const int nv = static_cast<int>(s.vars.size());  // x1 = 0, x2 = 1, y1 = 3
  Candidate c;
  c.a.ops = {{relu, {0, 0}}, {relu, {1, 0}}};
  c.a_out = {nv, nv + 1};
  c.b.ops = {{concat, {0, 1}}, {relu, {uint8_t(nv), 0}}, {split, {uint8_t(nv + 1), 0}}};
  c.b_out = {nv + 2, nv + 3};
  EXPECT_FALSE(independent_parts(s, c));
  // Add transpose(transpose(y1)) = y1 on the side.
  c.a.ops.push_back({transpose, {3, 0}});
  c.a.ops.push_back({transpose, {uint8_t(nv + 2), 0}});
  c.a_out.push_back(nv + 3);
  c.b_out.push_back(3);
  EXPECT_TRUE(independent_parts(s, c));
}

// Concat chains over x1 x2 x3 reassociate: with the associativity rule
// alone, a left-leaning chain is implied by the right-leaning one at three
// operators (a rewrite from each side meets) and at four (three rewrites);
// without rules, or for a commuted concat, nothing is.
TEST(Candidates, ImpliedByRewritesFromBothSides) {
  OpSet s = taso();
  KindTable table(s);
  uint8_t concat = 0;
  for (size_t i = 0; i < s.ops.size(); ++i)
    if (s.ops[i].text == "concat axis=0") concat = static_cast<uint8_t>(i);
  const uint8_t nv = static_cast<uint8_t>(s.vars.size());  // x1 = 0, x2 = 1, x3 = 2
  auto chain = [&](const std::vector<uint8_t>& leaves, bool left) {
    Program p;
    uint8_t acc = left ? leaves.front() : leaves.back();
    for (size_t i = 1; i < leaves.size(); ++i) {
      uint8_t leaf = left ? leaves[i] : leaves[leaves.size() - 1 - i];
      p.ops.push_back(left ? ProgOp{concat, {acc, leaf}} : ProgOp{concat, {leaf, acc}});
      acc = static_cast<uint8_t>(nv + i - 1);
    }
    return std::pair(p, std::vector<int>{acc});
  };
  auto candidate = [&](const std::vector<uint8_t>& leaves) {
    Candidate c;
    std::tie(c.a, c.a_out) = chain(leaves, true);
    std::tie(c.b, c.b_out) = chain(leaves, false);
    return c;
  };
  Candidate assoc = candidate({0, 1, 2});
  Masks assoc_masks = masks_of(assoc);
  std::vector<const Candidate*> rules{&assoc};
  std::vector<const Masks*> masks{&assoc_masks};
  for (const std::vector<uint8_t>& leaves :
       {std::vector<uint8_t>{0, 1, 2, 0}, std::vector<uint8_t>{0, 1, 2, 0, 1}}) {
    Candidate c = candidate(leaves);
    EXPECT_TRUE(implied(table, c, rules, masks)) << leaves.size() << " leaves";
    EXPECT_FALSE(implied(table, c, {}, {})) << leaves.size() << " leaves";
  }
  Candidate swapped;
  swapped.a.ops = {{concat, {0, 1}}, {concat, {nv, 2}}};
  swapped.a_out = {nv + 1};
  swapped.b.ops = {{concat, {1, 0}}, {concat, {nv, 2}}};
  swapped.b_out = {nv + 1};
  EXPECT_FALSE(implied(table, swapped, rules, masks));
}

// add and mul in a written rule do not broadcast: their operands' extents
// are required equal, each equality once (x3 = x2 and x1 = x2 imply the
// rest).
TEST(RuleWriter, AddOperandsGetWhereConditions) {
  OpSet s = taso();
  KindTable table(s);
  uint8_t add = 0, concat = 0;
  for (size_t i = 0; i < s.ops.size(); ++i) {
    if (s.ops[i].text == "add") add = static_cast<uint8_t>(i);
    if (s.ops[i].text == "concat axis=0") concat = static_cast<uint8_t>(i);
  }
  const uint8_t nv = static_cast<uint8_t>(s.vars.size());  // x1 = 0, x2 = 1, x3 = 2
  Candidate c;
  c.a.ops = {{add, {0, 1}}, {add, {2, 1}}, {concat, {nv, uint8_t(nv + 1)}}};
  c.a_out = {nv + 2};
  c.b.ops = {{concat, {0, 2}}, {concat, {1, 1}}, {add, {nv, uint8_t(nv + 1)}}};
  c.b_out = {nv + 2};
  RuleOrigin origin;
  Rule r = make_rule(table, c, "r", origin);
  std::string text = print_rule(r);
  for (const char* cond : {"where dim(x1,0) == dim(x2,0)", "where dim(x1,1) == dim(x2,1)",
                           "where dim(x3,0) == dim(x2,0)", "where dim(x3,1) == dim(x2,1)"})
    EXPECT_NE(text.find(cond), std::string::npos) << cond << " in\n" << text;
  EXPECT_EQ(r.where.size(), 4u) << text;
}

// A grouped conv over one input and one weight piece per group (two convs
// merged into one of two groups): the pieces are required equal, as the
// merge holds only for equal output channels per group; a depthwise merge
// gets equal channel multipliers.
TEST(RuleWriter, GroupedMergesGetEqualGroupWidths) {
  OpSet s = taso();
  KindTable table(s);
  auto tmpl = [&](const std::string& text) {
    for (size_t i = 0; i < s.ops.size(); ++i)
      if (s.ops[i].text == text) return static_cast<uint8_t>(i);
    ADD_FAILURE() << text;
    return uint8_t{0};
  };
  auto var = [&](const std::string& name) {
    for (size_t i = 0; i < s.vars.size(); ++i)
      if (s.vars[i].name == name) return static_cast<uint8_t>(i);
    ADD_FAILURE() << name;
    return uint8_t{0};
  };
  const uint8_t conv = tmpl("conv2d kernel=[3,3] pad=same"), cat0 = tmpl("concat axis=0"),
                cat1 = tmpl("concat axis=1");
  const uint8_t nv = static_cast<uint8_t>(s.vars.size());
  const uint8_t i1 = var("i1"), i2 = var("i2"), w1 = var("w1"), w2 = var("w2"), d1 = var("d1");
  auto merge = [&](uint8_t wa, uint8_t wb) {
    Candidate c;
    c.a.ops = {{conv, {i1, wa}}, {conv, {i2, wb}}, {cat1, {nv, uint8_t(nv + 1)}}};
    c.a_out = {nv + 2};
    c.b.ops = {{cat1, {i1, i2}}, {cat0, {wa, wb}}, {conv, {nv, uint8_t(nv + 1)}}};
    c.b_out = {nv + 2};
    return make_rule(table, c, "r", RuleOrigin{});
  };
  Rule grouped = merge(w1, w2);
  std::string text = print_rule(grouped);
  EXPECT_NE(text.find("groups=2"), std::string::npos) << text;
  for (const char* cond : {"where dim(w1,0) == dim(w2,0)", "where dim(i1,1) == dim(i2,1)"})
    EXPECT_NE(text.find(cond), std::string::npos) << cond << " in\n" << text;
  EXPECT_EQ(grouped.where.size(), 2u) << text;

  Rule depthwise = merge(d1, d1);
  text = print_rule(depthwise);
  EXPECT_NE(text.find("groups=dim(i1,1) + dim(i2,1)"), std::string::npos) << text;
  EXPECT_NE(text.find("where dim(d1,0) * dim(i1,1) == dim(d1,0) * dim(i2,1)"), std::string::npos)
      << text;
  EXPECT_EQ(depthwise.where.size(), 1u) << text;
}

// The fast Mod conv2d equals the reference executor's on every conv2d
// template of TASO's set, for every weight it applies to (depthwise too).
TEST(Values, FastConvEqualsTheReference) {
  OpSet s = taso();
  KindTable table(s);
  const std::vector<ValuePtr> in = input_values(s, 1, 7);
  int checked = 0;
  for (size_t t = 0; t < s.ops.size(); ++t) {
    if (s.ops[t].op != Op::Conv2d) continue;
    for (size_t x = 0; x < s.vars.size(); ++x)
      for (size_t w = 0; w < s.vars.size(); ++w) {
        const Applied* app =
            table.apply2(static_cast<int>(t), 2, table.var_kind(static_cast<int>(x)),
                         table.var_kind(static_cast<int>(w)));
        if (app == nullptr || s.vars[x].name.back() != '1' || s.vars[w].name.back() != '1')
          continue;
        ASSERT_TRUE(fast_conv_applies(app->node, 2)) << s.ops[t].text;
        const ModTensor& a = in[x]->sets[0];
        const ModTensor& b = in[w]->sets[0];
        std::array<const ModTensor*, 2> args{&a, &b};
        Expected<std::vector<ModTensor>> ref = ref::eval_node<ref::Mod>(app->node, args);
        ASSERT_TRUE(ref.ok());
        EXPECT_TRUE(fast_conv(app->node, a, b) == (*ref)[0])
            << s.ops[t].text << " on " << s.vars[x].name << ", " << s.vars[w].name;
        ++checked;
      }
  }
  EXPECT_EQ(checked, 8);  // 3x3 (w1, d1), 1x3 (u1), 3x1 (v1), each with and without relu
}

TEST(Parts, WriteReadRoundTripAndMergeEqualsTheWhole) {
  OpSet s = taso();
  GenerateOptions o;
  o.max_ops = 2;
  Expected<Part> whole = enumerate_part(s, o);
  ASSERT_TRUE(whole.ok());
  std::vector<Part> parts;
  for (int i = 0; i < 3; ++i) {
    o.shard = i;
    o.num_shards = 3;
    Expected<Part> p = enumerate_part(s, o);
    ASSERT_TRUE(p.ok());
    const std::string path = ::testing::TempDir() + "/part" + std::to_string(i);
    ASSERT_TRUE(write_part(*p, path).ok());
    Expected<Part> back = read_part(path);
    std::remove(path.c_str());
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->records, p->records);
    EXPECT_EQ(back->graphs_by_ops, p->graphs_by_ops);
    EXPECT_EQ(back->not_first_use, p->not_first_use);
    EXPECT_EQ(back->op_set_hash, op_set_hash(s));
    parts.push_back(std::move(*back));
  }
  Expected<Part> merged = merge_parts(std::move(parts));
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->records, whole->records);
  EXPECT_EQ(merged->graphs_by_ops, whole->graphs_by_ops);
  EXPECT_EQ(merged->not_first_use, whole->not_first_use);
}

}  // namespace
}  // namespace tso::gen
