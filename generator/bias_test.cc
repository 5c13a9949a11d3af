// Biased templates (generator/bias.ops): conv2d(x, w, b) as a 3-argument
// template, matmul of a rank-3 input, the bias add. Their op-set syntax,
// application by kinds, encoding, Mod values, where conditions, and a small
// enumeration that finds the fused biased conv.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>

#include "generator/candidates.h"
#include "generator/generator.h"
#include "generator/rule_writer.h"
#include "generator/values.h"
#include "runtime/reference/executor.h"

namespace tso::gen {
namespace {

OpSet bias_set() {
  Expected<OpSet> s = load_op_set("generator/bias.ops");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : OpSet{};
}

uint8_t tmpl(const OpSet& s, const std::string& text) {
  for (size_t i = 0; i < s.ops.size(); ++i)
    if (s.ops[i].text == text) return static_cast<uint8_t>(i);
  ADD_FAILURE() << "no template '" << text << "'";
  return 0;
}

uint8_t var(const OpSet& s, const std::string& name) {
  for (size_t i = 0; i < s.vars.size(); ++i)
    if (s.vars[i].name == name) return static_cast<uint8_t>(i);
  ADD_FAILURE() << "no variable '" << name << "'";
  return 0;
}

TEST(BiasOpSet, BiasIsAThirdArgumentOrAVectorAdd) {
  OpSet s = bias_set();
  EXPECT_EQ(s.name, "bias");
  const OpTemplate& conv = s.ops[tmpl(s, "conv2d kernel=[3,3] pad=same bias")];
  EXPECT_EQ(conv.arity, 3);
  EXPECT_TRUE(conv.bias);
  const OpTemplate& add = s.ops[tmpl(s, "add bias")];
  EXPECT_EQ(add.arity, 2);
  EXPECT_FALSE(commutative(add));
  EXPECT_EQ(max_arity(s), 3);
  EXPECT_EQ(max_ops_for(s), 5);
  Expected<OpSet> bad = parse_op_set("name t\ninput x : f32[2,2]\nop relu bias\n", "bad.ops");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "bad.ops:3: 'bias' applies to conv2d and add only");
  bad = parse_op_set("name t\nprefix 2x\n", "bad.ops");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "bad.ops:2: expected `prefix NAME` (letters, digits, '_'; not a digit first)");
}

TEST(BiasOpSet, MaxOpsIsBoundedByTheRecord) {
  GenerateOptions o;
  o.max_ops = 6;
  Expected<GenerateResult> r = generate(bias_set(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "--max-ops must be at most 5 with 3-argument templates (a graph's record holds 5 "
            "of them), got 6");
}

// A biased conv applies when its bias has one value per output channel; the
// prefix (x, w) is probed on its own.
TEST(BiasKinds, ThreeArgumentApplication) {
  Expected<OpSet> s = parse_op_set(
      "name t\ninput i : f32[1,4,5,5]\nweight w : f32[6,4,3,3]\nweight b : f32[6]\n"
      "weight c : f32[4]\nop conv2d kernel=[3,3] pad=same bias\n",
      "t.ops");
  ASSERT_TRUE(s.ok()) << s.error().message;
  KindTable table(*s);
  auto kind = [&](int v) { return table.var_kind(v); };
  EXPECT_TRUE(table.admits_prefix(0, kind(0), kind(1)));
  EXPECT_FALSE(table.admits_prefix(0, kind(1), kind(1)));  // a weight as data
  std::array<int, 3> good{kind(0), kind(1), kind(2)}, bad{kind(0), kind(1), kind(3)};
  const Applied* app = table.apply(0, good);
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->node.outs[0].shape, (Shape{1, 6, 5, 5}));
  EXPECT_EQ(table.apply(0, good), app);  // cached
  EXPECT_EQ(table.apply(0, bad), nullptr);
}

// Channel pieces of a biased conv come from the weight; the bias's pieces
// must agree. A bias add keeps the last axis's pieces its vector shares.
TEST(BiasKinds, PiecesOfBiasedConvAndBiasAdd) {
  OpSet s = bias_set();
  const uint8_t conv = tmpl(s, "conv2d kernel=[3,3] pad=same bias"),
                cat0 = tmpl(s, "concat axis=0"), cat1 = tmpl(s, "concat axis=1"),
                mm = tmpl(s, "matmul"), addb = tmpl(s, "add bias");
  const uint8_t nv = static_cast<uint8_t>(s.vars.size());
  const uint8_t i1 = var(s, "i1"), w1 = var(s, "w1"), w2 = var(s, "w2"), b1 = var(s, "b1"),
                b2 = var(s, "b2"), x1 = var(s, "x1"), y1 = var(s, "y1"), y2 = var(s, "y2");
  KindTable table(s);
  Program p;
  p.ops = {{cat0, {w1, w2}},                             // nv
           {cat0, {b1, b2}},                             // nv + 1
           {conv, {i1, nv, uint8_t(nv + 1)}},            // nv + 2
           {cat1, {y1, y2}},                             // nv + 3
           {mm, {x1, uint8_t(nv + 3)}},                  // nv + 4
           {addb, {uint8_t(nv + 4), uint8_t(nv + 1)}}};  // nv + 5
  Replayed r = replay(table, p);
  const Kind& merged = table.kind(r.kind[nv + 2]);
  EXPECT_EQ(merged.shape, (Shape{1, 8, 5, 5}));
  ASSERT_EQ(merged.segs[1].n, 2);
  EXPECT_EQ(merged.segs[1].size[0], 4);
  const Kind& projected = table.kind(r.kind[nv + 5]);
  EXPECT_EQ(projected.shape, (Shape{1, 2, 8}));
  ASSERT_EQ(projected.segs[2].n, 2);
  std::array<int, 3> short_bias{r.kind[i1], r.kind[nv], r.kind[b1]};
  EXPECT_EQ(table.apply(conv, short_bias), nullptr);
}

// Four bytes per 3-argument operator, three per other operator; decoding
// gives the program back, and a program of templates of arity <= 2 encodes
// as three bytes per operator, as before.
TEST(BiasCode, EncodeDecodeRoundTrip) {
  OpSet s = bias_set();
  const uint8_t conv = tmpl(s, "conv2d kernel=[1,1] pad=same act=relu bias"),
                relu = tmpl(s, "relu"), cat0 = tmpl(s, "concat axis=0");
  const uint8_t nv = static_cast<uint8_t>(s.vars.size());
  Program p;
  p.ops = {{cat0, {1, 2}},
           {conv, {0, 3, 5}},
           {relu, {uint8_t(nv + 1)}},
           {conv, {uint8_t(nv + 2), 4, 6}},
           {relu, {uint8_t(nv + 3)}}};
  const Code c = encode(s, p);
  EXPECT_EQ(c[0], 5);
  EXPECT_EQ(std::vector<uint8_t>(c.begin() + 4, c.begin() + 8),
            (std::vector<uint8_t>{conv, 0, 3, 5}));
  EXPECT_EQ(decode(s, c), p);
  Program two;
  two.ops = {{cat0, {1, 2}}, {relu, {nv}}};
  const Code t = encode(s, two);
  EXPECT_EQ(std::vector<uint8_t>(t.begin(), t.begin() + 8),
            (std::vector<uint8_t>{2, cat0, 1, 2, relu, nv, 0, 0}));
}

// The fast Mod conv2d with a bias equals the reference executor's, with and
// without relu, 3x3 and 1x1.
TEST(BiasValues, FastConvWithBiasEqualsTheReference) {
  OpSet s = bias_set();
  KindTable table(s);
  const std::vector<ValuePtr> in = input_values(s, 1, 11);
  const uint8_t i1 = var(s, "i1"), b1 = var(s, "b1");
  int checked = 0;
  for (size_t t = 0; t < s.ops.size(); ++t) {
    if (s.ops[t].op != Op::Conv2d) continue;
    const uint8_t w = var(s, s.ops[t].conv_kernel[0] == 3 ? "w1" : "u1");
    std::array<int, 3> k{table.var_kind(i1), table.var_kind(w), table.var_kind(b1)};
    const Applied* app = table.apply(static_cast<int>(t), k);
    ASSERT_NE(app, nullptr) << s.ops[t].text;
    ASSERT_TRUE(fast_conv_applies(app->node, 3));
    const ModTensor &x = in[i1]->sets[0], &wt = in[w]->sets[0], &b = in[b1]->sets[0];
    std::array<const ModTensor*, 3> args{&x, &wt, &b};
    Expected<std::vector<ModTensor>> ref = ref::eval_node<ref::Mod>(app->node, args);
    ASSERT_TRUE(ref.ok());
    EXPECT_TRUE(fast_conv(app->node, x, wt, &b) == (*ref)[0]) << s.ops[t].text;
    EXPECT_FALSE(fast_conv(app->node, x, wt) == (*ref)[0]) << "the bias was not added";
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// A bias add's vector has its operand's last extent; where the sum keeps
// the pieces, they are required equal piece by piece (the total follows).
TEST(BiasRuleWriter, BiasAddWhereConditions) {
  OpSet s = bias_set();
  KindTable table(s);
  const uint8_t mm = tmpl(s, "matmul"), addb = tmpl(s, "add bias"), cat0 = tmpl(s, "concat axis=0"),
                cat1 = tmpl(s, "concat axis=1"), split = tmpl(s, "split axis=2");
  const uint8_t nv = static_cast<uint8_t>(s.vars.size());
  const uint8_t b1 = var(s, "b1"), b2 = var(s, "b2"), x1 = var(s, "x1"), y1 = var(s, "y1"),
                y2 = var(s, "y2");
  Candidate c;
  c.a.ops = {{mm, {x1, y1}}, {addb, {nv, b1}}, {mm, {x1, y2}}, {addb, {uint8_t(nv + 2), b2}}};
  c.a_out = {nv + 1, nv + 3};
  c.b.ops = {{cat1, {y1, y2}},
             {cat0, {b1, b2}},
             {mm, {x1, nv}},
             {addb, {uint8_t(nv + 2), uint8_t(nv + 1)}},
             {split, {uint8_t(nv + 3)}}};
  c.b_out = {nv + 4, nv + 5};
  Rule r = make_rule(table, c, "r", RuleOrigin{});
  const std::string text = print_rule(r);
  for (const char* cond : {"where dim(y1,1) == dim(b1,0)", "where dim(y2,1) == dim(b2,0)"})
    EXPECT_NE(text.find(cond), std::string::npos) << cond << " in\n" << text;
  EXPECT_EQ(r.where.size(), 2u) << text;
  EXPECT_NE(text.find("%3 = add(%2, %1)"), std::string::npos) << text;

  Candidate one;
  one.a.ops = {{mm, {x1, y1}}, {addb, {nv, b1}}};
  one.a_out = {nv + 1};
  one.b.ops = {{mm, {x1, y1}}, {addb, {nv, b1}}};
  one.b_out = {nv + 1};
  Rule single = make_rule(table, one, "r", RuleOrigin{});
  ASSERT_EQ(single.where.size(), 1u) << print_rule(single);
  EXPECT_NE(print_rule(single).find("where dim(y1,1) == dim(b1,0)"), std::string::npos)
      << print_rule(single);
}

// A biased conv's bias cut into pieces, kept on the output: pieces equal one
// by one, so the rule holds read backwards (the split cuts at them).
TEST(BiasRuleWriter, ConvBiasPiecesMatchTheWeight) {
  OpSet s = bias_set();
  KindTable table(s);
  const uint8_t conv = tmpl(s, "conv2d kernel=[3,3] pad=same bias"),
                cat0 = tmpl(s, "concat axis=0"), split = tmpl(s, "split axis=1");
  const uint8_t nv = static_cast<uint8_t>(s.vars.size());
  const uint8_t i1 = var(s, "i1"), w1 = var(s, "w1"), w2 = var(s, "w2"), b1 = var(s, "b1"),
                b2 = var(s, "b2");
  Candidate c;
  c.a.ops = {{cat0, {w1, w2}},
             {cat0, {b1, b2}},
             {conv, {i1, nv, uint8_t(nv + 1)}},
             {split, {uint8_t(nv + 2)}}};
  c.a_out = {nv + 3, nv + 4};
  c.b.ops = {{conv, {i1, w1, b1}}, {conv, {i1, w2, b2}}};
  c.b_out = {nv, nv + 1};
  Rule r = make_rule(table, c, "r", RuleOrigin{});
  const std::string text = print_rule(r);
  for (const char* cond : {"where dim(w1,0) == dim(b1,0)", "where dim(w2,0) == dim(b2,0)"})
    EXPECT_NE(text.find(cond), std::string::npos) << cond << " in\n" << text;
  EXPECT_EQ(r.where.size(), 2u) << text;
  EXPECT_NE(text.find("sizes=[dim(w1,0), dim(w2,0)]"), std::string::npos) << text;
}

// At two operators the fused biased conv is found; rules are named after
// the op set's prefix.
TEST(BiasGenerate, TwoOperatorsFuseRelu) {
  GenerateOptions o;
  o.max_ops = 2;
  Expected<GenerateResult> r = generate(bias_set(), o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  bool fused = false;
  for (const Rule& rule : r->rules.rules) {
    EXPECT_EQ(rule.name.rfind("bias2_", 0), 0u) << rule.name;
    EXPECT_TRUE(instantiate(rule, RuleSideKind::kSource).ok()) << rule.name;
    EXPECT_TRUE(instantiate(rule, RuleSideKind::kTarget).ok()) << rule.name;
    if (rule.source.nodes.size() != 2 || rule.target.nodes.size() != 1) continue;
    const RuleNode &conv = rule.source.nodes[0], &relu = rule.source.nodes[1],
                   &fused_conv = rule.target.nodes[0];
    auto act = [](const RuleNode& n) {
      for (const PatternAttr& a : n.attrs)
        if (a.key == AttrKey::act && a.form == PatternAttr::Form::kValue)
          return std::get<Act>(a.value);
      return Act::kNone;
    };
    fused = fused || (conv.op == Op::Conv2d && conv.args.size() == 3 && act(conv) == Act::kNone &&
                      relu.op == Op::Relu && fused_conv.op == Op::Conv2d &&
                      fused_conv.args.size() == 3 && act(fused_conv) == Act::kRelu);
  }
  EXPECT_TRUE(fused) << print_rules(r->rules);
}

// With 3-argument templates too, the output does not depend on the thread
// count, and parts merge into the whole enumeration.
TEST(BiasGenerate, SameRulesWhateverTheThreadsAndParts) {
  auto rules = [](int threads) {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, threads);
    GenerateOptions o;
    o.max_ops = 3;
    Expected<GenerateResult> r = generate(bias_set(), o);
    EXPECT_TRUE(r.ok());
    return r.ok() ? print_rules(r->rules) : "";
  };
  const std::string one = rules(1);
  EXPECT_NE(one.find("rule bias3_"), std::string::npos);
  EXPECT_EQ(one, rules(2));
  EXPECT_EQ(one, rules(4));

  OpSet s = bias_set();
  GenerateOptions o;
  o.max_ops = 3;
  Expected<Part> whole = enumerate_part(s, o);
  ASSERT_TRUE(whole.ok());
  std::vector<Part> parts;
  for (int i = 0; i < 2; ++i) {
    o.shard = i;
    o.num_shards = 2;
    Expected<Part> p = enumerate_part(s, o);
    ASSERT_TRUE(p.ok());
    parts.push_back(std::move(*p));
  }
  Expected<Part> merged = merge_parts(std::move(parts));
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->records, whole->records);
}

}  // namespace
}  // namespace tso::gen
