// PET's mutants: each family on a hand-written source is shape-valid and
// classified as its construction says (interleave exact at even sizes, stack
// partial with exactly the seams wrong, tiles without halo partial at the
// tile border and with halo exact, pad_even exact, merges exact); the run
// over generator/pet.ops counts every stage consistently, is deterministic
// and writes a file the rule loader accepts.
#include "generator/mutants.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "generator/mutant_families.h"
#include "generator/mutant_layouts.h"

namespace tso::gen {
namespace {

using V = Comparison::Verdict;

// A source program from a rule written with the source as its target too
// (the loader needs one); the target is then dropped.
SourceProgram source(const std::string& inputs, const std::string& body) {
  const std::string text = "# tso rules v1\nrule s {\n  origin handwritten\n  status unverified\n" +
                           inputs + "  source {\n" + body + "  }\n  target {\n" + body + "  }\n}\n";
  Expected<RuleSet> set = parse_rules(text, "source.rules");
  EXPECT_TRUE(set.ok()) << set.error().message;
  Rule r = set->rules.at(0);
  r.target = {};
  Expected<SourceProgram> s = make_source(std::move(r));
  EXPECT_TRUE(s.ok()) << s.error().message;
  return std::move(*s);
}

Comparison check(const Rule& r) {
  // The mutant parses back as written.
  RuleSet one;
  one.rules.push_back(r);
  Expected<RuleSet> back = parse_rules(print_rules(one), "mutant.rules");
  EXPECT_TRUE(back.ok()) << (back.ok() ? "" : back.error().message) << "\n" << print_rule(r);
  if (back.ok()) {
    EXPECT_EQ(back->rules.at(0), r) << print_rule(r);
  }
  return compare_sides(r, 2, 7);
}

bool has_op(const Rule& r, Op op) {
  return std::any_of(r.target.nodes.begin(), r.target.nodes.end(),
                     [&](const RuleNode& n) { return n.op == op; });
}

// The positions of output 0 (shape [N,K,H,W]) that differ, as (n, h, w).
std::vector<std::array<int64_t, 3>> differing(const Comparison& c) {
  std::vector<std::array<int64_t, 3>> out;
  const Shape& s = c.shapes.at(0);
  for (int64_t i = 0; i < s.numel(); ++i) {
    if (c.equal[0][i]) continue;
    const int64_t w = i % s[3], h = i / s[3] % s[2], n = i / (s[1] * s[2] * s[3]);
    if (std::find(out.begin(), out.end(), std::array<int64_t, 3>{n, h, w}) == out.end())
      out.push_back({n, h, w});
  }
  return out;
}

constexpr const char* kConv = "    %0 = conv2d(x, w, pad=same)\n    output %0\n";

TEST(MutantFamilies, InterleaveIsExactAtEvenSizes) {
  SourceProgram s =
      source("  input x: f32[1,4,8,8]\n  input w: f32[4,4,3,3]\n  input b: f32[4]\n",
             "    %0 = conv2d(x, w, b, pad=[2,2,2,2], dilation=[2,2])\n    output %0\n");
  std::vector<Rule> m = interleave_mutants(s);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(check(m[0]).verdict, V::kExact);
  // Reshape, transpose, reshape, a plain conv, and back.
  std::vector<Op> ops;
  for (const RuleNode& n : m[0].target.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<Op>{Op::Reshape, Op::Transpose, Op::Reshape, Op::Conv2d, Op::Reshape,
                                  Op::Transpose, Op::Reshape}));
  // Two dilated convs in a chain run interleaved together.
  SourceProgram chain =
      source("  input x: f32[2,4,8,8]\n  input w: f32[4,4,3,3]\n  input b: f32[4]\n",
             "    %0 = conv2d(x, w, b, pad=[2,2,2,2], dilation=[2,2])\n"
             "    %1 = conv2d(%0, w, b, pad=[2,2,2,2], dilation=[2,2])\n    output %1\n");
  ASSERT_EQ(interleave_mutants(chain).size(), 1u);
  EXPECT_EQ(check(interleave_mutants(chain)[0]).verdict, V::kExact);
  // At odd sizes the interleaved side is not shape-valid.
  SourceProgram odd =
      source("  input x: f32[1,4,7,8]\n  input w: f32[4,4,3,3]\n  input b: f32[4]\n",
             "    %0 = conv2d(x, w, b, pad=[2,2,2,2], dilation=[2,2])\n    output %0\n");
  EXPECT_EQ(compare_sides(interleave_mutants(odd).at(0), 2, 7).verdict, V::kInvalid);
}

// A conv + relu runs in the interleaved layout as a whole; its layout change
// undone and done again (between two such programs) is the identity.
TEST(MutantFamilies, InterleaveCarriesTheReluAndItsRoundTripIsTheIdentity) {
  SourceProgram s = source("  input x: f32[1,4,8,8]\n  input w: f32[4,4,3,3]\n  input b: f32[4]\n",
                           "    %0 = conv2d(x, w, b, pad=[2,2,2,2], dilation=[2,2])\n    %1 = "
                           "relu(%0)\n    output %1\n");
  std::vector<Rule> m = interleave_mutants(s);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(check(m[0]).verdict, V::kExact);
  std::vector<Op> ops;
  for (const RuleNode& n : m[0].target.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<Op>{Op::Reshape, Op::Transpose, Op::Reshape, Op::Conv2d, Op::Relu,
                                  Op::Reshape, Op::Transpose, Op::Reshape}));
  std::vector<Rule> r = roundtrip_mutants(s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].inputs.at(0).type.shape, (Shape{4, 4, 4, 4}));
  EXPECT_EQ(r[0].source.nodes.size(), 6u);
  EXPECT_TRUE(r[0].target.nodes.empty());
  EXPECT_EQ(check(r[0]).verdict, V::kExact);
  // Not for an undilated conv.
  EXPECT_TRUE(roundtrip_mutants(source("  input x: f32[1,4,8,8]\n  input w: f32[4,4,3,3]\n", kConv))
                  .empty());
}

TEST(MutantFamilies, StackIsWrongExactlyAtTheSeams) {
  SourceProgram s = source("  input x: f32[2,2,6,5]\n  input w: f32[3,2,3,3]\n", kConv);
  std::vector<Rule> m = stack_mutants(s);
  ASSERT_EQ(m.size(), 2u);  // along H, along W
  Comparison h = check(m[0]);
  EXPECT_EQ(h.verdict, V::kPartial);
  std::vector<std::array<int64_t, 3>> seams;
  for (int64_t w = 0; w < 5; ++w) seams.push_back({0, 5, w});  // image 0's last row
  for (int64_t w = 0; w < 5; ++w) seams.push_back({1, 0, w});  // image 1's first row
  EXPECT_EQ(differing(h), seams);
  Comparison w = check(m[1]);
  EXPECT_EQ(w.verdict, V::kPartial);
  std::vector<std::array<int64_t, 3>> cols;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t r = 0; r < 6; ++r) cols.push_back({n, r, n == 0 ? 4 : 0});
  EXPECT_EQ(differing(w), cols);
  // Batch 1: no mutant (stacking is the identity).
  EXPECT_TRUE(
      stack_mutants(source("  input x: f32[1,2,6,5]\n  input w: f32[3,2,3,3]\n", kConv)).empty());
}

TEST(MutantFamilies, TilesWithoutHaloArePartialWithHaloExact) {
  SourceProgram s = source("  input x: f32[1,2,8,6]\n  input w: f32[3,2,3,3]\n", kConv);
  std::vector<Rule> m = tile_mutants(s);
  ASSERT_EQ(m.size(), 4u);  // H without and with halo, then W
  Comparison h = check(m[0]);
  EXPECT_FALSE(has_op(m[0], Op::Slice));
  EXPECT_EQ(h.verdict, V::kPartial);
  std::vector<std::array<int64_t, 3>> border;
  for (int64_t r : {3, 4})
    for (int64_t w = 0; w < 6; ++w) border.push_back({0, r, w});
  EXPECT_EQ(differing(h), border);
  EXPECT_TRUE(has_op(m[1], Op::Slice));
  EXPECT_EQ(check(m[1]).verdict, V::kExact);
  EXPECT_EQ(check(m[2]).verdict, V::kPartial);
  EXPECT_EQ(check(m[3]).verdict, V::kExact);
  // The halo of a dilated conv with explicit padding.
  SourceProgram d = source("  input x: f32[1,2,8,8]\n  input w: f32[3,2,3,3]\n",
                           "    %0 = conv2d(x, w, pad=[2,2,2,2], dilation=[2,2])\n    output %0\n");
  std::vector<Rule> dm = tile_mutants(d);
  ASSERT_EQ(dm.size(), 4u);
  EXPECT_EQ(check(dm[1]).verdict, V::kExact);
  EXPECT_EQ(check(dm[3]).verdict, V::kExact);
}

TEST(MutantFamilies, PadEvenIsExact) {
  SourceProgram s = source("  input x: f32[1,2,7,9]\n  input w: f32[3,2,3,3]\n", kConv);
  std::vector<Rule> m = pad_even_mutants(s);
  ASSERT_EQ(m.size(), 3u);           // alone, then tiled along H and along W
  EXPECT_EQ(m[0].where.size(), 2u);  // odd(dim(x,2)), odd(dim(x,3))
  EXPECT_EQ(check(m[0]).verdict, V::kExact);
  EXPECT_EQ(check(m[1]).verdict, V::kPartial);
  // At even sizes the condition fails: no match.
  Rule even = m[0];
  even.inputs[0].type.shape = Shape{1, 2, 8, 9};
  EXPECT_EQ(compare_sides(even, 2, 7).verdict, V::kInvalid);
  // A dilated conv at odd sizes: padded, interleaved, sliced back.
  SourceProgram d =
      source("  input x: f32[1,4,7,9]\n  input w: f32[4,4,3,3]\n  input b: f32[4]\n",
             "    %0 = conv2d(x, w, b, pad=[2,2,2,2], dilation=[2,2])\n    output %0\n");
  std::vector<Rule> dm = pad_even_mutants(d);
  ASSERT_EQ(dm.size(), 4u);
  EXPECT_TRUE(has_op(dm[1], Op::Transpose));
  EXPECT_EQ(check(dm[1]).verdict, V::kExact);
}

// A variable declaration for each name.
std::string declare(const std::vector<std::pair<std::string, std::string>>& vars) {
  std::string out;
  for (const auto& [name, type] : vars) out += "  input " + name + ": " + type + "\n";
  return out;
}

TEST(MutantFamilies, MergesAreExact) {
  const std::string x = "f32[2,4,6,6]", w = "f32[4,2,3,3]";
  // One input, two grouped convs; two inputs, two weights; two inputs, one weight.
  const std::vector<std::pair<std::string, std::string>> convs = {
      {declare({{"x1", x}, {"w1", w}, {"w2", w}}),
       "    %0 = conv2d(x1, w1, pad=same, groups=2)\n    %1 = conv2d(x1, w2, pad=same, "
       "groups=2)\n"},
      {declare({{"x1", x}, {"x2", x}, {"w1", w}, {"w2", w}}),
       "    %0 = conv2d(x1, w1, pad=same, groups=2)\n    %1 = conv2d(x2, w2, pad=same, "
       "groups=2)\n"},
      {declare({{"x1", x}, {"x2", x}, {"w1", w}}),
       "    %0 = conv2d(x1, w1, pad=same, groups=2)\n    %1 = conv2d(x2, w1, pad=same, "
       "groups=2)\n"},
      {declare({{"x1", x},
                {"x2", x},
                {"w1", "f32[4,4,3,3]"},
                {"w2", "f32[4,4,3,3]"},
                {"b1", "f32[4]"},
                {"b2", "f32[4]"}}),
       "    %0 = conv2d(x1, w1, b1, pad=same)\n    %1 = conv2d(x2, w2, b2, pad=same)\n"}};
  for (const auto& [vars, body] : convs) {
    std::vector<Rule> m = merge_mutants(source(vars, body + "    output %0, %1\n"));
    ASSERT_EQ(m.size(), 1u) << body;
    EXPECT_EQ(check(m[0]).verdict, V::kExact) << print_rule(m[0]);
    EXPECT_EQ(std::count_if(m[0].target.nodes.begin(), m[0].target.nodes.end(),
                            [](const RuleNode& n) { return n.op == Op::Conv2d; }),
              1);
  }
  const std::string a = "f32[2,6,8]", k = "f32[8,5]";
  const std::vector<std::pair<std::string, std::string>> products = {
      {declare({{"x1", a}, {"x2", a}, {"k1", k}, {"k2", k}}),
       "    %0 = matmul(x1, k1)\n    %1 = matmul(x2, k2)\n"},
      {declare({{"x1", a}, {"k1", k}, {"k2", k}}),
       "    %0 = matmul(x1, k1)\n    %1 = matmul(x1, k2)\n"},
      {declare({{"x1", a}, {"x2", a}, {"k1", k}}),
       "    %0 = matmul(x1, k1)\n    %1 = matmul(x2, k1)\n"},
      {declare({{"x1", "f32[6,8]"}, {"x2", "f32[6,8]"}, {"k1", k}, {"k2", k}}),
       "    %0 = matmul(x1, k1)\n    %1 = matmul(x2, k2)\n"}};
  for (const auto& [vars, body] : products) {
    std::vector<Rule> m = merge_mutants(source(vars, body + "    output %0, %1\n"));
    ASSERT_EQ(m.size(), 1u) << body;
    EXPECT_EQ(check(m[0]).verdict, V::kExact) << print_rule(m[0]);
    EXPECT_EQ(std::count_if(m[0].target.nodes.begin(), m[0].target.nodes.end(),
                            [](const RuleNode& n) { return n.op == Op::Matmul; }),
              1);
  }
}

MutantResult run_pet() {
  Expected<OpSet> set = load_op_set("generator/pet.ops");
  EXPECT_TRUE(set.ok()) << set.error().message;
  Expected<MutantResult> r = generate_mutants(*set, {});
  EXPECT_TRUE(r.ok()) << r.error().message;
  return std::move(*r);
}

TEST(Mutants, PetCountsAddUpAndEveryFamilyHasInstances) {
  MutantResult r = run_pet();
  EXPECT_GT(r.sources, 0u);
  uint64_t kept = 0;
  ASSERT_EQ(r.families.size(), families().size());
  for (const FamilyCounts& f : r.families) {
    EXPECT_LE(f.valid, f.built) << f.text();
    EXPECT_EQ(f.valid, f.exact + f.partial + f.dropped) << f.text();
    EXPECT_GT(f.exact + f.partial, 0u) << f.text();
    kept += f.exact + f.partial;
    const std::string line = "mutants: " + f.text();
    EXPECT_NE(std::find(r.rules.header.begin(), r.rules.header.end(), line), r.rules.header.end())
        << line;
    // Exact candidates first: pet_<family>_000 .. exact - 1.
    for (const Rule& x : r.rules.rules)
      if (x.name == "pet_" + f.family + "_000" && f.exact > 0) {
        EXPECT_EQ(compare_sides(x, 2, 1).verdict, V::kExact) << x.name;
      }
    const std::string prefix = "pet_" + f.family + "_";
    EXPECT_EQ(static_cast<uint64_t>(
                  std::count_if(r.rules.rules.begin(), r.rules.rules.end(),
                                [&](const Rule& x) { return x.name.rfind(prefix, 0) == 0; })),
              f.exact + f.partial);
  }
  EXPECT_EQ(r.rules.rules.size(), kept);
  for (const FamilyCounts& f : r.families)
    if (f.family == "stack" || f.family == "tile") {
      EXPECT_GT(f.partial, 0u) << f.text();
    }
  for (const Rule& x : r.rules.rules) {
    EXPECT_EQ(x.status.kind, RuleStatus::Kind::kUnverified);
    EXPECT_EQ(x.origin.ops, "pet");
  }
}

TEST(Mutants, DeterministicAndTheLoaderAcceptsTheFile) {
  const std::string a = print_rules(run_pet().rules), b = print_rules(run_pet().rules);
  EXPECT_EQ(a, b);
  Expected<RuleSet> back = parse_rules(a, "pet_mutants.rules");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(print_rules(*back), a);
}

// The committed file is this run's output, decided by `tso verify --regions`
// (statuses, corrections and the header's regions: line aside; regenerate it
// with the commands in generator/README.md when the families change).
TEST(Mutants, CommittedFileIsCurrent) {
  std::ifstream in("substitutions/pet_mutants.rules", std::ios::binary);
  ASSERT_TRUE(in) << "substitutions/pet_mutants.rules";
  std::stringstream text;
  text << in.rdbuf();
  Expected<RuleSet> committed = parse_rules(text.str(), "substitutions/pet_mutants.rules");
  ASSERT_TRUE(committed.ok()) << committed.error().message;
  std::erase_if(committed->header, [](const std::string& l) { return l.starts_with("regions:"); });
  for (Rule& r : committed->rules) {
    EXPECT_TRUE(r.status.kind == RuleStatus::Kind::kExact ||
                r.status.kind == RuleStatus::Kind::kPartial)
        << r.name << " is not decided: run tso verify --regions";
    r.status = {};
    r.correction = {};
  }
  EXPECT_TRUE(print_rules(*committed) == print_rules(run_pet().rules))
      << "build/tso generate --mutants --ops generator/pet.ops --seed 1 -o "
         "substitutions/pet_mutants.rules, then build/tso verify --regions on it";
}

TEST(Mutants, FewerThanTwoSetsIsAnError) {
  Expected<OpSet> set = load_op_set("generator/pet.ops");
  ASSERT_TRUE(set.ok());
  MutantOptions opt;
  opt.sets = 1;
  Expected<MutantResult> r = generate_mutants(*set, opt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "fingerprints need at least 2 random input sets");
}

}  // namespace
}  // namespace tso::gen
